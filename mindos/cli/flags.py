"""The flag vocabulary: one meaning per flag name, defined once.

Commands add shared flags through these functions (listed in :data:`SHARED`) instead of
spelling them again, so
``--epoch`` always fences a lease, ``--dry-run`` always previews without writing,
``--limit`` always caps a listing, and the secret flags always mean the guard's override.
A command may word the help for its own context; the meaning, type and default rules are
fixed here.
"""


def integer(text):
    """argparse ``type`` for every integer flag: ASCII digits with an optional leading ``-``
    only (``int()`` would also take ``+30``, ``1_000``, `` 30 ``, fullwidth and other-script
    digits)."""
    from mindos.core import validate  # lazy: --help and --version never parse a number

    if not validate.ascii_integer(text):
        import argparse  # lazy: already loaded by the parser; only the error path names it

        raise argparse.ArgumentTypeError(f"expected an integer in ASCII digits, got {text!r:.40}")
    return int(text)


def number(text):
    """argparse ``type`` for every decimal flag: ASCII digits with an optional leading ``-`` and
    one ``.`` (``float()`` would also take ``1e3``, ``nan``, ``inf``, ``1_0`` and other-script digits)."""
    from mindos.core import validate  # lazy: see integer

    if not validate.ascii_number(text):
        import argparse  # lazy: see integer

        raise argparse.ArgumentTypeError(f"expected a number in ASCII digits, got {text!r:.40}")
    return float(text)


# The shared flags: flag -> the helper below that declares it.  A command declares these
# only through their helper (tests/cli/test_flags.py walks every declaration): the meaning,
# type and default rules stay here, the help may be worded for the command.
SHARED = {
    "--epoch": "epoch", "--dry-run": "dry_run", "--limit": "limit", "--redact": "redact",
    "--allow-secret": "allow_secret", "--owner": "owner", "--minutes": "minutes", "--project": "project",
    "--json-errors": "json_errors", "--request-id": "request_id", "--trust-unsigned": "trust_unsigned",
}
_WORDED = object()  # "word the help from the default"


def _shared(argument, name):
    """Mark ``argument`` as declared by the helper ``name`` (see :data:`SHARED`)."""
    argument.shared = name
    return argument


def epoch(p, help="fencing epoch you were issued; a stale one is refused"):
    """``--epoch N``: the lease epoch the caller holds (fencing)."""
    return _shared(p.add_argument("--epoch", type=integer, help=help), "epoch")


def dry_run(p, help, hidden=False):
    """``--dry-run``: report what would change; change nothing (``help`` says what is reported;
    ``hidden``: still accepted, left out of ``--help``)."""
    return _shared(p.add_argument("--dry-run", action="store_true", help=help, hidden=hidden), "dry_run")


def limit(p, default=None, help=_WORDED):
    """``--limit N``: at most N results (``help`` None: no help line)."""
    if help is _WORDED:
        help = "at most this many" + (f" (default {default})" if default is not None else "")
    return _shared(p.add_argument("--limit", type=integer, default=default, help=help), "limit")


def redact(p, help):
    """``--redact``: store a ``[REDACTED:<kind>]`` form of credential-shaped text (audited)."""
    return _shared(p.add_argument("--redact", action="store_true", help=help), "redact")


def allow_secret(p, help):
    """``--allow-secret``: store credential-shaped text verbatim (the guard's audited override)."""
    return _shared(p.add_argument("--allow-secret", action="store_true", help=help), "allow_secret")


def secret(p, what="content"):
    """``--redact`` / ``--allow-secret``: the secret guard's two audited overrides."""
    redact(p, f"store credential-shaped {what} as [REDACTED:<kind>] instead of refusing (audited)")
    allow_secret(p, f"store credential-shaped {what} verbatim (override; audited secret_allowed)")


def owner(p, help="the lease holder", required=True, default=None):
    """``--owner NAME``: the acting agent."""
    return _shared(p.add_argument("--owner", required=required, default=default, help=help), "owner")


def minutes(p, default=30, help=None):
    """``--minutes N``: a lease window in minutes."""
    if help is None:
        help = "lease window in minutes" + (f" (default {default})" if default is not None else "")
    return _shared(p.add_argument("--minutes", type=integer, default=default, help=help), "minutes")


def project(p, help="only this project", required=False):
    """``--project ID``: scope to (or, when required, assign) one project."""
    return _shared(p.add_argument("--project", required=required, help=help), "project")


