"""One declaration model (mindos.cli.spec): argparse, the plain reader, the MCP tool schemas
and ``protocol`` are all built from each command's declaration; nothing reads argparse's
private attributes; importing the CLI changes nothing process-wide."""

import json
import os
import re
import subprocess
import sys

from conftest import ROOT

# argparse internals a reader could be tempted by (spelt here without their leading dot)
PRIVATE = ("actions", "option_string_actions", "subparsers", "group_actions", "mutually_exclusive_groups",
           "choices_actions", "registries", "defaults", "positionals", "optionals", "action_groups",
           "get_value", "check_value", "get_formatter", "get_positional_actions", "get_optional_actions",
           "SubParsersAction", "StoreAction", "StoreTrueAction", "StoreFalseAction", "StoreConstAction",
           "AppendAction", "AppendConstAction", "CountAction", "HelpAction", "VersionAction",
           "ExtendAction", "ChoicesPseudoAction", "MutuallyExclusiveGroup", "ArgumentGroup")
PATTERN = re.compile(r"\._(?:%s)\b" % "|".join(PRIVATE))


def _python_files():
    for top in ("mindos", "tests", "scripts", "bench"):
        for folder, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [name for name in dirs if not name.startswith(".") and name != "__pycache__"]
            yield from (os.path.join(folder, name) for name in names if name.endswith(".py"))
    yield from (os.path.join(ROOT, name) for name in os.listdir(ROOT) if name.endswith(".py"))


def test_nothing_in_the_tree_reads_argparse_private_attributes():
    found = []
    for path in _python_files():
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if PATTERN.search(line):
                    found.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_the_grep_would_catch_a_private_read():
    assert PATTERN.search("for action in parser." + "_actions:")
    assert PATTERN.search("isinstance(a, argparse." + "_StoreTrueAction)")
    assert not PATTERN.search("p.set_defaults(handler=cmd)") and not PATTERN.search("parser.mindos_commands")


PROBE = """
import gc, json, sys
sys.path.insert(0, %r)
import argparse
before = {"gc": list(gc.get_threshold()), "argparse": sorted((k, id(v)) for k, v in vars(argparse).items())}
import mindos.cli
from mindos.cli import doors, parsers, protocol
from mindos.mcp import tools
for door in doors.DOORS.values():
    parsers.build_parser(door, door.script)
    parsers.build_parser(door, door.script, bare=True).format_help()
    for name in doors.commands(door):
        parsers.command_parser(door, door.script, name).format_help()
tools.exposed(tools.allowable())
protocol.describe()
after = {"gc": list(gc.get_threshold()), "argparse": sorted((k, id(v)) for k, v in vars(argparse).items())}
print(json.dumps([before, after]))
"""


def test_importing_the_cli_and_building_every_parser_changes_nothing_process_wide():
    proc = subprocess.run([sys.executable, "-S", "-c", PROBE % ROOT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    before, after = json.loads(proc.stdout.splitlines()[-1])
    assert after["gc"] == before["gc"]
    assert after["argparse"] == before["argparse"]


CONSOLE = """
import gc, sys
sys.path.insert(0, %r)
sys.argv = ["autopilot.py", "show", "--no-such-flag"]  # a usage error: argparse reads it
import argparse
lookup = argparse._
from mindos.cli import autopilot
autopilot.exit_process = lambda code: print("exit", code, gc.get_threshold()[0], argparse._ is not lookup)
autopilot.console()
"""


def test_the_console_entry_point_makes_the_process_wide_settings():
    proc = subprocess.run([sys.executable, "-S", "-c", CONSOLE % ROOT], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    _, code, threshold, patched = proc.stdout.splitlines()[-1].split()
    assert code == "2" and int(threshold) >= 10_000 and patched == "True"
    assert "unrecognized arguments: --no-such-flag" in proc.stderr


def test_every_reader_reads_the_same_declaration():
    """A declaration with set_defaults before and after its arguments, an exclusive group and
    a hidden flag: argparse (built by fill), the plain reader, the tool schema and protocol agree."""
    from mindos.cli import fastparse, parsers, protocol, spec
    from mindos.mcp import tools

    command = spec.Command("sample", "a sample", {"prog": "sample", "description": "x\n\nExample:\n  sample"})
    command.set_defaults(level=3)
    command.add_argument("name")
    command.add_argument("--level", type=int)
    command.add_argument("--tag", action="append", default=[])
    command.add_argument("--quiet", action="store_true")
    command.add_argument("--old", action="store_true", hidden=True)
    group = command.add_mutually_exclusive_group(required=True)
    group.add_argument("--text")
    group.add_argument("--text-file")
    command.set_defaults(handler=len, quiet=None)
    parser = parsers.fill(parsers.Parser(**command.options), command)
    for argv in (["n", "--text", "t"], ["n", "--text-file", "f", "--level", "4", "--tag", "a", "--tag", "b",
                                        "--quiet", "--old"]):
        assert vars(fastparse._read(command, argv)) == vars(parser.parse_args(argv))
    assert parser.parse_args(["n", "--text", "t"]).quiet is None and parser.parse_args(["n", "--text", "t"]).level == 3
    assert "--old" not in parser.format_help() and "--quiet" in parser.format_help()
    properties = {argument.dest: tools._property(argument) for argument in tools.arguments(command)}
    assert list(properties) == ["name", "level", "tag", "quiet", "old", "text"]
    assert properties["old"]["description"] == "(CLI: --old)"
    assert properties["tag"]["type"] == "array" and properties["level"] == {
        "type": "integer", "default": 3, "description": "(CLI: --level)"}
    described = protocol.parser_entry(command)
    assert described["exclusive_groups"] == [{"flags": ["--text", "--text-file"], "required": True}]
    assert [(each["name"], each["hidden"], each["required"]) for each in described["arguments"]][:2] == [
        ("name", False, True), ("--level", False, False)]
