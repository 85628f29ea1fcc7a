"""The one exception family core code raises, and the error codes and exit codes they map to.

Each error carries a one-line message in the spec's words.  ``mindos.cli`` is the only
place that turns them into exit codes: :class:`InvalidInput` is a usage problem (exit 2),
everything else is a refusal or a failed check (exit 1).  :data:`CODES` and
:data:`EXIT_CODES` are the stable vocabulary ``--json-errors`` prints and ``protocol``
publishes; a test checks every code raised in the package against them, and the README's
tables against them.
"""

# (code, exit code, meaning): every code an error line may carry
CODES = (
    ("invalid", 2, "a value failed validation (id, timestamp, priority, control character, non-ASCII digits, JSON)"),
    ("usage", 2, "argparse: unknown command or flag, a missing required flag"),
    ("not_found", 1, "an id names nothing in this home"),
    ("no_database", 1, "the home has no database: run `init` there, or fix the home variables"),
    ("refused", 1, "well-formed, but the rules say no right now (terminal task, foreign lease, gate)"),
    ("conflict", 1, "the state moved between check and write (duplicate id, lost race): re-read and retry"),
    ("lease_superseded", 1, "the `--epoch` you hold is stale: another claim fenced you out"),
    ("secret_blocked", 1, "the secret guard refused credential-shaped text (kinds only, audited)"),
    ("busy", 1, "the write lock stayed taken past the wait limit; nothing was changed, retry"),
    ("storage", 1, "SQLite failed (disk full at commit, I/O error); the transaction rolled back"),
    ("io_error", 1, "a file or stdout could not be written (disk full, `/dev/full`, closed stdout)"),
    ("integrity", 1, "stored data failed a check (schema newer than the code, broken seal)"),
    ("no_git", 1, "`git` is not installed or cannot be run (`memory-ingest-git`)"),
    ("empty_database", 1, "`state.db` is empty (0 bytes) or has no MindOS schema: refused by every command, `init`"
                          " included; restore it or move it aside"),
    ("read_only", 1, "the home (or its database) is not writable: reads work (with a `note:` line on stderr),"
                     " writes are refused"),
    ("exists", 1, "`--out` names a file that exists: pass `--force` to replace it"),
    ("protected", 1, "`--out` names a path never written, even with `--force`: a database or its"
                     " `-wal`/`-shm`/`-journal`/`.lock`, a symlink, a FIFO, device or directory"),
    ("not_regular", 1, "a file to read is a FIFO, device, socket or directory: refused before reading"),
    ("symlink", 1, "a file to read is a symlink (never followed): refused before reading"),
    ("too_large", 1, "a file to read is over its size limit (the message gives the limit)"),
    ("system_directory", 1, "a new home or import target is a system directory (`/etc`, `/usr`, your `HOME`, ...)"),
    ("not_empty", 1, "a new home or import target is an existing non-empty directory"),
    ("unproven_recall_digest", 1, "`recall-diff` was given a digest no audited recall of that task produced"),
    ("untrusted_artifact", 1, "a restore or import was handed a file neither this home nor a trusted key signed"
                              " (`--trust-unsigned`, SECURITY.md)"),
    ("cancelled", 1, "an MCP client cancelled the call (`notifications/cancelled`) before it committed: nothing was"
                     " changed"),
    ("override_refused", 1, "an MCP call sent `allow_secret` or `force` to a server started without"
                            " `--allow-secret-override` / `--allow-force`"),
    ("token_required", 1, "`mindos-mcp --http` on a non-loopback address needs `--token-file`"),
    ("token_file_mode", 1, "the `--token-file` is readable by group or others: make it 0600"),
    ("interrupted", 130, "Ctrl-C"),
    ("error", 1, "any other refusal"),
)

# (exit code, meaning): every exit status a front door ends with
EXIT_CODES = (
    (0, "done"),
    (1, "refused, not found, conflict, or a check that ran and found problems (`verify-chain`, lints)"),
    (2, "invalid input or usage (bad id, timestamp, priority, unknown flag)"),
    (130, "interrupted (Ctrl-C); a write either committed whole or not at all"),
)


class MindosError(Exception):
    """Base class: a clear, one-line reason something did not happen.

    ``code`` is the stable machine-readable name printed by ``--json-errors`` (the
    vocabulary is listed in the README); a raise site may pass a more specific one.
    """

    exit_code = 1
    code = "error"

    def __init__(self, message="", *, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code


class InvalidInput(MindosError):
    """A value failed validation (bad id, timestamp, priority, JSON, ...)."""

    exit_code = 2
    code = "invalid"


class NotFound(MindosError):
    """An id names nothing in this home."""

    code = "not_found"


class Refused(MindosError):
    """The request is well-formed but the rules do not allow it right now."""

    code = "refused"


class Conflict(Refused):
    """The state changed between check and write (a lost race, a duplicate id)."""

    code = "conflict"


class IntegrityError(MindosError):
    """Stored data failed an integrity check (hash chain, sealed file, schema skew)."""

    code = "integrity"
