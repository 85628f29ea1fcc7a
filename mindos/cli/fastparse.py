"""A command's arguments read without argparse, when they need no more than reading.

Importing argparse and building one command's parser cost more than many commands spend on
their own work (figures in bench/NOTES.md).  Yet almost every call an agent makes is plain:
long flags each followed by its value, switches, and the positional ids in order.  For those, this module reads the arguments straight from the command's own
declaration: the command module's ``add_<name>(sub)`` runs against a recording parser
(:func:`mindos.cli.doors.declare`) that keeps the ``add_argument`` calls instead of building
argparse actions, and :func:`parse` fills the namespace exactly as argparse would (same dests,
defaults, types, choices, appends, string-default conversion and ``set_defaults`` values).

Anything else is declined (``None``), and the caller hands the call to argparse, which then
decides: ``-h``/``--help``, ``--``, any argument starting with ``-`` that is not a declared
long flag (a short flag, a negative number, an unknown or misspelt flag), a flag missing its
value, a value argparse would refuse (a type or choice error, a missing required argument,
an extra positional, two flags of one exclusive group), and the declarations this reader
does not model (nested subcommands, ``nargs``, other actions).  So every usage error and
every help text is argparse's own, and a call read here gets the namespace argparse would
have given it; ``tests/cli/test_fastparse.py`` checks both for every command of every door.
"""

from types import SimpleNamespace

from mindos.cli import doors

_DEFAULT = object()  # "no default given": argparse then uses the action's own


class _Decline(Exception):
    """The declaration uses something this reader does not model: argparse reads the call."""


class _Action:
    __slots__ = ("dest", "kind", "type", "choices", "default", "required", "group")

    def __init__(self, dest, kind, type_, choices, default, required):
        self.dest, self.kind, self.type, self.choices = dest, kind, type_, choices
        self.default, self.required, self.group = default, required, None


class _Group:
    """A mutually exclusive group: its flags go to the parser, tagged with the group."""

    def __init__(self, parser, required):
        self.parser, self.required, self.actions = parser, required, []

    def add_argument(self, *names, **kwargs):
        action = self.parser.add_argument(*names, **kwargs)
        action.group = self
        self.actions.append(action)
        return action


class _Parser:
    """Records one command's declaration (the subset of argparse's parser API commands use)."""

    def __init__(self, **kwargs):  # prog, description...: only help and errors use them, and argparse writes those
        self.actions, self.positionals, self.flags, self.groups, self.defaults = [], [], {}, [], {}

    def add_argument(self, *names, action=None, type=None, choices=None, default=_DEFAULT,  # noqa: A002
                     required=None, dest=None, help=None, metavar=None, **other):  # noqa: A002
        if other or not names:
            raise _Decline  # nargs, const, version...: argparse's to read
        kinds = {None: "store", "store": "store", "store_true": "store_true", "append": "append"}
        if action not in kinds:
            raise _Decline
        kind = kinds[action]
        positional = not names[0].startswith("-")
        if positional:
            if len(names) != 1 or kind != "store" or dest is not None or required is not None:
                raise _Decline
            dest = names[0]
        else:
            if not all(name.startswith("--") and len(name) > 2 for name in names):
                raise _Decline  # a short flag: argparse's (and its clustering) to read
            dest = dest or names[0][2:].replace("-", "_")
        if kind == "store_true" and (type is not None or choices is not None):
            raise _Decline
        if default is _DEFAULT:
            default = self.defaults.get(dest, False if kind == "store_true" else None)
        entry = _Action(dest, kind, type, choices, default, positional or bool(required))
        self.actions.append(entry)
        if positional:
            self.positionals.append(entry)
        for name in names:
            if name in self.flags or name in ("-h", "--help"):
                raise _Decline
            self.flags[name] = entry
        return entry

    def add_mutually_exclusive_group(self, required=False):
        group = _Group(self, required)
        self.groups.append(group)
        return group

    def set_defaults(self, **kwargs):
        self.defaults.update(kwargs)
        for entry in self.actions:
            if entry.dest in kwargs:
                entry.default = kwargs[entry.dest]

    def get_default(self, dest):
        for entry in self.actions:
            if entry.dest == dest and entry.default is not None:
                return entry.default
        return self.defaults.get(dest)

    def add_subparsers(self, **kwargs):
        raise _Decline


def parse(door, prog, name, argv):
    """The namespace argparse would give command ``name`` of ``door`` for ``argv`` (the
    arguments after the name), or None when argparse must read them (see the module
    docstring)."""
    try:
        return _read(doors.declare(door, prog, name, _Parser), argv)
    except _Decline:
        return None


def _typed(entry, text):
    """``text`` through the flag's type; _Decline where argparse would refuse (or raise: it
    runs the same type again, and its error is then the one reported)."""
    try:
        return text if entry.type is None else entry.type(text)
    except Exception:  # noqa: BLE001 - argparse re-runs the type and reports or raises as it does
        raise _Decline from None


def _convert(entry, text):
    """A given value: typed, then checked against the flag's choices."""
    value = _typed(entry, text)
    if entry.choices is not None and value not in entry.choices:
        raise _Decline
    return value


def _read(parser, argv):
    flags, positionals = parser.flags, parser.positionals
    given, seen, non_default = {}, set(), set()
    position = index = 0
    while index < len(argv):
        arg = argv[index]
        index += 1
        if arg.startswith("-"):
            entry, text = flags.get(arg), None
            if entry is None:
                flag, equals, text = arg.partition("=")
                entry = flags.get(flag) if equals and flag.startswith("--") else None
                if entry is None:
                    raise _Decline  # -h, --, a short flag, a negative number, an unknown flag
            if entry.kind == "store_true":
                if text is not None:
                    raise _Decline  # argparse refuses a value for a switch
                value = True
            else:
                if text is None:
                    if index == len(argv) or argv[index].startswith("-"):
                        raise _Decline  # no value (or one argparse would not take as a value)
                    text = argv[index]
                    index += 1
                value = _convert(entry, text)
        else:
            if position == len(positionals):
                raise _Decline  # an extra positional: argparse's "unrecognized arguments"
            entry = positionals[position]
            position += 1
            value = _convert(entry, arg)
        seen.add(entry)
        if value is not entry.default:  # argparse's test for "given a non-default value"
            non_default.add(entry)
            if entry.group is not None and any(other in non_default for other in entry.group.actions
                                               if other is not entry):
                raise _Decline  # two flags of one exclusive group
        if entry.kind == "append":
            items = given.get(entry.dest, entry.default)
            given[entry.dest] = [*(items or ()), value]
        else:
            given[entry.dest] = value
    if any(entry.required and entry not in seen for entry in parser.actions):
        raise _Decline
    if any(group.required and not non_default.intersection(group.actions) for group in parser.groups):
        raise _Decline
    values = {}
    for entry in parser.actions:
        values.setdefault(entry.dest, entry.default)
    for dest, default in parser.defaults.items():
        values.setdefault(dest, default)
    values.update(given)
    for entry in parser.actions:
        # argparse converts a string default through the type when the flag was not given
        if entry.type is not None and entry not in seen and isinstance(entry.default, str) \
                and values[entry.dest] is entry.default:
            values[entry.dest] = _typed(entry, entry.default)
    if values.get("handler") is None:
        raise _Decline
    return SimpleNamespace(**values)

