"""Command-line plumbing shared by the front doors.

The only code that prints or exits.  A front door calls :func:`run` with its door name
(see :mod:`mindos.cli.doors`); only the CLI module of the command actually invoked is
imported and only its subparser is built, so a call pays for one command, not sixty.  The
grouped ``--help`` listing is built from the door table alone.

Handler contract (each command module under ``mindos/cli/<dimension>/``):
  * ``COMMANDS = {"name": add_name, ...}`` where ``add_name(sub)`` builds the subparser with
    :func:`make_parser` (summary from the door table, an ``Example:`` line) and calls
    ``p.set_defaults(handler=cmd_name)``; pass ``needs_db=False`` for commands that do not
    touch the database.
  * ``cmd_name(conn, args)`` calls one core function and returns the data to print: a
    dict or list (printed as JSON), a str (printed as text), or ``(data, exit_code)`` for a
    check that ran but failed.
Errors: core raises ``MindosError``; here it becomes one line on stderr and exit 1 (2 for
invalid input).  argparse usage errors are one line too, exit 2.  Abbreviated flags are
off everywhere: a scripted agent must never reach a different flag by prefix.
"""

import argparse
import importlib
import json
import os
import sys

from mindos.cli import doors
from mindos.errors import MindosError


def safe_line(message):
    """An error message as one line, with anything credential-shaped redacted.

    Every refusal and usage error passes through here on its way to stderr, so a secret an
    agent typed into the wrong flag (argparse echoes invalid choices and numbers) is never
    printed back.
    """
    line = " ".join(message.split())
    from mindos.core import secrets  # lazy: only the error path pays for the detector

    return secrets.redact(line)[0] if secrets.scan(line) else line


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors and no prefix matching of long flags."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {safe_line(message)}\n")


def make_parser(sub, name, example, **kwargs):
    """Add subcommand ``name``: its summary comes from the door table, its description ends
    with an ``Example:`` line written with the name the user typed."""
    summary = sub.mindos_table[name][1]
    example = sub.mindos_prog + example[len(sub.mindos_script):] if example.startswith(sub.mindos_script) else example
    return sub.add_parser(
        name,
        help=summary,
        description=f"{summary}\n\nExample:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,
    )


def prog_name(door, argv0=None):
    """The name the user typed: the installed console script, else the checkout script."""
    typed = os.path.basename(argv0 if argv0 is not None else (sys.argv[0] if sys.argv else ""))
    return typed if typed in (door.installed, door.script) else door.script


def _listing(door):
    """The grouped command list shown by ``--help`` (from the door table only)."""
    lines = []
    for title, entries in door.sections:
        lines.append(f"{title}:")
        width = max(len(name) for name, _, _ in entries)
        lines.extend(f"  {name.ljust(width)}  {summary}" for name, _, summary in entries)
        lines.append("")
    return "\n".join(lines)


def build_parser(door, prog, only=None):
    """The door's parser with the subparser of ``only`` (or of every command for docs)."""
    from mindos import __version__  # lazy: the package root is read only when a parser is built

    table = doors.commands(door)
    parser = Parser(
        prog=prog, description=door.description,
        epilog=_listing(door) + f"Run '{prog} help COMMAND' (or '{prog} COMMAND --help') for one command.",
        formatter_class=argparse.RawDescriptionHelpFormatter, usage=f"{prog} [-h] [--version] COMMAND ...",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser, help=argparse.SUPPRESS,
                                prog=prog)
    sub.mindos_table, sub.mindos_prog, sub.mindos_script = table, prog, door.script
    names = [only] if only else list(table)
    for name in names:
        module = importlib.import_module(f"mindos.cli.{table[name][0]}")
        module.COMMANDS[name](sub)
    return parser


def emit(result):
    """Print a handler's result: text as-is, anything else as stable JSON."""
    if isinstance(result, str):
        sys.stdout.write(result if result.endswith("\n") else result + "\n")
    else:
        sys.stdout.write(json.dumps(result, indent=2, sort_keys=True) + "\n")


def _unknown(door, prog, word):
    import difflib  # lazy: only a mistyped command pays for it

    close = difflib.get_close_matches(word, list(doors.commands(door)), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; run '{prog} --help' for the list"
    sys.stderr.write(f"{prog}: error: unknown command {safe_line(repr(word))}{hint}\n")
    return 2


def run(door_name, argv=None, argv0=None):
    """Parse ``argv``, run the command, print its result; return the exit code."""
    door = doors.DOORS[door_name]
    prog = prog_name(door, argv0)
    argv = sys.argv[1:] if argv is None else list(argv)
    table = doors.commands(door)
    if argv and argv[0] == "help":
        if len(argv) == 1:
            argv = ["--help"]
        elif argv[1] in table and len(argv) == 2:
            argv = [argv[1], "--help"]
        else:
            return _unknown(door, prog, argv[1]) if len(argv) == 2 else _unknown(door, prog, " ".join(argv[1:]))
    only = argv[0] if argv and argv[0] in table else None
    if argv and only is None and not argv[0].startswith("-"):
        return _unknown(door, prog, argv[0])
    parser = build_parser(door, prog, only)
    if not argv:
        parser.print_usage(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.error("a command is required")
    try:
        conn = None
        if getattr(args, "needs_db", True):
            from mindos.store import db  # lazy: --help and db-less commands never open the store

            conn = db.connect()
        try:
            result = args.handler(conn, args)
        finally:
            if conn is not None:
                conn.close()
        code = 0
        if isinstance(result, tuple):
            result, code = result
        emit(result)
        sys.stdout.flush()
        return code
    except MindosError as exc:
        print(safe_line(str(exc)) or exc.__class__.__name__, file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        # the reader went away (e.g. piped into head); nothing more to say
        sys.stderr.close()
        return 1
    except KeyboardInterrupt:
        return 130
