"""Brain inventory (end-to-end manifest): one honest, sealed manifest of a whole installation.

``brain-inventory --out F`` reads the known durable surfaces of an installation and seals a
``mindos-brain-inventory-v1`` document; ``brain-inventory-check F`` verifies the seal.  Every
source carries its epistemic role, so later stages treat each kind differently:

  source          role              where (defaults; each overridable)       recorded
  autopilot       execution truth   <home>/state.db + receipts/               integrity, row counts, receipt files
  temporal        temporal facts    <home>/temporal.db                        integrity + entity/relation/event counts
  memories        semantic memory   <home>/state.db (memories table)          engine tag, live/retracted counts
  claude_sync     sync metadata     <hermes>/claude-memory-sync.json          entry count, sha256
  claude_memory   human archive     <claude>/projects/*/memory/**             per-file checksums
  sessions        session cache     <hermes>/sessions/** + the session tables file checksums, derived row counts
  profiles        definitions       <hermes>/profiles/**                      checksummed inventory
  skills          definitions       <hermes>/skills/**                        checksummed inventory
  cron            definitions       <hermes>/cron/**                          checksummed inventory, job count

Design decisions
  * **Read-only by construction**: databases open ``immutable`` (or from a private copy when a
    live ``-wal`` exists, see :class:`mindos.migration.inventory.open_readonly`), files
    ``O_NOFOLLOW``, symlinks never followed; no network call.
  * **Values never enter the manifest**: text files are secret-scanned with kinds only; every
    statistic is a stable count (no timestamps, no latencies), so unchanged sources re-seal
    byte-identically modulo ``created_at`` and the seal, with the same ``content_digest``.
  * **Every byte sealed**: ``created_at`` is inside the seal and the manifest is read back
    byte-exact (:mod:`mindos.recovery.artifacts`), so any single changed byte is refused.
  * **No bookkeeping event**: the live home is itself a source, so the manifest (not the
    ledger) is the audit artifact.
  * **Honest degradation**: a garbage ``cron/jobs.json`` or a non-SQLite ``temporal.db`` fails
    closed naming the blocker; an absent optional source is recorded ``absent``.
  * **Bounded**: MAX_FILES per source (overflow counted, never silent).
"""

import json
import os

from mindos.core import secrets
from mindos.migration import documents
from mindos.migration import inventory as mig

FORMAT = "mindos-brain-inventory-v1"
MAX_FILES = 20_000
ROLES = {
    "autopilot": "execution truth", "temporal": "temporal facts", "memories": "semantic memory",
    "claude_sync": "sync metadata", "claude_memory": "human archive", "sessions": "session cache",
    "profiles": "definitions", "skills": "definitions", "cron": "definitions",
}
ORDER = tuple(ROLES)


def _files(base, *, keep=None):
    """Sorted regular files under ``base`` (relative paths), symlinks never followed, capped."""
    from mindos.core import files  # lazy: the walk only

    caps = {"over_cap": 0, "symlinks_skipped": 0}
    if not os.path.isdir(base) or os.path.islink(base):
        return [], caps
    # special files (a FIFO, a device) are listed: reading them is refused, so they show unreadable
    found, counts = files.walk(base, keep=None if keep is None else lambda rel: keep(rel.replace("/", os.sep)),
                               max_files=MAX_FILES)
    caps.update(over_cap=counts["overflow"], symlinks_skipped=counts["symlinks"])
    return [rel.replace("/", os.sep) for rel, _ in found], caps


def _entries(base, rels):
    entries, kinds = [], {}
    for rel in rels:
        path = os.path.join(base, rel)
        try:
            sha, size, head = mig.file_digest(path)
        except OSError:
            entries.append({"path": rel, "unreadable": True})
            continue
        entry = {"path": rel, "sha256": sha, "bytes": size}
        if head != mig.SQLITE_MAGIC and size <= mig.MAX_SCAN_BYTES:
            found = mig.scan_file(path)
            if found:
                entry["secret_kinds"] = found
                for kind in found:
                    kinds[kind] = kinds.get(kind, 0) + 1
        entries.append(entry)
    return entries, dict(sorted(kinds.items()))


