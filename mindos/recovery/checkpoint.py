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


def head(conn, counted=None):
    """``{"last_event_id", "head_hash", "event_count"}`` of the live ledger.  ``counted``:
    ``(event id, events up to it)`` counted moments ago (a sweep's containment check): only
    the events after it are counted (a count that ran too high after a deletion in between
    is what the next check names)."""
    rows = ledger.fetch_rows(conn, "SELECT id, hash FROM audit_events ORDER BY id DESC LIMIT 1")
    row = rows[0] if rows else None  # a hash that is not UTF-8 is read, and then mismatches
    if counted is not None:
        count = counted[1] + conn.execute("SELECT count(*) FROM audit_events WHERE id > ?",
                                          (counted[0],)).fetchone()[0]
    else:
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
        mark = watermark(conn)
    finally:
        conn.execute("COMMIT")
    now = clock.now_iso()
    path = out or artifacts.default_path(conn.home, "checkpoint", suffix=str(pinned["last_event_id"]))
    _, digest = artifacts.seal_write(path, FORMAT, {**pinned, "created_at": now, "watermark": mark},
                                     force=bool(force), home=conn.home)
    return {"path": os.path.abspath(path), "file_sha256": digest, **pinned, "created_at": now}


# tables whose rows are checked by rowid after a watermark (row-wise checks)
ROW_TABLES = ("receipts", "notes", "handoffs", "heartbeats", "facts", "tasks", "memories", "session_messages")


def watermark(conn, existing=None, carry=None):
    """The doctor's watermark of this moment, sealed into every checkpoint beside the head:
    what ``doctor --since-checkpoint`` and the nanny's next tick need to check only what
    changed after it.  ``{"event_id", "rowids": {table: max rowid}, "fts": {index: indexed
    minus content rows}, "files_ns"}`` (file times are the file system's).  Reads only.

    ``carry``: an earlier watermark whose full-text balances are trusted (the nanny's
    previous tick): each index's balance is then that one moved by the rows added after it
    (two rowid range counts), not counted whole; a row dropped below it from one side only
    is left to the whole count of the index's own turn."""
    import time  # lazy: file times are the file system's, not the package clock's

    from mindos.store import fts, sql  # lazy: only pins and checkpoints take a watermark

    if existing is None:
        existing = set(data_tables(conn))
    names = [name for name in ROW_TABLES if name in existing]
    specs = [spec for name, spec in fts.INDEXES.items() if spec.table in existing and fts.has(conn, name)]
    # every table's largest rowid and every carried balance's two range counts in one
    # statement (one statement each cost about as much again in preparing it as in running it)
    carried = [spec for spec in specs if _carried(spec, carry) is not None]
    terms = [sql.LARGEST_ROWID.format(table=sql.quoted(name)) for name in names]
    terms += [f"(SELECT count(*) FROM {spec.name}_docsize WHERE id > ?) - (SELECT count(*) FROM {spec.table}"
              f" WHERE rowid > ?)" for spec in carried]
    params = [value for spec in carried for value in (_carried(spec, carry)[1],) * 2]
    row = conn.execute("SELECT " + ", ".join(terms), params).fetchone() if terms else ()
    rowids = dict(zip(names, row))
    moved = {spec.name: _carried(spec, carry)[0] + value for spec, value in zip(carried, row[len(names):])}
    gaps = {spec.name: moved[spec.name] if spec.name in moved else fts_gap(conn, spec) for spec in specs}
    return {"event_id": ledger.height(conn), "rowids": rowids, "fts": gaps, "files_ns": time.time_ns()}


def data_tables(conn):
    """:func:`mindos.recovery.tables.data_tables` of ``conn``, read once while its schema
    stays as read (the schema cookie, ``PRAGMA schema_version``, which every schema change
    moves, is compared each call): a tick asks for the names three times, each read about
    2.3M instructions (the schema's rows read and matched against every index's shadow
    tables) against one pragma."""
    from mindos.recovery import tables  # lazy: only pins, checkpoints and the doctor's sweeps list them

    version = conn.execute("PRAGMA main.schema_version").fetchone()[0]
    kept = getattr(conn, "_mindos_data_tables", None)
    if kept is not None and kept[0] == version:
        return list(kept[1])
    names = tables.data_tables(conn)
    try:
        conn._mindos_data_tables = (version, tuple(names))
    except AttributeError:  # a plain sqlite3 connection keeps no attributes: read each time
        pass
    return names


