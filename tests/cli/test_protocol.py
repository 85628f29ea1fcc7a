"""``autopilot.py protocol``: the sealed self-description (mindos/cli/protocol.py).

It is generated from the declarations, so these tests hold it to what the doors really do:
every command of every door is there, its arguments agree with its own ``--help`` (flags,
positionals, required, choices), its declared output shape agrees with what a real call
prints, and every error code the package can raise is in the published vocabulary.
"""

import json
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import protocolkit  # noqa: E402
from conftest import ROOT, script  # noqa: E402
from mindos import __version__, errors  # noqa: E402
from mindos.cli import doors, outputs, protocol  # noqa: E402
from mindos.core import seal  # noqa: E402
from mindos.errors import IntegrityError  # noqa: E402
from mindos.store import db  # noqa: E402


@pytest.fixture(scope="module")
def doc():
    return protocol.describe()


def _commands(doc):
    return {(door, entry["name"]): entry for door, body in doc["doors"].items() for entry in body["commands"]}


def test_sealed_deterministic_and_versioned(cli, doc):
    rc, out, err = cli("autopilot", "protocol")
    assert (rc, err) == (0, "")
    printed = json.loads(out)
    assert printed == doc  # the same code always describes itself the same way
    assert seal.verify(printed, protocol.FORMAT, outside=()) is printed
    assert printed["format"] == "mindos-protocol-v1" and printed["seal"]["outside"] == []
    assert (printed["mindos_version"], printed["schema_version"]) == (__version__, db.SCHEMA_VERSION)
    printed["doors"]["ops"]["commands"][0]["summary"] = "edited"
    with pytest.raises(IntegrityError):
        seal.verify(printed, protocol.FORMAT, outside=())
    assert cli("autopilot", "protocol") == (rc, out, err)  # a retry: identical bytes


def test_text_format_names_every_command_and_the_digest(cli, doc):
    rc, out, err = cli("autopilot", "protocol", "--format", "text")
    assert (rc, err) == (0, "") and protocol.digest(doc) in out
    for door, name in _commands(doc):
        assert f"{doc['doors'][door]['script']} {name}  [" in out
    assert "no_git" in out and "130" in out


@pytest.mark.bare_home
def test_needs_no_home_and_runs_as_a_subprocess(home):
    proc = script("autopilot.py", "protocol", home=home)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["seal"]["digest"] == protocol.describe()["seal"]["digest"]
    assert not os.path.exists(home)  # read-only: not even a home is made


@pytest.mark.parametrize("argv", [["--format", "yaml"], ["--format"], ["--format="], ["extra"], ["--fromat", "json"]])
def test_bad_input_is_a_usage_error(cli, argv):
    rc, out, err = cli("autopilot", "protocol", *argv)
    assert (rc, out) == (2, "") and err.count("\n") == 1


def test_every_command_of_every_door_is_described_with_an_output_shape(doc):
    described = _commands(doc)
    declared = {(name, command) for name, door in doors.DOORS.items() for command in doors.commands(door)}
    assert set(described) == declared
    for name, door in doors.DOORS.items():
        assert [entry["name"] for entry in doc["doors"][name]["commands"]] == list(doors.commands(door))
    undeclared = sorted(f"{door} {name}" for (door, name), entry in described.items() if entry["output"] is None)
    assert not undeclared, f"commands without an OUTPUTS shape: {undeclared}"
    assert described[("autopilot", "memory-ingest-git")]["arguments"][0]["name"] == "--repo"
    assert described[("autopilot", "protocol")]["needs_home"] is False
    assert described[("autopilot", "create")]["idempotency_key"] is True
    assert "replayed" in described[("autopilot", "create")]["output"]["optional"]
    assert "memory-search" in doc["mcp"]["default_tools"] and "init" in doc["mcp"]["never"]
    from mindos.mcp import tools  # the catalogue names exactly what a default mindos-mcp serves

    assert doc["mcp"]["default_tools"] == list(tools.exposed(profile=tools.DEFAULT_PROFILE))


# --- agreement with --help ------------------------------------------------------------


def _help(cli, door, argv):
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "200"
    try:
        rc, out, err = cli(door, *argv, "--help")
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    assert rc == 0, (argv, err)
    return out


def _usage(text):
    return " ".join(text.split("\n\n", 1)[0].split())


def _bracketed(usage, flag):
    """True when ``flag`` sits inside [ ] in the usage line (optional), False outside."""
    match = re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", usage)
    assert match, f"{flag} missing from usage: {usage}"
    depth = []
    for char in usage[:match.start()]:
        if char in "[(":
            depth.append(char)
        elif char in "])" and depth:
            depth.pop()
    return "[" in depth