def _source(name, base, **extra):
    """The fields every source of the manifest starts with."""
    return {"source": name, "role": ROLES[name], "base": base, **extra}


def _file_source(name, base, filename, missing="absent"):
    """``(path, source)`` of a source held in the one file ``base/filename``; the source is
    already finished (``status`` ``missing``) when that is not a file, None otherwise."""
    path = os.path.join(base, filename)
    return path, (None if os.path.isfile(path) else _source(name, base, status=missing))


def _tree_source(name, base, keep=None, **extra):
    if not os.path.isdir(base):
        return _source(name, base, status="absent")
    rels, caps = _files(base, keep=keep)
    entries, kinds = _entries(base, rels)
    return _source(name, base, status="present", files=entries, file_count=len(entries), secret_findings=kinds,
                   caps=caps, **extra)


def _autopilot(home):
    path, absent = _file_source("autopilot", home, "state.db")
    if absent:
        return absent
    info = mig.inspect_sqlite(path)
    receipts, caps = _files(os.path.join(home, "receipts"))
    source = _source("autopilot", home, status="present", integrity=info["integrity"], row_counts=info["row_counts"],
                     receipt_files=len(receipts), caps=caps, sha256=mig.file_digest(path)[0])
    if info["problem"]:
        source["blocked"] = info["problem"]
    return source


def _memories(home):
    path, absent = _file_source("memories", home, "state.db")
    source = _source("memories", home, plan="external_execution_import_required")
    if absent:
        return {**source, "status": "absent"}
    try:
        with mig.open_readonly(path) as conn:
            has = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories'").fetchone()
            if not has:
                return {**source, "status": "absent"}
            engines = sorted(row[0] for row in conn.execute("SELECT DISTINCT engine FROM memories"))
            live, retracted = conn.execute("SELECT coalesce(sum(retracted_at IS NULL), 0),"
                                           " coalesce(sum(retracted_at IS NOT NULL), 0) FROM memories").fetchone()
    except Exception as exc:  # sqlite3.Error, OSError: reported, never guessed
        return {**source, "status": "present", "blocked": f"unreadable memories: {exc}"}
    return {**source, "status": "present", "engines": engines, "live": live, "retracted": retracted}


def _temporal(home):
    path, absent = _file_source("temporal", home, "temporal.db")
    if absent:
        return absent
    sha, size, head = mig.file_digest(path)
    source = _source("temporal", home, status="present", sha256=sha, bytes=size,
                     files=[{"path": "temporal.db", "sha256": sha, "bytes": size}])
    if head != mig.SQLITE_MAGIC:
        return {**source, "blocked": "temporal.db is not a SQLite database"}
    counts = {}
    try:
        with mig.open_readonly(path) as conn:
            integrity = [r[0] for r in conn.execute("PRAGMA integrity_check")]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            for name in ("entities", "relations", "events"):
                counts[name] = conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0] if name in tables else 0
    except Exception as exc:
        return {**source, "blocked": f"unreadable temporal.db: {exc}"}
    source.update(integrity="ok" if integrity == ["ok"] else "failed", counts=counts)
    if integrity != ["ok"]:
        source["blocked"] = "temporal.db integrity_check failed"
    return source


