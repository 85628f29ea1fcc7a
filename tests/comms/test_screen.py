"""The built-in screen dismisses only plain small talk; the command screen passes when unsure."""

import sys

import pytest

from mindos.comms import screen


@pytest.mark.parametrize("text", ["good morning all", "thanks!", "lol", "hi folks", "cheers everyone"])
def test_plain_small_talk_is_dismissed(text):
    assert screen.small_talk(text)


@pytest.mark.parametrize("text", [
    "no", "yes", "sure", "thanks, but the build fails", "hi, is the deploy done?", "good morning @re",
    "thanks https://example.com/log", "hi hi hi hi hi hi hi", "", "ok 2", "morning: `make test` fails",
])
def test_anything_else_passes(text):
    assert not screen.small_talk(text)


def test_a_burst_is_dismissed_only_when_every_post_is_small_talk():
    assert screen.builtin([{"body": "hi"}, {"body": "thanks all"}])["verdict"] == "dismiss"
    assert screen.builtin([{"body": "hi"}, {"body": "the queue is stuck"}])["verdict"] == "pass"
    assert screen.builtin([])["verdict"] == "pass"


@pytest.mark.parametrize("code", ["print('maybe')", "import sys; sys.exit(1)", "print('')",
                                  "import sys; sys.stdout.buffer.write(bytes(range(256)))"])
def test_a_command_screen_passes_unless_it_plainly_says_dismiss(code):
    assert screen.run([sys.executable, "-c", code], {"posts": []})["verdict"] == "pass"
    assert screen.run([sys.executable, "-c", "print('DISMISS: chit-chat')"], {"posts": []})["verdict"] == "dismiss"
