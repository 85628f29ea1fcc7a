"""The scanner's cheap gates: what decides, before any regex runs, which detectors a text
needs.  They may only skip work, never a finding (the engine tests compare every finding with
the plain reference pass); these tests pin the skipping itself."""

import random

from mindos.core import secrets


def _detector(kind):
    return next(d for d in secrets._detectors() if d.kind == kind)


def test_a_short_text_runs_only_the_detectors_its_literals_open(monkeypatch):
    walked = []
    real = secrets._walk
    monkeypatch.setattr(secrets, "_walk", lambda detector, *a: walked.append(detector.kind) or real(detector, *a))
    assert secrets.scan("latency is steady") == []
    assert walked == []  # no literal of any detector: nothing walked
    assert secrets.scan("deploy https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX now")
    assert "slack_webhook" in walked


def test_literal_presence_is_decided_exactly_for_every_detector():
    # each literal opens exactly the detectors with a gate or need holding it, in order
    detectors = secrets._detectors()
    for literal, indexes in secrets._OPENED_BY.items():
        assert set(indexes) == {i for i, d in enumerate(detectors) if any(literal in g for g in d.groups)}
    assert set(secrets._LITERALS) == {lit for d in detectors for g in d.groups for lit in g}


def test_prose_with_full_stops_does_not_compile_the_discord_regex():
    detector = _detector("discord_token")
    detector._fast[0] = None
    prose = ["MUST NOT deploy on Friday.", "The retry path is flaky. See the runbook, v2.1 first.",
             "Latency is steady. Consumers caught up at 09:14.", "Done. Tests pass. Review requested."]
    for text in prose:
        assert secrets.scan(text) == []
    assert detector._fast[0] is None
    token = "MTA5ODc2NTQzMjEwOTg3NjU0Mw.0OWwcl.cOBMUmwzptJrkUOIMioNlEsxM98"
    assert secrets.scan(f"bot token {token} leaked") == ["discord_token"]


def test_the_discord_precheck_is_necessary_for_its_fast_form():
    regex = _detector("discord_token").fast()[0]
    rng = random.Random(9)
    alphabet = "MNOTDjzab01_-."
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(30, 80)))
        if regex.search(text):
            assert secrets._dots_seven_apart(text), text
    assert not secrets._dots_seven_apart("a.b.c. nothing here.")
    assert secrets._dots_seven_apart("x.abcdef.y")
