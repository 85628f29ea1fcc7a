"""Session ingestion: agents' raw transcripts as a disposable, searchable cache.

``session-scan`` inventories a transcript store, ``session-ingest`` indexes it,
``search-sessions`` searches it, ``sessions-prune`` bounds it, and the context pack's
``--related-sessions N`` section packs matching snippets (:func:`snippets`).

Design decisions
  * **Read-only by construction.**  Source stores are only ever opened for reading; the walk
    never follows a symlinked directory and skips symlinked files (counted), so a planted
    link cannot smuggle unrelated private context into shared memory.
  * **Cache, not truth.**  A transcript file is one session row keyed by ``(source, path)``
    and sealed by the sha256 of its bytes.  An unchanged file costs one read and one hash:
    its stored digest matches and nothing is parsed.  A changed file's messages are deleted
    and re-inserted (a known file that now yields none keeps no old row: it is recorded
    with its new digest and 0 messages).  A whole ``--apply`` run is one write transaction (all files, the
    guard's event and ``session_ingested``), so a killed run leaves the cache exactly as it
    was and re-running completes it.
  * **Redacted inventory first.**  Without ``--apply`` nothing is written: the report carries
    counts and kind-only secret findings, never message text.
  * **The secret guard gates what a run would write.**  Every message of a new or changed
    file is scanned; findings refuse the run (``secret_blocked``), store
    ``[REDACTED:<kind>]`` copies (``--redact``) or store verbatim (``--allow-secret``),
    through :func:`mindos.store.guard.guard`, once per run.  Unchanged files settled at
    their original ingest are not re-scanned and never block a later incremental run.
  * **Provenance on every hit**: source, profile, project, session id, seq, role, at.
"""

import datetime
import hashlib
import os
import re

from mindos.core import clock, secrets, validate
from mindos.errors import InvalidInput
from mindos.store import guard as secret_guard
from mindos.memory import transcripts
from mindos.store import db, fts, ledger

MAX_FILES = 100_000            # files looked at per walk; overflow is reported, never silent
MAX_FILE_BYTES = 64 * 1024 * 1024  # a larger transcript is reported too_large and skipped
SUFFIXES = (".jsonl",)
PARALLEL_WORKERS = 4
PARALLEL_MIN_BYTES = 4 * 1024 * 1024  # below this, parsing in-process beats starting workers
SNIPPET_CHARS = 300
MAX_QUERY = 2000
_AGE = re.compile(r"^([0-9]{1,6})([dhm])\Z")  # ASCII digits: \d would also take "٣"


# ---------------------------------------------------------------------------------------
# Discovery


def _transcripts(root):
    """``(root made absolute, paths, skipped)``: the user-named ``--root``
    (:func:`mindos.core.files.walk_root`) and its transcript files (:func:`walk`)."""
    from mindos.core import files  # lazy: the walk only

    root = files.walk_root(root)
    return (root, *walk(root))


def walk(root, *, max_files=MAX_FILES):
    """The transcript files under ``root`` in sorted order, without following symlinks.

    Returns ``(paths, skipped)`` where ``skipped`` counts ``symlinks``, ``overflow`` (files
    past ``max_files``) and ``unreadable_dirs``.
    """
    from mindos.core import files  # lazy: the walk only

    found, counts = files.walk(root, keep=lambda rel: rel.endswith(SUFFIXES), max_files=max_files)
    skipped = {"symlinks": counts["symlinks"], "overflow": counts["overflow"],
               "unreadable_dirs": counts["unreadable_dirs"] + counts["too_deep"]}
    # a FIFO or device named *.jsonl is listed: _read refuses it without blocking
    return [path for _, path in found], skipped


def _modified_since(paths, since):
    """``(paths last modified at or after since, how many were left out)``; the file's own
    mtime (``lstat``: a symlink is never followed), compared at second precision."""
    kept, older = [], 0
    for path in paths:
        try:
            mtime = clock.format_ts(datetime.datetime.fromtimestamp(os.lstat(path).st_mtime, datetime.timezone.utc))
        except (OSError, OverflowError, ValueError):
            kept.append(path)  # unstatable: the read below reports it
            continue
        if mtime >= since:
            kept.append(path)
        else:
            older += 1
    return kept, older


def _read(path):
    """``(bytes, error)`` of a regular file, opened read-only without following a final
    symlink and without blocking (a FIFO or device is ``not_regular``, never read)."""
    from mindos.core import files  # lazy: readers only
    from mindos.errors import MindosError

    try:
        return files.read_bytes(path, max_bytes=MAX_FILE_BYTES), None
    except MindosError as exc:
        if exc.code in ("too_large", "not_regular", "symlink"):
            return None, exc.code
        return None, str(exc).rsplit(": ", 1)[-1]  # the system's reason, as before


