"""Receipts: sealed evidence files indexed in SQLite.

A receipt is a JSON document under ``<home>/receipts/<receipt-id>.json`` (written
atomically, mode 0600) plus a ``receipts`` row whose ``file_hash`` is the SHA-256 of the
file's exact bytes, so a later check can prove the evidence was not edited.
The file is written first, inside the write transaction; if anything after that fails
(the row, the audit event, the commit) the file is removed again, so a refused or failed
receipt leaves neither a row nor a file.  A process killed between the file write and the
commit leaves a complete, self-describing file that no row indexes (never a torn file or
a row without its file); ``metrics`` counts such files as ``receipt_files_unindexed``.
Rows store the path relative to the home (``receipts/<id>.json``) so a home can move.

A run receipt (``run-receipt``) is an ordinary sealed receipt whose payload records one
agent run on the task: the harness, model, session and workspace, how it ended, and
optionally its timeout and capabilities.  Its kind carries the outcome -- ``run`` for a run
that ended ok, ``run:failed`` / ``run:timeout`` / ``run:cancelled`` otherwise -- so a
definition of done that requires ``run`` (``create --requires-receipt run``) is met by a
successful run and never by a failed one, through the same kind check every receipt
passes.  Recording the same run twice (same task, same payload) returns the first receipt.
"""

import json
import os

from mindos.core import canonical, clock, validate
from mindos.store import db, ledger, sql
from mindos.errors import InvalidInput, NotFound
from mindos.work import rows

MAX_PAYLOAD_BYTES = 1024 * 1024
MAX_FILE_BYTES = 64 * 1024 * 1024  # a receipt file read back (its payload plus the envelope)
_FORMAT = "mindos-receipt-v1"


def file_path(conn, receipt_id):
    """Where the file of ``receipt_id`` lives in this home."""
    return os.path.join(db.receipts_dir(conn.home), f"{receipt_id}.json")


def _stored_path(receipt_id):
    """The path a receipts row records: relative to the home."""
    return f"receipts/{receipt_id}.json"


def _new_id(conn):
    return sql.new_id(conn, "receipts", "r-", 6)


def _payload_json(payload):
    try:
        text = canonical.canonical_json(payload)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"invalid --payload: not a JSON value ({exc.__class__.__name__})") from None
    except RecursionError:
        raise InvalidInput("invalid --payload: nested too deeply") from None
    if "\\u0000" in text and any("\x00" in item for item in strings(payload)):  # cheap pre-check first
        raise InvalidInput("invalid --payload: contains a NUL character")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput("invalid --payload: not valid UTF-8 text") from None
    if size > MAX_PAYLOAD_BYTES:
        raise InvalidInput(f"invalid --payload: {size} bytes is over the limit of {MAX_PAYLOAD_BYTES}")
    return text


