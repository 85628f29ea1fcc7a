"""Migration inventory (installer stage one): honest, read-only discovery under an explicit root.

``migrate-inventory --root R --out F`` walks R, classifies the durable sources the migration
model knows, checksums every file of every source, runs scanned text through the secret
detector (kinds only), orders a migration plan and seals the result as an
``autopilot-migration-inventory-v1`` document, audited ``migration_inventory_sealed`` in this
home.  ``migrate-inventory-check F`` verifies the seal before anything trusts it.

Source kinds, in plan order:
  * ``autopilot_sqlite`` -- a SQLite file with the Autopilot schema (tasks, dependencies,
    receipts, audit_events): execution truth.  Read-only integrity check, schema version,
    row counts; its home's ``receipts/`` files are part of the source.
  * ``hindsight_bank`` -- a legacy ``bank.jsonl`` (lines, malformed lines): importable with
    memory-import.
  * ``hermes_home`` -- a directory holding at least two of ``profiles/``, ``skills/``,
    ``cron/``: profile, SKILL.md and cron job counts (``cron/jobs.json`` must parse).
  * ``obsidian_vault`` -- a directory holding ``.obsidian/``: an optional human archive.
  * ``unrecognized_sqlite`` -- valid SQLite without the Autopilot schema: ambiguous.

Design decisions
  * **Read-only by construction.**  Databases open through ``file:...?mode=ro`` URIs; files
    open ``O_RDONLY | O_NOFOLLOW``; the walk never follows a symlink (counted).  A test
    hashes the whole fixture tree before and after.
  * **Fail-closed.**  A corrupt database (integrity_check != ok, unreadable bytes), an
    ambiguous one (unrecognized_sqlite) or a garbage ``cron/jobs.json`` marks the inventory
    ``fail_closed`` naming every blocked source; the document is still sealed (it is the
    operator's record) but the command exits 1 and stage two refuses it.
  * **Deterministic.**  Sorted traversal, plan-rank ordering, source ids derived from kind
    and relative path, no clock value except ``created_at``: identical trees give
    byte-identical documents modulo ``created_at`` (and the seal that covers it), and the same
    ``content_digest`` (everything but those two), so a resumed migration can tell it faces
    the same plan.
  * **A database is known by its content.**  Its file entry carries ``content_sha256``, a
    digest of its schema and rows read through one consistent snapshot (:func:`content_digest`);
    its ``-wal``/``-shm`` files are a live home's runtime state, read through and never recorded,
    so a home in use can be inventoried and imported, and only a real change is drift.  A file
    named like a database (``state.db``, ``*.sqlite``) that SQLite cannot read blocks too.
  * **Every byte sealed.**  ``created_at`` is inside the seal like every other field and the
    document is read back byte-exact (:mod:`mindos.recovery.artifacts`): any single changed
    byte, a timestamp or whitespace included, is refused.
  * **Bounded.**  MAX_FILES files are looked at and files over MAX_SCAN_BYTES are checksummed
    but not secret-scanned; every overflow is counted in ``caps``, never silent.
"""

import hashlib
import os
import sqlite3
import urllib.parse

from mindos.core import secrets
from mindos.core import files as file_safety
from mindos.errors import InvalidInput, MindosError, NotFound, Refused
from mindos.migration import documents
from mindos.store import db, ledger

