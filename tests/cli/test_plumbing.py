"""The front doors' plumbing: grouped help, help COMMAND, suggestions, no flag prefixes,
the typed program name, --version, and routing that matches the door table both ways."""

import importlib
import io
import json
import os
import pkgutil
import subprocess
import sys

import pytest

import mindos
import mindos.cli
from conftest import ROOT, modules_loaded, script
from mindos.cli import doors, prog_name, run


def test_help_lists_every_command_in_its_section_in_reading_order(cli):
    rc, out, err = cli("autopilot", "--help")
    assert rc == 0 and err == ""
    titles = [title for title, _ in doors.AUTOPILOT.sections]
    positions = [out.index(f"\n{title}:\n") for title in titles]
    assert positions == sorted(positions) and titles[0] == "Setup and tasks"
    for title, entries in doors.AUTOPILOT.sections:
        block = out[out.index(f"\n{title}:\n"):]
        for name, _, summary in entries:
            assert f"  {name}  " in block.split("\n\n")[0] or f"  {name} " in block, (title, name)


def test_help_command_matches_dash_dash_help(cli):
    assert cli("autopilot", "help") == cli("autopilot", "--help")
    assert cli("autopilot", "help", "claim") == cli("autopilot", "claim", "--help")
    rc, out, _ = cli("ops", "help", "recover")
    assert rc == 0 and "Example:\n  ops.py recover" in out


@pytest.mark.bare_home
@pytest.mark.parametrize("typed,expected", [("claimm", "claim"), ("hand-off", "handoff"), ("verfy-chain", "verify-chain")])
def test_an_unknown_command_suggests_the_closest(cli, typed, expected, home):
    rc, out, err = cli("autopilot", typed)
    assert (rc, out) == (2, "")
    assert f"did you mean '{expected}'?" in err and err.count("\n") == 1
    assert not home.exists()


def test_help_for_an_unknown_command_is_a_usage_error(cli):
    rc, out, err = cli("autopilot", "help", "nonsense-xyz")
    assert (rc, out) == (2, "") and "unknown command" in err


def test_flag_prefixes_are_never_expanded(cli, cli_json):
    cli_json("autopilot", "create", "--project", "P", "--title", "t", "--id", "t1")
    rc, out, err = cli("autopilot", "claim", "t1", "--own", "hermes")  # --owner by prefix: refused
    assert rc == 2 and out == "" and "--own" in err
    rc, _, err = cli("autopilot", "list", "--lim", "3")
    assert rc == 2 and "--lim" in err


def test_prog_is_the_name_the_user_typed():
    assert prog_name(doors.AUTOPILOT, "/usr/local/bin/mindos-autopilot") == "mindos-autopilot"
    assert prog_name(doors.AUTOPILOT, "/repo/autopilot.py") == "autopilot.py"
    assert prog_name(doors.OPS, "/whatever/pytest") == "ops.py"


def test_usage_errors_and_examples_use_the_typed_name(capsys):
    with pytest.raises(SystemExit):
        run("autopilot", ["claim", "--help"], argv0="/venv/bin/mindos-autopilot")
    out = capsys.readouterr().out
    assert out.startswith("usage: mindos-autopilot claim") and "Example:\n  mindos-autopilot claim" in out
    assert run("autopilot", ["claim"], argv0="/venv/bin/mindos-autopilot") == 2
    err = capsys.readouterr().err
    assert err.startswith("mindos-autopilot claim: error:")


