"""The argparse side of the front doors: the door parsers, ``--help`` and usage errors.

A call whose arguments :mod:`mindos.cli.fastparse` reads as they stand never loads this
module, nor argparse (importing it and building a parser cost more than many commands' own
work; figures in bench/NOTES.md); everything else comes here: ``--help``, ``--version``, a
call naming no command, a usage error (its message is argparse's own), the commands with
nested subcommands, the docs generator and the MCP server's tool schemas.
"""

import argparse

from mindos.cli import doors, flags, spec
from mindos.errors import MindosError



def quiet_gettext():
    """Answer argparse's message lookups directly, for the whole process.

    argparse looks every message up through gettext: each lookup scans four locale
    variables and the first one imports ``locale`` (a visible share of a call's cost).
    MindOS speaks English and CPython ships no argparse catalogue, so the lookups can only
    ever return the text they were given.  A process-wide change: only the console entry
    point asks for it (:func:`mindos.cli.own_process`, then :func:`mindos.cli.run` when it
    first needs argparse), never an import.
    """
    argparse._ = lambda message: message
    argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural


class UsageError(MindosError):
    """An argparse usage error, raised so :func:`mindos.cli.run` prints it in the caller's
    error format."""

    exit_code = 2
    code = "usage"


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's raw-description formatter, sized to the terminal only when it writes text.

    argparse makes a formatter for every argument it adds (to check its metavar) and sizes
    each one by importing shutil, which brings bz2, lzma and zlib: a cost every
    call would pay even when it prints no help at all.  Those formatters never wrap text, so a fixed width
    serves them; a formatter made while a :class:`Parser` writes its help or usage is sized
    to the terminal the way argparse sizes it.
    """

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        if width is None and not Parser.writing:
            width = 80
        super().__init__(prog, indent_increment, max_help_position, width=width)


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors and no prefix matching of long flags.

    ``mindos_command``: the declaration it was filled from (:func:`fill`); ``mindos_flags``:
    the option strings it declares (None for a parser of nested actions, whose own parsers
    judge their flags); ``mindos_commands``: its command (or nested action) parsers by name.
    """

    writing = 0  # how many parsers are writing help or usage now (see HelpFormatter)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.mindos_flags, self.mindos_argv, self.mindos_commands, self.mindos_command = None, None, {}, None

    def format_help(self):
        return self._writing(super().format_help)

    def format_usage(self):
        return self._writing(super().format_usage)

    @staticmethod
    def _writing(write):
        Parser.writing += 1
        try:
            return write()
        finally:
            Parser.writing -= 1

    def parse_known_args(self, args=None, namespace=None):
        self.mindos_argv = list(args) if args is not None else None
        return super().parse_known_args(args, namespace)

    def error(self, message):
        # argparse reports a missing required flag before an unknown one, so a misspelt
        # flag (``--pro`` for ``--project``) would read as "required: --project": name it
        unknown = self._unknown_flags() if message.startswith("the following arguments are required") else []
        if unknown:
            message = f"unrecognized arguments: {' '.join(unknown)}"
        raise UsageError(f"{self.prog}: error: {message}")

    def _unknown_flags(self):
        """The long flags of the arguments this parser read that it does not declare."""
        if self.mindos_flags is None:  # a nested command's flags belong to its own parser
            return []
        unknown = []
        for arg in self.mindos_argv or ():
            if arg == "--":
                break
            if arg.startswith("--") and arg.partition("=")[0] not in self.mindos_flags:
                unknown.append(arg.partition("=")[0])
        return unknown


def _keywords(argument):
    """The ``add_argument`` keywords of one :class:`mindos.cli.spec.Argument`."""
    kwargs = {} if argument.kind == "store" else {"action": argument.kind}
    if argument.kind == "version":
        kwargs["version"] = argument.version
    else:
        kwargs["default"] = argument.default  # resolved (None for a switch declared default=None)
        for name in ("type", "choices", "nargs", "metavar"):
            value = getattr(argument, name)
            if value is not None:
                kwargs[name] = value
        if not argument.positional:
            kwargs["dest"] = argument.dest
            if argument.required:
                kwargs["required"] = True
    if argument.hidden:
        kwargs["help"] = argparse.SUPPRESS
    elif argument.help is not None:
        kwargs["help"] = argument.help
    return kwargs


def fill(parser, command):
    """Add ``command``'s declared arguments, groups, defaults and nested actions to the
    argparse ``parser``; return it."""
    groups = {id(group): parser.add_mutually_exclusive_group(required=group.required) for group in command.groups}
    parser.mindos_command, dests = command, set()
    for argument in command.arguments:
        target = parser if argument.group is None else groups[id(argument.group)]
        target.add_argument(*argument.flags, **_keywords(argument))
        dests.add(argument.dest)
    parser.set_defaults(**{dest: value for dest, value in command.defaults.items() if dest not in dests})
    if command.subcommands is None:
        parser.mindos_flags = {"-h", "--help", *command.by_flag}
    else:
        nested = parser.add_subparsers(parser_class=Parser, **command.subcommands.options)
        for name, action in command.subcommands.choices.items():
            parser.mindos_commands[name] = fill(nested.add_parser(name, help=action.summary, **action.options), action)
    return parser


def _listing(door):
    """The grouped command list shown by ``--help`` (from the door table only)."""
    lines = []
    for title, entries in door.sections:
        lines.append(f"{title}:")
        width = max(len(name) for name, _, _ in entries)
        lines.extend(f"  {name.ljust(width)}  {summary}" for name, _, summary in entries)
        lines.append("")
    return "\n".join(lines)


def command_parser(door, prog, name):
    """The parser of command ``name`` alone, for the arguments after the name (the door's
    parser, the larger half of the cost of two, is never built)."""
    command = doors.declare(door, prog, name)
    return fill(Parser(**command.options), command)


def door_command(door, prog):
    """The door's own declaration: the flags it takes before a command (``--version``,
    ``--json-errors``; argparse adds ``-h``)."""
    from mindos import __version__  # lazy: the package root is read only when a parser is built

    command = spec.Command(None, None, {
        "prog": prog, "description": door.description, "usage": f"{prog} [-h] [--version] COMMAND ...",
        "epilog": _listing(door) + f"Run '{prog} help COMMAND' (or '{prog} COMMAND --help') for one command.",
    })
    command.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                         help="show program's version number and exit")
    flags.json_errors(command)
    return command


def build_parser(door, prog, only=None, *, bare=False):
    """The door's parser with the subparser of ``only`` (or of every command for docs);
    ``bare``: with none at all, for a call that names no command (``--help``, ``--version``:
    the command list comes from the door table, so no command module is loaded).  Its
    command parsers are ``parser.mindos_commands``."""
    root = door_command(door, prog)
    parser = fill(Parser(**root.options), root)
    parser.mindos_flags = None
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser, help=argparse.SUPPRESS,
                                prog=prog)
    names = [only] if only else [] if bare else list(doors.commands(door))
    for name in names:
        command = doors.declare(door, prog, name)
        parser.mindos_commands[name] = fill(sub.add_parser(name, help=command.summary, **command.options), command)
    return parser
