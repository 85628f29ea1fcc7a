"""The argparse side of the front doors: the door parsers, ``--help`` and usage errors.

A call whose arguments :mod:`mindos.cli.fastparse` reads as they stand never loads this
module, nor argparse (importing it and building a parser cost more than many commands' own
work; figures in bench/NOTES.md); everything else comes here: ``--help``, ``--version``, a
call naming no command, a usage error (its message is argparse's own), the commands with
nested subcommands, the docs generator and the MCP server's tool schemas.
"""

import argparse

from mindos.cli import doors, flags
from mindos.core import load_module
from mindos.errors import MindosError

# argparse looks every message up through gettext: each lookup scans four locale
# variables and the first one imports ``locale`` (a visible share of a call's cost).
# MindOS speaks English and CPython ships no argparse catalogue, so the lookups can only
# ever return the text they were given; answer them directly.
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
    each one by importing shutil, which brings bz2, lzma and zlib: a cost every call would pay
    even when it prints no help at all.  Those formatters never wrap text, so the width is
    looked up when one is asked for help or usage, and only then.
    """

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position, width=width or 80)
        self._widest_help_position = None if width else max_help_position

    def format_help(self):
        if self._widest_help_position is not None:
            import shutil  # lazy: see the class docstring

            self._width = shutil.get_terminal_size().columns - 2
            self._max_help_position = min(self._widest_help_position,
                                          max(self._width - 20, self._indent_increment * 2))
            self._widest_help_position = None
        return super().format_help()


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors and no prefix matching of long flags."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        self._mindos_argv = list(args) if args is not None else None
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
        if self._subparsers is not None:  # a nested command's flags belong to its own parser
            return []
        unknown = []
        for arg in getattr(self, "_mindos_argv", None) or ():
            if arg == "--":
                break
            if arg.startswith("--") and arg.partition("=")[0] not in self._option_string_actions:
                unknown.append(arg.partition("=")[0])
        return unknown


def json_type(kind):
    """The JSON type of an argparse ``type`` (by name: ``int`` and ``flags.integer`` alike),
    as the MCP tool schemas and ``protocol`` publish it."""
    name = getattr(kind, "__name__", None)
    return {"int": "integer", "integer": "integer", "float": "number", "number": "number"}.get(name, "string")


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
    return doors.declare(door, prog, name, Parser)


def build_parser(door, prog, only=None, *, bare=False):
    """The door's parser with the subparser of ``only`` (or of every command for docs);
    ``bare``: with none at all, for a call that names no command (``--help``, ``--version``:
    the command list comes from the door table, so no command module is loaded)."""
    from mindos import __version__  # lazy: the package root is read only when a parser is built

    table = doors.commands(door)
    parser = Parser(
        prog=prog, description=door.description,
        epilog=_listing(door) + f"Run '{prog} help COMMAND' (or '{prog} COMMAND --help') for one command.",
        usage=f"{prog} [-h] [--version] COMMAND ...",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    flags.json_errors(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser, help=argparse.SUPPRESS,
                                prog=prog)
    sub.mindos_table, sub.mindos_prog, sub.mindos_script = table, prog, door.script
    names = [only] if only else [] if bare else list(table)
    for name in names:
        module = load_module(f"mindos.cli.{table[name][0]}")
        module.COMMANDS[name](sub)
    return parser
