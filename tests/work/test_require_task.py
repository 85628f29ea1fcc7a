"""One "does this task exist" check: every command that names a task refuses an unknown id
with the same one-line message, ``unknown task '<id>'`` (exit 1, ``not_found``), and changes
nothing; the check is :func:`mindos.work.rows.require_task`, not a query written by hand."""

import ast
import os

import pytest

from conftest import ROOT, db_state, make_task
from mindos.errors import NotFound
from mindos.work import rows

GHOST = "ghost"
MESSAGE = f"unknown task '{GHOST}'\n"

# (door, argv): every command taking a task id, across the floors that check it
COMMANDS = [
    ("autopilot", ["show", GHOST]),
    ("autopilot", ["claim", GHOST, "--owner", "a"]),
    ("autopilot", ["note", GHOST, "--content", "x", "--source", "a"]),
    ("autopilot", ["notes", GHOST]),
    ("autopilot", ["handoff", GHOST, "--from-agent", "a", "--objective", "x"]),
    ("autopilot", ["receipt", GHOST, "--kind", "ci", "--payload", "{}"]),
    ("autopilot", ["tag", GHOST, "--tag", "x"]),
    ("autopilot", ["dep", GHOST, "t1"]),
    ("autopilot", ["blocked-by", GHOST]),
    ("autopilot", ["impact", GHOST]),
    ("autopilot", ["similar", GHOST]),
    ("autopilot", ["context", GHOST]),
    ("autopilot", ["fact-assert", "--subject", "s", "--predicate", "p", "--object", "o", "--source", "a",
                   "--task", GHOST]),
    ("ops", ["consolidate", "--task", GHOST]),
    ("ops", ["export-task", GHOST, "--out", "x.json"]),
    ("autopilot", ["declare", GHOST, "--model", "claude/opus", "--autonomy-level", "L1", "--granted-by", "leo",
                   "--grant-hours", "24"]),
    ("autopilot", ["grant-check", GHOST, "--model", "claude/opus", "--level", "L1"]),
]


@pytest.mark.parametrize("door, argv", COMMANDS, ids=[" ".join(argv[:1]) for _, argv in COMMANDS])
def test_an_unknown_task_gets_the_one_message_and_changes_nothing(conn, cli, door, argv, tmp_path):
    make_task(conn, "t1")
    argv = [str(tmp_path / a) if a == "x.json" else a for a in argv]
    before = [line for line in db_state(conn)[0] if "audit_events" not in line]
    rc, out, err = cli(door, *argv)
    assert (rc, out, err) == (1, "", MESSAGE)
    assert [line for line in db_state(conn)[0] if "audit_events" not in line] == before


def test_require_task_returns_the_columns_asked_for(conn):
    make_task(conn, "t1")
    assert tuple(rows.require_task(conn, "t1", "id, status")) == ("t1", "queued")
    with pytest.raises(NotFound, match=r"^unknown task 'nope'$"):
        rows.require_task(conn, "nope")


def test_an_unknown_id_is_shown_clipped_and_never_echoes_a_credential(conn):
    secret = "ghp_" + "R8m2Qx7Lw0Pz4Vb6Nc1Hk9Jd3Fs5Ga7Ty2Ue4Io"
    assert str(rows.unknown_task(secret)) == "unknown task <redacted>"
    assert len(str(rows.unknown_task("x" * 500))) < 100


def test_no_module_checks_a_task_by_hand():
    """The message is written once (work/rows.py); an ``unknown task`` refusal elsewhere
    would be a second copy."""
    offenders = []
    for folder, _, names in os.walk(os.path.join(ROOT, "mindos")):
        for name in names:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, ROOT)
            if rel == os.path.join("mindos", "work", "rows.py"):
                continue
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.JoinedStr) and any(
                        isinstance(part, ast.Constant) and isinstance(part.value, str)
                        and part.value.startswith("unknown task") for part in node.values):
                    offenders.append(f"{rel}:{node.lineno}")
    assert not offenders, f"hand-written 'unknown task' messages (use rows.require_task): {offenders}"
