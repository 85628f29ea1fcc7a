"""Command-line plumbing shared by the front doors.

The only code that prints or exits.  A front door calls :func:`run` with its door name
(see :mod:`mindos.cli.doors`); only the CLI module of the command actually invoked is
imported and only its subparser is built, so a call pays for one command, not sixty.  The
grouped ``--help`` listing is built from the door table alone.

Handler contract (each command module under ``mindos/cli/<dimension>/``):
  * ``COMMANDS = {"name": add_name, ...}`` where ``add_name(sub)`` declares the command with
    :func:`make_parser` (summary from the door table, an ``Example:`` line), which gives a
    :class:`mindos.cli.spec.Command`; it adds its arguments (shared flags through
    :mod:`mindos.cli.flags`) and calls ``p.set_defaults(handler=cmd_name)``; pass
    ``needs_db=False`` for commands that do not touch the database.  argparse, the plain
    reader and the MCP tool schemas are all built from that declaration.
  * ``cmd_name(conn, args)`` calls one core function and returns the data to print: a
    dict or list (printed as JSON), a str (printed as text), or ``(data, exit_code)`` for a
    check that ran but failed.
Errors: core raises ``MindosError``; here it becomes one line on stderr and exit 1 (2 for
invalid input).  argparse usage errors are one line too, exit 2.  Abbreviated flags are
off everywhere: a scripted agent must never reach a different flag by prefix.
"""

import json
import os
import sys

from mindos.cli import doors, fastparse, flags
from mindos.core import load_module
from mindos.errors import MindosError

_OWNED = []  # non-empty once the console entry point has taken the process (own_process)


def own_process():
    """The process-wide settings of a front door's console entry point, and only there.

    * A larger first generation for the cycle collector: a call lives for tens of
      milliseconds and frees almost everything by reference counting, yet at the default
      threshold (700 allocations) the collector runs dozens of times while the modules
      load.  Kept rare, not turned off, for the long sweeps (recall-stale, doctor) that do
      make cycles.
    * argparse's message lookups answered directly (:func:`mindos.cli.parsers.quiet_gettext`),
      when argparse is needed at all.

    Importing :mod:`mindos.cli` (tests, the MCP server's tools, the docs generator) changes
    neither.  The fast exit is :func:`exit_process`, also called by the entry point only.
    """
    import gc  # lazy: only the console entry point tunes the collector

    gc.set_threshold(20_000, 20, 20)
    _OWNED.append(True)
    if "mindos.cli.parsers" in sys.modules:
        sys.modules["mindos.cli.parsers"].quiet_gettext()


def safe_line(message):
    """An error message as one line, with anything credential-shaped redacted.

    Every refusal and usage error passes through here on its way to stderr, so a secret an
    agent typed into the wrong flag (argparse echoes invalid choices and numbers) is never
    printed back.
    """
    line = " ".join(message.split())
    from mindos.core import secrets  # lazy: only the error path pays for the detector

    return secrets.redact(line)[0] if secrets.scan(line) else line


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


# The argparse side lives in mindos.cli.parsers, loaded only when a call needs argparse;
# these names stay reachable here for the code (docs, MCP, comms parsers) that builds parsers.
_PARSER_NAMES = frozenset({"HelpFormatter", "Parser", "build_parser", "command_parser"})


def __getattr__(name):
    if name in _PARSER_NAMES:
        from mindos.cli import parsers  # lazy: see _PARSER_NAMES

        return getattr(parsers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def prog_name(door, argv0=None):
    """The name the user typed: the installed console script, else the checkout script."""
    typed = os.path.basename(argv0 if argv0 is not None else (sys.argv[0] if sys.argv else ""))
    return typed if typed in (door.installed, door.script) else door.script


def emit(result):
    """Print a handler's result: text as-is, anything else as stable JSON (ASCII-escaped,
    keys sorted): indented for a person at a terminal, one compact line for a program
    reading a pipe or a file.

    The compact line is what agents read, and costs them fewer tokens; it is also the one
    json's C encoder writes (an indented dump runs the slower pure-Python encoder).  On a
    stdout whose encoding cannot hold some character (``PYTHONIOENCODING=ascii``, a Latin-1
    terminal), text views print it as a backslash escape instead of failing.
    """
    if isinstance(result, str):
        from mindos.core.text import inert  # lazy: only text views load it

        # stored text may hold ESC sequences or bidi overrides: a text view shows them as escapes
        text = inert(result, multiline=True)
        text = text if text.endswith("\n") else text + "\n"
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
    if not line.isprintable():  # an echoed value: its controls become visible escapes
        from mindos.core.text import inert  # lazy: the error path only

        line = inert(line)
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
    every object and module one by one, which costs more than most commands themselves
    (figures in bench/NOTES.md).  Only the
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
        # a command's arguments as they stand (fastparse), else argparse's reading of them
        args = fastparse.parse(door, prog, only, argv[1:]) if only is not None else None
        if args is None:
            from mindos.cli import parsers  # lazy: help, usage errors and the rarer argument shapes

            if _OWNED:
                parsers.quiet_gettext()
            if only is None:
                parser = parsers.build_parser(door, prog, bare=True)
                if not argv:
                    return fail(parser.format_usage().strip(), "usage", 2, as_json)
            else:
                parser, argv = parsers.command_parser(door, prog, only), argv[1:]
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
        result = call_handler(conn, args)
    except MindosError as exc:
        if conn is not None and getattr(exc, "audit", None):
            _record_refusal(conn, exc.audit)
        return fail(str(exc) or exc.__class__.__name__, exc.code, exc.exit_code, as_json)
    except sqlite3_errors() as exc:
        text = str(exc)
        if "readonly" in text:  # a database file this user cannot write (the home itself may be writable)
            return fail(f"database error: {text}: reads work, writes are refused; nothing was changed", "read_only",
                        1, as_json)
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
        if conn is not None and conn.readonly:  # a read-only home: the read worked, say what will not
            sys.stderr.write(f"note: {conn.readonly}: reads work, writes are refused\n")
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


def call_handler(conn, args):
    """Run a parsed command's handler the one way every front door does (the CLI and the MCP
    tools alike): through the replay table when it carries a ``--request-id``."""
    if getattr(args, "request_id", None) is not None and conn is not None:
        return _replayable(conn, args)
    return args.handler(conn, args)


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
