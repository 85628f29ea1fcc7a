"""Input rules (issue 8 item 5): single-line fields refuse control characters; integers are
ASCII digits only."""

import pytest

from conftest import db_state
from mindos.core import validate
from mindos.errors import InvalidInput


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\x00b", "a\x1b[2Jb", "a\u2028b", "a\x85b", "a\x7fb"])
def test_single_line_fields_refuse_control_characters(value):
    with pytest.raises(InvalidInput, match="control character|NUL"):
        validate.line(value, "--reason")
    with pytest.raises(InvalidInput):
        validate.title(value)


def test_single_line_fields_keep_tabs_and_unicode():
    assert validate.line("tab\there ✓ naïve", "--reason") == "tab\there ✓ naïve"


@pytest.mark.parametrize("text", ["+30", "1_000", " 30", "30 ", "３０", "٣٠", "٣", "3.0", "", "-", "0x1f", "1e3",
                                  "9" * 19])
def test_integers_are_ascii_digits_only(text):
    with pytest.raises(InvalidInput, match="ASCII digits"):
        validate.integer(text, "--minutes")


def test_integers_accept_plain_digits():
    assert validate.integer("30", "--minutes") == 30 and validate.integer("-2", "--epoch") == -2


@pytest.mark.parametrize("argv", [
    ["list", "--limit", "+3"], ["list", "--limit", "1_0"], ["list", "--limit", " 3"], ["list", "--limit", "３"],
    ["claim", "t1", "--owner", "a", "--minutes", "٣٠"], ["events", "--limit", "1_000"],
    ["search-notes", "x", "--limit", "+5"], ["context", "t1", "--budget", "４０００"],
])
def test_cli_integer_flags_refuse_non_ascii_digits(conn, cli, argv):
    from mindos.work import tasks

    tasks.create(conn, project="P", title="x", task_id="t1")
    before = db_state(conn)
    rc, out, err = cli("autopilot", *argv)
    assert rc == 2 and out == "" and "ASCII digits" in err and len(err.splitlines()) == 1
    assert db_state(conn) == before


@pytest.mark.parametrize("value", ["+1", " 1", "١", "1_0"])
def test_note_and_handoff_ids_are_ascii_digits(conn, cli, value):
    rc, out, err = cli("autopilot", "note-history", value)
    assert rc == 2 and "invalid note id" in err
    rc, out, err = cli("autopilot", "handoff-history", value)
    assert rc == 2 and "invalid handoff id" in err


@pytest.mark.parametrize("argv", [
    ["create", "--project", "P", "--title", "two\nlines"],
    ["create", "--project", "P", "--title", "cr\rhere"],
    ["update", "t1", "--title", "a\nb"],
    ["update", "t1", "--branch", "main\nfake"],
    ["block", "t1", "--owner", "a", "--reason", "waiting\nINFO forged line"],
    ["cancel", "t1", "--owner", "a", "--reason", "x\ry"],
    ["receipt", "t1", "--kind", "ci", "--payload", '{"a": "nul\\u0000here"}'],
    ["receipt", "t1", "--kind", "ci", "--payload", '{"nul\\u0000key": 1}'],
])
def test_cli_refuses_control_characters(conn, cli, argv):
    from mindos.work import tasks

    tasks.create(conn, project="P", title="x", task_id="t1")
    before = db_state(conn)
    rc, out, err = cli("autopilot", *argv)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1, err
    assert db_state(conn) == before


def test_a_literal_backslash_u0000_is_not_a_nul(conn):
    from mindos.work import receipts, tasks

    tasks.create(conn, project="P", title="x", task_id="t1")
    assert receipts.add_json(conn, "t1", "ci", '{"a": "\\\\u0000 is how JSON escapes NUL"}')["receipt_id"]


# The charset rules as patterns: the validators check them with str methods instead (no
# pattern compile per call); they must accept exactly what these match.
_REFERENCE = [
    (validate.identifier, r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z"),
    (lambda v: validate.agent(v, secret_check=False), r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,63}\Z"),
    (validate.tag, r"[a-z0-9:_./-]{1,64}\Z"),
    (lambda v: validate.digest(v) if v else validate.digest("x"), r"[0-9a-fA-F]{64}\Z"),
    (lambda v: validate.integer(v, "--n"), r"-?[0-9]{1,18}\Z"),
]


def _samples():
    import random

    rng = random.Random(5)
    alphabet = "aZ09._-:@+/ \n\t\x00é٣０_-" + "abcdef"
    fixed = ["", "a", "-", "--5", "-5", "5-", "a" * 64, "a" * 65, "1" * 18, "1" * 19, "a\n", "\na", "f" * 64,
             "F" * 64, "f" * 63, "٣", "a.b", ".a", "a b", "t-1a2b3c4d", "x@y+z:w"]
    return fixed + ["".join(rng.choice(alphabet) for _ in range(rng.choice((1, 2, 3, 5, 18, 19, 63, 64, 65))))
                    for _ in range(3000)]


@pytest.mark.parametrize("check,pattern", _REFERENCE)
def test_charset_validators_accept_exactly_their_patterns(check, pattern):
    import re

    for value in _samples():
        try:
            check(value)
            accepted = True
        except InvalidInput:
            accepted = False
        except Exception as exc:  # a credential-shaped sample would be refused, never here
            raise AssertionError(f"{value!r}: {exc!r}") from None
        assert accepted == bool(re.match(pattern, value)), repr(value)
