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
"""

import json
import os

from mindos.core import canonical, clock, validate
from mindos.store import db, ledger
from mindos.errors import InvalidInput, NotFound

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
    while True:
        candidate = "r-" + os.urandom(6).hex()
        if conn.execute("SELECT 1 FROM receipts WHERE id = ?", (candidate,)).fetchone() is None:
            return candidate


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
            if conn.execute("SELECT 1 FROM tasks WHERE id = ?", (task_id,)).fetchone() is None:
                raise NotFound(f"unknown task '{task_id}'")
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
