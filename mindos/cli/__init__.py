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

import gc

# A call lives for tens of milliseconds and frees almost everything by reference counting,
# yet at the default threshold (700 allocations) the cycle collector runs dozens of times
# while the modules load: about 4M instructions a call.  A larger first generation keeps it
# rare without turning it off for the long sweeps (recall-stale, doctor) that do make cycles.
gc.set_threshold(20_000, 20, 20)

import argparse  # noqa: E402 (after the collector's setting, which the imports below benefit from)
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

from mindos.cli import doors, flags  # noqa: E402
from mindos.core import load_module  # noqa: E402
from mindos.errors import MindosError  # noqa: E402

# argparse looks every message up through gettext: each lookup scans four locale
# variables and the first one imports ``locale`` (about 3% of a call's whole cost).
# MindOS speaks English and CPython ships no argparse catalogue, so the lookups can only
# ever return the text they were given; answer them directly.
argparse._ = lambda message: message
argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural


def safe_line(message):
    """An error message as one line, with anything credential-shaped redacted.

    Every refusal and usage error passes through here on its way to stderr, so a secret an
    agent typed into the wrong flag (argparse echoes invalid choices and numbers) is never
    printed back.
    """
    line = " ".join(message.split())
    from mindos.core import secrets  # lazy: only the error path pays for the detector

    return secrets.redact(line)[0] if secrets.scan(line) else line


class UsageError(MindosError):
    """An argparse usage error, raised so :func:`run` prints it in the caller's error format."""

    exit_code = 2
    code = "usage"


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's raw-description formatter, sized to the terminal only when it writes text.

    argparse makes a formatter for every argument it adds (to check its metavar) and sizes
    each one by importing shutil, which brings bz2, lzma and zlib: about 8M instructions a
    call that prints no help at all.  Those formatters never wrap text, so the width is
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

    def error(self, message):
        raise UsageError(f"{self.prog}: error: {message}")