@pytest.mark.parametrize("door", sorted(doors.DOORS))
def test_version_on_every_front_door(door):
    script = os.path.join(ROOT, doors.DOORS[door].script)
    proc = subprocess.run([sys.executable, script, "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.strip() == f"{doors.DOORS[door].script} {mindos.__version__}"


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_a_call_naming_no_command_loads_no_command_module(flag):
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import mindos.cli as c;"
            " c.exit_process = None; from mindos.cli import run\n"
            "try:\n    run('ops', [sys.argv[2]])\nexcept SystemExit:\n    pass\n"
            "loaded = [m for m in sys.modules if m.startswith('mindos.cli.') and m.count('.') > 2]\n"
            "sys.stderr.write(repr(loaded))")
    proc = subprocess.run([sys.executable, "-c", code, ROOT, flag], capture_output=True, text=True, timeout=60)
    assert proc.stdout.startswith("ops.py") or proc.stdout.startswith("usage: ops.py")
    assert proc.stderr == "[]"


def _cli_modules():
    found = {}
    for info in pkgutil.walk_packages(mindos.cli.__path__, "mindos.cli."):
        module = importlib.import_module(info.name)
        if hasattr(module, "COMMANDS"):
            found[info.name[len("mindos.cli."):]] = module
    return found


def test_routing_matches_the_door_table_both_ways():
    modules = _cli_modules()
    routed = {}
    for door in doors.DOORS.values():
        for name, (module, _) in doors.commands(door).items():
            assert module in modules, f"{door.script} {name} routes to missing module {module}"
            assert name in modules[module].COMMANDS, f"{door.script} {name}: {module} does not define it"
            routed.setdefault(module, set()).add(name)
    for module_name, module in modules.items():
        unrouted = set(module.COMMANDS) - routed.get(module_name, set())
        assert not unrouted, f"mindos.cli.{module_name} defines commands no door routes: {sorted(unrouted)}"


def test_a_command_parser_alone_has_the_prog_and_command_of_its_subparser():
    """A call naming its command is parsed by that command's parser alone: usage errors and
    help name ``<script> <command>``, and ``args.command`` is set as the door's parser set it."""
    for door in doors.DOORS.values():
        for name in doors.commands(door):
            parser = mindos.cli.command_parser(door, door.script, name)
            assert parser.prog == f"{door.script} {name}" and parser.get_default("command") == name, name


def test_each_command_name_is_declared_once_per_door():
    for door in doors.DOORS.values():
        names = [name for _, entries in door.sections for name, _, _ in entries]
        assert len(names) == len(set(names)), door.script


@pytest.mark.parametrize("reader", ["fastparse", "argparse"])
def test_a_call_imports_only_its_own_command_module(reader):
    read = ("fastparse.parse(doors.AUTOPILOT, 'autopilot.py', 'claim', ['t-1', '--owner', 'a'])" if reader == "fastparse"
            else "mindos.cli.build_parser(doors.AUTOPILOT, 'autopilot.py', 'claim')")
    probe = ("import sys; sys.path.insert(0, %r)\n"
             "import mindos.cli\n"
             "from mindos.cli import doors, fastparse\n"
             "%s\n"
             "print(sorted(m for m in sys.modules if m.startswith('mindos.cli.') or m.startswith('mindos.memory')))\n"
             "print('argparse' in sys.modules)\n" % (ROOT, read))
    # -S: the machine's own site hooks (.pth files) may load argparse before our first line
    proc = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    modules, argparse_loaded = proc.stdout.splitlines()
    expected = ["mindos.cli.doors", "mindos.cli.fastparse", "mindos.cli.flags", "mindos.cli.spec", "mindos.cli.work",
                "mindos.cli.work.leases"]
    if reader == "argparse":  # naming build_parser loads the argparse side, and argparse with it
        expected.insert(3, "mindos.cli.parsers")
    assert eval(modules) == expected
    assert argparse_loaded == str(reader == "argparse")


# Standard modules the baseline process (python3 -c "import sqlite3, json, argparse") never
# loads and a common call must not load either, with what each would cost every call:
# locale (argparse's first gettext lookup), typing (15M instructions, contextlib included) and
# shutil (8M with bz2, lzma and zlib; argparse sizes its formatters with it).  hashlib (and
# OpenSSL's _hashlib under it, 11M) is the one public SHA-256, so a call that appends to the
# ledger loads it; a call that only reads must not.
# The nanny's tick runs the doctor's sweep, whose file readers need contextlib (glob); it is
# held to locale and typing.  argparse itself (and gettext, which it imports) is loaded by
# the baseline, yet a plain call never needs it: mindos.cli.fastparse reads its arguments.
_HASHING = ("_hashlib", "hashlib")
# threading (4.6M) is for processes with threads (the MCP server's writers queue for the
# write lock); a CLI write takes the file lock directly.
_OFF_THE_HOT_PATH = ("locale", "typing", "contextlib", "shutil", "importlib", "argparse", "gettext", "threading")
_OFF_THE_SWEEP = _OFF_THE_HOT_PATH[:2]


def test_common_calls_and_a_doctor_sweep_stay_off_costly_standard_modules(home):
    probe = ("import io, json, sys; sys.path.insert(0, %r)\n"
             "from mindos.cli import run\n"
             "out, sys.stdout = sys.stdout, io.StringIO()\n"
             "codes = [run('autopilot', ['list']), run('autopilot', ['memory-search', 'payment retries'])]\n"
             "reads = sorted(m for m in %r if m in sys.modules)\n"
             "codes.append(run('autopilot', ['create', '--project', 'P', '--title', 'retry the payments path']))\n"
             "task = json.loads(sys.stdout.getvalue().splitlines()[-1])['id']\n"
             "codes += [run('autopilot', ['note', task, '--content', 'payments retry path is flaky']),\n"
             "          run('autopilot', ['next', '--claim', '--owner', 'a1', '--recall', '--related', '3',\n"
             "                            '--related-semantic', '3', '--related-facts', '3', '--rerank']),\n"
             "          run('autopilot', ['show', task])]\n"
             "hot = sorted(m for m in %r if m in sys.modules)\n"
             "codes.append(run('ops', ['nanny']))\n"
             "sys.stdout = out\n"
             "print(codes)\n"
             "print(reads, hot, sorted(m for m in %r if m in sys.modules))\n"
             % (ROOT, _HASHING + _OFF_THE_HOT_PATH, _OFF_THE_HOT_PATH, _OFF_THE_SWEEP))
    # -S: the machine's own site hooks (.pth files) may load any of these before our first line
    proc = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, HERMES_AUTOPILOT_HOME=str(home)))
    assert proc.returncode == 0, proc.stderr
    codes, loaded = proc.stdout.splitlines()[-2:]
    assert codes == "[0, 0, 0, 0, 0, 0, 0]", proc.stderr
    assert loaded == "[] [] []"