def _claude_sync(hermes):
    path, absent = _file_source("claude_sync", hermes, "claude-memory-sync.json", missing="unavailable")
    if absent:
        return absent
    sha, size, _ = mig.file_digest(path)
    entries = None
    try:
        parsed = json.loads(mig._read_text(path))
        entries = len(parsed.get("entries", parsed) if isinstance(parsed, dict) else parsed)
    except (ValueError, TypeError, OSError):
        entries = None
    kinds = secrets.scan(mig._read_text(path)) if size <= mig.MAX_SCAN_BYTES else []
    file_entry = {"path": "claude-memory-sync.json", "sha256": sha, "bytes": size,
                  **({"secret_kinds": kinds} if kinds else {})}
    return _source("claude_sync", hermes, status="present", entries=entries, sha256=sha, files=[file_entry],
                   secret_findings={k: 1 for k in kinds})


def _claude_memory(claude):
    base = os.path.join(claude, "projects")
    return _tree_source("claude_memory", base, keep=lambda rel: len(rel.split(os.sep)) >= 3
                        and rel.split(os.sep)[1] == "memory")


def _sessions(hermes, home):
    source = _tree_source("sessions", os.path.join(hermes, "sessions"))
    cache = {"session_files": 0, "session_messages": 0}
    path = os.path.join(home, "state.db")
    if os.path.isfile(path):
        try:
            with mig.open_readonly(path) as conn:
                for table in cache:
                    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                        cache[table] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        except Exception:  # the autopilot source reports an unreadable database
            pass
    source["derived_rows"] = cache
    return source


def _cron(hermes):
    base = os.path.join(hermes, "cron")
    source = _tree_source("cron", base)
    jobs = os.path.join(base, "jobs.json")
    if source["status"] == "present" and os.path.isfile(jobs):
        mig.count_cron_jobs(source, jobs)
    return source


def defaults():
    """The live homes: the Autopilot home in force, ~/.hermes and ~/.claude."""
    from mindos.core.home import home_dir  # lazy: only the defaults resolve the home

    return home_dir(), os.path.expanduser("~/.hermes"), os.path.expanduser("~/.claude")


def discover(*, home=None, hermes=None, claude=None):
    """The manifest body (unsealed); read-only."""
    live = defaults() if None in (home, hermes, claude) else (None, None, None)
    home, hermes, claude = (os.path.abspath(p) for p in (home or live[0], hermes or live[1], claude or live[2]))
    sources = [
        _autopilot(home), _temporal(home), _memories(home), _claude_sync(hermes), _claude_memory(claude),
        _sessions(hermes, home), _tree_source("profiles", os.path.join(hermes, "profiles")),
        _tree_source("skills", os.path.join(hermes, "skills")), _cron(hermes),
    ]
    blocked = [{"source": s["source"], "reason": s["blocked"]} for s in sources if s.get("blocked")]
    return {"homes": {"autopilot": home, "hermes": hermes, "claude": claude}, "sources": sources,
            "blocked": blocked, "fail_closed": bool(blocked)}


def inventory(out, *, home=None, hermes=None, claude=None, force=False):
    """``brain-inventory``: seal the manifest into ``out`` (atomic, 0600); return the summary,
    whose verdict is ``fail_closed``.  Appends no audit event (the live home is a source)."""
    documents.check_out(out, force=force)  # before walking every source
    body = discover(home=home, hermes=hermes, claude=claude)
    _, head = documents.seal(out, FORMAT, body, force=bool(force))
    return {**head, "homes": body["homes"], "fail_closed": body["fail_closed"], "blocked": body["blocked"],
            "sources": [{"source": s["source"], "role": s["role"], "status": s["status"],
                         "file_count": s.get("file_count", len(s.get("files", [])))} for s in body["sources"]]}


def load(path):
    """Read and verify a sealed brain inventory byte-exact (IntegrityError on any changed byte)."""
    return documents.read(path, FORMAT, "brain inventory")


def check(path):
    """``brain-inventory-check``: verify the seal; return what it holds."""
    doc = load(path)
    return {**documents.facts(doc, FORMAT), "homes": doc["homes"], "fail_closed": doc["fail_closed"],
            "blocked": doc["blocked"], "sources": {s["source"]: s["status"] for s in doc["sources"]}}