def make_parser(sub, name, example, **kwargs):
    """Add subcommand ``name``: its summary comes from the door table, its description ends
    with an ``Example:`` line written with the name the user typed."""
    summary = sub.mindos_table[name][1]
    example = sub.mindos_prog + example[len(sub.mindos_script):] if example.startswith(sub.mindos_script) else example
    return sub.add_parser(
        name,
        help=summary,
        description=f"{summary}\n\nExample:\n  {example}",
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


class _OneCommand:
    """Stands in for the door's subparsers when a call names its command first: the command
    module adds its parser here (:func:`make_parser`), and that parser alone parses the rest
    of the call, with the prog, help and errors it has as a subparser.  The door's own
    parser, which would only hand the call on, is never built: two argparse parsers cost
    about 1.4M instructions a call, the door's alone more than half of it."""

    def __init__(self, table, prog, script):
        self.mindos_table, self.mindos_prog, self.mindos_script = table, prog, script
        self.parser = None

    def add_parser(self, name, help=None, **kwargs):  # noqa: A002 - argparse's keyword
        kwargs.setdefault("prog", f"{self.mindos_prog} {name}")
        self.parser = Parser(**kwargs)
        self.parser.set_defaults(command=name)
        return self.parser


def command_parser(door, prog, name):
    """The parser of command ``name`` alone, for the arguments after the name."""
    table = doors.commands(door)
    sub = _OneCommand(table, prog, door.script)
    load_module(f"mindos.cli.{table[name][0]}").COMMANDS[name](sub)
    return sub.parser


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


def emit(result):
    """Print a handler's result: text as-is, anything else as stable JSON (ASCII-escaped,
    keys sorted): indented for a person at a terminal, one compact line for a program
    reading a pipe or a file.

    The compact line is what agents read, and costs them fewer tokens; it is also the one
    json's C encoder writes (an indented dump runs the pure-Python encoder, about 2.5M
    instructions for a full recall bundle).  On a stdout whose encoding cannot hold some
    character (``PYTHONIOENCODING=ascii``, a Latin-1 terminal), text views print it as a
    backslash escape instead of failing.
    """
    if isinstance(result, str):
        text = result if result.endswith("\n") else result + "\n"
    elif _terminal(sys.stdout):
        text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    else:
        text = json.dumps(result, sort_keys=True, separators=(",", ":")) + "\n"
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:  # encoding happens before any byte is written
        encoding = getattr(sys.stdout, "encoding", None) or "ascii"
        sys.stdout.write(text.encode(encoding, "backslashreplace").decode(encoding))


def _terminal(stream):
    """True when ``stream`` is an interactive terminal (False for pipes, files, closed streams)."""
    try:
        return stream.isatty()
    except (AttributeError, OSError, ValueError):
        return False


def _unknown(door, prog, word, as_json=False):
    import difflib  # lazy: only a mistyped command pays for it

    close = difflib.get_close_matches(word, list(doors.commands(door)), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; run '{prog} --help' for the list"
    return fail(f"{prog}: error: unknown command {repr(word)}{hint}", "usage", 2, as_json)


def _json_errors(argv):
    """``(argv without --json-errors, json_wanted)``: the flag may sit anywhere before ``--``;
    ``MINDOS_ERRORS=json`` asks for the same."""
    wanted = os.environ.get("MINDOS_ERRORS", "").strip().lower() == "json"
    if "--json-errors" not in argv:
        return argv, wanted
    end = argv.index("--") if "--" in argv else len(argv)
    kept = [arg for arg in argv[:end] if arg != "--json-errors"] + argv[end:]
    return kept, wanted or len(kept) != len(argv)


def fail(message, code, exit_code, as_json):
    """Print one error line on stderr (text, or ``{"error": {"code", "message"}}``); return ``exit_code``."""
    line = safe_line(message) or code
    text = json.dumps({"error": {"code": code, "message": line}}, sort_keys=True) if as_json else line
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # stderr closed too: the exit code still tells
        pass
    return exit_code


def _silence_stdout():
    """Point fd 1 at /dev/null after an output failure, so the interpreter's final flush of
    the buffered text cannot fail again with a second message (CPython's advice for EPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _undecodable(args):
    """The flag whose value holds bytes that were not UTF-8 (lone surrogates), or None."""
    for name, value in vars(args).items():
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str) and not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return "--" + name.replace("_", "-")
    return None


def exit_process(code):
    """End a front door's process now with ``code``, skipping the interpreter's teardown.

    Everything a call does is finished when :func:`run` returns: its connection closed, its
    result printed, its files written and synced.  What teardown would still do is free
    every object and module one by one, which costs as much as a quarter of a short call
    (about 20 million instructions, more than the command itself for most).  Only the
    standard streams need a last flush.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # closed or full: run() already said what it could
            pass
    os._exit(code if isinstance(code, int) else 1)


def run(door_name, argv=None, argv0=None):
    """Parse ``argv``, run the command, print its result; return the exit code.

    Every failure is one line on stderr with a defined exit code, never a traceback: 1 for
    a refusal or a failed check (also a storage or output failure), 2 for a usage error,
    130 for an interrupt.  A write either committed or rolled back whole.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    argv, as_json = _json_errors(argv)
    try:
        return _run(door_name, argv, argv0, as_json)
    except KeyboardInterrupt:
        return fail("interrupted", "interrupted", 130, as_json)


def _run(door_name, argv, argv0, as_json):
    door = doors.DOORS[door_name]
    prog = prog_name(door, argv0)
    table = doors.commands(door)
    if sys.stdout is None:  # started with stdout closed (>&-): refuse before changing anything
        return fail(f"{prog}: error: stdout is closed; nothing was done", "io_error", 1, as_json)
    if argv and argv[0] == "help":
        if len(argv) == 1:
            argv = ["--help"]
        elif argv[1] in table and len(argv) == 2:
            argv = [argv[1], "--help"]
        else:
            return _unknown(door, prog, argv[1] if len(argv) == 2 else " ".join(argv[1:]), as_json)
    only = argv[0] if argv and argv[0] in table else None
    if argv and only is None and not argv[0].startswith("-"):
        return _unknown(door, prog, argv[0], as_json)
    conn = None
    try:
        if only is None:
            parser = build_parser(door, prog, bare=True)
            if not argv:
                return fail(parser.format_usage().strip(), "usage", 2, as_json)
        else:
            parser, argv = command_parser(door, prog, only), argv[1:]
        args = parser.parse_args(argv)
        if getattr(args, "handler", None) is None:
            parser.error("a command is required")
        for name in getattr(args, "text_files", ()):
            path = getattr(args, f"{name}_file", None)
            if path is not None:
                setattr(args, name, flags.read_text_file(path, "--" + name.replace("_", "-") + "-file"))
        flag = _undecodable(args)
        if flag:
            return fail(f"invalid {flag}: not valid UTF-8 text (undecodable bytes in the argument)",
                        "invalid", 2, as_json)
        if getattr(args, "needs_db", True):
            from mindos.store import db  # lazy: --help and db-less commands never open the store

            conn = db.connect(create=getattr(args, "creates_home", False))
        if getattr(args, "request_id", None) is not None and conn is not None:
            result = _replayable(conn, args)
        else:
            result = args.handler(conn, args)
    except MindosError as exc:
        if conn is not None and getattr(exc, "audit", None):
            _record_refusal(conn, exc.audit)
        return fail(str(exc) or exc.__class__.__name__, exc.code, exc.exit_code, as_json)
    except sqlite3_errors() as exc:
        text = str(exc)
        code = "busy" if "locked" in text or "busy" in text else "storage"
        return fail(f"database error: {text}; nothing was changed", code, 1, as_json)
    except OSError as exc:
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        return fail(f"cannot write{where}: {exc.strerror or exc}", "io_error", 1, as_json)
    finally:
        if conn is not None:
            conn.close()
    code = 0
    if isinstance(result, tuple):
        result, code = result
    try:
        emit(result)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader went away (e.g. piped into head); nothing more to say
        _silence_stdout()
        return 1
    except (OSError, ValueError) as exc:  # /dev/full, a closed descriptor
        _silence_stdout()
        reason = getattr(exc, "strerror", None) or str(exc)
        return fail(f"{prog}: error: cannot write the result to stdout ({reason}); the command itself completed",
                    "io_error", 1, as_json)
    return code


_NOT_ARGUMENTS = ("handler", "request_id", "replay_actor", "needs_db", "creates_home", "text_files")


def _replayable(conn, args):
    """Run a ``--request-id`` command once per (actor, key): the first result, or its replay."""
    from mindos.store import replay  # lazy: only calls that carry a request id

    actor = (getattr(args, args.replay_actor, None) if args.replay_actor else None) or ""
    arguments = {name: value for name, value in sorted(vars(args).items()) if name not in _NOT_ARGUMENTS}
    result, replayed = replay.run(conn, actor, args.request_id, args.command, arguments,
                                  lambda: args.handler(conn, args))
    return {**result, "replayed": replayed} if isinstance(result, dict) else result


def _record_refusal(conn, payload):
    """Audit a ``secret_blocked`` raised by input validation (a credential-shaped id or name),
    which has no transaction of its own: kinds and flag only, never the value."""
    from mindos.store import db, ledger  # lazy: the refusal path only

    try:
        with db.write(conn):
            ledger.append_event(conn, "input", payload["fields"][0], "secret_blocked", payload)
    except MindosError:  # the store stayed busy: the caller still gets the refusal itself
        pass


def sqlite3_errors():
    """The sqlite3 error base class, imported only once a failure needs it."""
    import sqlite3  # lazy: the error path only (the store has already loaded it when it matters)

    return sqlite3.Error