def strings(payload):
    """Every string of a decoded JSON value, keys included, depth first (no recursion limit)."""
    found, stack = [], [payload]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            found.extend(key for key in value if isinstance(key, str))
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def add(conn, task_id, kind, payload):
    """Seal ``payload`` (any JSON value) as a receipt of ``kind`` on a task; return its record.

    The record has ``receipt_id``, ``task_id``, ``kind``, ``file_hash``, ``path``,
    ``created_at`` and ``bytes``.  Audited as ``receipt_added`` on the task.
    """
    task_id = validate.identifier(task_id, "task id")
    kind = validate.tag(kind, "--kind")
    _payload_json(payload)  # validates type, size and encoding before anything is written
    from mindos.core import seal  # lazy: only writing a receipt pays for the seal and the atomic write

    written = None
    try:
        with db.write(conn):
            # guarded: every string and key of the decoded payload (so \u0041KIA escapes are seen)
            from mindos.store import guard  # lazy: only writes that store text load the detector
            guard.check(conn, "task", task_id, {"payload": strings(payload)})
            rows.require_task(conn, task_id)
            receipt_id = _new_id(conn)
            created_at = clock.now_iso()
            document = seal.seal(_FORMAT, {"receipt_id": receipt_id, "task_id": task_id, "kind": kind,
                                           "payload": payload, "created_at": created_at})
            # canonical (compact, sorted) text: deterministic, and never much larger than the payload
            data = seal.dumps(document)
            path = file_path(conn, receipt_id)
            file_hash = seal.write(path, document, confined=conn.home)  # never through a symlink
            written = path
            conn.execute(
                "INSERT INTO receipts(id, task_id, kind, path, file_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (receipt_id, task_id, kind, _stored_path(receipt_id), file_hash, created_at),
            )
            ledger.append_event(conn, "task", task_id, "receipt_added",
                            {"receipt_id": receipt_id, "kind": kind, "file_hash": file_hash})
    except BaseException:
        if written is not None:
            try:
                os.unlink(written)
            except OSError:
                pass
        raise
    return {"receipt_id": receipt_id, "task_id": task_id, "kind": kind, "file_hash": file_hash,
            "stored_path": _stored_path(receipt_id), "file": path, "path": path,  # path: alias of file
            "created_at": created_at, "bytes": len(data)}


def record_keys(conn, row):
    """A receipts row as commands show it: ``receipt_id``, ``stored_path`` (relative to the
    home, as the row keeps it) and ``file`` (absolute), plus the row's own ``id`` and
    ``path`` kept as aliases of ``receipt_id`` and ``stored_path``."""
    stored = row.get("path") or ""
    row.update(receipt_id=row["id"], stored_path=stored,
               file=stored if os.path.isabs(stored) else os.path.join(conn.home, stored))
    return row


def add_json(conn, task_id, kind, payload_text):
    """Parse ``payload_text`` as JSON (refusing malformed or > 1 MiB text) and :func:`add` it."""
    if not isinstance(payload_text, str):
        raise InvalidInput("invalid --payload: expected JSON text")
    if len(payload_text) > MAX_PAYLOAD_BYTES:
        raise InvalidInput(f"invalid --payload: {len(payload_text)} characters is over the limit of"
                           f" {MAX_PAYLOAD_BYTES} bytes")
    validate.tag(kind, "--kind")
    return add(conn, task_id, kind, canonical.loads_strict(payload_text, "--payload"))


def load(conn, receipt_id):
    """Read a receipt back: its row, the parsed file and whether the seal still holds.

    Returns the row fields plus ``file_present``, ``document`` (parsed JSON or None),
    ``actual_hash`` and ``hash_ok`` (None for rows sealed before file hashing: file_hash '').
    """
    receipt_id = validate.identifier(receipt_id, "receipt id")
    row = conn.execute(
        "SELECT id, task_id, kind, path, file_hash, created_at FROM receipts WHERE id = ?", (receipt_id,)
    ).fetchone()
    if row is None:
        raise NotFound(f"unknown receipt '{receipt_id}'")
    record = {"receipt_id": row["id"], "task_id": row["task_id"], "kind": row["kind"], "path": row["path"],
              "file_hash": row["file_hash"], "created_at": row["created_at"]}
    path = row["path"] if os.path.isabs(row["path"] or "") else os.path.join(conn.home, row["path"] or "")
    from mindos.core import files  # lazy: reading a receipt back only
    from mindos.errors import MindosError

    try:  # a symlink is not evidence, and a FIFO must not hang the reader
        data = files.read_bytes(path, max_bytes=MAX_FILE_BYTES)
    except (MindosError, OSError):
        record.update(file_present=False, document=None, actual_hash=None,
                      hash_ok=None if not row["file_hash"] else False)
        return record
    actual = canonical.sha256_hex(data)
    try:
        document = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        document = None
    record.update(file_present=True, document=document, actual_hash=actual,
                  hash_ok=None if not row["file_hash"] else actual == row["file_hash"])
    return record