def _sections(text):
    """``{"options": [flag tokens], "positionals": [names]}`` read off the help text."""
    found = {"options": [], "positionals": []}
    current = None
    for line in text.splitlines():
        if line in ("options:", "optional arguments:"):
            current = "options"
            continue
        if line == "positional arguments:":
            current = "positionals"
            continue
        if not line.strip() or not line.startswith("  ") or line.startswith("   "):
            if line and not line.startswith(" "):
                current = None
            continue
        if current:
            head = re.split(r"\s{2,}", line.strip())[0]
            if current == "options":
                found["options"] += [token.split(" ")[0] for token in head.split(", ")]
            else:
                found["positionals"].append(head)
    return found


def _check_parser(cli, door, argv, entry):
    text = _help(cli, door, argv)
    usage, seen = _usage(text), _sections(text)
    arguments = entry["arguments"]
    flags = {flag for arg in arguments if not arg["hidden"] for flag in arg["flags"]}
    assert set(seen["options"]) == flags | {"-h", "--help"}, (argv, set(seen["options"]) ^ (flags | {"-h", "--help"}))
    positionals = [arg["metavar"] or ("{" + ",".join(map(str, arg["choices"])) + "}" if arg["choices"] else arg["name"])
                   for arg in arguments if arg["kind"] == "positional"]
    if "actions" in entry:
        positionals.append(next(iter(seen["positionals"][len(positionals):]), None))
    assert seen["positionals"] == positionals, argv
    in_required_group = {flag for group in entry["exclusive_groups"] if group["required"] for flag in group["flags"]}
    for arg in arguments:
        if arg["kind"] == "positional" or arg["hidden"]:
            continue
        flag = arg["flags"][0]
        assert _bracketed(usage, flag) == (not arg["required"] and flag not in in_required_group), (argv, flag)
        if arg["choices"]:
            assert "{" + ",".join(map(str, arg["choices"])) + "}" in text, (argv, flag)
        assert (arg["type"] == "boolean") == (arg["kind"] == "switch"), (argv, flag)
    for name, action in entry.get("actions", {}).get("choices", {}).items():
        _check_parser(cli, door, [*argv, name], action)


def test_every_command_agrees_with_its_help(cli, doc):
    checked = 0
    for (door, name), entry in _commands(doc).items():
        _check_parser(cli, door, [name], entry)
        checked += 1
    assert checked == sum(len(doors.commands(door)) for door in doors.DOORS.values())


def test_global_flags_agree_with_the_door_help(cli, doc):
    text = _help(cli, "autopilot", [])
    assert {flag["name"] for flag in doc["global_flags"]} == {"-h", "--version", "--json-errors"}
    for flag in ("--help", "--version", "--json-errors"):
        assert flag in text


# --- agreement with real output --------------------------------------------------------


def test_declared_output_shapes_match_real_calls(tmp_path, doc):
    shapes = {key: entry["output"] for key, entry in _commands(doc).items()}
    checked, wrong = set(), []
    for door, argv, rc, output, err in protocolkit.session(str(tmp_path)):
        if rc != 0 and (rc != 1 or not isinstance(output, (dict, list))):
            wrong.append(f"{door} {' '.join(argv[:3])}: exit {rc}: {err.strip()[:120]}")
            continue  # a check that ran and failed (exit 1) still prints its report: checked below
        shape = shapes[(door, argv[0])]
        label = argv[0]
        if shape["type"] == "by_action":
            shape, label = shape["actions"][argv[1]], f"{argv[0]} {argv[1]}"
        shape = outputs.chosen(shape, argv)
        wrong += [f"{door} {label}: {problem}" for problem in outputs.problems(shape, output)]
        checked.add((door, argv[0]))
    assert not wrong, "\n".join(wrong)
    missed = set(shapes) - checked
    assert not missed, f"commands the session never ran: {sorted(missed)}"


@pytest.mark.parametrize("shape, output, fits", [
    ("{a b ?c}", {"a": 1, "b": 2}, True), ("{a b ?c}", {"a": 1, "b": 2, "c": 3}, True),
    ("{a b ?c}", {"a": 1}, False), ("{a b ?c}", {"a": 1, "b": 2, "d": 4}, False),
    ("{a ...}", {"a": 1, "z": 2}, True), ("[{a ?b}]", [{"a": 1}, {"a": 2, "b": 3}], True),
    ("[{a}]", [{"b": 1}], False), ("[]", ["t1", "t2"], True), ("text", "hello\n", True), ("text", {}, False),
    ("{@task}", {}, False), ("text | --json {a}", "hi", True), ("{a} | --text text", {"a": 1}, True),
])
def test_shape_notation(shape, output, fits):
    assert (outputs.problems(outputs.parse(shape), output) == []) is fits


