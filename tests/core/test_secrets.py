"""The credential detector: accuracy on the measured corpus, redaction, and speed."""

import time

import pytest

from mindos.core import secrets
from secret_corpus import CLEAN, SECRETS, secret_texts

AWS = "AKIAQ3EGRT7XMPL2WQ9Z"
GH = "ghp_" + "R8m2Qx7Lw0Pz4Vb6Nc1Hk9Jd3Fs5Ga7Ty2Ue4Io"




# ---------------------------------------------------------------------------------------
# The measured corpus


def test_corpus_is_big_enough_and_covers_every_kind():
    assert len(SECRETS) >= 100 and len(CLEAN) >= 100
    kinds = {kind for kind, _, _ in SECRETS}
    for required in ("aws_access_key", "github_token", "openai_key", "slack_token", "google_api_key", "private_key",
                     "bearer_token", "password_assignment", "api_key_assignment", "jwt", "stripe_key",
                     "connection_string", "npm_token", "pypi_token"):
        assert required in kinds


def test_every_secret_text_is_detected_and_redacted(capsys):
    missed = []
    for kind, value, text in secret_texts():
        found = secrets.scan(text)
        redacted, kinds = secrets.redact(text)
        if kind not in found or value in redacted or "[REDACTED:" not in redacted or kinds != found:
            missed.append((kind, text[:60]))
    assert missed == []
    assert capsys.readouterr() == ("", "")


def test_every_clean_text_passes_untouched(capsys):
    flagged = [(secrets.scan(text), text) for text in CLEAN if secrets.scan(text)]
    assert flagged == []
    for text in CLEAN:
        assert secrets.redact(text) == (text, [])
    assert capsys.readouterr() == ("", "")


def test_scan_reports_sorted_unique_kinds_never_values():
    text = f"a={AWS} b={AWS} token {GH} password: hunter2x9"
    found = secrets.scan(text)
    assert found == sorted(set(found))
    assert found == ["aws_access_key", "github_token", "password_assignment"]
    for kind in found:
        assert AWS not in kind and "hunter2x9" not in kind


def test_redaction_is_idempotent_and_leaves_prose_around_it():
    for _, value, text in secret_texts():
        once, _ = secrets.redact(text)
        assert secrets.scan(once) == [], once
        assert secrets.redact(once) == (once, [])
    assert secrets.redact(f"key is {AWS}, rotate it") == ("key is [REDACTED:aws_access_key], rotate it",
                                                          ["aws_access_key"])
    assert secrets.redact("DB_PASSWORD=Tr0ub4dor&3 on host db-2") == (
        "DB_PASSWORD=[REDACTED:password_assignment] on host db-2", ["password_assignment"])


def test_overlapping_findings_take_the_specific_label():
    redacted, kinds = secrets.redact(f"api_key={GH}")
    assert redacted == "api_key=[REDACTED:github_token]"
    assert kinds == ["api_key_assignment", "github_token"]


@pytest.mark.parametrize("text", [
    "fencing token: lease_epoch chain",
    "password policy",
    "token budget",
    "password: see vault",          # no digit in the value
    "secret: 3 replicas",           # too short, digits only
    "max_tokens=4096",
    "password_min_length=12",
    "",
])
def test_generic_assignments_need_a_real_value(text):
    assert secrets.scan(text) == []


def test_generic_assignment_with_a_digit_is_caught():
    assert secrets.scan("password: correcthorse9") == ["password_assignment"]
    assert secrets.scan("fencing token: abc123def456") == ["api_key_assignment"]


@pytest.mark.parametrize("text", [
    "A" * 65536, "a-" * 32768, "password=" * 7000, "sk-" * 20000, "eyJ" + "a." * 30000, "://" * 20000,
    "-----BEGIN PRIVATE KEY-----" + "A" * 60000, "x" * 65536, "token: " * 9000,
    "cookie: " * 8000, "Cookie: sessionid=a1" + ";sid=" * 12000, "curl -u a:" * 6000, "mysql " + "-pa1b2c3 " * 7000,
    "sshpass " * 8000, "redis-cli -a " * 5000, "MTA" * 20000, "M" + "T" * 27 + "." * 30000,
    "the password is " * 4000, "pass: " * 10000, "key-" * 16000,
], ids=lambda text: f"{text[:16]!r}*{len(text)}")
def test_pathological_inputs_stay_fast(text):
    started = time.perf_counter()
    secrets.redact(text)
    assert time.perf_counter() - started < 1.0


def test_non_string_and_missing_input():
    assert secrets.scan(None) == []
    assert secrets.scan("") == []
    assert secrets.redact("") == ("", [])


# ---------------------------------------------------------------------------------------
# guard(): the three audited outcomes
