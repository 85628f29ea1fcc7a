"""Shared flags (issue 8 item 12): --content-file, --payload-file, --objective-file read long
text from a path or stdin, past the argument-length limit."""

import json
import os
import subprocess
import sys

from conftest import ROOT, script


def test_payload_file_carries_more_than_argv_can(conn, home, tmp_path, cli_json):
    cli_json("autopilot", "create", "--project", "P", "--title", "x", "--id", "t1")
    payload = {"log": "y" * 600_000}  # one argument may hold at most 128 KiB on Linux
    path = tmp_path / "payload.json"
    path.write_text(json.dumps(payload))
    proc = script("autopilot.py", "receipt", "t1", "--kind", "ci", "--payload-file", str(path), home=home)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["bytes"] > 600_000


def test_content_and_objective_files_and_stdin(conn, home, tmp_path, cli_json):
    cli_json("autopilot", "create", "--project", "P", "--title", "x", "--id", "t1")
    text = tmp_path / "note.txt"
    text.write_text("line one\nline two ✓\n" * 2000, encoding="utf-8")
    note = cli_json("autopilot", "note", "t1", "--content-file", str(text), "--source", "a")
    assert note["content"] == ("line one\nline two ✓\n" * 2000).strip()
    environment = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), "handoff", "t1", "--from-agent", "a",
                           "--objective-file", "-"], input="finish the migration\nthen verify", capture_output=True,
                          text=True, env=environment, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["objective"] == "finish the migration\nthen verify"


def test_file_flags_refuse_cleanly(conn, tmp_path, cli, cli_json):
    cli_json("autopilot", "create", "--project", "P", "--title", "x", "--id", "t1")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9")
    for argv, needle in [
        (["note", "t1", "--content-file", str(bad)], "not valid UTF-8"),
        (["note", "t1", "--content-file", str(tmp_path / "missing")], "cannot read"),
        (["note", "t1", "--content", "x", "--content-file", str(bad)], "not allowed with"),
        (["receipt", "t1", "--kind", "ci"], "required"),
    ]:
        rc, out, err = cli("autopilot", *argv)
        assert rc == 2 and out == "" and needle in err and len(err.splitlines()) == 1, (argv, err)
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 0


def test_file_flags_read_only_regular_files(conn, tmp_path, cli, cli_json):
    """A *-file path names a regular file: a symlink (which could point anywhere), a FIFO
    (which would block the call forever) and a device are refused before anything is read."""
    cli_json("autopilot", "create", "--project", "P", "--title", "x", "--id", "t1")
    real = tmp_path / "note.txt"
    real.write_text("plain note", encoding="utf-8")
    link = tmp_path / "note-link.txt"
    os.symlink(real, link)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, needle in [(link, "is a symlink"), (fifo, "is a FIFO (named pipe), not a regular file"),
                         ("/dev/zero", "is a character device, not a regular file")]:
        for argv in (["note", "t1", "--source", "a", "--content-file", str(path)],
                     ["receipt", "t1", "--kind", "ci", "--payload-file", str(path)]):
            rc, out, err = cli("autopilot", *argv)
            assert rc == 2 and out == "" and needle in err and len(err.splitlines()) == 1, (argv, err)
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 0
    assert cli_json("autopilot", "note", "t1", "--source", "a", "--content-file", str(real))["content"] == "plain note"


def test_no_flag_parses_numbers_with_int_or_float():
    """One integer rule and one number rule (ASCII digits only): every numeric flag of every
    front door goes through flags.integer / flags.number, never int() or float(), which take
    fullwidth digits, '1_0' and exponents."""
    import ast

    from conftest import ROOT

    found = []
    for folder, _, names in os.walk(os.path.join(ROOT, "mindos")):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    tree = ast.parse(handle.read(), path)
                found += [f"{os.path.relpath(path, ROOT)}:{node.lineno}" for node in ast.walk(tree)
                          if isinstance(node, ast.keyword) and node.arg == "type"
                          and isinstance(node.value, ast.Name) and node.value.id in ("int", "float")]
    assert found == []


def _every_declaration():
    """``(where, Command)`` for every command of every door and each of its nested actions."""
    from mindos.cli import doors

    for door in doors.DOORS.values():
        for name in doors.commands(door):
            pending = [(f"{door.script} {name}", doors.declare(door, door.script, name))]
            while pending:
                where, command = pending.pop()
                yield where, command
                if command.subcommands is not None:
                    pending += [(f"{where} {sub}", each) for sub, each in command.subcommands.choices.items()]


def test_shared_flags_are_declared_only_through_flags_py():
    """A flag flags.py provides (flags.SHARED: --owner, --project, --limit, --dry-run ...)
    is never declared by hand: every command's declaration names the helper that added it."""
    from mindos.cli import flags

    hand_declared = [f"{where}: {flag}" for where, command in _every_declaration()
                     for argument in command.arguments for flag in argument.flags
                     if flag in flags.SHARED and argument.shared != flags.SHARED[flag]]
    assert hand_declared == []
    # every helper the registry names exists, and the registry's flags are the ones they add
    for flag, helper in flags.SHARED.items():
        assert callable(getattr(flags, helper)), helper


def test_the_shared_flag_check_catches_a_hand_declared_copy():
    from mindos.cli import flags, spec

    command = spec.Command("sample")
    command.add_argument("--owner", required=True, help="who")
    flags.project(command)
    owner, project = command.arguments
    assert (owner.shared, project.shared) == (None, "project")
    assert flags.SHARED["--owner"] == "owner" and flags.SHARED["--project"] == "project"


def test_a_hidden_shared_flag_is_accepted_but_not_listed(cli):
    rc, out, _ = cli("ops", "dup-tasks", "--help")
    assert rc == 0 and "--dry-run" not in out
    rc, out, err = cli("ops", "dup-tasks", "--dry-run")
    assert rc in (0, 1) and "unrecognized" not in err