FORMAT = "autopilot-migration-inventory-v1"
MAX_FILES = 50_000
MAX_SCAN_BYTES = 1024 * 1024
MAX_TEXT_BYTES = 64 * 1024 * 1024  # a definition file (jobs.json, a sync file) read whole
PARALLEL_WORKERS = 4
PARALLEL_MIN_FILES = 2000  # below this many text files, scanning in-process beats starting workers
SQLITE_MAGIC = b"SQLite format 3\x00"
# named like a database: inspected (and fail closed when unreadable) even without the SQLite header
DB_NAMES = ("state.db",)
DB_SUFFIXES = (".sqlite", ".sqlite3")
# migration bookkeeping in a ledger: never execution truth, never a source's drift
BOOKKEEPING = ("migration_inventory_sealed", "onboarding_planned", "onboarding_completed", "onboarding_failed")
AUTOPILOT_TABLES = ("tasks", "dependencies", "receipts", "audit_events")
TEXT_SUFFIXES = (".md", ".txt", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".env", ".sh")
PLAN = {  # kind -> (rank, action, what the step does)
    "autopilot_sqlite": (1, "migrate-import", "import execution truth into this home (control plane first)"),
    "hindsight_bank": (2, "memory-import", "import the legacy Hindsight bank into semantic memory"),
    "hermes_home": (3, "hermes-register", "register Hermes profiles, skills and cron definitions"),
    "obsidian_vault": (4, "archive-copy", "copy the vault as an optional human archive"),
}
HERMES_PARTS = ("profiles", "skills", "cron")


# ---------------------------------------------------------------------------------------
# Reading without touching


def readonly_uri(path, immutable=False):
    """The read-only SQLite URI of ``path`` (``immutable``: no locks, no -shm/-wal created)."""
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro" + ("&immutable=1" if immutable else "")


class open_readonly:
    """``with open_readonly(path) as conn:`` a consistent read-only connection that creates
    nothing beside the source.

    ``mode=ro`` alone still creates ``-shm``/``-wal`` files next to a WAL database (and a
    reader writes its read marks into a live ``-shm``), which would mutate the tree being
    inventoried.  A database with no ``-wal`` file holds everything in its main file, so it
    opens ``immutable``.  One with a ``-wal`` (a live home, or a log not checkpointed) is
    copied with its log into a private temporary directory and read there, so committed
    transactions still in the log are seen and the source is still never touched.  The copy
    is consistent: the main file and the log must be unchanged (size, mtime, inode) across
    it, else it is taken again (``COPY_ATTEMPTS`` times, then refused as busy), so a
    checkpoint landing mid-copy can never pair an old main file with a newer log.
    """

    def __init__(self, path):
        self.path = path
        self.conn = None
        self.tmp = None

    def __enter__(self):
        wal = self.path + "-wal"
        if os.path.lexists(wal):
            import tempfile  # lazy: only a database with a live log needs the copy

            self.tmp = tempfile.mkdtemp(prefix="mindos-ro-")
            copy = os.path.join(self.tmp, "source.db")
            try:
                _consistent_copy(((self.path, copy), (wal, copy + "-wal")))
            except (OSError, sqlite3.Error):
                self._cleanup()
                raise
            uri = readonly_uri(copy)
        else:
            uri = readonly_uri(self.path, immutable=True)
        try:
            self.conn = sqlite3.connect(uri, uri=True, isolation_level=None)
        except sqlite3.Error:
            self._cleanup()
            raise
        self.conn.row_factory = sqlite3.Row
        return self.conn

    def _cleanup(self):
        if self.tmp:
            import shutil  # lazy: see __enter__

            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __exit__(self, *exc):
        if self.conn is not None:
            self.conn.close()
        self._cleanup()
        return False


COPY_ATTEMPTS = 5


def _stamp(path):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def _consistent_copy(pairs):
    """Copy each ``(src, dst)`` (no symlink followed) so that the set is one moment's state:
    every source unchanged (size, mtime, inode) from before the first byte to after the last,
    else taken again.  A source absent throughout (a log checkpointed away) is not copied."""
    import shutil  # lazy: only a database with a live log needs the copy

    for _ in range(COPY_ATTEMPTS):
        before = [_stamp(src) for src, _ in pairs]
        if before[0] is None:
            raise FileNotFoundError(pairs[0][0])
        for (src, dst), stamp in zip(pairs, before):
            if os.path.exists(dst):
                os.remove(dst)
            if stamp is None:
                continue
            try:
                fd = _open(src)
            except OSError:  # went away (or was swapped) mid-copy: the stamps below tell
                continue
            with os.fdopen(fd, "rb") as reader, open(dst, "wb") as writer:
                shutil.copyfileobj(reader, writer)
        if [_stamp(src) for src, _ in pairs] == before:
            return
    raise sqlite3.OperationalError(f"database kept changing through {COPY_ATTEMPTS} consistent-read attempts "
                                   "(a busy live home): retry")