def _scan_file(path, data, messages):
    """Kind-only secret findings over ``messages``: ``(kinds, messages_flagged)``.

    One detector pass over the whole transcript's message text first (blank-line separated,
    so every message keeps its own lines); only a file with a hit is scanned message by
    message, which is what names the flagged messages and their kinds.
    """
    if not messages or not secrets.scan("\n\n".join(text for _, text, _ in messages)):
        return [], 0
    kinds, flagged = set(), 0
    for _, text, _ in messages:
        found = secrets.scan(text)
        if found:
            kinds.update(found)
            flagged += 1
    return sorted(kinds), flagged


def _parsed_report(rel, data, parsed):
    messages = parsed["messages"]
    stamps = [at for _, _, at in messages if at]
    report = {
        "path": rel, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "format": parsed["format"],
        "messages": len(messages), "counts": parsed["counts"],
        "first_at": min(stamps) if stamps else None, "last_at": max(stamps) if stamps else None,
        "supported": bool(messages),
    }
    kinds, flagged = _scan_file(rel, data, messages)
    report["secret_kinds"] = kinds
    report["secret_messages"] = flagged
    return report


def _analyse_one(item):
    rel, data = item
    parsed = transcripts.parse(data)
    return parsed, _parsed_report(rel, data, parsed)


def analyse(items):
    """Parse and secret-scan ``[(relative path, bytes)]``; return ``[(parsed, report)]`` in order.

    The detector dominates the cost (it reads every character), so a large batch is
    spread over worker processes (at most PARALLEL_WORKERS); a small one stays in-process.
    Workers only compute: every read and write stays in this process.
    """
    from mindos.core import workers  # lazy: only ingests and scans spread their work

    return workers.spread(_analyse_one, items, max_workers=PARALLEL_WORKERS, chunks_per_worker=4,
                          big_enough=sum(len(data) for _, data in items) >= PARALLEL_MIN_BYTES)


def _label(value, flag):
    return validate.identifier(value, flag) if value not in (None, "") else ""


def _totals(files):
    totals = transcripts.new_counts()
    totals.update({"files": len(files), "messages": 0, "unsupported_files": 0, "unreadable_files": 0,
                   "secret_messages": 0})
    kinds = set()
    for item in files:
        if item.get("error"):
            totals["unreadable_files"] += 1
            continue
        totals["messages"] += item.get("messages", 0)
        if not item.get("supported", True):
            totals["unsupported_files"] += 1
        for key, value in item.get("counts", {}).items():
            totals[key] = totals.get(key, 0) + value
        totals["secret_messages"] += item.get("secret_messages", 0)
        kinds.update(item.get("secret_kinds", ()))
    return totals, sorted(kinds)


def scan(root):
    """``session-scan``: a redacted, read-only inventory of the transcripts under ``root``.

    Returns ``{"root", "files": [{"path" (relative), "sha256", "bytes", "format", "messages",
    "counts", "first_at", "last_at", "supported", "secret_kinds", "secret_messages"}],
    "totals", "secret_kinds", "skipped"}``.  Counts and kinds only: no message text.
    """
    root, paths, skipped = _transcripts(root)
    files, pending = [], []
    for path in paths:
        rel = os.path.relpath(path, root)
        data, error = _read(path)
        files.append({"path": rel, "error": error} if error else None)
        if not error:
            pending.append((len(files) - 1, rel, data))
    for (slot, _, _), (_, report) in zip(pending, analyse([(rel, data) for _, rel, data in pending])):
        files[slot] = report
    totals, kinds = _totals(files)
    return {"root": root, "files": files, "totals": totals, "secret_kinds": kinds, "skipped": skipped}


# ---------------------------------------------------------------------------------------
# Ingestion