def json_errors(p):
    """``--json-errors``: errors on stderr as one JSON object (also ``MINDOS_ERRORS=json``).

    :func:`mindos.cli.run` takes it out of argv wherever it stands, so it also shapes usage
    errors; it is declared on the top-level parser so ``--help`` lists it.
    """
    return _shared(p.add_argument("--json-errors", action="store_true",
                                  help='print errors on stderr as one JSON object {"error": {"code": ...,'
                                       ' "message": ...}} (also MINDOS_ERRORS=json); codes are listed in the'
                                       ' README'), "json_errors")


def request_id(p, actor=None):
    """``--request-id KEY``: an idempotent retry key (see :mod:`mindos.store.replay`); the same
    key from the same actor (the value of the ``actor`` argument) returns the first result,
    flagged ``replayed: true``, instead of acting twice."""
    argument = p.add_argument("--request-id", metavar="KEY",
                              help="idempotency key: a retry with the same key (and the same arguments) returns"
                                   " the first result with replayed: true instead of acting again")
    p.set_defaults(replay_actor=actor)
    return _shared(argument, "request_id")


def trust_unsigned(p):
    """``--trust-unsigned``: accept an artifact neither this home nor a trusted key signed."""
    return _shared(p.add_argument("--trust-unsigned", action="store_true",
                                  help="accept an artifact that is unsigned or signed by a key this home does not"
                                       " trust (its seal and every row are still checked; see SECURITY.md)"),
                   "trust_unsigned")


def trust_home():
    """The home whose keys judge an artifact's signature in the db-less checks."""
    from mindos.core.home import home_dir  # lazy: only the artifact checks resolve it here

    return home_dir()


# the most a *-file flag reads: the largest value any long text flag accepts (a 1 MiB receipt
# payload), plus one byte so the command's own limit, not a truncation, reports the excess
MAX_FILE_BYTES = 1024 * 1024 + 1


def long_text(p, name, *, required=False, default=None, help=None):
    """``--NAME TEXT`` or ``--NAME-file PATH`` (``-`` for stdin): long text without the argv
    limit.  :func:`mindos.cli.run` reads the file into ``NAME`` before the handler runs."""
    group = p.add_mutually_exclusive_group(required=required)
    group.add_argument(f"--{name}", default=default, help=help)
    group.add_argument(f"--{name}-file", metavar="PATH",
                       help=f"read --{name} from this file ('-' for stdin), UTF-8, for text past the argument limit")
    files = tuple(p.get_default("text_files") or ()) + (name.replace("-", "_"),)
    p.set_defaults(text_files=files)


def force_out(p):
    """``--force``: replace an existing ``--out`` file.  Never a database or its side files,
    a symlink or a non-regular file (see :func:`mindos.core.files.check_out`)."""
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out file (never a database or its -wal/-shm/-journal, a symlink or"
                        " a non-regular file)")


def read_text_file(path, flag):
    """The UTF-8 text of ``path`` (``-``: stdin) for a ``*-file`` flag; InvalidInput when unreadable.

    A named path must be a regular file, read through :mod:`mindos.core.files`: a symlink,
    FIFO, socket or device is refused before anything is read (a FIFO with no writer never
    hangs the call); at most MAX_FILE_BYTES are read either way.
    """
    import sys  # lazy: only a *-file flag reads a file

    from mindos.core import files  # lazy: only a *-file flag reads a file
    from mindos.errors import InvalidInput, MindosError  # lazy: as above

    too_large = f"invalid {flag}: {path!r:.80} is too large: the limit is {MAX_FILE_BYTES} bytes"
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1) if sys.stdin is not None else b""
        else:  # no symlink, never blocking on a FIFO or reading a device, at most the cap
            data = files.read_bytes(path, max_bytes=MAX_FILE_BYTES)
    except MindosError as exc:
        if exc.code == "too_large":
            raise InvalidInput(too_large) from None
        raise InvalidInput(f"invalid {flag}: cannot read {exc}" if exc.code == "not_found" else
                           f"invalid {flag}: {exc}") from None
    except OSError as exc:
        raise InvalidInput(f"invalid {flag}: cannot read {path!r:.80} ({exc.strerror})") from None
    except AttributeError:  # an in-process stdin without a byte buffer
        data = sys.stdin.read(MAX_FILE_BYTES + 1).encode("utf-8", "surrogatepass")
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(too_large)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"invalid {flag}: not valid UTF-8 text") from None
