"""MCP tools generated from the CLI's own command table, so the two never drift.

Design decisions
  * **An allowlist of names, never hand-written schemas.**  :data:`AGENT_TOOLS` names the
    agent-facing commands; a name is exposed when it exists in a door of
    :mod:`mindos.cli.doors` (so ``recall``, ``memory-retain``, ``facts`` ... appear by
    themselves the day their command is registered).  Each tool's input schema is derived
    from that command's declaration (:mod:`mindos.cli.spec`, the one its argparse parser is
    built from): one property per argument, named by its ``dest`` (``--next-action`` ->
    ``next_action``), typed from its kind (``store_true`` -> boolean, ``append`` -> array,
    ``type=int`` -> integer, ``choices`` -> enum), required exactly when the CLI requires it.
  * **A lean default profile.**  Every session pays for the tool definitions in its context
    window, so the default profile (:data:`PROFILES` ``agent``) exposes the eleven tools of
    the agent loop (recall, claim, act, note, receipt, complete or fail, handoff) with only
    the arguments that loop uses (the CLI's required ones always), about 10 KB in all;
    ``--tools all`` exposes :data:`AGENT_TOOLS` with every argument.  A text the CLI takes
    as ``--NAME`` or ``--NAME-file`` (one of them required) is a required property here.
  * **Overrides are the operator's.**  :data:`GATED` arguments (``allow_secret`` bypasses
    the secret guard, ``force`` seam conflicts and dispatch policy) are left out of every schema unless
    the server was started with their flag; a call that passes one anyway is refused.
  * **Operator commands are opt-in.**  Everything else in the doors (``cancel``,
    ``update``, ``transfer``, ``ops.py recover`` ...) is exposed only when the server is
    started with ``--allow NAME``; :data:`NEVER` (``init``, ``demo``, ``setup`` and the hook commands,
which read the harness's event on stdin, the server's protocol stream) never is.
  * **A call is the CLI call.**  :meth:`Tool.namespace` checks the arguments against the
    schema, turns them into the argv the CLI would get (options as ``--flag=value`` so a
    value starting with ``-`` stays a value, positionals after ``--``) and parses them with
    the same parser, so defaults, choices and validation are the CLI's own; the handler is
    the CLI handler.
  * **Stable error codes.**  :func:`error_code` maps the exception family of
    :mod:`mindos.errors` to the CLI's code vocabulary (``invalid``, ``usage``,
    ``not_found``, ``refused``, ``conflict``, ``integrity``, ``error``); an exception
    carrying its own string ``code`` keeps it.
"""

import argparse
import logging
from typing import NamedTuple

from mindos import errors
from mindos.cli import build_parser, doors, safe_line, spec

log = logging.getLogger(__name__)

# The agent-facing commands, in the order tools/list shows them (names not yet registered
# in the door table are skipped until they are).
AGENT_TOOLS = (
    "prime", "next", "claim", "heartbeat", "renew", "release", "complete", "fail", "receipt", "run-receipt",
    "note", "search-notes", "handoff", "handoff-inbox", "ack", "context", "recall", "recall-verify",
    "memory-retain", "memory-search", "fact-assert", "facts", "create", "show", "list", "search",
)
# The default profile: tool -> the optional arguments it keeps (the CLI's required ones are
# always kept), in the order of the agent loop.  Everything else needs --tools all.
PROFILES = {
    "agent": {
        "recall": ("budget",),
        "memory-search": ("project", "scope", "limit"),
        "next": ("project", "tag", "claim", "owner", "minutes", "request_id"),
        "claim": ("minutes", "epoch"),
        "heartbeat": ("note", "minutes", "epoch"),
        "show": (),
        "note": ("kind", "content", "source", "pinned", "request_id"),
        "receipt": ("payload", "request_id"),
        "complete": ("note", "receipt", "recall_digest", "recap", "epoch", "request_id"),
        "fail": ("reason", "cause", "receipt", "no_retry", "epoch", "request_id"),
        "handoff": ("to_agent", "status", "objective", "evidence", "constraint", "decision", "commit",
                    "next_action", "risk", "recall_digest", "request_id"),
    },
}
DEFAULT_PROFILE = "agent"
ALL = "all"  # --tools all: every AGENT_TOOLS name with every argument
# Arguments that override a guard: exposed and honoured only when the server is started
# with the flag named here.
GATED = {"allow_secret": "--allow-secret-override", "force": "--allow-force"}
# Commands no MCP client may reach, even when allowed: they set up or leave the home.
NEVER = frozenset({"init", "demo", "setup", "session-start", "stop-gate"})  # hooks read stdin: the protocol stream
READ_ONLY = frozenset({"show", "list", "search", "search-notes", "handoff-inbox", "context", "facts",
                       "memory-search", "recall-verify", "handoff-current", "handoffs", "notes", "leases"})

