"""Semantic memory: the local memory engine (``memory-fts-v1``) inside the control-plane database.

A memory is a durable statement an agent wants any later session to recall ("auth sessions
expire after 30 days"), optionally scoped to a project.  Design decisions:

  * **Content-addressed per project.**  The id is ``mem-`` + the first 16 hex of the SHA-256
    of the canonical JSON ``[project, content]``, so retaining the same text twice in one
    project is an idempotent no-op (``deduplicated: true``, nothing written), while the same
    text in another project is another memory.  An interrupted import is simply re-run.
  * **One transaction, one event.**  The row and its ``memory_retained`` event commit
    together, behind the same secret guard as notes (refused, ``--redact`` or
    ``--allow-secret``, all audited).  The id is computed over the stored (guarded) text.
  * **Retract, never delete.**  ``memory-forget`` stamps ``retracted_at`` (and optionally
    ``superseded_by``) so a pack that once carried the memory stops carrying it while the
    audit chain still explains why.  Retracted memories never pack and never rank above the
    memory that replaced them.
  * **Scope is enforced.**  A project sees its own memories plus project-less ones, never
    another project's (:func:`mindos.memory.memory_in_scope`); there is no fallback to
    unscoped rows.
  * **Import reads, never writes, its source.**  ``memory-import`` opens a legacy Hindsight
    ``bank.jsonl`` read-only, counts malformed lines instead of failing, keeps each line's
    ``created_at`` and is a dry run unless ``--apply``.
"""

import json
import os

from mindos.core import clock, validate
from mindos.core.canonical import canonical_json, sha256_hex
from mindos.errors import Conflict, InvalidInput, MindosError, NotFound, Refused
from mindos.store import db, fts, ledger

ENGINE = "memory-fts-v1"
DEFAULT_KIND = "fact"
DEFAULT_SOURCE = "operator"
MAX_TEXT = 16384
MAX_QUERY = 1000
MAX_LIMIT = 10000
MAX_IMPORT_LINE = 65536
MAX_IMPORT_LINES = 1_000_000
MAX_IMPORT_BYTES = 1024 * 1024 * 1024  # a bank file: checked before reading and while reading
_ID_PREFIX = "mem-"
_COLUMNS = ("id", "project", "kind", "content", "tags", "source", "engine", "retracted_at", "superseded_by",
            "created_at")
COLUMNS_SQL = ", ".join(_COLUMNS)


def memory_id(project, content):
    """The content address of ``content`` in ``project`` ('' = fleet-wide)."""
    return _ID_PREFIX + sha256_hex(canonical_json([project, content]))[:16]


def check_id(value, flag="memory id"):
    """A memory id: ``mem-`` plus 16 lowercase hex digits."""
    if not (isinstance(value, str) and value.startswith(_ID_PREFIX)
            and validate.within(value[len(_ID_PREFIX):], validate.HEX_DIGITS, shortest=16, longest=16)):
        raise InvalidInput(f"invalid {flag}: {validate.shown(value, 40)} (expected mem- and 16 hex digits)")
    return value


def row_to_memory(row):
    """A memories row as the dict every command prints (``live`` = not retracted)."""
    memory = {name: row[name] for name in _COLUMNS}
    memory["tags"] = json.loads(memory["tags"])
    memory["live"] = memory["retracted_at"] is None
    return memory


def _project(value, flag="--project"):
    return validate.identifier(value, flag) if value else ""


def _get_row(conn, mid):
    return conn.execute(f"SELECT {COLUMNS_SQL} FROM memories WHERE id = ?", (mid,)).fetchone()


def get(conn, mid):
    """The memory dict for ``mid`` or NotFound."""
    mid = check_id(mid)
    row = _get_row(conn, mid)
    if row is None:
        raise NotFound(f"unknown memory {mid}")
    return row_to_memory(row)


# ---------------------------------------------------------------------------------------
# Writes


def _clean(text, kind, project, tags, source, flag="--text"):
    text = validate.text(text, flag, required=True, max_len=MAX_TEXT).strip()
    kind = validate.tag(kind or DEFAULT_KIND, "--kind")
    project = _project(project)
    tags = validate.tags(tags or ())
    source = validate.agent(source, "--source") if source else DEFAULT_SOURCE
    return text, kind, project, tags, source


