"""``autopilot.py protocol``: the sealed, machine-readable self-description of every front door.

An agent reads this once instead of scraping ``--help``: every door's commands in help
order, each with its summary, section, example, arguments (flag, type, required, default,
choices, repeatable, exclusive groups, nested actions), whether it needs a home, whether it
takes an idempotency key, and the top-level keys of its JSON output; plus the error-code
and exit-code vocabulary and the MindOS and schema versions.

Design decisions
  * **Generated, never written by hand.**  Commands and summaries come from the door table
    (:mod:`mindos.cli.doors`); arguments from each command's own declaration
    (:mod:`mindos.cli.spec`), the one ``--help`` is built from; output shapes from the ``OUTPUTS``
    declared beside each command module's ``COMMANDS`` (:mod:`mindos.cli.outputs`); codes
    from :data:`mindos.errors.CODES`.  ``tests/cli/test_protocol.py`` checks every command
    against its ``--help`` and a representative set against real outputs.
  * **Sealed with the project's seal.**  The document is ``mindos-protocol-v1`` sealed by
    :func:`mindos.core.seal.seal` over its canonical JSON with nothing left outside the seal
    (there is no timestamp): the same code always yields the same digest, so an agent can
    cache the catalogue by digest and notice when an upgrade changed it.
  * **Read-only and home-free**: it opens no database.
"""

from mindos import __version__, errors
from mindos.cli import doors, make_parser, outputs, parsers, spec
from mindos.core import load_module, seal
from mindos.store import db  # read for its SCHEMA_VERSION constant; no database is opened

FORMAT = "mindos-protocol-v1"
SKIPPED_DESTS = ("help", "version")


def add_protocol(sub):
    p = make_parser(sub, "protocol", "autopilot.py protocol --format text")
    p.add_argument("--format", choices=("json", "text"), default="json",
                   help="json: the sealed catalogue (default); text: the same, for people")
    p.set_defaults(handler=cmd_protocol, needs_db=False)


def cmd_protocol(conn, args):
    doc = describe()
    return render_text(doc) if args.format == "text" else doc


def describe():
    """The sealed protocol document (``format``, ``mindos_version``, ``schema_version``,
    ``doors``, ``mcp``, ``global_flags``, ``errors``, ``exit_codes``, ``seal``)."""
    body = {
        "mindos_version": __version__,
        "schema_version": db.SCHEMA_VERSION,
        "doors": {name: door_entry(door) for name, door in doors.DOORS.items()},
        "mcp": mcp_entry(),
        "global_flags": global_flags(),
        "errors": [{"code": code, "exit": exit_code, "meaning": meaning} for code, exit_code, meaning in errors.CODES],
        "exit_codes": [{"exit": exit_code, "meaning": meaning} for exit_code, meaning in errors.EXIT_CODES],
    }
    return seal.seal(FORMAT, body, outside=())


def digest(doc):
    """The protocol's digest (its seal's)."""
    return doc["seal"]["digest"]


def global_flags():
    """The flags every door takes, from a door's own declaration (and argparse's ``-h``)."""
    root = parsers.door_command(doors.AUTOPILOT, doors.AUTOPILOT.script)
    return [argument(each) for each in (spec.HELP, *root.arguments)]


def mcp_entry():
    """The MCP front door: which door commands it serves as tools by default, which only
    when allowed, and which never (its tool schemas are the command arguments above)."""
    from mindos.mcp import tools  # lazy: only protocol reads the MCP allowlist

    where = tools.door_of()
    return {"module": "python3 -m mindos.mcp", "installed": "mindos-mcp",
            "default_tools": tools.profile_names(tools.DEFAULT_PROFILE, where),
            "read_only": sorted(tools.READ_ONLY & set(where)), "never": sorted(tools.NEVER),
            "allowable": tools.allowable()}


def door_entry(door):
    """One door: its scripts, description and commands (a list, in help order)."""
    commands = []
    for section, entries in door.sections:
        for command, module_name, summary in entries:
            module = load_module(f"mindos.cli.{module_name}")
            declared = getattr(module, "OUTPUTS", {}).get(command)
            commands.append(command_entry(command, doors.declare(door, door.script, command), section, summary,
                                          None if declared is None else outputs.parse(declared)))
    return {"script": door.script, "installed": door.installed, "description": door.description,
            "commands": commands}


def command_entry(name, command, section, summary, output):
    """One command (a :class:`mindos.cli.spec.Command`): name, summary, section, example,
    arguments, nested actions, needs_home, idempotency key and declared output shape (None
    when undeclared)."""
    description = command.description or ""
    example = description.split("Example:", 1)[1].strip() if "Example:" in description else None
    entry = {"name": name, "summary": summary, "section": section, "example": example}
    entry.update(parser_entry(command))
    entry["needs_home"] = command.get_default("needs_db") is not False
    entry["idempotency_key"] = "--request-id" in command.by_flag
    if entry["idempotency_key"] and output is not None and output["type"] == "object":
        # the plumbing marks a result under --request-id (mindos.cli._replayable)
        output = {**output, "optional": sorted({*output["optional"], "replayed"})}
    entry["output"] = output
    return entry