def _carried(spec, carry):
    """``(balance, content max rowid)`` of index ``spec`` in watermark ``carry`` when both are
    counts (:func:`fts_gap` then moves that balance), else None."""
    gap = ((carry or {}).get("fts") or {}).get(spec.name)
    last = ((carry or {}).get("rowids") or {}).get(spec.table)
    if isinstance(gap, int) and not isinstance(gap, bool) and isinstance(last, int) and not isinstance(last, bool):
        return gap, last
    return None


def fts_gap(conn, spec, carry=None):
    """Indexed minus content rows of index ``spec``: counted whole, or with ``carry`` (a
    watermark holding this index's balance and its content table's max rowid) that balance
    moved by the rows after that rowid on each side (the index's rowids are its content
    table's)."""
    known = _carried(spec, carry)
    if known is not None:
        gap, last = known
        return gap + conn.execute(f"SELECT (SELECT count(*) FROM {spec.name}_docsize WHERE id > ?1) -"
                                  f" (SELECT count(*) FROM {spec.table} WHERE rowid > ?1)", (last,)).fetchone()[0]
    indexed = conn.execute(f"SELECT count(*) FROM {spec.name}_docsize").fetchone()[0]
    return indexed - conn.execute(f"SELECT count(*) FROM {spec.table}").fetchone()[0]


def load(path, home=None):
    """Read and verify a checkpoint file; return the document (IntegrityError when changed).

    ``home``: also check its signature against that home's keys (its own and the trusted
    ones): a signature that does not match its key means the file was changed and resealed,
    and is refused like any other change."""
    return load_signed(path, home)[0] if home is not None else _valid(path, artifacts.read(path, FORMAT))


def load_signed(path, home, ring=None):
    """``(doc, trust)``: the verified checkpoint and who signed it (``signed_by_this_home``,
    ``signed_by_trusted_key`` or ``unsigned``); a signature that does not match raises
    IntegrityError.  ``ring``: the home's keyring when the caller already read it."""
    from mindos.core import seal  # lazy: only signature checks
    from mindos.recovery import keys

    if ring is None:
        ring = keys.keyring(home)
    try:
        doc, (trust, _key_id) = seal.read(path, FORMAT, outside=artifacts.OUTSIDE, exact=True, keys=ring)
    except IntegrityError as exc:
        raise IntegrityError(artifacts.named(path, exc, FORMAT)) from None
    return _valid(path, doc), trust


def _valid(path, doc):
    for key in ("last_event_id", "event_count"):
        if not isinstance(doc.get(key), int) or isinstance(doc.get(key), bool) or doc[key] < 0:
            raise IntegrityError(f"checkpoint {path} has no valid {key}")
    if not isinstance(doc.get("head_hash"), str):
        raise IntegrityError(f"checkpoint {path} has no valid head_hash")
    return doc


def compare(conn, doc, counted=None, known=None):
    """Problems of the live ledger against a verified checkpoint ``doc`` (empty when contained).
    ``counted``: a list that receives ``(pinned event id, events up to it)``.  ``known``:
    ``{event id: events up to it}`` counted earlier and trusted (the nanny's previous
    ticks; see :func:`trust_counts`): the events up to the pin are then read from the
    nearest of those by a range count of the ids between, when that range is short."""
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
    # all events minus the few after the pin, in one statement (one snapshot): the whole
    # count is read from the smallest index, far cheaper than walking the table to the pin
    count = _from_known(conn, pinned_id, known) if known else None
    if count is None:
        count = conn.execute("SELECT (SELECT count(*) FROM audit_events) - (SELECT count(*) FROM audit_events"
                             " WHERE id > ?)", (pinned_id,)).fetchone()[0]
    if counted is not None:
        counted.append((pinned_id, count))
    if count < doc["event_count"]:
        problems.append({"kind": "events_removed_since_checkpoint", "expected": doc["event_count"],
                         "actual": count})
    return problems


KNOWN_SPAN = 100000  # a trusted count this many ids from a pin is moved by a range count


def _from_known(conn, pinned_id, known):
    """Events up to ``pinned_id`` from the nearest trusted count within KNOWN_SPAN ids (the
    events between counted by id range), or None when none is that near."""
    near = min(known, key=lambda event_id: abs(event_id - pinned_id))
    if abs(near - pinned_id) > KNOWN_SPAN:
        return None
    low, high = sorted((near, pinned_id))
    between = conn.execute("SELECT count(*) FROM audit_events WHERE id > ? AND id <= ?", (low, high)).fetchone()[0]
    return known[near] + between if pinned_id >= near else known[near] - between


