"""text.inert (what a terminal or an agent is shown) and the ASCII number rule (validate)."""

import pytest

from mindos.core import text, validate
from mindos.errors import InvalidInput


@pytest.mark.parametrize("raw,line,body", [
    ("plain words", "plain words", "plain words"),
    ("a\x1b[2Jb\x07", "a\\x1b[2Jb\\x07", "a\\x1b[2Jb\\x07"),
    ("one\ntwo\tthree\rfour", "one\\x0atwo\\x09three\\x0dfour", "one\ntwo\tthree\\x0dfour"),
    ("\x9b31m\x85\x7f", "\\x9b31m\\x85\\x7f", "\\x9b31m\\x85\\x7f"),
    ("\u202eevil\u202c \u2066i\u2069 \u200f\u061c", "\\u202eevil\\u202c \\u2066i\\u2069 \\u200f\\u061c",
     "\\u202eevil\\u202c \\u2066i\\u2069 \\u200f\\u061c"),
    ("a\u2028b\u2029c", "a\\u2028b\\u2029c", "a\\u2028b\\u2029c"),
    ("emoji 👍🏽 zwj \u200d café", "emoji 👍🏽 zwj \u200d café", "emoji 👍🏽 zwj \u200d café"),
])
def test_inert_escapes_what_a_terminal_would_act_on(raw, line, body):
    assert text.inert(raw) == line
    assert text.inert(raw, multiline=True) == body
    assert text.inert(text.inert(raw)) == text.inert(raw)  # idempotent


def test_inert_returns_printable_text_itself():
    value = "x" * 1000
    assert text.inert(value) is value


@pytest.mark.parametrize("value", ["0", "1", "-1", "1.5", ".5", "5.", "-0.25", "100000"])
def test_ascii_numbers(value):
    assert validate.ascii_number(value) and validate.number(value, "--x") == float(value)


@pytest.mark.parametrize("value", ["", ".", "-", "１", "٣", "٠.5", "1e3", "nan", "inf", "-inf", "1_0", " 1", "1 ",
                                   "+1", "1.2.3", "0x10", "½"])
def test_other_numbers_are_refused(value):
    assert not validate.ascii_number(value)
    with pytest.raises(InvalidInput, match="ASCII digits"):
        validate.number(value, "--x")


def test_one_line_is_one_inert_line_clipped_to_its_width():
    assert text.one_line("a\n b\r\n\tc  d") == "a b c d"
    assert text.one_line("evil\x1b[2J\u202etitle") == "evil\\x1b[2J\\u202etitle"
    assert text.one_line("x" * 50, 10) == "x" * 9 + "\u2026"
    assert text.one_line(None) == "" and text.one_line(42) == "42"