def test_argparse_messages_still_read_in_full(cli):
    rc, _, err = cli("autopilot", "create", "--project")
    assert rc == 2 and "expected one argument" in err
    rc, _, err = cli("autopilot", "create", "--title", "x")
    assert rc == 2 and "the following arguments are required: --project" in err


def test_the_fast_exit_keeps_every_byte_and_the_exit_code(conn, home):
    from conftest import make_task, script

    for n in range(400):
        make_task(conn, f"t{n:03d}", description="x" * 200)
    conn.close()
    listed = script("autopilot.py", "list", "--limit", "1000", home=home)
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)) == 400  # > 64 KiB through the pipe, nothing cut off
    refused = script("autopilot.py", "show", "nope", home=home)
    assert (refused.returncode, refused.stdout, refused.stderr.count("\n")) == (1, "", 1)
    usage = script("ops.py", "nanny", "--max-repairs", "x", home=home)
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1
    # the database the calls left behind is whole: no lost commit, no open transaction
    check = script("autopilot.py", "verify-chain", home=home)
    assert check.returncode == 0 and json.loads(check.stdout)["ok"] is True


@pytest.mark.parametrize("columns", [60, 100, 200])
def test_help_wraps_to_the_terminal_width_read_when_help_is_written(monkeypatch, columns):
    # the parser is built first: the width must be the one in force when help is written
    parser = mindos.cli.build_parser(doors.AUTOPILOT, "autopilot.py", "create")
    monkeypatch.setenv("COLUMNS", str(columns))
    text = parser.mindos_commands["create"].format_help()
    options = text[text.index("\noptions:\n"):].splitlines()[1:]
    assert max(len(line) for line in options) <= columns - 2
    if columns > 100:  # room to spare: some option's help runs past the narrower widths
        assert max(len(line) for line in options) > 98


def test_the_cycle_collector_stays_on_but_rare_in_a_console_call():
    probe = ("import sys, gc; sys.path.insert(0, %r); import mindos.cli; mindos.cli.own_process();"
             " print(gc.isenabled(), gc.get_threshold()[0])" % ROOT)
    proc = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60)
    enabled, first_generation = proc.stdout.split()
    assert enabled == "True" and int(first_generation) >= 10_000


_ENGINE = ("mindos.context.recall", "mindos.context.sections", "mindos.memory.retrieval")


