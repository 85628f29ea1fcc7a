"""Audit checkpoints: pin the chain head so tail truncation becomes detectable.

A hash chain proves every remaining link but cannot see its newest events deleted.  A
checkpoint (``autopilot-checkpoint-v1``) seals the head at one moment (last event id, its
hash, the event count); comparing it with the live ledger later proves history was cut or
rewritten (``chain_truncated``, ``checkpoint_head_mismatch``,
``events_removed_since_checkpoint``).  Growth past the pin is normal and never flagged.
Every field is inside the seal and the file must be byte-exact, so a changed checkpoint is
refused rather than trusted.

Automatic pins (:func:`auto_pin`): every nanny tick and every snapshot pin the head to
``<home>/backups/checkpoint-auto.json`` and, when ``MINDOS_CHECKPOINT_DIR`` names a
directory, to ``checkpoint-<home tag>-auto.json`` there too (the tag is a digest of the
home's real path, so one directory can hold the pins of several homes).  A pin directory
outside the home is what catches tail truncation by someone who can write the home: they
can delete ``backups/`` but not the pin kept elsewhere.  A pin is never moved backwards:
when the live ledger no longer contains an existing pin, the new one is not written and the
problem is reported instead, so the evidence stays.
"""

import os

from mindos.core import clock
from mindos.errors import IntegrityError, Refused
from mindos.recovery import artifacts
from mindos.store import ledger

FORMAT = "autopilot-checkpoint-v1"
PIN_DIR_ENV = "MINDOS_CHECKPOINT_DIR"
AUTO_NAME = "checkpoint-auto.json"


def head(conn):
    """``{"last_event_id", "head_hash", "event_count"}`` of the live ledger."""
    rows = ledger.fetch_rows(conn, "SELECT id, hash FROM audit_events ORDER BY id DESC LIMIT 1")
    row = rows[0] if rows else None  # a hash that is not UTF-8 is read, and then mismatches
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
    _, digest = artifacts.seal_write(path, FORMAT, {**pinned, "created_at": now}, force=bool(force),
                                     home=conn.home)
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
        rows = ledger.fetch_rows(conn, "SELECT hash FROM audit_events WHERE id = ?", (pinned_id,))
        row = rows[0] if rows else None
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


def _listed(directory, prefix):
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(os.path.join(directory, name) for name in names
                  if name.startswith(prefix) and name.endswith(".json"))


def pin_dir():
    """The directory ``MINDOS_CHECKPOINT_DIR`` names (absolute), or None when unset."""
    value = os.environ.get(PIN_DIR_ENV, "")
    return os.path.abspath(value) if value.strip() else None


def home_tag(home):
    """A short digest of the home's real path: names its pins in a shared pin directory."""
    from mindos.core.canonical import sha256_hex  # lazy: only pin directories need it

    return sha256_hex(os.path.realpath(home).encode("utf-8", "surrogateescape"))[:16]


def files(home):
    """Every ``checkpoint-*.json`` under ``<home>/backups/`` and this home's
    ``checkpoint-<home tag>-*.json`` in the pin directory, sorted (none where a directory is
    missing or unreadable).  A plain listing, not glob: the nanny's doctor sweep lists these
    on every tick, and glob would load fnmatch and contextlib for one pattern."""
    found = _listed(os.path.join(home, "backups"), "checkpoint-")
    outside = pin_dir()
    if outside is not None and os.path.realpath(outside) != os.path.realpath(os.path.join(home, "backups")):
        found += _listed(outside, f"checkpoint-{home_tag(home)}-")
    return found


def auto_pin(conn):
    """Pin the live head to the automatic pin files (see the module docstring); return
    ``{"pinned", "head", "written", "problems"}`` (``written``: the paths rewritten now;
    ``problems``: why nothing was written).  Writes files only, never the database."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        pinned = head(conn)
        problems = sweep(conn)
    finally:
        if own:
            conn.execute("COMMIT")
    if problems:  # an earlier pin is no longer contained: keep the evidence, pin nothing
        return {"pinned": False, "head": pinned, "written": [], "problems": problems[:10]}
    targets = [os.path.join(artifacts.backups_dir(conn.home), AUTO_NAME)]
    outside = pin_dir()
    if outside is not None:
        if not os.path.isdir(outside):
            problems.append({"kind": "checkpoint_dir_missing", "path": outside,
                             "detail": f"{PIN_DIR_ENV} names a directory that does not exist"})
        else:
            targets.append(os.path.join(outside, f"checkpoint-{home_tag(conn.home)}-auto.json"))
    written, body = [], {**pinned, "created_at": clock.now_iso()}
    for path in targets:
        try:
            current = load(path) if os.path.exists(path) else None
        except IntegrityError:
            current = None  # changed since the sweep above found it valid: rewrite it
        if current is not None and all(current[key] == pinned[key] for key in pinned):
            continue
        try:
            artifacts.seal_write(path, FORMAT, body, home=conn.home)
        except (OSError, Refused) as exc:
            problems.append({"kind": "checkpoint_pin_failed", "path": path, "detail": str(exc)[:200]})
            continue
        written.append(path)
    return {"pinned": not problems, "head": pinned, "written": written, "problems": problems}


def sweep(conn):
    """Doctor's pass: every checkpoint under backups/ and in the pin directory checked;
    return a list of problems."""
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

