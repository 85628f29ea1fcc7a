"""Audit checkpoints: pin the chain head so tail truncation becomes detectable.

A hash chain proves every remaining link but cannot see its newest events deleted.  A
checkpoint (``autopilot-checkpoint-v1``) seals the head at one moment (last event id, its
hash, the event count); comparing it with the live ledger later proves history was cut or
rewritten (``chain_truncated``, ``checkpoint_head_mismatch``,
``events_removed_since_checkpoint``).  Growth past the pin is normal and never flagged.
Every field is inside the seal and the file must be byte-exact, so a changed checkpoint is
refused rather than trusted.
"""

import os

from mindos.core import clock
from mindos.errors import IntegrityError
from mindos.recovery import artifacts
from mindos.store import ledger

FORMAT = "autopilot-checkpoint-v1"


def head(conn):
    """``{"last_event_id", "head_hash", "event_count"}`` of the live ledger."""
    row = conn.execute("SELECT id, hash FROM audit_events ORDER BY id DESC LIMIT 1").fetchone()
    count = conn.execute("SELECT count(*) FROM audit_events").fetchone()[0]
    return {"last_event_id": row[0] if row else 0, "head_hash": row[1] if row else ledger.GENESIS_HASH,
            "event_count": count}


def create(conn, *, out=None, force=False):
    """Seal the current chain head into a checkpoint file (default ``<home>/backups/``).

    Returns ``{"path", "file_sha256", "last_event_id", "head_hash", "event_count",
    "created_at"}``.  Writes only the file (the ledger is not touched); an existing ``out``
    is refused unless ``force``.
    """
    conn.execute("BEGIN")
    try:
        pinned = head(conn)
    finally:
        conn.execute("COMMIT")
    now = clock.now_iso()
    path = out or artifacts.default_path(conn.home, "checkpoint", suffix=str(pinned["last_event_id"]))
    _, digest = artifacts.seal_write(path, FORMAT, {**pinned, "created_at": now}, force=bool(force))
    return {"path": os.path.abspath(path), "file_sha256": digest, **pinned, "created_at": now}


def load(path):
    """Read and verify a checkpoint file; return the document (IntegrityError when changed)."""
    doc = artifacts.read(path, FORMAT)
    for key in ("last_event_id", "event_count"):
        if not isinstance(doc.get(key), int) or isinstance(doc.get(key), bool) or doc[key] < 0:
            raise IntegrityError(f"checkpoint {path} has no valid {key}")
    if not isinstance(doc.get("head_hash"), str):
        raise IntegrityError(f"checkpoint {path} has no valid head_hash")
    return doc


def compare(conn, doc):
    """Problems of the live ledger against a verified checkpoint ``doc`` (empty when contained)."""
    problems = []
    pinned_id, pinned_hash = doc["last_event_id"], doc["head_hash"]
    if pinned_id:
        row = conn.execute("SELECT hash FROM audit_events WHERE id = ?", (pinned_id,)).fetchone()
        if row is None:
            problems.append({"kind": "chain_truncated", "event_id": pinned_id,
                             "detail": f"pinned event {pinned_id} is missing from the ledger"})
        elif row[0] != pinned_hash:
            problems.append({"kind": "checkpoint_head_mismatch", "event_id": pinned_id,
                             "expected": pinned_hash, "actual": row[0]})
    count = conn.execute("SELECT count(*) FROM audit_events WHERE id <= ?", (pinned_id,)).fetchone()[0]
    if count < doc["event_count"]:
        problems.append({"kind": "events_removed_since_checkpoint", "expected": doc["event_count"],
                         "actual": count})
    return problems


def check(conn, path):
    """Verify a checkpoint file's seal and its containment in the live chain.

    Returns ``{"ok", "path", "checkpoint": {last_event_id, head_hash, event_count,
    created_at}, "live": head, "problems"}``.  A changed file raises IntegrityError.
    """
    doc = load(path)
    conn.execute("BEGIN")
    try:
        problems = compare(conn, doc)
        live = head(conn)
    finally:
        conn.execute("COMMIT")
    pinned = {key: doc[key] for key in ("last_event_id", "head_hash", "event_count", "created_at") if key in doc}
    return {"ok": not problems, "path": os.path.abspath(path), "checkpoint": pinned, "live": live,
            "problems": problems}


def files(home):
    """Every ``checkpoint-*.json`` under ``<home>/backups/``, sorted (none when the directory
    is missing or unreadable).  A plain listing, not glob: the nanny's doctor sweep lists
    these on every tick, and glob would load fnmatch and contextlib for one pattern."""
    backups = os.path.join(home, "backups")
    try:
        names = os.listdir(backups)
    except OSError:
        return []
    return sorted(os.path.join(backups, name) for name in names
                  if name.startswith("checkpoint-") and name.endswith(".json"))


def sweep(conn):
    """Doctor's pass: every checkpoint under backups/ checked; return a list of problems."""
    problems = []
    for path in files(conn.home):
        try:
            doc = load(path)
        except IntegrityError as exc:
            problems.append({"kind": "checkpoint_invalid", "path": path, "detail": str(exc)})
            continue
        for problem in compare(conn, doc):
            problems.append({**problem, "path": path})
    return problems