def insert(conn, text, kind, project, tags, source, created_at, action, extra=None):
    """Insert one memory (the caller holds the write lock and has guarded and validated
    it); return (memory, created).  Audited ``action`` with ``extra`` in the payload."""
    mid = memory_id(project, text)
    row = _get_row(conn, mid)
    if row is not None:
        return row_to_memory(row), False
    conn.execute(
        "INSERT INTO memories(id, project, kind, content, tags, source, engine, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (mid, project, kind, text, canonical_json(tags), source, ENGINE, created_at),
    )
    payload = {"project": project, "kind": kind, "tags": tags, "source": source, "chars": len(text),
               "engine": ENGINE}
    payload.update(extra or {})
    ledger.append_event(conn, "memory", mid, action, payload)
    from mindos.memory import learned  # lazy: writes learn the home's term associations
    learned.after_write(conn)
    return row_to_memory(_get_row(conn, mid)), True


def retain(conn, text, *, kind=DEFAULT_KIND, project=None, tags=(), source=None, redact=False, allow_secret=False):
    """``memory-retain``: store ``text`` as a memory, or return the identical one; audited.

    Returns the memory dict plus ``deduplicated`` (true when the content address already
    existed: nothing was written) and ``secret_kinds`` / ``secret_action`` when the guard
    redacted or allowed content.  Audits ``memory_retained`` with the row, in one transaction.
    """
    text, kind, project, tags, source = _clean(text, kind, project, tags, source)
    from mindos.store import guard  # lazy: only writes pay for the guard

    with db.write(conn):
        fields, outcome = guard.guard_record(conn, "memory", memory_id(project, text), {"text": text},
                                               {"source": source}, redact=redact, allow_secret=allow_secret)
        memory, created = insert(conn, fields["text"], kind, project, tags, source, clock.now_iso(),
                                  "memory_retained")
    memory["deduplicated"] = not created
    if outcome:
        memory.update(outcome)
    return memory


def forget(conn, mid, *, superseded_by=None):
    """``memory-forget``: retract a memory (never delete it); audited ``memory_forgotten``.

    ``superseded_by`` names the live memory that replaced it.  Forgetting a retracted memory
    is refused.  Returns the retracted memory dict.
    """
    mid = check_id(mid)
    if superseded_by is not None:
        superseded_by = check_id(superseded_by, "--superseded-by")
        if superseded_by == mid:
            raise InvalidInput("invalid --superseded-by: a memory cannot supersede itself")
    with db.write(conn):
        memory = get(conn, mid)
        if not memory["live"]:
            raise Conflict(f"memory {mid} is already retracted (at {memory['retracted_at']})")
        if superseded_by is not None:
            successor = _get_row(conn, superseded_by)
            if successor is None:
                raise NotFound(f"unknown memory {superseded_by} (--superseded-by)")
            if successor["retracted_at"] is not None:
                raise Conflict(f"memory {superseded_by} is retracted; it cannot supersede {mid}")
        now = clock.now_iso()
        cursor = conn.execute("UPDATE memories SET retracted_at = ?, superseded_by = ? WHERE id = ?"
                              " AND retracted_at IS NULL", (now, superseded_by, mid))
        if cursor.rowcount != 1:
            raise Conflict(f"memory {mid} changed since check; re-read it")
        payload = {"project": memory["project"]}
        if superseded_by is not None:
            payload["superseded_by"] = superseded_by
        ledger.append_event(conn, "memory", mid, "memory_forgotten", payload)
        return get(conn, mid)


# ---------------------------------------------------------------------------------------
# Reads


def list_memories(conn, *, project=None, query=None, kind=None, since=None, include_all=False, limit=100):
    """``memory-list``: memories newest first (``created_at DESC, id``), live only unless
    ``include_all``; ``project`` keeps exactly that project's rows; ``query`` is a literal
    substring of the content; ``kind`` keeps one kind; ``since`` keeps memories created at
    or after that instant (ISO 8601)."""
    project = _project(project) or None
    limit = validate.positive_int(limit, "--limit", maximum=MAX_LIMIT)
    clauses, params = [], []
    if kind is not None:
        clauses.append("kind = ?")
        params.append(validate.tag(kind, "--kind"))
    if since is not None:
        clauses.append("created_at >= ?")
        params.append(clock.normalize(since, "--since"))
    if not include_all:
        clauses.append("retracted_at IS NULL")
    if project is not None:
        clauses.append("project = ?")
        params.append(project)
    if query is not None:
        query = validate.text(query, "--query", required=True, max_len=MAX_QUERY)
        clauses.append("content LIKE ? ESCAPE '\\'")
        params.append(fts.like_pattern(query))
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    rows = conn.execute(f"SELECT {COLUMNS_SQL} FROM memories{where} ORDER BY created_at DESC, id LIMIT ?",
                        (*params, limit))
    return [row_to_memory(row) for row in rows]


def metrics(conn):
    """Memory counters for ``metrics``."""
    row = conn.execute("SELECT count(*), coalesce(sum(retracted_at IS NULL), 0) FROM memories").fetchone()
    return {"memories_total": row[0], "memories_live": row[1], "memories_retracted": row[0] - row[1]}