def ingest(conn, source, root, *, project=None, profile=None, since=None, apply=False, redact=False,
           allow_secret=False):
    """``session-ingest``: index the transcripts under ``root`` as ``source`` (dry run unless ``apply``).

    Each file is ``new``, ``changed`` (re-indexed: delete + insert; a known file that now
    yields no message keeps no old row and is recorded with its new digest and 0 messages),
    ``unchanged`` (one hash read, nothing parsed) or ``unsupported`` (a new file with no
    recognizable message; reported, never stored).  Returns ``{"source", "root", "project", "profile", "applied", "files": [...],
    "totals", "new", "changed", "unchanged", "unsupported", "messages_written",
    "secret_kinds", "skipped"}``; ``secret_action`` when the guard redacted or allowed.
    Dry run writes nothing.  Under ``apply`` one transaction writes every file plus a
    ``session_ingested`` event (none when nothing changed).  ``since`` (a relative age like
    ``7d`` or an ISO instant) leaves out files last modified before it, counted in
    ``skipped["before_since"]`` (and ``since`` names the instant used): their cached rows,
    if any, are kept as they are.
    """
    source = validate.identifier(source, "--source")
    project = _label(project, "--project")
    profile = _label(profile, "--profile")
    if redact and allow_secret:
        raise InvalidInput("pass at most one of --redact and --allow-secret")
    since = cutoff(since, "--since") if since is not None else None
    root, paths, skipped = _transcripts(root)
    if since is not None:
        paths, skipped["before_since"] = _modified_since(paths, since)
    known = {row[0]: (row[1], row[2]) for row in conn.execute(
        "SELECT path, file_hash, id FROM session_files WHERE source = ?", (source,))}
    files, pending = [], []
    for path in paths:
        rel = os.path.relpath(path, root)
        data, error = _read(path)
        if error:
            files.append({"path": rel, "status": "unreadable", "error": error})
            continue
        digest = hashlib.sha256(data).hexdigest()
        previous = known.get(path)
        if previous is not None and previous[0] == digest:
            files.append({"path": rel, "status": "unchanged", "sha256": digest, "bytes": len(data)})
            continue
        files.append(None)  # filled in below, in walk order
        pending.append((len(files) - 1, path, rel, data, digest, previous))
    work = []
    analysed = analyse([(rel, data) for _, _, rel, data, _, _ in pending])
    for (slot, path, rel, data, digest, previous), (parsed, report) in zip(pending, analysed):
        files[slot] = report
        if not parsed["messages"] and previous is None:
            report["status"] = "unsupported"
            continue
        # a known file that changed is re-indexed even when it now yields no message: its old
        # rows go and it is recorded with its new digest (0 messages), so they never linger
        report["status"] = "changed" if previous is not None else "new"
        session_id = (parsed["session_id"] or os.path.splitext(os.path.basename(path))[0])[:200]
        work.append((path, digest, len(data), session_id, parsed, report, previous))
    totals, kinds = _totals([item for item in files if item["status"] != "unchanged"])
    totals["files"] = len(files)
    by_status = {status: sum(1 for item in files if item["status"] == status)
                 for status in ("new", "changed", "unchanged", "unsupported", "unreadable")}
    result = {"source": source, "root": root, "project": project, "profile": profile, "applied": False,
              "files": files, "totals": totals, "secret_kinds": kinds, "skipped": skipped,
              "messages_written": 0, **by_status}
    if since is not None:
        result["since"] = since
    if not apply:
        return result
    if not work:
        result["applied"] = True
        return result
    now = clock.now_iso()
    with db.write(conn):
        flagged = [(i, j) for i, item in enumerate(work) for j, (_, text, _) in enumerate(item[4]["messages"])
                   if item[5]["secret_messages"] and secrets.scan(text)]
        cleaned = {}
        if flagged:
            texts = [work[i][4]["messages"][j][1] for i, j in flagged]
            fields, outcome = secret_guard.guard(conn, "session_source", source, {"messages": texts},
                                                 redact=redact, allow_secret=allow_secret)
            cleaned = dict(zip(flagged, fields["messages"]))
            result["secret_action"] = outcome["secret_action"]
        written = 0
        for i, (path, digest, size, session_id, parsed, report, previous) in enumerate(work):
            if previous is not None:
                conn.execute("DELETE FROM session_messages WHERE file_id = ?", (previous[1],))
                conn.execute(
                    "UPDATE session_files SET file_hash = ?, size = ?, session_id = ?, profile = ?, project = ?,"
                    " format = ?, messages = ?, first_at = ?, last_at = ?, ingested_at = ? WHERE id = ?",
                    (digest, size, session_id, profile, project, parsed["format"], len(parsed["messages"]),
                     report["first_at"], report["last_at"], now, previous[1]))
                file_id = previous[1]
            else:
                file_id = conn.execute(
                    "INSERT INTO session_files(source, path, file_hash, size, session_id, profile, project, format,"
                    " messages, first_at, last_at, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (source, path, digest, size, session_id, profile, project, parsed["format"],
                     len(parsed["messages"]), report["first_at"], report["last_at"], now)).lastrowid
            conn.executemany(
                "INSERT INTO session_messages(file_id, seq, role, content, at) VALUES (?, ?, ?, ?, ?)",
                [(file_id, seq, role, cleaned.get((i, seq), text), at)
                 for seq, (role, text, at) in enumerate(parsed["messages"])])
            written += len(parsed["messages"])
        ledger.append_event(conn, "session_source", source, "session_ingested", {
            "root": root, "project": project, "profile": profile, "new": by_status["new"],
            "changed": by_status["changed"], "unchanged": by_status["unchanged"],
            "unsupported": by_status["unsupported"], "messages": written, "secret_kinds": kinds,
        })
    result["applied"] = True
    result["messages_written"] = written
    return result


