"""A command's arguments read without argparse, when they need no more than reading.

Importing argparse and building one command's parser cost more than many commands spend on
their own work (figures in bench/NOTES.md).  Yet almost every call an agent makes is plain:
long flags each followed by its value, switches, and the positional ids in order.  For those,
this module reads the arguments straight from the command's own declaration, the
:class:`mindos.cli.spec.Command` that the command module's ``add_<name>(sub)`` fills
(:func:`mindos.cli.doors.declare`), and :func:`parse` fills the namespace exactly as argparse
would (same dests, defaults, types, choices, appends, string-default conversion and ``set_defaults`` values).

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


class _Decline(Exception):
    """The declaration uses something this reader does not model: argparse reads the call."""


def parse(door, prog, name, argv):
    """The namespace argparse would give command ``name`` of ``door`` for ``argv`` (the
    arguments after the name), or None when argparse must read them (see the module
    docstring)."""
    try:
        return _read(_plain(doors.declare(door, prog, name)), argv)
    except _Decline:
        return None


def _plain(command):
    """``command`` when this reader models every part of its declaration; else _Decline."""
    if command.subcommands is not None:
        raise _Decline  # nested actions: argparse's to read
    seen = set()
    for entry in command.arguments:
        if entry.nargs is not None or entry.kind not in ("store", "store_true", "append"):
            raise _Decline  # nargs, const, version...: argparse's to read
        if entry.positional:
            if entry.kind != "store" or entry.required:
                raise _Decline
        else:
            for flag in entry.flags:
                if not flag.startswith("--") or len(flag) < 3 or flag in seen or flag == "--help":
                    raise _Decline  # a short flag (and its clustering), a repeated or a help flag
                seen.add(flag)
        if entry.kind == "store_true" and (entry.type is not None or entry.choices is not None):
            raise _Decline
    return command


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


def _read(command, argv):
    flags, positionals = command.by_flag, command.positionals
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
            if entry.group is not None and any(other in non_default for other in entry.group.arguments
                                               if other is not entry):
                raise _Decline  # two flags of one exclusive group
        if entry.kind == "append":
            items = given.get(entry.dest, entry.default)
            given[entry.dest] = [*(items or ()), value]
        else:
            given[entry.dest] = value
    if any((entry.required or entry.positional) and entry not in seen for entry in command.arguments):
        raise _Decline
    if any(group.required and not non_default.intersection(group.arguments) for group in command.groups):
        raise _Decline
    values = {}
    for entry in command.arguments:
        values.setdefault(entry.dest, entry.default)
    for dest, default in command.defaults.items():
        values.setdefault(dest, default)
    values.update(given)
    for entry in command.arguments:
        # argparse converts a string default through the type when the flag was not given
        if entry.type is not None and entry not in seen and isinstance(entry.default, str) \
                and values[entry.dest] is entry.default:
            values[entry.dest] = _typed(entry, entry.default)
    if values.get("handler") is None:
        raise _Decline
    return SimpleNamespace(**values)

