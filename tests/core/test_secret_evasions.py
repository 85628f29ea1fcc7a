"""Evasions of the secret detector an earlier build let through, each now caught and redacted.

A credential split by a default-ignorable code point (a variation selector, the combining
grapheme joiner, a Hangul filler ...), a real token dressed as a ``[REDACTED:`` label, and a
basic-auth URL or a token written in percent escapes.  "Caught" means :func:`scan` reports it
and :func:`redact` leaves no usable copy behind, not even in the decoded text.
"""

import urllib.parse

import pytest

import secret_corpus
from mindos.core import secrets

AWS = "AKIA2R29TQLR0VLG5W1H"
NPM = "npm_a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8"
GITHUB = "ghp_DJANQMiy5mD3bM5MBKFiuut5I5zF8GHHIgjU"
URL = "https://alice:hunter2pass9@github.com/idea/trove.git"

# a sample of Default_Ignorable_Code_Point beyond category Cf (those were already stripped)
IGNORABLE = ["\ufe0f", "\ufe00", "\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\u17b4", "\u180b",
             "\u180f", "\U000e0100", "\U000e01ef", "\u2065", "\ufff0", "\U000e0080", "\u200b", "\u2060"]


def _gone(text, value):
    """True when neither the text nor any percent-decoded form of it holds ``value``."""
    for _ in range(4):
        if value in text:
            return False
        text = urllib.parse.unquote(text)
    return True


@pytest.mark.parametrize("char", IGNORABLE, ids=[f"U+{ord(c):04X}" for c in IGNORABLE])
def test_a_default_ignorable_code_point_inside_a_token_is_removed_before_matching(char):
    for token, kind in ((AWS, "aws_access_key"), (NPM, "npm_token"), (GITHUB, "github_token")):
        split = token[:6] + char + token[6:9] + char * 3 + token[9:]
        for text in (split, f"deploy key {split} rotated", f"café {split}", "é" * 5000 + split):
            assert kind in secrets.scan(text), (text[:40], char)
            redacted, kinds = secrets.redact(text)
            assert kind in kinds and secrets.scan(redacted) == [] and token[9:] not in redacted


def test_every_corpus_credential_split_by_a_variation_selector_is_still_caught():
    missed = []
    for kind, value, template in secret_corpus.SECRETS:
        middle = len(value) // 2
        text = template.replace("{v}", value[:middle] + "\ufe0f\u034f" + value[middle:])
        if kind not in secrets.scan(text):
            missed.append((kind, value))
    assert missed == []


@pytest.mark.parametrize("token,kind", [(NPM, "npm_token"), (AWS.lower(), None), (GITHUB, "github_token"),
                                        ("xoxb-1234567890-abcdefghij", "slack_token")])
def test_a_redacted_label_holding_a_real_token_is_the_token(token, kind):
    text = f"published with [REDACTED:{token}] yesterday"
    found = secrets.scan(text)
    if kind is None:  # a lowercased AWS key is no AWS key: nothing to find, nothing to refuse
        assert "aws_access_key" not in found
        return
    assert kind in found
    redacted, kinds = secrets.redact(text)
    assert kind in kinds and token not in redacted and secrets.scan(redacted) == []


def test_genuine_labels_stay_exempt():
    for kind in ("npm_token", "aws_access_key", "password_assignment", "basic_auth", "connection_string"):
        assert secrets.scan(f"rotated [REDACTED:{kind}] on Monday; password = [REDACTED:{kind}]") == []
    redacted, _ = secrets.redact(f"token {NPM} and {AWS}")
    assert secrets.scan(redacted) == [] and secrets.redact(redacted) == (redacted, [])


@pytest.mark.parametrize("text", [
    "clone " + urllib.parse.quote(URL, safe="") + " now",                      # the whole URL encoded
    "clone https://alice%3Ahunter2pass9@github.com/idea/trove.git now",        # the userinfo's colon
    "next=" + urllib.parse.quote(urllib.parse.quote(URL, safe=""), safe=""),   # encoded twice
    "redirect?to=" + urllib.parse.quote(URL, safe="") + "&state=1",
    "é" * 3000 + " " + urllib.parse.quote(URL, safe=""),                       # in a long non-ASCII text
    "x " * 40000 + urllib.parse.quote(URL, safe="") + " y" * 40000,            # far from the start of 160 KiB
])
def test_a_percent_encoded_basic_auth_url_is_caught_and_redacted(text):
    assert secrets.scan(text) != []
    redacted, kinds = secrets.redact(text)
    assert kinds and secrets.scan(redacted) == [] and _gone(redacted, "hunter2pass9")


def test_a_percent_encoded_token_is_caught():
    encoded = "".join(f"%{ord(c):02X}" for c in AWS[:4]) + AWS[4:]
    assert secrets.scan(f"id={encoded}&x=1") == ["aws_access_key"]
    redacted, _ = secrets.redact(f"id={encoded}&x=1")
    assert redacted == "id=[REDACTED:aws_access_key]&x=1"
    assert secrets.scan("password%3D%68unter2abc9") == ["password_assignment"]


def test_percent_signs_and_plain_escapes_are_not_credentials():
    for text in ("50% of 100%", "open /search?q=token%20budget%20policy", "a%20b%2Fc%3Dd",
                 "https://example.com/a%20b?x=%41%42", "%%%", "%zz %4", "progress 99%\n100%"):
        assert secrets.scan(text) == [], text
        assert secrets.redact(text) == (text, [])
