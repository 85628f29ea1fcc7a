"""The MCP tool table is the CLI's command table: names from the allowlist, schemas from the command declarations."""

import functools

import pytest

from mindos.cli import doors, spec
from mindos.errors import InvalidInput
from mindos.mcp import tools


def _actions(tool):
    return tools.arguments(tool.command)


def test_exposed_tools_are_the_allowlisted_commands_that_exist():
    where = tools.door_of()
    exposed = tools.exposed()
    assert list(exposed) == [name for name in tools.AGENT_TOOLS if name in where]
    for name in ("create", "show", "list", "search", "next", "claim", "heartbeat", "renew", "release",
                 "complete", "fail", "receipt", "note", "search-notes", "handoff", "handoff-inbox", "ack",
                 "context", "prime"):
        assert name in exposed, name
    # recall, memory-retain, facts ... appear by themselves once registered in the door table
    for name in ("recall", "recall-verify", "memory-retain", "memory-search", "fact-assert", "facts"):
        assert (name in exposed) == (name in where)


def test_operator_commands_are_exposed_only_when_allowed():
    exposed = tools.exposed()
    for name in ("cancel", "update", "transfer", "recover", "escalate", "consolidate", "dep-remove"):
        assert name not in exposed
    allowed = tools.exposed(["cancel", "recover"])
    assert allowed["cancel"].door == "autopilot" and allowed["recover"].door == "ops"
    for name in ("init", "demo", "setup", "no-such-command"):
        with pytest.raises(InvalidInput, match="cannot be exposed"):
            tools.exposed([name])


def _required_text(tool):
    """The ``--NAME`` of a required ``--NAME`` / ``--NAME-file`` pair (the file twin is not a tool argument)."""
    return {a.dest for group in tool.command.groups if group.required
            for a in group.arguments if not a.flags[0].endswith("-file")}


@functools.lru_cache(maxsize=None)
def _every_tool():
    """Every tool with every gated argument honoured, built once for the cases below (each of
    them only reads its own tool)."""
    return tools.exposed(tools.allowable(), overrides=tuple(tools.GATED))


@pytest.mark.parametrize("name", list(tools.exposed(tools.allowable())))
def test_every_tool_schema_matches_its_cli_flags(name):
    tool = _every_tool()[name]
    schema = tool.schema
    actions = _actions(tool)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert list(schema["properties"]) == [action.dest for action in actions]
    assert schema["required"] == [a.dest for a in actions if a.required or (a.positional and a.nargs not in ("?", "*"))
                                  or a.dest in _required_text(tool)]
    sample = {}
    for action in actions:
        prop = schema["properties"][action.dest]
        flag = action.dest if action.positional else action.flags[0]
        assert f"(CLI: {flag})" in prop["description"]
        if action.kind in ("store_true", "store_false"):
            assert prop["type"] == "boolean" and prop["default"] == action.default
            sample[action.dest] = action.kind == "store_true"
            continue
        many = action.kind == "append" or action.nargs in ("*", "+")
        scalar = prop["items"] if many else prop
        assert prop["type"] == ("array" if many else scalar["type"])
        # int and integer-parsing functions (flags.integer) are integers; float is a number
        type_name = getattr(action.type, "__name__", None)
        assert scalar["type"] == {"int": "integer", "integer": "integer", "float": "number", "number": "number"}.get(
                type_name, "string")
        if action.choices is not None:
            assert scalar["enum"] == list(action.choices)
            value = list(action.choices)[0]
        else:
            value = {"integer": 7, "number": 1.5, "string": "-dash value"}[scalar["type"]]
        sample[action.dest] = [value, value] if prop["type"] == "array" else value
    # one value per argument goes through the CLI parser and lands on the same dest
    namespace = tool.namespace(sample)
    for dest, value in sample.items():
        assert getattr(namespace, dest) == value, dest
    assert namespace.command == name


def test_tool_descriptions_come_from_the_door_table():
    table = doors.commands(doors.AUTOPILOT)
    for name, tool in tools.exposed().items():
        assert tool.description.startswith(table[name][1])
        assert "Example (CLI): autopilot.py " + name in tool.description


