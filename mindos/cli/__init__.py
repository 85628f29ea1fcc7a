"""Command-line plumbing shared by the three front doors.

The only code that prints or exits.  A front door hands :func:`run` its table of
``command name -> handler module``; only the module of the command actually invoked is
imported and only its subparser is built, so a call pays for one command, not sixty.  The
full parser is built only for ``--help`` and unknown commands.

Handler contract (each ``mindos/cli/*_cmds.py`` module):
  * ``COMMANDS = {"name": add_name, ...}`` where ``add_name(sub)`` adds the subparser
    (with ``help=`` and a description containing an ``Example:``) and calls
    ``p.set_defaults(handler=cmd_name)``; pass ``needs_db=False`` for commands that do
    not touch the database.
  * ``cmd_name(conn, args)`` calls one core function and returns the data to print: a
    dict or list (printed as JSON), a str (printed as text), or ``(data, exit_code)`` for a
    check that ran but failed.
Errors: core raises ``MindosError``; here it becomes one line on stderr and exit 1 (2 for
invalid input).  argparse usage errors are one line too, exit 2.
"""

import argparse
import importlib
import json
import sys

from mindos.errors import MindosError


def safe_line(message):
    """An error message as one line, with anything credential-shaped redacted.

    Every refusal and usage error passes through here on its way to stderr, so a secret an
    agent typed into the wrong flag (argparse echoes invalid choices and numbers) is never
    printed back.  The detector is imported only on this error path.
    """
    line = " ".join(message.split())
    from mindos import secrets

    return secrets.redact(line)[0] if secrets.scan(line) else line


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (agents parse stderr line by line)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {safe_line(message)}\n")


def make_parser(sub, name, help_text, example, **kwargs):
    """Add a subcommand whose description ends with an ``Example:`` line."""
    return sub.add_parser(
        name,
        help=help_text,
        description=f"{help_text}\n\nExample:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,
    )


def build_parser(prog, description, table, only=None):
    """Build the parser with every command in ``table`` (or just ``only``)."""
    parser = Parser(prog=prog, description=description)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    names = [only] if only else list(table)
    modules = {}
    for name in names:
        module_name = table[name]
        if module_name not in modules:
            modules[module_name] = importlib.import_module(f"mindos.cli.{module_name}")
        adder = modules[module_name].COMMANDS.get(name)
        if adder is not None:
            adder(sub)
    return parser


def emit(result):
    """Print a handler's result: text as-is, anything else as stable JSON."""
    if isinstance(result, str):
        sys.stdout.write(result if result.endswith("\n") else result + "\n")
    else:
        sys.stdout.write(json.dumps(result, indent=2, sort_keys=True) + "\n")


def run(prog, description, table, argv=None):
    """Parse ``argv``, run the command, print its result; return the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    only = argv[0] if argv and argv[0] in table else None
    parser = build_parser(prog, description, table, only)
    if not argv:
        parser.print_usage(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.error(f"unknown command {argv[0]!r}")
    try:
        conn = None
        if getattr(args, "needs_db", True):
            from mindos import db

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
