"""The secret guard covers every stored string: every text argument of every command of every
door, and every string argument of every MCP tool, is fed a credential; the credential must
never be stored (refused, or read and not kept).

The arguments are enumerated from the commands' own declarations (tests/door_cases.py names
a working call of each command and fails when a door command has none), so a flag added
tomorrow is covered the day it is declared.  Each variant runs in a fresh copy of the seeded
home.  The fields an earlier build stored as written (``declare --model``, ``mood --title``,
``agent --command``, ``set --note``, ``page set --file``) must be refused outright.
"""

import json
import os
import shutil

import pytest

import door_cases
from conftest import START
from door_cases import AWS
from mindos.core import clock

CREDENTIAL_TEXT = f"the deploy key is {AWS} for now"
# flags whose value is a path the command reads: fed a file holding the credential
READ_FILES = {"payload_file", "content_file", "objective_file", "file", "bank"}
# JSON arguments: fed JSON holding the credential (None: the botmail envelope, fed whole by the
# test, since it excludes the flags that compose one)
JSON_VALUES = {"payload": json.dumps({"key": AWS}), "envelope": None}
# arguments that are not stored text: where a command writes its artifact, a directory it
# reads or a home to act on (a credential-named path is a path, and nothing of it is stored)
NOT_TEXT = {"out", "root", "home", "target", "project_dir", "hermes_home", "claude_home", "inventory",
            "result", "checkpoint"}
# single-token arguments (ids, names, tags): a credential there is the bare token
IDENTIFIER_LIKE = {"id", "owner", "project", "source", "from_agent", "to_agent", "agent", "by", "editor",
                   "recipient", "peer", "profile", "sender", "granted_by", "model", "alias",
                   "rename", "mood", "author", "request_id", "envelope_id", "receipt", "kind", "tag", "subject",
                   "predicate", "object", "task", "commit", "branch", "worktree", "thread", "harness", "klass",
                   "from_owner", "to_owner", "superseded_by", "depends_on", "requires_receipt", "approved_by",
                   "instructions_page", "page", "action", "entity_id", "source_id", "name"}

# the fields an earlier build stored with a credential in them
ONCE_STORED = {(("autopilot", "declare"), "model"), (("mood_poller", "mood create"), "title"),
               (("mood_poller", "mood update"), "title"), (("mood_poller", "agent create"), "command"),
               (("mood_poller", "agent update"), "command"), (("mood_poller", "set"), "note"),
               (("mood_poller", "page set"), "file")}


def text_actions(command):
    """The string-valued arguments of a declared command: no type, no choices, not a switch."""
    return [argument for argument in command.arguments
            if argument.kind in ("store", "append") and argument.type is None and argument.choices is None]


def _value_positions(command, argv):
    """``{dest: index in argv}`` of the values the base call gives (options and positionals)."""
    by_flag, positionals = command.by_flag, command.positionals
    found, index, position = {}, 0, 0
    while index < len(argv):
        arg = argv[index]
        action = by_flag.get(arg)
        if action is not None:
            if action.switch:
                index += 1
                continue
            found.setdefault(action.dest, index + 1)
            index += 2
            continue
        if position < len(positionals):
            found.setdefault(positionals[position].dest, index)
            position += 1
        index += 1
    return found


def variants(key, values):
    """``[(dest, argv)]``: the base call with each text argument holding a credential."""
    door, command = key
    declared = door_cases.command_of(door, command)
    words = len(command.split())
    base = door_cases.argv_of(key, values)
    head, tail = base[:words], base[words:]
    positions = _value_positions(declared, tail)
    out = []
    for action in text_actions(declared):
        dest = action.dest
        if dest in NOT_TEXT or (action.positional and dest in ("file", "inventory", "result")):
            continue
        if dest in READ_FILES:
            path = os.path.join(values["scratch"], f"credential-{dest}.txt")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(JSON_VALUES["payload"] if dest == "payload_file" else CREDENTIAL_TEXT + "\n")
            value = path
        elif dest in JSON_VALUES:
            if JSON_VALUES[dest] is None:
                continue  # the envelope: fed whole below (it excludes the composing flags)
            value = JSON_VALUES[dest]
        else:
            value = AWS if action.positional or dest in IDENTIFIER_LIKE else CREDENTIAL_TEXT
        argv = list(tail)
        if dest in positions:
            argv[positions[dest]] = value
        elif not action.positional:
            # a flag the base call leaves out; drop its exclusive twin (--content vs --content-file)
            twin = {"content_file": "--content", "payload_file": "--payload", "objective_file": "--objective",
                    "file": "--text"}.get(dest)
            if twin in argv:
                at = argv.index(twin)
                del argv[at:at + 2]
            argv += [action.flags[0], value]
        else:
            continue
        out.append((dest, head + argv))
    return out


