"""``fts-rebuild``: find and repair drift in every full-text index.

Each index of the registry (:data:`mindos.store.fts.INDEXES`) present in the database is
compared with its content table through ``fts5vocab`` (:func:`mindos.store.fts.drift`);
a drifted index is rebuilt from its content table in one write transaction, re-checked,
and the repair is audited (``fts_rebuilt``).  ``dry_run`` only reports the drift found.
With ``relearn`` (``ops.py fts-rebuild``; the nanny's repair runs leave it off) and unless
``dry_run``, the learned term associations (:mod:`mindos.memory.learned`) are then
learned again from every row, in their own write transaction (``learned``: rows, terms and
pairs; null on a database without them).
"""

from mindos.store import db, fts, ledger


def _brief(found):
    return {key: found[key] for key in ("method", "indexed", "source", "missing", "missing_total", "stale",
                                        "stale_total", "ok")}


def _relearn(conn):
    """Learn the term associations again from every row (one write transaction)."""
    from mindos.memory import learned  # lazy: only a real rebuild relearns associations

    if not learned.has(conn):
        return None
    with db.write(conn):
        return learned.rebuild(conn)


def rebuild(conn, *, dry_run=False, only=None, relearn=False):
    """Report drift per index and, unless ``dry_run``, rebuild each drifted one (``only``:
    just these indexes).

    Returns ``{"dry_run", "indexes": [{"index", "drift", "rebuilt", "after"}],
    "drift_found": [names], "fixed": [names], "would_fix": [names]}``.
    """
    report = {"dry_run": bool(dry_run), "indexes": [], "drift_found": [], "fixed": [], "would_fix": []}
    present = [name for name in fts.INDEXES if fts.has(conn, name) and (only is None or name in only)]
    found = {name: fts.drift(conn, name) for name in present}
    drifted = [name for name in present if not found[name]["ok"]]
    report["drift_found"] = drifted
    if relearn and not dry_run:
        report["learned"] = _relearn(conn)
    if dry_run or not drifted:
        report["would_fix"] = list(drifted) if dry_run else []
        report["indexes"] = [{"index": name, "drift": _brief(found[name]), "rebuilt": False} for name in present]
        return report
    with db.write(conn):
        for name in drifted:
            fts.rebuild(conn, name)
        ledger.append_event(conn, "fts", "fts-rebuild", "fts_rebuilt", {
            "indexes": drifted,
            "missing": {name: found[name]["missing_total"] for name in drifted},
            "stale": {name: found[name]["stale_total"] for name in drifted}})
    for name in present:
        entry = {"index": name, "drift": _brief(found[name]), "rebuilt": name in drifted}
        if name in drifted:
            entry["after"] = _brief(fts.drift(conn, name))
            if entry["after"]["ok"]:
                report["fixed"].append(name)
        report["indexes"].append(entry)
    return report