def content_digest(conn):
    """The sha256 of a database's content read through ``conn`` (one read transaction).

    Covers the schema version, every table's definition and rows in a fixed order (its
    primary key, else every column); leaves out derived search indexes (``*_fts*``) and the
    audit ledger's migration bookkeeping (:data:`BOOKKEEPING`, which never changes execution
    truth), so a live home's identity does not move when its log is checkpointed or when this
    very inventory audits itself there.  Rows are hashed in chunks of their ``ascii()`` form:
    plain ASCII whatever the interpreter's Unicode tables, and several times cheaper than JSON.
    """
    sha = hashlib.sha256()
    cursor = conn.cursor()
    cursor.row_factory = None
    cursor.execute("BEGIN")
    try:
        sha.update(ascii(("user_version", cursor.execute("PRAGMA user_version").fetchone()[0])).encode())
        tables = cursor.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            " AND name NOT LIKE '%\\_fts%' ESCAPE '\\' ORDER BY name").fetchall()
        marks = ", ".join("?" * len(BOOKKEEPING))
        for name, sql in tables:
            sha.update(ascii(("table", name, sql)).encode())
            info = cursor.execute(f'PRAGMA table_info("{name}")').fetchall()
            columns = [row[1] for row in info]
            key = [row[1] for row in sorted(info, key=lambda row: row[5]) if row[5]] or columns
            where = f" WHERE action NOT IN ({marks})" if name == "audit_events" and "action" in columns else ""
            cursor.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in columns)} FROM "{name}"{where}'
                           f' ORDER BY {", ".join(chr(34) + c + chr(34) for c in key)}', BOOKKEEPING if where else ())
            while True:
                rows = cursor.fetchmany(DIGEST_CHUNK)
                if not rows:
                    break
                sha.update(ascii(rows).encode())
    finally:
        cursor.execute("COMMIT")
    return sha.hexdigest()


DIGEST_CHUNK = 5000


def _open(path):
    """A no-follow, non-blocking descriptor of the regular file ``path``
    (:func:`mindos.core.files.open_regular`); a symlink, FIFO, device or missing file raises
    OSError with the reason, which every reader here reports as unreadable."""
    try:
        return file_safety.open_regular(path)[0]
    except MindosError as exc:
        raise OSError(0, str(exc)) from None


def file_digest(path):
    """``(sha256 hex, bytes, head)`` of a regular file read without following a symlink
    (:func:`mindos.core.files.digest`); a symlink, FIFO, device or missing file raises OSError
    with the reason, which every reader here reports as unreadable."""
    try:
        return file_safety.digest(path)
    except MindosError as exc:
        raise OSError(0, str(exc)) from None


MAX_COPY_BYTES = 4 * 1024 * 1024 * 1024  # one copied file, read whole


def _read_bytes(path, max_bytes=MAX_COPY_BYTES):
    """The bytes of a regular file (see :func:`_open`); OSError with the reason otherwise."""
    try:
        return file_safety.read_bytes(path, max_bytes=max_bytes)
    except MindosError as exc:
        raise OSError(0, str(exc)) from None


def _read_text(path):
    """The text of a regular file (undecodable bytes replaced), at most MAX_TEXT_BYTES."""
    return _read_bytes(path, MAX_TEXT_BYTES).decode("utf-8", errors="replace")


def _walk(root):
    """Every regular file under ``root`` (sorted, symlinks never followed) plus the caps report."""
    caps = {"max_files": MAX_FILES, "files_over_cap": 0, "symlinks_skipped": 0,
            "max_scan_bytes": MAX_SCAN_BYTES, "files_not_scanned_over_size": 0, "unreadable": 0}
    found, counts = file_safety.walk(root, max_files=MAX_FILES)
    special = counts["special"]
    regular = [path for _, path in found if special == 0 or os.path.isfile(path)]
    caps.update(files_over_cap=counts["overflow"], symlinks_skipped=counts["symlinks"],
                unreadable=counts["unreadable_dirs"] + counts["too_deep"])
    return regular, caps