@pytest.mark.parametrize("args, match", [
    ("not an object", "must be an object"),
    ({"task_id": "t1"}, "missing required argument 'owner'"),
    ({"task_id": "t1", "owner": "a", "bogus": 1}, "unknown argument 'bogus'"),
    ({"task_id": "t1", "owner": "a", "minutes": "30"}, "'minutes' must be an integer"),
    ({"task_id": "t1", "owner": "a", "minutes": True}, "'minutes' must be an integer"),
    ({"task_id": "t1", "owner": "a", "force": "yes"}, "'force' must be a boolean"),
    ({"task_id": 5, "owner": "a"}, "'task_id' must be a string"),
])
def test_invalid_arguments_are_refused_before_the_handler(args, match):
    tool = tools.exposed(overrides=("force",))["claim"]
    with pytest.raises(tools.ArgumentsError, match=match) as caught:
        tool.namespace(args)
    assert tools.error_code(caught.value) == "usage"


def test_error_codes_are_stable():
    from mindos import errors

    assert [tools.error_code(cls("x")) for cls in (errors.InvalidInput, errors.NotFound, errors.Refused,
                                                    errors.Conflict, errors.IntegrityError, errors.MindosError)] \
        == ["invalid", "not_found", "refused", "conflict", "integrity", "error"]


def test_constructs_without_a_schema_form_are_skipped_not_fatal(monkeypatch, caplog):
    real = tools.build_tool

    def fake(door_name, name, *rest):
        if name == "note":
            raise tools.Unsupported("x: _CountAction")
        return real(door_name, name, *rest)

    monkeypatch.setattr(tools, "build_tool", fake)
    exposed = tools.exposed()
    assert "note" not in exposed and "claim" in exposed
    assert "not exposing note" in caplog.text


def test_custom_integer_types_and_optional_positionals_map_faithfully():
    def integer(text):
        return int(text)

    command = spec.Command("sample")
    count = command.add_argument("count", nargs="?", type=integer)
    verbose = command.add_argument("--quiet", action="store_false", dest="verbose")
    flagged = command.add_argument("--flagged", nargs="+")
    assert tools._property(count)["type"] == "integer" and count.must is False
    assert tools._property(verbose) == {"type": "boolean", "default": True, "description": "(CLI: --quiet)"}
    with pytest.raises(tools.Unsupported):
        tools._property(flagged)


def test_a_repeated_argument_set_reuses_its_parse_and_no_call_shares_its_namespace(monkeypatch):
    tool = tools.exposed()["next"]
    parses = []
    real = tool.parser.parse_args
    monkeypatch.setattr(tool.parser, "parse_args", lambda argv: parses.append(argv) or real(argv))
    args = {"project": "Alpha", "tag": ["x", "y"], "claim": True, "owner": "codex"}
    first = tool.namespace(dict(args))
    first.tag.append("mutated by a handler")
    first.owner = "someone else"
    second = tool.namespace({"owner": "codex", "claim": True, "tag": ["x", "y"], "project": "Alpha"})  # same set
    assert len(parses) == 1
    assert vars(second) == vars(tools.build_tool("autopilot", "next").namespace(args))
    assert second is not first and second.tag == ["x", "y"] and second.owner == "codex"
    assert tool.namespace({"project": "Alpha", "tag": ["x"], "claim": True, "owner": "codex"}).tag == ["x"]
    assert len(parses) == 2  # another set: parsed
    with pytest.raises(tools.ArgumentsError, match="must be a boolean"):
        tool.namespace({**args, "claim": 1})  # 1 is not true: never served from the set above
    long_text = {"owner": "codex", "project": "A" * 40, "tag": ["t" * 30] * 20}
    tool.namespace(long_text)
    tool.namespace(long_text)
    assert len(parses) == 4  # too long to keep: parsed each time (the refused one never reached the parser)
    for n in range(tools.PARSED_KEEP + 5):
        tool.namespace({"owner": f"agent{n}"})
    assert len(tool.parsed) == tools.PARSED_KEEP


def test_parsed_argument_sets_are_safe_to_share_between_worker_threads():
    import threading

    tool = tools.exposed()["show"]
    failures = []

    def work(worker):
        try:
            for n in range(300):
                task_id = f"t-{worker}-{n % 90}"
                namespace = tool.namespace({"task_id": task_id})
                if namespace.task_id != task_id:
                    failures.append((task_id, namespace.task_id))
        except Exception as exc:  # noqa: BLE001 (any failure of the shared table fails the test)
            failures.append(repr(exc))

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(tool.parsed) <= tools.PARSED_KEEP + len(threads)