# ---------------------------------------------------------------------------------------
# Search


_SELECT = ("m.id AS message_id, m.seq, m.role, m.content, m.at, f.source, f.profile, f.project, f.session_id,"
           " f.path")


def _hit(row, snippet=None):
    hit = {"message_id": row["message_id"], "source": row["source"], "profile": row["profile"],
           "project": row["project"], "session_id": row["session_id"], "seq": row["seq"], "role": row["role"],
           "at": row["at"]}
    if snippet is None:
        hit["content"] = row["content"]
    else:
        hit["snippet"] = row["content"][:snippet]
        hit["snippet_truncated"] = len(row["content"]) > snippet
    if "score" in row.keys():
        hit["score"] = round(row["score"], 6)
    return hit


def search(conn, query, *, role=None, rank=False, source=None, project=None, profile=None, limit=50):
    """``search-sessions``: ingested messages matching ``query``; newest first (at, then id), or
    BM25 order with ``score`` under ``rank`` (every token required).  Each hit carries its
    provenance (source, profile, project, session_id, seq, role, at)."""
    query = validate.text(query, "query", max_len=MAX_QUERY).strip()
    if role is not None and role not in transcripts.ROLES:
        raise InvalidInput(f"invalid --role: {validate.shown(role, 40)} (choose from {', '.join(transcripts.ROLES)})")
    source = _label(source, "--source")
    project = _label(project, "--project")
    profile = _label(profile, "--profile")
    limit = validate.positive_int(limit, "--limit", maximum=10000)
    if not fts.tokens(query):
        return []
    clauses, params = [], []
    for column, value in (("m.role", role), ("f.source", source), ("f.project", project), ("f.profile", profile)):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    found = fts.text_search(conn, "session_messages_fts", query, select=_SELECT,
                            joins="JOIN session_files f ON f.id = m.file_id", where=clauses, params=params,
                            order="m.at IS NULL, m.at DESC, m.id DESC", ranked_order="m.id", rank=rank, limit=limit)
    return [_hit(row) for row in found]


def snippets(conn, matches_cte, params, limit):
    """Up to ``limit`` ingested messages among the matches ``matches_cte`` binds (a ``WITH
    matches(rowid) ...`` of message ids taking ``params``), as provenance-tagged snippets in
    deterministic order (at DESC, session, seq): the ``--related-sessions`` pack section."""
    rows = conn.execute(
        f"{matches_cte} SELECT {_SELECT} FROM matches x CROSS JOIN session_messages m ON m.id = x.rowid"
        " JOIN session_files f ON f.id = m.file_id"
        " ORDER BY m.at IS NULL, m.at DESC, f.session_id, m.seq, m.id LIMIT ?", (*params, limit)).fetchall()
    return [_hit(row, SNIPPET_CHARS) for row in rows]


def scoped_snippets(conn, projects, limit, matches=None):
    """Up to ``limit`` ingested messages of sessions ingested under one of ``projects``, as
    provenance-tagged snippets, newest first (at DESC, session, seq); with ``matches`` (a
    ``(cte, params)`` as :func:`snippets` takes) only among those.  A session-start pack's
    history: it never reaches a session of another project, or one ingested without any."""
    if not projects or not limit:
        return []
    cte, params = matches if matches is not None else ("", [])
    source = ("matches x CROSS JOIN session_messages m ON m.id = x.rowid" if matches is not None
              else "session_messages m")
    rows = conn.execute(
        f"{cte} SELECT {_SELECT} FROM {source} JOIN session_files f ON f.id = m.file_id"
        f" WHERE f.project IN ({', '.join('?' * len(projects))})"
        " ORDER BY m.at IS NULL, m.at DESC, f.session_id, m.seq, m.id LIMIT ?",
        (*params, *projects, limit)).fetchall()
    return [_hit(row, SNIPPET_CHARS) for row in rows]


# ---------------------------------------------------------------------------------------
# Retention