def metrics(conn):
    """Receipt-file hygiene for ``metrics``: sealed files that no row indexes.

    Counts ``<id>.json`` files without a receipts row plus leftover temp files of
    interrupted atomic writes (both the trace of a process killed mid-receipt).
    """
    try:
        names = os.listdir(db.receipts_dir(conn.home))
    except OSError:
        names = []
    temp = sum(1 for name in names if name.startswith(".") and name.endswith(".tmp"))
    ids = {name[:-5] for name in names if name.endswith(".json") and not name.startswith(".")}
    indexed = {row[0] for row in conn.execute("SELECT id FROM receipts")} if ids else set()
    return {"receipt_files_unindexed": len(ids - indexed) + temp}


RUN_OUTCOMES = ("ok", "failed", "timeout", "cancelled")
MAX_RUN_FIELD = 200
MAX_WORKSPACE = 4096
MAX_TIMEOUT_SECONDS = 7 * 24 * 3600


def run_kind(outcome):
    """The receipt kind of a run that ended with ``outcome``: ``run`` when ok, else ``run:<outcome>``."""
    return "run" if outcome == "ok" else f"run:{outcome}"


def add_run(conn, task_id, *, harness, model, session, workspace, outcome, timeout_seconds=None, capabilities=()):
    """Seal one agent run on a task as a receipt (see the module docstring); return its record.

    The record is :func:`add`'s plus ``run`` (the sealed payload) and ``deduplicated``
    (True when an identical run receipt of this task already existed and is returned
    instead).  Every text field passes the secret guard (a credential-shaped one is refused,
    audited ``secret_blocked``).  Audited ``receipt_added`` with the run's kind.
    """
    task_id = validate.identifier(task_id, "task id")
    run = {"harness": validate.line(harness, "--harness", required=True, max_len=MAX_RUN_FIELD),
           "model": validate.line(model, "--model", required=True, max_len=MAX_RUN_FIELD),
           "session": validate.line(session, "--session", required=True, max_len=MAX_RUN_FIELD),
           "workspace": validate.line(workspace, "--workspace", required=True, max_len=MAX_WORKSPACE)}
    if outcome not in RUN_OUTCOMES:
        raise InvalidInput(f"invalid --outcome: {validate.shown(outcome, 40)} (choose from {', '.join(RUN_OUTCOMES)})")
    run["outcome"] = outcome
    if timeout_seconds is not None:
        run["timeout_seconds"] = validate.positive_int(timeout_seconds, "--timeout-seconds",
                                                       maximum=MAX_TIMEOUT_SECONDS)
    run["capabilities"] = validate.tags(capabilities, "--capability")
    kind = run_kind(outcome)
    with db.write(conn):
        # guarded here as well as in add(), so a refused run names its own fields, and before
        # the duplicate lookup reads any file
        from mindos.store import guard  # lazy: only writes that store text load the detector
        guard.check(conn, "task", task_id, {name: run[name] for name in ("harness", "model", "session", "workspace")})
        rows.require_task(conn, task_id)
        for row in conn.execute("SELECT id FROM receipts WHERE task_id = ? AND kind = ? ORDER BY created_at, id",
                                (task_id, kind)).fetchall():
            existing = load(conn, row[0])
            document = existing["document"] if isinstance(existing["document"], dict) else {}
            if existing["hash_ok"] and document.get("payload") == run:
                path = file_path(conn, existing["receipt_id"])
                return {"receipt_id": existing["receipt_id"], "task_id": task_id, "kind": kind,
                        "file_hash": existing["file_hash"], "stored_path": existing["path"], "file": path,
                        "path": path, "created_at": existing["created_at"], "bytes": os.path.getsize(path),
                        "run": run, "deduplicated": True}
        record = add(conn, task_id, kind, run)
    record.update(run=run, deduplicated=False)
    return record