def test_calls_that_build_no_bundle_leave_the_recall_engine_unloaded(home):
    """``next`` without --recall and ``context`` without an opt-in section take the bundle
    flags but never build a bundle: they must not pay for loading its sections, and only
    ``--related`` (whose notes match through it) loads the retrieval engine."""
    codes, steps = modules_loaded(home, _ENGINE, [
        [["context", "{task}", "--budget", "900"], ["next", "--claim", "--owner", "a1"]],
        [["context", "{task}", "--related", "3", "--budget", "900"]],
        [["context", "{task}", "--related-facts", "2"]]])
    assert codes == [0, 0, 0, 0, 0]
    assert steps == [[], ["mindos.memory.retrieval"], sorted(_ENGINE)]


def test_a_bundle_without_a_matching_section_leaves_the_retrieval_engine_unloaded(home):
    """``recall`` without --related (or any section that matches text) and ``prime`` for an
    agent holding a lease (it recalls the held task with the default parameters) build a
    bundle, yet never match text: they must not load the retrieval engine and its synonym
    tables.  ``recall --related`` still does."""
    codes, steps = modules_loaded(home, ("mindos.memory.retrieval",), [
        [["claim", "{task}", "--owner", "a1"], ["prime", "--agent", "a1", "--format", "json"],
         ["recall", "{task}", "--agent", "a1", "--dep-context", "2"]],
        [["recall", "{task}", "--agent", "a1", "--related", "3"]]])
    assert codes == [0, 0, 0, 0, 0]
    assert steps == [[], ["mindos.memory.retrieval"]]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_json_is_indented_for_a_terminal_and_one_compact_line_for_a_pipe(monkeypatch, capsys):
    result = {"b": [1, {"z": "\u00e9"}], "a": None}
    mindos.cli.emit(result)  # captured: a pipe, as agents read it
    piped = capsys.readouterr().out
    assert piped == '{"a":null,"b":[1,{"z":"\\u00e9"}]}\n' and json.loads(piped) == result
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    mindos.cli.emit(result)
    shown = terminal.getvalue()
    assert shown.startswith('{\n  "a": null,\n  "b": [') and json.loads(shown) == result
    mindos.cli.emit("plain text")  # text views print as they are either way
    assert terminal.getvalue().endswith("plain text\n")


def test_a_subprocess_reading_a_pipe_gets_one_line_per_result(home):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), "init"], capture_output=True, text=True,
                          env=dict(os.environ, HERMES_AUTOPILOT_HOME=str(home)))
    assert proc.returncode == 0 and proc.stdout.count("\n") == 1 and json.loads(proc.stdout)


def test_write_calls_hash_their_events_without_loading_hashlib(home):
    """create, note, claim and next --claim each append one short event: a fresh process
    hashes it in Python instead of paying OpenSSL's start (bench/NOTES.md), and the chain
    still verifies.  Nor do they load the dependency graph's module (a claim's guard reads
    the blockers through mindos.work.rows; create loads it only for --depends-on)."""
    probe = ("import io, json, sys; sys.path.insert(0, %r)\n"
             "from mindos.cli import run\n"
             "out, sys.stdout = sys.stdout, io.StringIO()\n"
             "code = run('autopilot', json.loads(sys.argv[1]))\n"
             "printed, sys.stdout = sys.stdout.getvalue(), out\n"
             "print(json.dumps([code, [m for m in ('hashlib', '_hashlib', 'mindos.work.graph') if m in sys.modules],"
             " printed]))\n" % ROOT)

    def call(*argv):
        proc = subprocess.run([sys.executable, "-S", "-c", probe, json.dumps(argv)], capture_output=True, text=True,
                              timeout=60, env=dict(os.environ, HERMES_AUTOPILOT_HOME=str(home)))
        assert proc.returncode == 0, proc.stderr
        code, loaded, printed = json.loads(proc.stdout)
        assert (code, loaded) == (0, []), (argv, proc.stderr)
        return json.loads(printed)

    first = call("create", "--project", "P", "--title", "retry the payments path")["id"]
    call("create", "--project", "P", "--title", "second task", "--priority", "P1")
    call("note", first, "--content", "the retry path is flaky")
    call("claim", first, "--owner", "a1")
    assert call("next", "--claim", "--owner", "a2")["task"]["lease_owner"] == "a2"
    verified = script("autopilot.py", "verify-chain", home=home)
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True, verified.stderr