# ---------------------------------------------------------------------------------------
# Classification


def _source_id(kind, rel):
    return "src-" + hashlib.sha256(f"{kind}\x1f{rel}".encode("utf-8")).hexdigest()[:16]


def inspect_sqlite(path):
    """Read-only facts about a SQLite file: ``{"kind", "integrity", "schema_version", "tables",
    "row_counts", "problem"}`` (``problem`` set when it cannot be trusted)."""
    info = {"integrity": None, "schema_version": None, "row_counts": {}, "problem": None}
    try:
        with open_readonly(path) as conn:
            _inspect(conn, path, info)
            if info["problem"] is None:
                info["content_sha256"] = content_digest(conn)
    except sqlite3.DatabaseError as exc:
        info.setdefault("kind", "autopilot_sqlite" if os.path.basename(path) == "state.db" else "unrecognized_sqlite")
        info["integrity"] = "failed"
        info["problem"] = f"unreadable database: {exc}"
    except OSError as exc:
        info.update(kind="unrecognized_sqlite", integrity="failed", problem=f"cannot read: {exc.strerror}")
    return info


def _inspect(conn, path, info):
    tables = sorted(row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"))
    info["schema_version"] = conn.execute("PRAGMA user_version").fetchone()[0]
    if all(name in tables for name in AUTOPILOT_TABLES):
        info["kind"] = "autopilot_sqlite"
    else:
        info["kind"] = "unrecognized_sqlite"
        info["tables"] = tables
        info["problem"] = "valid SQLite without the Autopilot schema (ambiguous: resolve before any import)"
    rows = conn.execute("PRAGMA integrity_check").fetchall()
    info["integrity"] = "ok" if [r[0] for r in rows] == ["ok"] else "failed"
    if info["integrity"] != "ok":
        info["problem"] = "integrity_check failed"
        return
    if info["kind"] == "autopilot_sqlite":
        for name in tables:
            if "_fts" not in name:
                info["row_counts"][name] = conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]


def _looks_like_database(path, head):
    """A file carrying the SQLite header, or named like a database (a corrupted one must block,
    not pass as an unclassified file)."""
    name = os.path.basename(path)
    if head == SQLITE_MAGIC:
        return True
    return name in DB_NAMES or name.lower().endswith(DB_SUFFIXES)


def _db_secret_findings(path):
    """Kind-only findings over an Autopilot database's stored agent text (notes, handoffs)."""
    found = {}
    try:
        with open_readonly(path) as conn:
            for table, columns in (("notes", ("content", "source")),
                                   ("handoffs", ("objective", "status", "evidence", "decisions", "next_actions",
                                                 "risks"))):
                try:
                    rows = conn.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
                except sqlite3.Error:
                    continue
                for row in rows:
                    for value in row:
                        for kind in secrets.scan(value) if isinstance(value, str) else ():
                            key = f"{table}:{kind}"
                            found[key] = found.get(key, 0) + 1
    except (sqlite3.Error, OSError):
        pass
    return found


def _classify_dirs(root, files):
    """``{relative dir: kind}`` for Hermes homes and Obsidian vaults (outermost wins)."""
    dirs = set()
    for path in files:
        rel = _rel(os.path.dirname(path), root)
        while True:
            dirs.add(rel)
            if rel in ("", "."):
                break
            rel = os.path.dirname(rel) or "."
    marked = {}
    for rel in sorted(dirs):
        full = os.path.join(root, rel)
        if os.path.isdir(os.path.join(full, ".obsidian")) and not os.path.islink(os.path.join(full, ".obsidian")):
            marked[rel] = "obsidian_vault"
        elif sum(os.path.isdir(os.path.join(full, part)) and not os.path.islink(os.path.join(full, part))
                 for part in HERMES_PARTS) >= 2:
            marked[rel] = "hermes_home"
    # an outer source swallows inner ones (a vault inside a Hermes home belongs to it)
    outer = {}
    for rel in sorted(marked, key=lambda r: (r.count(os.sep), r)):
        if not any(rel == o or rel.startswith(o + os.sep) or o == "." for o in outer):
            outer[rel] = marked[rel]
    return outer