def stored_anywhere(conn, home, needle):
    """Where ``needle`` is stored: ``table.column`` names, and home files (other than the database) holding it."""
    places = []
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]
        for column in columns:
            try:
                hit = conn.execute(f'SELECT 1 FROM "{table}" WHERE instr(CAST("{column}" AS TEXT), ?) > 0 LIMIT 1',
                                   (needle,)).fetchone()
            except Exception:  # noqa: BLE001 - a virtual table's hidden column
                hit = None
            if hit:
                places.append(f"{table}.{column}")
    for folder, _, names in os.walk(home):
        for name in names:
            if name.startswith("state.db"):
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as handle:
                    if needle.encode() in handle.read():
                        places.append(os.path.relpath(path, home))
            except OSError:
                pass
    return places


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    root = tmp_path_factory.mktemp("guard-coverage")
    saved = {key: os.environ.get(key) for key in ("HERMES_AUTOPILOT_HOME", "MINDOS_HOME", "AUTOPILOT_HOME_SELECTOR")}
    os.environ.pop("MINDOS_HOME", None)
    os.environ["AUTOPILOT_HOME_SELECTOR"] = str(root / "no-selector.json")
    home = str(root / "home")
    clock.set_now(START)  # the seed runs before the per-test home fixture pins the clock
    values = door_cases.seed(home, str(root / "scratch"))
    shutil.copytree(home, home + ".seed")
    yield values
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _fresh(values, monkeypatch):
    monkeypatch.chdir(values["scratch"])  # a relative path a command writes lands there, never in the checkout
    home = values["home"]
    shutil.rmtree(home)
    shutil.copytree(home + ".seed", home)
    monkeypatch.setenv("HERMES_AUTOPILOT_HOME", home)
    monkeypatch.delenv("MINDOS_HOME", raising=False)


def test_every_door_command_has_a_case():
    commands = set(door_cases.door_commands())
    assert sorted(commands - set(door_cases.CASES)) == []
    assert sorted(set(door_cases.CASES) - commands) == []


def test_no_text_argument_of_any_command_stores_a_credential(seeded, monkeypatch):
    from mindos.store import db

    checked, refused, leaks = 0, set(), []
    for key in door_cases.CASES:
        runs = variants(key, seeded)
        if key == ("autopilot", "botmail-send"):
            envelope = _envelope(seeded)
            runs.append(("envelope", ["botmail-send", "--envelope", envelope]))
        for dest, argv in runs:
            _fresh(seeded, monkeypatch)
            rc, out, err, crashed = door_cases.call(key[0], argv)
            assert crashed is None, (key, dest, crashed)
            checked += 1
            if rc != 0:
                refused.add((key, dest))
            conn = db.connect(seeded["home"])
            try:
                places = stored_anywhere(conn, seeded["home"], AWS)
            finally:
                conn.close()
            if places:
                leaks.append((key, dest, rc, places))
    assert leaks == [], "\n".join(map(str, leaks))
    assert checked > 250
    assert ONCE_STORED <= refused, sorted(ONCE_STORED - refused)


def _envelope(values):
    from mindos.comms import botmail

    return json.dumps(botmail.compose("codex", "hermes", "work", CREDENTIAL_TEXT, epoch=1, harness="codex",
                                      envelope_id="m-cred"))


def test_every_mcp_tool_string_argument_is_covered_and_refuses_a_credential(seeded, monkeypatch):
    from mindos.mcp import server, tools
    from mindos.store import db

    where = tools.door_of()
    names = [name for name in where if name not in tools.NEVER]
    leaks, checked = [], 0
    for name in names:
        try:
            tool = tools.build_tool(where[name], name)
        except tools.Unsupported:
            continue  # nested subcommands have no tool form
        key = (where[name], name)
        assert key in door_cases.CASES
        cli_dests = {action.dest for action in text_actions(door_cases.command_of(*key))}
        strings = [dest for dest, schema in tool.schema["properties"].items()
                   if (schema.get("items", schema))["type"] == "string" and "enum" not in schema.get("items", schema)]
        # every string argument of the tool is a text argument of the CLI command (covered above)
        assert set(strings) <= cli_dests, (name, set(strings) - cli_dests)
        base = vars(door_cases.parser_of(*key).parse_args(door_cases.argv_of(key, seeded)[len(key[1].split()):]))
        for dest in strings:
            if dest in NOT_TEXT or dest in JSON_VALUES or dest in ("file", "inventory", "result", "bank"):
                continue
            args = {k: v for k, v in base.items() if k in tool.schema["properties"] and v is not None
                    and v != tool.schema["properties"][k].get("default")}
            value = AWS if dest in IDENTIFIER_LIKE else CREDENTIAL_TEXT
            args[dest] = [value] if tool.schema["properties"][dest]["type"] == "array" else value
            _fresh(seeded, monkeypatch)
            conn = db.connect(seeded["home"])
            try:
                server.Server(conn, {name: tool}).run(tool, args, conn)
                places = stored_anywhere(conn, seeded["home"], AWS)
            finally:
                conn.close()
            checked += 1
            if places:
                leaks.append((name, dest, places))
    assert leaks == [], "\n".join(map(str, leaks))
    assert checked > 40
