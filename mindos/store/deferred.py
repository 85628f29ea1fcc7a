"""Audit events deferred by a time-bounded caller, landed by the next write.

A session-start hook (``prime``, the Hermes gateway hook) must answer within its
``--seconds`` even while another process holds the home's write lock for longer.  Its pack
is read from a snapshot (WAL readers never wait for the writer); only its audit event
needs the lock.  Rather than wait past its deadline or drop the event, the caller spools it.

Design decisions
  * **One file per deferred write**, ``<home>/deferred/<time>-<id>.json``, written with
    :func:`mindos.core.atomic.atomic_write` (temp file, fsync, rename): a reader sees a
    whole file or none, and two spoolers never share a file, so nothing is lost to a race
    with the replay.
  * **Replayed by the next write of any command**, inside its transaction
    (:class:`mindos.store.db.write` checks for the directory: one ``stat`` per write
    transaction, nothing more when it is absent).  Each event lands with its original time
    (``deferred_at``) and spool id (``deferred_id``) in the payload; the files are removed
    only after the COMMIT, and an event whose ``deferred_id`` is already in the ledger is
    not appended again, so a crash between COMMIT and unlink duplicates nothing.  A rolled
    back write leaves the files for the next one.
  * **A file that cannot be read back** (truncated by hand, not JSON) is moved to
    ``<home>/deferred-rejected/`` instead of failing every later write.
"""

import json
import os

from mindos.core import clock
from mindos.core.canonical import canonical_json
from mindos.errors import MindosError, NotFound
from mindos.store import ledger

DIR = "deferred"
REJECTED_DIR = "deferred-rejected"
MAX_FILE_BYTES = 1 << 20
MAX_PER_WRITE = 500  # files landed by one write; the rest wait for the next


def directory(home):
    """The spool directory of ``home`` (the db module checks the same name)."""
    return os.path.join(home, DIR)


def spool(home, events):
    """Record ``events`` (``[(entity_type, entity_id, action, payload)]``) for the next write.

    Returns the spool id.  Never takes the write lock; raises OSError when the file cannot
    be written (the caller then reports the event as lost, never silently).
    """
    spool_id = os.urandom(8).hex()
    at = clock.now_iso()
    doc = {"id": spool_id, "at": at,
           "events": [{"entity_type": e[0], "entity_id": e[1], "action": e[2], "payload": e[3] or {}} for e in events]}
    data = canonical_json(doc).encode("utf-8")
    name = f"{at.replace(':', '')}-{spool_id}.json"
    folder = directory(home)
    from mindos.core.atomic import atomic_write  # lazy: only a caller that spools writes a file

    for attempt in (1, 2):
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            atomic_write(os.path.join(folder, name), data)
            return spool_id
        except FileNotFoundError:  # a replay removed the emptied directory in between: once more
            if attempt == 2:
                raise


def audit_bounded(conn, events, timeout, *, write):
    """Append ``events`` within ``timeout`` seconds of lock wait; past it, spool them for the
    next write (:func:`spool`).  Returns True when they were deferred.  ``write``: the store's
    transaction, :class:`mindos.store.db.write` (passed in: the db module loads this one, so
    this one never loads it)."""
    try:
        with write(conn, timeout=timeout):
            for event in events:
                ledger.append_event(conn, *event)
        return False
    except MindosError as exc:
        if exc.code != "busy":
            raise
    spool(conn.home, events)
    return True


def pending(home):
    """The names of the spool files waiting in ``home``, oldest first."""
    try:
        return sorted(n for n in os.listdir(directory(home)) if n.endswith(".json") and not n.startswith("."))
    except OSError:
        return []


def _load(path):
    """The spool document at ``path`` (read without following a link, never blocking on a
    FIFO, at most MAX_FILE_BYTES: it is read while the write lock is held)."""
    from mindos.core import files  # lazy: only a replay reads spool files

    doc = json.loads(files.read_bytes(path, max_bytes=MAX_FILE_BYTES).decode("utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("id"), str) or not isinstance(doc.get("events"), list):
        raise ValueError("not a spool document")
    for event in doc["events"]:
        if not (isinstance(event, dict) and all(isinstance(event.get(k), str) for k in ("entity_type", "entity_id", "action"))
                and isinstance(event.get("payload"), dict)):
            raise ValueError("malformed event")
    return doc


def _reject(home, path):
    try:
        os.makedirs(os.path.join(home, REJECTED_DIR), mode=0o700, exist_ok=True)
        os.replace(path, os.path.join(home, REJECTED_DIR, os.path.basename(path)))
    except OSError:
        pass


def replay(conn):
    """Append the spooled events inside the open write transaction; return the files landed
    (to remove with :func:`done` once the transaction commits)."""
    landed = []
    for name in pending(conn.home)[:MAX_PER_WRITE]:
        path = os.path.join(directory(conn.home), name)
        try:
            doc = _load(path)
        except NotFound:
            continue  # another writer landed it first
        except (MindosError, OSError, ValueError, RecursionError):
            _reject(conn.home, path)
            continue
        # a file's events land together (one transaction), so its first event tells for all
        first = doc["events"][0] if doc["events"] else None
        mark = f'%"deferred_id":{json.dumps(doc["id"])}%'
        if first is None or conn.execute(
                "SELECT 1 FROM audit_events WHERE entity_id = ? AND action = ? AND payload_json LIKE ? LIMIT 1",
                (first["entity_id"], first["action"], mark)).fetchone() is None:
            for event in doc["events"]:
                payload = {**event["payload"], "deferred_id": doc["id"], "deferred_at": doc.get("at")}
                ledger.append_event(conn, event["entity_type"], event["entity_id"], event["action"], payload)
        landed.append(path)
    return landed


def done(conn, landed):
    """Remove the files of a committed replay, and the directory once it is empty."""
    for path in landed:
        try:
            os.unlink(path)
        except OSError:
            pass
    try:
        os.rmdir(directory(conn.home))
    except OSError:  # not empty (a newer deferral) or already gone
        pass