def _rel(path, root):
    """``path`` relative to ``root`` (every walked path starts with it; '.' for root itself)."""
    if path == root:
        return "."
    return path[len(root) + 1:] if path.startswith(root + os.sep) else os.path.relpath(path, root)


def _owner(rel_file, dir_sources):
    best = None
    for rel in dir_sources:
        if rel == "." or rel_file.startswith(rel + os.sep):
            if best is None or len(rel) > len(best):
                best = rel
    return best


def scan_file(path):
    """The secret kinds (kinds only) in the text of the file ``path``; none when unreadable."""
    try:
        return secrets.scan(_read_text(path))
    except OSError:
        return []


def count_cron_jobs(source, jobs):
    """Set ``source["cron_jobs"]`` from the Hermes ``cron/jobs.json`` at ``jobs`` (a list, or an
    object holding one under ``jobs``); anything else blocks the source, naming the file."""
    import json  # lazy: only a Hermes home needs the parser

    try:
        parsed = json.loads(_read_text(jobs))
        listed = parsed.get("jobs") if isinstance(parsed, dict) else parsed
        if not isinstance(listed, list):
            raise ValueError("no job list")
        source["cron_jobs"] = len(listed)
    except (ValueError, OSError):
        source["blocked"] = "cron/jobs.json is not a valid job list"


def scan_texts(paths):
    """``{path: kinds}`` for text files: in-process for a few, over worker processes (reads
    and the detector both run there; nothing is written) for many."""
    from mindos.core import workers  # lazy: only inventories and copy steps scan many texts

    return dict(zip(paths, workers.spread(scan_file, paths, max_workers=PARALLEL_WORKERS, chunks_per_worker=8,
                                          big_enough=len(paths) >= PARALLEL_MIN_FILES)))