# The stable code vocabulary of the CLI's JSON errors (an exception that carries its own
# ``code`` keeps it; these are the family defaults).
ERROR_CODES = (
    (errors.Conflict, "conflict"),
    (errors.InvalidInput, "invalid"),
    (errors.NotFound, "not_found"),
    (errors.Refused, "refused"),
    (errors.IntegrityError, "integrity"),
    (errors.MindosError, "error"),
)
USAGE = "usage"                    # arguments the command's parser refuses (argparse's usage errors)
INTERNAL_ERROR = "internal_error"  # a bug: logged with its traceback on stderr


def error_code(exc):
    """The stable code of a MindOS error (``not_found``, ``refused``, ``conflict``, ``invalid`` ...)."""
    own = getattr(exc, "code", None)
    if isinstance(own, str) and own:
        return own
    for cls, code in ERROR_CODES:
        if isinstance(exc, cls):
            return code
    return INTERNAL_ERROR


class ArgumentsError(errors.InvalidInput):
    """Tool arguments that do not fit the schema (or that the CLI parser refuses)."""

    code = USAGE


class OverrideRefused(errors.Refused):
    """A guard override (``allow_secret``, ``force``) the server was not started to honour."""

    code = "override_refused"


def _raise_error(message):
    """A parser's ``error`` for tool calls: raise instead of printing and exiting."""
    raise ArgumentsError(safe_line(message))


def _raise_exit(status=0, message=None):
    """A parser's ``exit`` for tool calls (argparse exits only on errors here: no --help)."""
    raise ArgumentsError(safe_line(message or "") or "the arguments were refused")


class Unsupported(Exception):
    """A declaration with no faithful JSON-schema form (the command is not exposed)."""


def _property(argument):
    """The JSON schema of one declared argument (a :class:`mindos.cli.spec.Argument`)."""
    if argument.switch:
        schema = {"type": "boolean", "default": argument.default}
    elif argument.kind not in ("store", "append"):
        raise Unsupported(f"{argument.dest}: a {argument.kind} argument")
    elif not argument.positional and argument.nargs not in (None, "?") and argument.kind != "append":
        raise Unsupported(f"{argument.dest}: an option taking {argument.nargs!r} values")
    else:
        scalar = {"type": spec.json_type(argument.type)}
        if argument.choices is not None:
            scalar["enum"] = list(argument.choices)
        if argument.repeatable:
            schema = {"type": "array", "items": scalar}
        else:
            schema = dict(scalar)
            if argument.default is not None:
                schema["default"] = argument.default
    help_text = "" if argument.hidden else argument.help or ""
    schema["description"] = f"{help_text} (CLI: {argument.name})".strip()
    return schema


def arguments(command):
    """The declared arguments of a command that become tool arguments, in declaration order.

    The ``--*-file`` twins of long text flags (``--content-file``, ``--payload-file``, ...)
    are left out: an MCP client sends the text itself, and a path would name a file on the
    server's machine, not the client's.
    """
    return [argument for argument in command.arguments
            if argument.kind not in ("help", "version")
            and (argument.positional or not any(flag.endswith("-file") for flag in argument.flags))]