def events_upto(conn, event_id, known):
    """Events up to ``event_id`` read from ``known`` (``{event id: events up to it}``) as a
    checkpoint sweep reads them (the nearest within KNOWN_SPAN ids, moved by a range count),
    or None when none is that near."""
    return _from_known(conn, event_id, known) if known else None


def trust_counts(conn, known):
    """Let the next checkpoint sweep on ``conn`` read its event counts from ``known``
    (``{event id: events up to it}``, the nanny's previous tick; None or empty counts whole).
    The sweep records every count it used in ``conn._mindos_counts`` either way."""
    conn._mindos_counts = {}
    conn._mindos_known = {event_id: count for event_id, count in (known or {}).items()
                          if isinstance(event_id, int) and isinstance(count, int) and not isinstance(count, bool)
                          and 0 <= count <= event_id}


def check(conn, path):
    """Verify a checkpoint file's seal and its containment in the live chain.

    Returns ``{"ok", "path", "checkpoint": {last_event_id, head_hash, event_count,
    created_at}, "live": head, "problems"}``.  A changed file raises IntegrityError.
    """
    doc = load(path, conn.home)
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


def auto_pin(conn, problems=None, mark=None):
    """Pin the live head to the automatic pin files (see the module docstring); return
    ``{"pinned", "head", "written", "problems"}`` (``written``: the paths rewritten now;
    ``problems``: why nothing was written).  Writes files only, never the database.

    ``problems``: the checkpoint problems the caller's own sweep just found (the nanny's
    tick has swept every checkpoint already); None sweeps them here.  ``mark``: a watermark
    taken earlier in the caller's run (older is safe: a later sweep checks more, not less)."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        counted = getattr(conn, "_mindos_counted", None) if problems is not None else None
        swept = getattr(conn, "_mindos_swept", None) if problems is not None else None
        conn._mindos_counted = conn._mindos_swept = None  # one tick's count and pins, used once
        pinned = head(conn, counted)
        problems = sweep(conn) if problems is None else list(problems)
        mark = watermark(conn) if mark is None else {key: value for key, value in mark.items()
                                                      if key in ("event_id", "rowids", "fts", "files_ns")}
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
    written, body = [], {**pinned, "created_at": clock.now_iso(), "watermark": mark}
    for path in targets:
        known = (swept or {}).get(path)
        if known is not None and any(known.get(key) != pinned[key] for key in pinned):
            current = None  # the caller's sweep just verified it, behind the head: rewritten (not read twice)
        else:
            try:
                current = load(path, conn.home) if os.path.exists(path) else None
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
    """Doctor's pass: every checkpoint under backups/ and in the pin directory checked, its
    signature included; return a list of problems."""
    return sweep_with_docs(conn)[0]


def sweep_with_docs(conn):
    """:func:`sweep` and the checkpoints that verified: ``(problems, [(path, doc, trust,
    contained)])``."""
    problems, found, ring = [], [], None
    conn._mindos_counted, conn._mindos_swept = None, {}
    known = getattr(conn, "_mindos_known", None)
    conn._mindos_known, conn._mindos_counts = None, {}  # trusted for one sweep
    for path in files(conn.home):
        if ring is None:
            from mindos.recovery import keys  # lazy: only homes with checkpoints read keys

            try:
                ring = keys.keyring(conn.home)
            except IntegrityError as exc:  # a malformed key file: no signature can be checked
                problems.append({"kind": "checkpoint_invalid", "path": path, "detail": str(exc)})
                ring = {}
        try:
            doc, trust = load_signed(path, conn.home, ring)
        except IntegrityError as exc:
            problems.append({"kind": "checkpoint_invalid", "path": path, "detail": str(exc)})
            continue
        counted = []
        mismatch = compare(conn, doc, counted, known)
        conn._mindos_counts[counted[0][0]] = counted[0][1]
        for problem in mismatch:
            problems.append({**problem, "path": path})
        found.append((path, doc, trust, not mismatch))
        conn._mindos_swept[path] = doc  # for the automatic pin that follows a tick's sweep
        if not problems and counted:  # for the automatic pin that follows a tick's sweep
            conn._mindos_counted = counted[0]
    return problems, found