# ---------------------------------------------------------------------------------------
# Legacy bank import


def _bank_entry(line):
    """Parse one bank.jsonl line into ``(text, kind, project, tags, created_at)`` or raise."""
    entry = json.loads(line)
    if not isinstance(entry, dict):
        raise ValueError("not an object")
    text = entry.get("text", entry.get("content"))
    kind = entry.get("kind", entry.get("type")) or DEFAULT_KIND
    tags = entry.get("tags") or []
    if not isinstance(tags, list):
        raise ValueError("tags is not a list")
    created_at = entry.get("created_at") or entry.get("timestamp")
    if not isinstance(created_at, str):
        raise ValueError("created_at missing")
    text, kind, project, tags, _ = _clean(text, kind, entry.get("project") or None, tags, None)
    return text, kind, project, tags, clock.normalize(created_at, "created_at")


def _bank_lines(handle, path):
    """The lines of a bank file, each read with a bound: a line past MAX_IMPORT_LINE is
    yielded as its first MAX_IMPORT_LINE + 1 bytes (counted malformed) and the rest skipped,
    and the whole read stops at MAX_IMPORT_BYTES (a file that grew since it was checked)."""
    total = 0
    while True:
        raw = handle.readline(MAX_IMPORT_LINE + 1)
        if not raw:
            return
        total += len(raw)
        rest = raw
        while len(rest) > MAX_IMPORT_LINE and not rest.endswith(b"\n"):  # skip the rest of an overlong line
            rest = handle.readline(MAX_IMPORT_LINE + 1)
            total += len(rest)
            if total > MAX_IMPORT_BYTES:
                break
        if total > MAX_IMPORT_BYTES:
            raise Refused(f"cannot read bank: {validate.shown(path)} is too large: more than {MAX_IMPORT_BYTES}"
                          f" bytes, the limit is {MAX_IMPORT_BYTES} bytes", code="too_large")
        yield raw


def import_bank(conn, path, *, apply=False):
    """``memory-import``: import a legacy Hindsight ``bank.jsonl``; a dry run unless ``apply``.

    The file is opened read-only.  Each line is an object with ``text`` (or ``content``),
    ``created_at`` and optional ``kind``, ``project``, ``tags``; anything else is counted in
    ``malformed``.  Credential-shaped lines are skipped and counted in ``secret_blocked``
    (the same detector as memory-retain).  Returns ``{"source", "applied", "lines",
    "malformed", "secret_blocked", "already_present", "would_import" | "imported", "ids"}``;
    with ``apply`` every new row and its ``memory_imported`` event commit in one
    transaction, and a re-run imports nothing.
    """
    from mindos.core import secrets  # lazy: only imports pay for the detector

    from mindos.core import files  # lazy: only imports read a bank

    path = validate.text(path, "bank path", required=True, max_len=4096)
    try:  # read-only, no symlink, never a FIFO or device (/dev/zero would never end)
        fd, _ = files.open_regular(path, max_bytes=MAX_IMPORT_BYTES)
    except MindosError as exc:
        raise exc.__class__(f"cannot read bank: {exc}", code=exc.code) from None
    entries, lines, malformed, blocked = {}, 0, 0, 0
    with os.fdopen(fd, "rb") as handle:
        for raw in _bank_lines(handle, path):
            lines += 1
            if lines > MAX_IMPORT_LINES:
                raise InvalidInput(f"bank has more than {MAX_IMPORT_LINES} lines; split it")
            if not raw.strip():
                lines -= 1
                continue
            try:
                if len(raw) > MAX_IMPORT_LINE:
                    raise ValueError("line too long")
                entry = _bank_entry(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError, RecursionError, InvalidInput):
                malformed += 1
                continue
            if secrets.scan(entry[0]):
                blocked += 1
                continue
            entries.setdefault(memory_id(entry[2], entry[0]), entry)
    result = {"source": path, "applied": bool(apply), "lines": lines, "malformed": malformed,
              "secret_blocked": blocked}
    def present_ids():
        rows = conn.execute("SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                            (canonical_json(list(entries)),))
        return {row[0] for row in rows}

    if not apply:  # dry run: read-only
        present = present_ids()
        new = [mid for mid in entries if mid not in present]
    else:
        with db.write(conn):
            present = present_ids()
            new = [mid for mid in entries if mid not in present]
            for mid in new:
                text, kind, project, tags, created_at = entries[mid]
                insert(conn, text, kind, project, tags, "import", created_at, "memory_imported",
                        {"created_at": created_at})
    result["already_present"] = len(present)
    result["imported" if apply else "would_import"] = len(new)
    result["ids"] = new
    return result