def test_variants_follow_the_flag_that_asks_for_them():
    shape = outputs.parse("text | --json {a} | --format=yaml {b}")
    assert outputs.chosen(shape, ["morning"])["type"] == "text"
    assert outputs.chosen(shape, ["morning", "--json"])["keys"] == ["a"]
    assert outputs.chosen(shape, ["x", "--format", "yaml"])["keys"] == ["b"]
    assert outputs.chosen(shape, ["x", "--format=yaml"])["keys"] == ["b"]


@pytest.mark.parametrize("bad", ["", "{a", "[a]", "text json", "hello", "text | json {a}", "text | --json"])
def test_malformed_shapes_are_refused(bad):
    with pytest.raises(ValueError):
        outputs.parse(bad)


# --- the error-code vocabulary ----------------------------------------------------------


def _source_codes():
    """Every (code, exit) the package's source can raise or print."""
    found = set()
    classes = {}
    for folder, _, files in os.walk(os.path.join(ROOT, "mindos")):
        for name in files:
            if not name.endswith(".py"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                text = handle.read()
            found.update((code, None) for code in re.findall(r"\bcode=\"([a-z_]+)\"", text))
            found.update((code, int(exit_code)) for code, exit_code in
                         re.findall(r"\"([a-z_]+)\", (\d+), as_json", text))
            for match in re.finditer(r"class (\w+)\((\w+)\):\n(?:    .*\n|\n)*?    code = \"([a-z_]+)\"", text):
                classes[match.group(1)] = match.group(3)
    found.update((code, None) for code in classes.values())
    return found


def test_every_error_code_in_the_source_is_published():
    published = {code: exit_code for code, exit_code, _ in errors.CODES}
    for code, exit_code in _source_codes():
        assert code in published, f"error code {code!r} is raised but not in mindos.errors.CODES"
        assert exit_code is None or published[code] == exit_code, code
    for cls in (errors.MindosError, errors.InvalidInput, errors.NotFound, errors.Refused, errors.Conflict,
                errors.IntegrityError):
        assert published[cls.code] == cls.exit_code
    assert {item["exit"] for item in protocol.describe()["exit_codes"]} == {0} | set(published.values())


def test_the_readme_tables_are_the_published_vocabulary():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    codes = re.findall(r"^\| `([a-z_]+)` \| (\d+) \| (.+) \|$", readme, re.M)
    assert [(code, int(exit_code), meaning) for code, exit_code, meaning in codes] == list(errors.CODES)
    exits = re.findall(r"^\| (\d+) \| (.+) \|$", readme, re.M)
    assert [(int(exit_code), meaning) for exit_code, meaning in exits] == list(errors.EXIT_CODES)


@pytest.mark.parametrize("door, command, flag", [
    ("autopilot", "memory-ingest-git", "--repo"), ("autopilot", "memory-ingest-git", "--max-commits"),
    ("autopilot", "events", "--entity-type"), ("autopilot", "memory-list", "--kind"),
    ("autopilot", "memory-list", "--since"), ("autopilot", "show", "--limit"), ("ops", "repair", "--finding-hash"),
    ("ops", "approval", "--reason"), ("ops", "home-select", "--selector"), ("ops", "home-deselect", "--selector"),
    ("autopilot", "session-ingest", "--since"), ("autopilot", "protocol", "--format"),
])
def test_the_new_capabilities_are_described(doc, door, command, flag):
    entry = _commands(doc)[(door, command)]
    described = {arg["name"]: arg for arg in entry["arguments"]}
    assert flag in described and described[flag]["help"]
    if flag in ("--max-commits", "--limit"):
        assert described[flag]["type"] == "integer" and isinstance(described[flag]["default"], int)
    if flag == "--format":
        assert described[flag]["choices"] == ["json", "text"] and described[flag]["default"] == "json"
    if flag == "--repo":
        assert described[flag]["required"] is True


def test_the_digest_does_not_depend_on_the_caller(monkeypatch, tmp_path, doc):
    """Same code, same digest: the home, HOME, the terminal width and the selector never leak in."""
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("COLUMNS", "37")
    monkeypatch.setenv("HERMES_AUTOPILOT_HOME", str(tmp_path / "another-home"))
    monkeypatch.setenv("AUTOPILOT_HOME_SELECTOR", str(tmp_path / "selector.json"))
    assert protocol.describe()["seal"]["digest"] == doc["seal"]["digest"]