class Tool(NamedTuple):
    name: str
    door: str
    description: str
    parser: argparse.ArgumentParser      # the door's parser holding just this command
    command: spec.Command                # the command's declaration
    schema: dict                         # the tool's inputSchema
    gated: frozenset = frozenset()       # GATED arguments the command has but this server refuses
    declared: tuple = ()                 # arguments(command), worked out once
    parsed: dict = None                  # canonical arguments -> their Namespace (see namespace)

    def definition(self):
        """The tools/list entry."""
        entry = {"name": self.name, "description": self.description, "inputSchema": self.schema}
        if self.name in READ_ONLY:
            entry["annotations"] = {"readOnlyHint": True}
        return entry

    def namespace(self, args):
        """Check ``args`` against the schema and parse them with the CLI parser; return the Namespace.

        Parsing is a pure function of the arguments (the parser's types are plain number
        conversions), so the Namespace of arguments seen before is reused: a copy of it,
        its lists copied too, so no call can change what the next one gets.  Only short
        argument sets are kept, :data:`PARSED_KEEP` per tool at most."""
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise ArgumentsError("arguments must be an object")
        key = None
        if self.parsed is not None:
            key = _canonical(args)
            known = self.parsed.get(key) if key is not None else None
            if known is not None:
                return _copy(known)
        namespace = self._parse(args)
        if key is not None:
            if len(self.parsed) >= PARSED_KEEP:
                try:  # the oldest first; another worker thread may be evicting too
                    self.parsed.pop(next(iter(self.parsed)), None)
                except (RuntimeError, StopIteration):
                    pass
            self.parsed[key] = namespace
            return _copy(namespace)  # never the parse itself: its lists may be the parser's defaults
        return namespace

    def _parse(self, args):
        properties = self.schema["properties"]
        for name in sorted(self.gated.intersection(args)):
            if args[name] not in (None, False):
                raise OverrideRefused(f"argument {name!r} is refused: this MCP server was not started with"
                                      f" {GATED[name]}")
        args = {name: value for name, value in args.items() if name not in self.gated}
        unknown = sorted(set(args) - set(properties))
        if unknown:
            raise ArgumentsError(f"unknown argument {unknown[0]!r} (expected one of: {', '.join(properties)})")
        missing = [name for name in self.schema["required"] if args.get(name) is None]
        if missing:
            raise ArgumentsError(f"missing required argument {missing[0]!r}")
        options, positionals = [], []
        for argument in self.declared or arguments(self.command):
            value = args.get(argument.dest)
            if value is None:
                continue
            _check(argument.dest, properties[argument.dest], value)
            if argument.positional:
                positionals.extend(str(item) for item in (value if isinstance(value, list) else [value]))
            elif argument.switch:
                if value == (argument.kind == "store_true"):
                    options.append(argument.name)
            elif argument.kind == "append":
                options.extend(f"{argument.name}={item}" for item in value)
            else:
                options.append(f"{argument.name}={value}")
        argv = [self.name, *options, *(["--", *positionals] if positionals else [])]
        return self.parser.parse_args(argv)


PARSED_KEEP = 64  # parsed argument sets a tool keeps (Tool.namespace)
PARSED_KEY_CHARS = 512  # longer argument sets (a note's text ...) are parsed on every call


def _canonical(args):
    """The key of an argument set (its canonical JSON), or None when too long to keep or not
    encodable (NaN, an odd type: parsed on every call)."""
    from mindos.core.canonical import canonical_json  # lazy: a leaf (json only), loaded with the first call

    try:
        key = canonical_json(args)
    except (TypeError, ValueError):
        return None
    return key if len(key) <= PARSED_KEY_CHARS else None


def _copy(namespace):
    """A copy of a parsed Namespace whose list values are copies too."""
    values = {name: list(value) if isinstance(value, list) else value for name, value in vars(namespace).items()}
    return argparse.Namespace(**values)


def _check(name, schema, value):
    """Refuse a value whose JSON type does not match the property schema."""
    kind = schema["type"]
    if kind == "array":
        if not isinstance(value, list):
            raise ArgumentsError(f"argument {name!r} must be an array")
        for item in value:
            _check(name, schema["items"], item)
        return
    ok = {
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "string": isinstance(value, str),
    }[kind]
    if not ok:
        article = "an" if kind[0] in "aeiou" else "a"
        raise ArgumentsError(f"argument {name!r} must be {article} {kind}")
    if "enum" in schema and value not in schema["enum"]:
        raise ArgumentsError(f"argument {name!r} must be one of: {', '.join(map(str, schema['enum']))}")