def parser_entry(command):
    """``{"arguments", "exclusive_groups", "actions"}`` of one declared command."""
    arguments = [argument(each) for each in command.arguments if each.dest not in SKIPPED_DESTS]
    groups = [{"flags": [each.flags[0] for each in group.arguments], "required": bool(group.required)}
              for group in command.groups]
    entry = {"arguments": arguments, "exclusive_groups": groups}
    nested = command.subcommands
    if nested is not None:
        entry["actions"] = {"dest": nested.dest, "required": nested.required,
                            "choices": {name: {"help": action.summary, **parser_entry(action)}
                                        for name, action in nested.choices.items()}}
    return entry


def argument(each):
    """One declared argument as data: ``name``, ``flags``, ``dest``, ``kind`` (positional,
    option, switch), ``type``, ``required``, ``default``, ``choices``, ``repeatable``,
    ``metavar``, ``help``, ``hidden`` (accepted, but left out of ``--help``)."""
    positional = each.positional
    flagless = each.kind in ("help", "version")
    return {
        "name": each.dest if positional else each.flags[0],
        "flags": [] if positional else list(each.flags),
        "dest": each.dest,
        "kind": "positional" if positional else each.kind if flagless else "switch" if each.switch else "option",
        "type": "boolean" if each.switch or flagless else spec.json_type(each.type),
        "required": each.must,
        "default": None if flagless else _plain(each.default),
        "choices": None if each.choices is None else [_plain(c) for c in each.choices],
        "repeatable": each.repeatable,
        "metavar": each.metavar if isinstance(each.metavar, str) else None,
        "help": None if each.hidden else each.help,
        "hidden": each.hidden,
    }


def _plain(value):
    """A default or choice as JSON data (anything else by its text)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return str(value)


# ---------------------------------------------------------------------------------------
# Text


def render_text(doc):
    """The protocol for people: one block per command, then the codes."""
    lines = [f"MindOS {doc['mindos_version']} protocol (schema {doc['schema_version']}), "
             f"{doc['format']} digest {digest(doc)}", ""]
    for name, door in doc["doors"].items():
        lines.append(f"== {door['script']} ({door['installed']}): {door['description']}")
        for entry in door["commands"]:
            lines.append("")
            lines.append(f"{door['script']} {entry['name']}  [{entry['section']}]  {entry['summary']}")
            lines.extend(_text_arguments(entry, "  "))
            lines.append(f"  output: {_text_output(entry['output'])}")
        lines.append("")
    lines.append("== global flags: " + ", ".join(flag["name"] for flag in doc["global_flags"]))
    lines.append("== error codes")
    lines.extend(f"  {item['code']:<18} exit {item['exit']:<3} {item['meaning']}" for item in doc["errors"])
    lines.append("== exit codes")
    lines.extend(f"  {item['exit']:<4} {item['meaning']}" for item in doc["exit_codes"])
    return "\n".join(lines) + "\n"


def _text_arguments(entry, indent):
    lines = []
    for arg in entry["arguments"]:
        facts = [arg["type"]]
        if arg["required"]:
            facts.append("required")
        if arg["repeatable"]:
            facts.append("repeatable")
        if arg["default"] not in (None, False, [], ""):
            facts.append(f"default {arg['default']}")
        if arg["choices"]:
            facts.append("one of " + "|".join(map(str, arg["choices"])))
        lines.append(f"{indent}{arg['name']} ({', '.join(facts)})")
    for name, action in (entry.get("actions") or {}).get("choices", {}).items():
        lines.append(f"{indent}{name}: {action['help'] or ''}".rstrip())
        lines.extend(_text_arguments(action, indent + "  "))
    return lines


def _text_output(shape):
    if shape is None:
        return "undeclared"
    if shape.get("variants"):
        plain = {key: value for key, value in shape.items() if key != "variants"}
        variants = [f"{variant['flag']} {_text_output(variant['shape'])}" for variant in shape["variants"]]
        return " | ".join([_text_output(plain), *variants])
    if shape["type"] in ("object", "array"):
        keys = shape.get("keys", shape.get("item_keys")) + [key + "?" for key in shape["optional"]]
        keys += ["..."] if shape["open"] else []
        inner = "{" + ", ".join(keys) + "}" if keys else ""
        return inner if shape["type"] == "object" else f"[{inner}]"
    if shape["type"] == "by_action":
        return "; ".join(f"{name}: {_text_output(each)}" for name, each in shape["actions"].items())
    return "text"


COMMANDS = {
    "protocol": add_protocol,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "protocol": "{doors errors exit_codes format global_flags mcp mindos_version schema_version seal} |"
                " --format=text text",
}