def discover(root):
    """Classify everything under ``root`` (read-only).  Returns the inventory body (unsealed)."""
    root = file_safety.walk_root(root)
    files, caps = _walk(root)
    digests = {}
    for path in files:
        try:
            digests[path] = file_digest(path)
        except OSError:
            caps["unreadable"] += 1
    dir_sources = _classify_dirs(root, [p for p in files if p in digests])
    sources, claimed, content = [], set(), {}
    # SQLite files first: an Autopilot home's database with its receipts
    for path in files:
        if path not in digests or not _looks_like_database(path, digests[path][2]):
            continue
        rel = _rel(path, root)
        info = inspect_sqlite(path)
        members = [path]  # its -wal/-shm are a live home's runtime state: read through, never recorded
        receipts = []
        if info["kind"] == "autopilot_sqlite":
            receipt_dir = os.path.join(os.path.dirname(path), "receipts")
            receipts = [p for p in files if p in digests and os.path.dirname(p) == receipt_dir]
        source = {"kind": info["kind"], "path": rel, "source_id": _source_id(info["kind"], rel),
                  "integrity": info["integrity"], "schema_version": info["schema_version"],
                  "row_counts": info["row_counts"], "sha256": digests[path][0], "bytes": digests[path][1]}
        if info.get("tables") is not None:
            source["tables"] = info["tables"]
        if info["problem"]:
            source["blocked"] = info["problem"]
        if info.get("content_sha256"):
            content[path] = info["content_sha256"]
        if info["kind"] == "autopilot_sqlite" and not info["problem"]:
            findings = _db_secret_findings(path)
            source["db_secret_findings"] = dict(sorted(findings.items()))
        source["receipt_files"] = len(receipts)
        source["_members"] = members + receipts
        # runtime artifacts beside a database (the lock file, a shared-memory index) belong to it
        # but hold no data: claimed, counted, never checksummed into the source
        runtime = [p for p in (path + ".lock", path + "-shm", path + "-wal") if p in digests]
        source["runtime_files_skipped"] = len(runtime)
        claimed.update(members + receipts + runtime)
        sources.append(source)
    for path in files:
        if path in claimed or path not in digests:
            continue
        rel = _rel(path, root)
        if os.path.basename(path) == "bank.jsonl":
            lines = malformed = 0
            try:
                import json  # lazy: only a bank needs the parser

                for line in _read_text(path).splitlines():
                    if not line.strip():
                        continue
                    lines += 1
                    try:
                        if not isinstance(json.loads(line), dict):
                            malformed += 1
                    except ValueError:
                        malformed += 1
            except OSError:
                pass
            sources.append({"kind": "hindsight_bank", "path": rel, "source_id": _source_id("hindsight_bank", rel),
                            "lines": lines, "malformed_lines": malformed, "sha256": digests[path][0],
                            "bytes": digests[path][1], "_members": [path]})
            claimed.add(path)
    owners = {}
    if dir_sources:
        for p in files:
            if p in digests and p not in claimed:
                owners.setdefault(_owner(_rel(p, root), dir_sources), []).append(p)
    for rel_dir, kind in sorted(dir_sources.items()):
        members = owners.get(rel_dir, [])
        claimed.update(members)
        source = {"kind": kind, "path": rel_dir, "source_id": _source_id(kind, rel_dir), "_members": members}
        base = os.path.join(root, rel_dir)
        if kind == "hermes_home":
            source["profiles"] = sum(1 for p in members if os.path.relpath(p, base).startswith("profiles" + os.sep))
            source["skills"] = sum(1 for p in members if os.path.basename(p) == "SKILL.md")
            jobs = os.path.join(base, "cron", "jobs.json")
            if jobs in digests:
                count_cron_jobs(source, jobs)
            else:
                source["cron_jobs"] = 0
        else:
            source["notes"] = sum(1 for p in members if p.endswith(".md"))
        sources.append(source)
    # every source: per-file checksums and kind-only secret findings
    to_scan = []
    for source in sources:
        for path in source["_members"]:
            if not path.endswith(TEXT_SUFFIXES) or digests[path][2] == SQLITE_MAGIC:
                continue
            if digests[path][1] > MAX_SCAN_BYTES:
                caps["files_not_scanned_over_size"] += 1
                continue
            to_scan.append(path)
    scanned = scan_texts(sorted(to_scan))
    for source in sources:
        members = source.pop("_members")
        entries, kinds = [], {}
        for path in sorted(members):
            sha, size, _ = digests[path]
            found = scanned.get(path, [])
            entry = {"path": _rel(path, root), "sha256": sha, "bytes": size}
            if path in content:
                entry["content_sha256"] = content[path]
            if found:
                entry["secret_kinds"] = found
                for kind in found:
                    kinds[kind] = kinds.get(kind, 0) + 1
            entries.append(entry)
        source["files"] = entries
        source["file_count"] = len(entries)
        for key, count in source.get("db_secret_findings", {}).items():
            kind = key.split(":", 1)[1]
            kinds[kind] = kinds.get(kind, 0) + count
        source["secret_findings"] = dict(sorted(kinds.items()))
    sources.sort(key=lambda s: (PLAN.get(s["kind"], (9,))[0], s["path"]))
    blocked = [{"source_id": s["source_id"], "kind": s["kind"], "path": s["path"], "reason": s["blocked"]}
               for s in sources if s.get("blocked")]
    plan = []
    for source in sources:
        if source.get("blocked") or source["kind"] not in PLAN:
            continue
        rank, action, what = PLAN[source["kind"]]
        plan.append({"step": len(plan) + 1, "rank": rank, "action": action, "source_id": source["source_id"],
                     "kind": source["kind"], "path": source["path"], "what": what})
    unclassified = sum(1 for p in files if p in digests and p not in claimed)
    return {
        "root": root, "sources": sources, "sources_total": len(sources), "plan": plan, "blocked": blocked,
        "fail_closed": bool(blocked), "caps": caps, "files_seen": len(files), "unclassified_files": unclassified,
        "by_kind": {kind: sum(1 for s in sources if s["kind"] == kind) for kind in sorted({s["kind"] for s in sources})},
    }