def build_tool(door_name, name, keep=None, overrides=()):
    """The tool of command ``name`` of door ``door_name``, derived from its declaration.

    ``keep``: the optional arguments to expose (None: all of them); ``overrides``: the
    :data:`GATED` arguments this server honours (the others are left out and refused)."""
    door = doors.DOORS[door_name]
    parser = build_parser(door, door.script, only=name)
    subparser = parser.mindos_commands[name]
    command = subparser.mindos_command
    if command.subcommands is not None:
        raise Unsupported(f"{command.subcommands.dest}: nested actions")
    for each in (parser, subparser):  # the CLI's own parsers, raising instead of exiting
        each.error, each.exit = _raise_error, _raise_exit
    declared = arguments(command)
    must = {argument.dest for argument in declared if argument.must}
    for group in command.groups:  # --NAME or --NAME-file, one required
        if group.required:
            kept = [argument for argument in group.arguments if argument in declared]
            if len(kept) == 1:
                must.add(kept[0].dest)
    gated = frozenset(dest for dest in GATED if dest not in overrides and any(a.dest == dest for a in declared))
    properties, required = {}, []
    for argument in declared:
        if argument.dest in gated or (keep is not None and argument.dest not in must and argument.dest not in keep
                                      and argument.dest not in GATED):
            continue
        properties[argument.dest] = _property(argument)
        if argument.dest in must:
            required.append(argument.dest)
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    summary = doors.commands(door)[name][1]
    example = command.description.split("Example:", 1)[-1].strip()
    return Tool(name, door_name, f"{summary}\nExample (CLI): {example}", parser, command, schema, gated,
                tuple(declared), {})


def door_of():
    """``{command: door name}`` over every door (the first door that declares a name wins)."""
    found = {}
    for door_name, door in doors.DOORS.items():
        for name in doors.commands(door):
            found.setdefault(name, door_name)
    return found


def allowable():
    """Command names ``--allow`` accepts: every door command outside the default set and :data:`NEVER`."""
    return sorted(name for name in door_of() if name not in NEVER and name not in AGENT_TOOLS)


def profile_names(profile, where=None):
    """The tool names of ``profile`` (``all``: every :data:`AGENT_TOOLS` name) that exist, in
    tools/list order; ``where``: :func:`door_of`, when the caller has it already."""
    where = door_of() if where is None else where
    return [name for name in (PROFILES.get(profile) or AGENT_TOOLS) if name in where]


def exposed(allow=(), profile=ALL, overrides=()):
    """The exposed tools, ``{name: Tool}`` in tools/list order: the tools of ``profile``
    (``all``: every agent tool with every argument; ``agent``: the lean default of the
    front door, :data:`DEFAULT_PROFILE`) that exist, then the
    explicitly allowed operator commands (every argument).  ``overrides``: the :data:`GATED`
    arguments to honour.  An unknown or forbidden ``allow`` name raises InvalidInput."""
    where = door_of()
    if profile != ALL and profile not in PROFILES:
        raise errors.InvalidInput(f"--tools: unknown profile {profile!r} (choose from: {', '.join([*PROFILES, ALL])})")
    for name in allow:
        if name in NEVER or name not in where:
            raise errors.InvalidInput(
                f"--allow: {name!r} cannot be exposed (choose from: {', '.join(allowable())})")
    lean = PROFILES.get(profile, {})
    names = profile_names(profile, where)
    names += [name for name in dict.fromkeys(allow) if name not in names]
    found = {}
    for name in names:
        try:
            found[name] = build_tool(where[name], name, lean.get(name) if name not in allow else None, overrides)
        except Unsupported as exc:  # keep serving the rest; say which command is missing and why
            log.warning("not exposing %s: %s has no JSON-schema form", name, exc)
    return found