def cutoff(older_than, flag="--older-than"):
    """The instant ``older_than`` names (read from ``flag``): a relative age ``Nd``/``Nh``/``Nm``
    before now, or an absolute ISO timestamp."""
    if not isinstance(older_than, str) or not older_than.strip():
        raise InvalidInput(f"invalid {flag}: required (a relative age like 30d, 12h, 90m, or an ISO timestamp)")
    match = _AGE.match(older_than.strip())
    if match:
        amount, unit = int(match.group(1)), match.group(2)
        seconds = amount * {"d": 86400, "h": 3600, "m": 60}[unit]
        return clock.shift(clock.now_iso(), -seconds)
    try:
        return clock.normalize(older_than, flag)
    except InvalidInput:
        raise InvalidInput(f"invalid {flag}: {validate.shown(older_than, 40)}"
                           " (a relative age like 30d, 12h, 90m, or an ISO timestamp)") from None


def prune(conn, older_than, *, source=None, profile=None, project=None, apply=False):
    """``sessions-prune``: drop cached sessions whose age (last message time, else ingest
    time) is before ``--older-than``; dry run unless ``apply``.

    Returns ``{"older_than", "cutoff", "applied", "candidates": [{"source", "session_id",
    "path", "project", "profile", "age_at", "messages", "bytes"}], "by_source": {source:
    {"sessions", "messages", "bytes"}}, "sessions", "messages", "bytes"}``.  Under ``apply``
    one transaction deletes the candidate rows and audits one ``session_pruned`` per source;
    a zero-candidate apply audits nothing.  Source transcripts are never touched.
    """
    limit = cutoff(older_than)
    clauses, params = ["coalesce(f.last_at, f.ingested_at) < ?"], [limit]
    for column, value, flag in (("f.source", source, "--source"), ("f.profile", profile, "--profile"),
                                ("f.project", project, "--project")):
        if value not in (None, ""):
            clauses.append(f"{column} = ?")
            params.append(validate.identifier(value, flag))

    def plan():
        rows = conn.execute(
            "SELECT f.id, f.source, f.session_id, f.path, f.project, f.profile,"
            " coalesce(f.last_at, f.ingested_at) AS age_at,"
            " (SELECT count(*) FROM session_messages m WHERE m.file_id = f.id) AS messages,"
            " (SELECT coalesce(sum(length(CAST(m.content AS BLOB))), 0) FROM session_messages m"
            "  WHERE m.file_id = f.id) AS bytes"
            f" FROM session_files f WHERE {' AND '.join(clauses)} ORDER BY f.source, age_at, f.id", params).fetchall()
        by_source = {}
        for row in rows:
            entry = by_source.setdefault(row["source"], {"sessions": 0, "messages": 0, "bytes": 0})
            entry["sessions"] += 1
            entry["messages"] += row["messages"]
            entry["bytes"] += row["bytes"]
        return rows, by_source

    def shape(rows, by_source, applied):
        return {
            "older_than": older_than, "cutoff": limit, "applied": applied,
            "filters": {"source": source or None, "profile": profile or None, "project": project or None},
            "candidates": [{key: row[key] for key in ("source", "session_id", "path", "project", "profile", "age_at",
                                                      "messages", "bytes")} for row in rows],
            "by_source": by_source,
            "sessions": len(rows), "messages": sum(v["messages"] for v in by_source.values()),
            "bytes": sum(v["bytes"] for v in by_source.values()),
        }

    if not apply:
        return shape(*plan(), False)
    with db.write(conn):
        rows, by_source = plan()  # re-planned under the write lock: what is deleted is what is reported
        if rows:
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS prune_ids(id INTEGER PRIMARY KEY)")
            conn.execute("DELETE FROM temp.prune_ids")
            conn.executemany("INSERT INTO temp.prune_ids(id) VALUES (?)", [(row["id"],) for row in rows])
            conn.execute("DELETE FROM session_messages WHERE file_id IN (SELECT id FROM temp.prune_ids)")
            conn.execute("DELETE FROM session_files WHERE id IN (SELECT id FROM temp.prune_ids)")
            conn.execute("DROP TABLE temp.prune_ids")
            for name, counts in sorted(by_source.items()):
                ledger.append_event(conn, "session_source", name, "session_pruned",
                                    {"cutoff": limit, "older_than": older_than, **counts,
                                     "profile": profile or None, "project": project or None})
    return shape(rows, by_source, True)


def metrics(conn):
    """Session-cache counters for ``metrics``."""
    row = conn.execute("SELECT count(*), coalesce(sum(messages), 0) FROM session_files").fetchone()
    pruned = conn.execute(
        "SELECT coalesce(sum(json_extract(payload_json, '$.sessions')), 0) FROM audit_events"
        " WHERE action = 'session_pruned'").fetchone()[0]
    return {"sessions_indexed": row[0], "session_messages_indexed": row[1], "sessions_pruned_total": pruned}