# ---------------------------------------------------------------------------------------
# Sealing and checking


def inventory(conn, root, out, *, force=False):
    """``migrate-inventory``: discover, seal, write ``out`` (0600, atomic), audit
    ``migration_inventory_sealed``.  Returns the summary; its verdict is ``fail_closed``."""
    documents.check_out(out, force=force)  # before walking the root
    body = discover(root)
    doc, head = documents.seal(out, FORMAT, body, force=bool(force))
    with db.write(conn):
        ledger.append_event(conn, "migration", doc["seal"]["digest"][:16], "migration_inventory_sealed", {
            "digest": doc["seal"]["digest"], "root": body["root"], "sources": body["sources_total"],
            "fail_closed": body["fail_closed"], "blocked": [b["source_id"] for b in body["blocked"]],
            "file_sha256": head["file_sha256"]})
    return {
        **head, "root": body["root"], "sources_total": body["sources_total"], "by_kind": body["by_kind"],
        "fail_closed": body["fail_closed"], "blocked": body["blocked"], "plan": body["plan"], "caps": body["caps"],
        "sources": [{key: s[key] for key in ("source_id", "kind", "path", "file_count", "secret_findings")}
                    for s in body["sources"]],
    }


def load(path):
    """Read and verify a sealed inventory byte-exact; return the document (IntegrityError on
    any changed byte)."""
    if not isinstance(path, str) or not path:
        raise InvalidInput("invalid inventory path")
    return documents.read(path, FORMAT, "inventory")


def check(path):
    """``migrate-inventory-check``: verify the seal; return what the document holds."""
    doc = load(path)
    return {**documents.facts(doc, FORMAT), "root": doc["root"], "sources_total": doc["sources_total"],
            "fail_closed": doc["fail_closed"], "blocked": doc["blocked"], "plan": doc["plan"]}


def verify_source(doc, src, database=None):
    """Re-hash every file of ``src`` (a source of the verified inventory ``doc``) without
    following a symlink; Refused naming the changed or missing files (drift since discovery).

    A database is checked by its content (:func:`content_digest`), read consistently: through
    ``database`` when given (the :class:`open_readonly` connection the caller goes on to read,
    so what it reads is exactly what was verified), else through a connection of its own."""
    changed = []
    for entry in src["files"]:
        path = os.path.join(doc["root"], entry["path"])
        try:
            if "content_sha256" in entry:  # a database: its content, read consistently, not its bytes
                if database is not None:
                    same = content_digest(database) == entry["content_sha256"]
                else:
                    if os.path.islink(path) or not os.path.isfile(path):
                        raise FileNotFoundError(path)
                    with open_readonly(path) as conn:
                        same = content_digest(conn) == entry["content_sha256"]
            else:
                same = file_digest(path)[0] == entry["sha256"]
        except (OSError, sqlite3.Error):
            changed.append(entry["path"] + (" (missing)" if not os.path.lexists(path) else " (unreadable)"))
            continue
        if not same:
            changed.append(entry["path"])
    if changed:
        more = f" (+{len(changed) - 20} more)" if len(changed) > 20 else ""
        raise Refused(f"source changed since the inventory: {', '.join(changed[:20])}{more}; "
                      "re-run migrate-inventory and import against the new manifest")


def source(doc, source_id):
    """The source ``source_id`` of a verified inventory (NotFound naming the known ids)."""
    for item in doc["sources"]:
        if item["source_id"] == source_id:
            return item
    known = ", ".join(s["source_id"] for s in doc["sources"]) or "none"
    raise NotFound(f"unknown --source-id {source_id!r:.40} (inventory sources: {known})")
