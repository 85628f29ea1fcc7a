"""Agent handoffs: the provider-neutral resume point of a task.

A handoff is a structured envelope one agent leaves for the next (source and target agent,
work status, objective, evidence, constraints, decisions, files, commit, next actions,
risks, optional recall digest).  Design decisions:

  * **One live handoff per task.**  The schema's partial unique index allows one row with
    ``superseded_by IS NULL`` per task.  Recording a new handoff supersedes the live one in
    the same transaction: the old row gets ``superseded_by``/``superseded_at``, the new row
    ``supersedes``.  The new row's id is chosen up front (we hold the write lock), so the
    old row can point at it before the insert and the index is never violated.
  * **Acknowledgment belongs to one row.**  ``acked_by``/``acked_at`` live on the handoff
    itself, so a superseding handoff starts unacknowledged: a reassigned or updated
    handoff must be picked up again by its (new) recipient.
  * **Deduplicated by payload hash.**  ``payload_hash`` is the SHA-256 of the canonical JSON
    of the stored payload (task, agents, status, objective, lists, commit, recall digest);
    an identical live payload returns the existing row (``deduplicated: true``).
  * **Secret guard first.**  The objective, status, commit and every list field pass
    through :func:`mindos.store.guard.guard_record` before anything is written; the stored and
    hashed payload is the guarded (possibly redacted) text.  The agent names are scanned too
    and refused outright when credential-shaped (an id cannot carry a redaction label).
  * **Events are about the task.**  Handoff audit events use entity_type ``handoff`` and
    entity_id = the task id (the handoff id is in the payload), so a task's audit trail and
    the recall stream (``context_recalled``/``session_resumed``, also keyed by task id)
    share one indexed lookup.
  * **The lint reads the ledger.**  :func:`check` proves a cited recall digest against the
    task's audited recall events instead of recomputing bundles, so lease renewals and the
    handoff's own recording never false-positive.
"""

import json

from mindos.core import clock, validate
from mindos.store import db, ledger, sql
from mindos.errors import InvalidInput, NotFound, Refused
from mindos.core.canonical import canonical_json, sha256_hex
from mindos.work import rows

LIST_FIELDS = ("evidence", "constraints", "decisions", "files", "next_actions", "risks")
LIST_FLAGS = {
    "evidence": "--evidence",
    "constraints": "--constraint",
    "decisions": "--decision",
    "files": "--file",
    "next_actions": "--next-action",
    "risks": "--risk",
}
MAX_FIELD = 4096  # objective and each list item
MAX_ITEMS = 64  # items per list field
MAX_STATUS = 64
MAX_COMMIT = 200
MAX_QUERY = 1000
RECALL_ACTIONS = ("context_recalled", "session_resumed")
CHECK_REASONS = (
    "unaddressed",
    "missing_objective",
    "sparse_no_evidence_or_next_actions",
    "unproven_recall_digest",
    "older_than_latest_recall",
    "terminal_task_handoff",
    "stale_unacknowledged",
)
_MAX_ROWID = 2**63 - 1


def row_to_handoff(row):
    """Turn a handoffs row into the handoff dict every command prints.

    Shape (all keys always present)::

        {"id": int, "task_id": str, "from_agent": str, "to_agent": str ('' = unaddressed),
         "status": str, "objective": str,
         "evidence": [str], "constraints": [str], "decisions": [str], "files": [str],
         "next_actions": [str], "risks": [str],
         "commit_ref": str, "recall_digest": str ('' or 64 hex), "payload_hash": str,
         "supersedes": int|None, "superseded_by": int|None, "superseded_at": str|None,
         "live": bool, "acked_by": str ('' = not acked), "acked_at": str|None,
         "ack_recall_digest": str, "created_at": str}

    Extra columns of a joined row (e.g. ``project``) are passed through unchanged.
    """
    handoff = dict(row)
    for field in LIST_FIELDS:
        if field in handoff:
            handoff[field] = json.loads(handoff[field])
    if "superseded_by" in handoff:
        handoff["live"] = handoff["superseded_by"] is None
    return handoff


def live(conn, task_id):
    """Return the task's live handoff dict (see :func:`row_to_handoff`) or None.

    Does not check that the task exists; an unknown task simply has no handoff.
    """
    row = conn.execute("SELECT * FROM handoffs WHERE task_id = ? AND superseded_by IS NULL", (task_id,)).fetchone()
    return row_to_handoff(row) if row is not None else None


def _require_task(conn, task_id, flag="task id"):
    task_id = validate.identifier(task_id, flag)
    return rows.require_task(conn, task_id, "id, project, title, status")


def _handoff_id(value):
    text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    if not (text.isascii() and text.isdigit()) or len(text) > 19 or not 1 <= int(text) <= _MAX_ROWID:
        raise InvalidInput(f"invalid handoff id: {validate.shown(value, 40)} (expected a positive integer)")
    return int(text)


def _clean_list(values, field):
    flag = LIST_FLAGS[field]
    values = list(values or ())
    if len(values) > MAX_ITEMS:
        raise InvalidInput(f"invalid {flag}: {len(values)} items is over the limit of {MAX_ITEMS}")
    return [validate.text(v, flag, required=True, max_len=MAX_FIELD) for v in values]


def _payload(task_id, fields):
    return {"task_id": task_id, **{name: fields[name] for name in sorted(fields)}}


# ---------------------------------------------------------------------------------------
# Recording and acknowledging


def record(conn, task_id, *, from_agent, to_agent="", status="", objective="", evidence=(), constraints=(),
           decisions=(), files=(), commit="", next_actions=(), risks=(), recall_digest="", redact=False,
           allow_secret=False):
    """Record a handoff on a task, superseding its live one; return the handoff dict.

    The dict adds ``deduplicated`` (True when an identical live payload was returned
    instead of writing) and, when the secret guard acted, ``secret_kinds`` and
    ``secret_action``.  Audited ``handoff_recorded`` or ``handoff_deduplicated``.  Raises
    NotFound for an unknown task and Refused for credential-shaped text without a flag
    (only the ``secret_blocked`` event lands).
    """
    # guard_record audits both names as identities
    from_agent = validate.agent(from_agent, "--from-agent", secret_check=False)
    to_agent = validate.agent(to_agent, "--to-agent", secret_check=False) if to_agent else ""
    status = validate.line(status or "", "--status", max_len=MAX_STATUS)
    objective = validate.text(objective or "", "--objective", max_len=MAX_FIELD)
    commit = validate.line(commit or "", "--commit", max_len=MAX_COMMIT)
    recall_digest = validate.digest(recall_digest)
    lists = {
        "evidence": _clean_list(evidence, "evidence"),
        "constraints": _clean_list(constraints, "constraints"),
        "decisions": _clean_list(decisions, "decisions"),
        "files": _clean_list(files, "files"),
        "next_actions": _clean_list(next_actions, "next_actions"),
        "risks": _clean_list(risks, "risks"),
    }
    if redact and allow_secret:
        raise InvalidInput("pass at most one of --redact and --allow-secret")
    with db.write(conn):
        task_id = _require_task(conn, task_id)["id"]
        from mindos.store import guard  # lazy: only writes pay for the detector

        guarded, outcome = guard.guard_record(
            conn, "handoff", task_id,
            {"objective": objective, "status": status, "commit_ref": commit, **lists},
            {"from_agent": from_agent, "to_agent": to_agent},
            redact=redact, allow_secret=allow_secret,
        )
        fields = {"from_agent": from_agent, "to_agent": to_agent, "recall_digest": recall_digest, **guarded}
        payload_hash = sha256_hex(canonical_json(_payload(task_id, fields)))
        previous = live(conn, task_id)
        if previous is not None and previous["payload_hash"] == payload_hash:
            ledger.append_event(conn, "handoff", task_id, "handoff_deduplicated",
                            {"handoff_id": previous["id"], "payload_hash": payload_hash, "from_agent": from_agent})
            previous["deduplicated"] = True
            if outcome:
                previous.update(outcome)
            return previous
        now = clock.now_iso()
        new_id = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM handoffs").fetchone()[0]
        if previous is not None:
            # guarded: lands only on the row that is still live under our write lock
            conn.execute(
                "UPDATE handoffs SET superseded_by = ?, superseded_at = ? WHERE id = ? AND superseded_by IS NULL",
                (new_id, now, previous["id"]),
            )
        conn.execute(
            "INSERT INTO handoffs(id, task_id, from_agent, to_agent, status, objective, evidence, constraints,"
            " decisions, files, commit_ref, next_actions, risks, recall_digest, payload_hash, supersedes, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (new_id, task_id, from_agent, to_agent, fields["status"], fields["objective"],
             *(json.dumps(fields[name]) for name in ("evidence", "constraints", "decisions", "files")),
             fields["commit_ref"], json.dumps(fields["next_actions"]), json.dumps(fields["risks"]),
             recall_digest, payload_hash, previous["id"] if previous else None, now),
        )
        event = {"handoff_id": new_id, "from_agent": from_agent, "to_agent": to_agent, "status": fields["status"],
                 "payload_hash": payload_hash, "supersedes": previous["id"] if previous else None}
        if recall_digest:
            event["recall_digest"] = recall_digest
        if outcome:
            event.update(outcome)
        from mindos.memory import learned  # lazy: writes learn the home's term associations
        learned.after_write(conn)
        ledger.append_event(conn, "handoff", task_id, "handoff_recorded", event)
        handoff = live(conn, task_id)
    handoff["deduplicated"] = False
    if outcome:
        handoff.update(outcome)
    return handoff


def ack(conn, task_id, agent, *, recall_digest=""):
    """Acknowledge the task's live handoff as its recipient; return the handoff dict.

    The dict adds ``already_acked`` (True when it was acked before: nothing changes).
    Only the live handoff's to_agent may ack.  Audited ``handoff_acknowledged`` on the
    first ack only.
    """
    agent = validate.agent(agent, "--agent")
    recall_digest = validate.digest(recall_digest)
    with db.write(conn):
        task_id = _require_task(conn, task_id)["id"]
        target = live(conn, task_id)
        if target is None:
            raise NotFound(f"task '{task_id}' has no live handoff to acknowledge")
        if not target["to_agent"]:
            raise Refused(f"handoff {target['id']} on task '{task_id}' is unaddressed; nobody can acknowledge it")
        if agent != target["to_agent"]:
            raise Refused(f"agent {validate.shown(agent)} cannot acknowledge handoff {target['id']} on task"
                          f" '{task_id}': it is addressed to {validate.shown(target['to_agent'])}")
        if target["acked_by"]:
            target["already_acked"] = True
            return target
        now = clock.now_iso()
        conn.execute(
            "UPDATE handoffs SET acked_by = ?, acked_at = ?, ack_recall_digest = ?"
            " WHERE id = ? AND superseded_by IS NULL AND acked_by = ''",
            (agent, now, recall_digest, target["id"]),
        )
        event = {"handoff_id": target["id"], "agent": agent}
        if recall_digest:
            event["recall_digest"] = recall_digest
        ledger.append_event(conn, "handoff", task_id, "handoff_acknowledged", event)
        handoff = live(conn, task_id)
    handoff["already_acked"] = False
    return handoff


# ---------------------------------------------------------------------------------------
# Reading


def current(conn, task_id):
    """Return the task's live handoff (the recovery point), plus ``task_recap`` (the task's
    recap from ``complete --recap``, '' when none).

    Raises NotFound for an unknown task and for a task without a live handoff, so a
    recovering agent can branch on the exit code.
    """
    task_id = _require_task(conn, task_id)["id"]
    handoff = live(conn, task_id)
    if handoff is None:
        raise NotFound(f"task '{task_id}' has no live handoff")
    handoff["task_recap"] = conn.execute("SELECT recap FROM tasks WHERE id = ?", (task_id,)).fetchone()[0]
    return handoff


def list_for_task(conn, task_id, *, include_superseded=False):
    """The task's live handoff as a 0/1-item list, or with ``include_superseded`` every
    handoff on the task oldest → newest."""
    task_id = _require_task(conn, task_id)["id"]
    sql = "SELECT * FROM handoffs WHERE task_id = ?"
    if not include_superseded:
        sql += " AND superseded_by IS NULL"
    return [row_to_handoff(row) for row in conn.execute(sql + " ORDER BY id", (task_id,))]


def history(conn, handoff_id):
    """The full supersession chain through ``handoff_id``, oldest → newest.

    Returns ``{"handoff_id", "task_id", "length", "live_id", "chain": [handoff dicts]}``;
    ``live_id`` is None when the chain's newest link was itself superseded out of the
    chain (a dangling link) or removed.
    """
    handoff_id = _handoff_id(handoff_id)
    start = conn.execute("SELECT task_id FROM handoffs WHERE id = ?", (handoff_id,)).fetchone()
    if start is None:
        raise NotFound(f"unknown handoff {handoff_id}")
    rows = conn.execute(
        """
        WITH RECURSIVE
            back(id) AS (SELECT ? UNION SELECT h.supersedes FROM handoffs h JOIN back ON h.id = back.id
                         WHERE h.supersedes IS NOT NULL),
            fwd(id) AS (SELECT ? UNION SELECT h.superseded_by FROM handoffs h JOIN fwd ON h.id = fwd.id
                        WHERE h.superseded_by IS NOT NULL)
        SELECT * FROM handoffs WHERE id IN (SELECT id FROM back UNION SELECT id FROM fwd) ORDER BY id
        """,
        (handoff_id, handoff_id),
    ).fetchall()
    chain = [row_to_handoff(row) for row in rows]
    newest = chain[-1]
    return {
        "handoff_id": handoff_id,
        "task_id": start["task_id"],
        "length": len(chain),
        "live_id": newest["id"] if newest["live"] else None,
        "chain": chain,
    }


INBOX_LIMIT_MAX = 100000  # the most handoffs one inbox listing returns (--limit)


def inbox(conn, agent, *, project=None, limit=None, unacked_only=False):
    """Live handoffs addressed to ``agent`` across the fleet, joined with their task state.

    Returns ``{"agent", "count", "unacked", "items": [...]}``, items ordered by task
    priority then newest handoff first.  Each item: handoff_id, task_id, project, title,
    task_status, priority, lease_owner, lease_expires_at, lease_live, from_agent,
    handoff_status, objective, commit_ref, recall_digest, created_at, acked, acked_by,
    acked_at, task_recap (the task's recap, '' when none).
    """
    agent = validate.agent(agent, "--agent")
    where, params = _inbox_where(agent, project, unacked_only)
    sql = (
        "SELECT h.id AS handoff_id, h.task_id, t.project, t.title, t.status AS task_status, t.priority,"
        " t.lease_owner, t.lease_expires_at, h.from_agent, h.status AS handoff_status, h.objective, h.commit_ref,"
        " h.recall_digest, h.created_at, h.acked_by, h.acked_at, t.recap AS task_recap"
        f" FROM handoffs h JOIN tasks t ON t.id = h.task_id WHERE {where}"
        " ORDER BY t.priority, h.created_at DESC, h.id DESC"
    )
    if limit is not None:
        sql += " LIMIT ?"
        params.append(validate.positive_int(limit, "--limit", maximum=INBOX_LIMIT_MAX))
    now = clock.now_iso()
    items = []
    for row in conn.execute(sql, params):
        item = dict(row)
        item["lease_live"] = bool(item["lease_owner"]) and (item["lease_expires_at"] or "") > now
        item["acked"] = bool(item["acked_by"])
        items.append(item)
    return {"agent": agent, "count": len(items), "unacked": sum(not i["acked"] for i in items), "items": items}


def _inbox_where(agent, project, unacked_only):
    """``(WHERE text, params)`` of the inbox of ``agent`` (a checked agent name)."""
    clauses, params = ["h.to_agent = ?", "h.superseded_by IS NULL"], [agent]
    if project:
        clauses.append("t.project = ?")
        params.append(validate.identifier(project, "--project"))
    if unacked_only:
        clauses.append("h.acked_by = ''")
    return " AND ".join(clauses), params


def inbox_scope(conn, agent, *, project=None, unacked_only=False):
    """``(count, projects)`` of what :func:`inbox` would list: how many items and the sorted
    distinct projects of their tasks, counted in SQL without building a row (an agent handed
    thousands of tasks: a caller that reads only the first of them still knows them all)."""
    where, params = _inbox_where(validate.agent(agent, "--agent"), project, unacked_only)
    found = conn.execute(f"SELECT t.project, count(*) FROM handoffs h JOIN tasks t ON t.id = h.task_id WHERE {where}"
                         " GROUP BY t.project ORDER BY t.project", params).fetchall()
    return sum(row[1] for row in found), [row[0] for row in found]


def search(conn, query, *, task=None, from_agent=None, to_agent=None, project=None, include_superseded=False,
           rank=False, limit=20):
    """Keyword search over handoffs' objective/status/from_agent/to_agent.

    Returns a list of handoff dicts, each joined with ``project`` and ``task_title``.  The
    default path is a case-insensitive substring match, newest first; ``rank`` uses the
    handoffs_fts index (all tokens must match, BM25 order) and adds ``score`` (more
    negative = more relevant), degrading to the substring path when FTS5 is absent.
    Blank or tokenless (ranked) queries return [].  Live handoffs only unless
    ``include_superseded``.
    """
    from mindos.store import fts  # lazy: only a search reads the full-text index
    query = validate.text(query, "query", max_len=MAX_QUERY)
    limit = validate.positive_int(limit, "--limit", maximum=10000)
    clauses, params = sql.given([
        ("h.task_id = ?", validate.identifier(task, "--task") if task else None),
        ("h.from_agent = ?", validate.agent(from_agent, "--from-agent") if from_agent else None),
        ("h.to_agent = ?", validate.agent(to_agent, "--to-agent") if to_agent else None),
        ("t.project = ?", validate.identifier(project, "--project") if project else None),
    ])
    if not include_superseded:
        clauses.append("h.superseded_by IS NULL")
    if not query.strip():
        return []
    columns = "h.*, t.project AS project, t.title AS task_title"
    found = fts.text_search(conn, "handoffs_fts", query, select=columns, joins="JOIN tasks t ON t.id = h.task_id",
                            where=clauses, params=params, order="h.created_at DESC, h.id DESC",
                            ranked_order="h.id DESC", rank=rank, limit=limit)
    return [row_to_handoff(row) for row in found]


# ---------------------------------------------------------------------------------------
# The protocol lint


def _sla_hours(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 87600:
        raise InvalidInput("invalid --ack-sla-hours: expected a number of hours from 0 to 87600,"
                           f" got {validate.shown(value, 40)}")
    return value


def _recall_reasons(conn, task_id, digest):
    """Reasons the cited recall digest fails, read from the task's audited recall stream."""
    rows = conn.execute(
        "SELECT id, payload_json FROM audit_events WHERE entity_id = ? AND action IN (?, ?) ORDER BY id",
        (task_id, *RECALL_ACTIONS),
    ).fetchall()
    events = []
    for row in rows:
        try:
            payload = json.loads(row["payload_json"])
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            payload = {}
        events.append((row["id"], payload.get("digest"), payload.get("core_digest")))
    proofs = [e for e in events if digest in (e[1], e[2])]
    if not proofs:
        return ["unproven_recall_digest"]
    # a later recall of the same core context (e.g. the recipient's own recall, whose full
    # digest moved only because this handoff now exists) still proves the same context
    same_context = {digest} | {e[2] for e in proofs if e[2]}
    last_proof = max(e[0] for e in events if e[1] == digest or e[2] in same_context)
    if any(e[0] > last_proof for e in events):
        return ["older_than_latest_recall"]
    return []


def check(conn, *, task=None, ack_sla_hours=24):
    """Lint every live handoff (or the one on ``task``); read-only.

    Returns ``{"ok", "checked", "ack_sla_hours", "counts": {reason: n},
    "problems": [{"task_id", "handoff_id", "to_agent", "reasons": [...]}]}``.
    """
    sla = _sla_hours(ack_sla_hours)
    params = []
    sql = ("SELECT h.*, t.status AS task_status FROM handoffs h JOIN tasks t ON t.id = h.task_id"
           " WHERE h.superseded_by IS NULL")
    if task is not None:
        params.append(_require_task(conn, task, "--task")["id"])
        sql += " AND h.task_id = ?"
    cutoff = clock.shift(clock.now_iso(), -sla * 3600)
    problems, counts, checked = [], dict.fromkeys(CHECK_REASONS, 0), 0
    for row in conn.execute(sql + " ORDER BY h.task_id", params).fetchall():
        checked += 1
        handoff = row_to_handoff(row)
        reasons = []
        if not handoff["to_agent"]:
            reasons.append("unaddressed")
        if not handoff["objective"].strip():
            reasons.append("missing_objective")
        if not handoff["evidence"] and not handoff["next_actions"]:
            reasons.append("sparse_no_evidence_or_next_actions")
        if handoff["recall_digest"]:
            reasons.extend(_recall_reasons(conn, handoff["task_id"], handoff["recall_digest"]))
        if handoff["task_status"] in validate.TERMINAL_STATUSES:
            reasons.append("terminal_task_handoff")
        if handoff["to_agent"] and not handoff["acked_by"] and handoff["created_at"] < cutoff:
            reasons.append("stale_unacknowledged")
        for reason in reasons:
            counts[reason] += 1
        if reasons:
            problems.append({"task_id": handoff["task_id"], "handoff_id": handoff["id"],
                             "to_agent": handoff["to_agent"], "reasons": reasons})
    return {"ok": not problems, "checked": checked, "ack_sla_hours": sla, "counts": counts, "problems": problems}


def metrics(conn):
    """Handoff counters for ``metrics``."""
    row = conn.execute(
        "SELECT count(*), coalesce(sum(superseded_by IS NULL), 0), coalesce(sum(acked_at IS NOT NULL), 0),"
        " coalesce(sum(recall_digest <> ''), 0) FROM handoffs"
    ).fetchone()
    return {
        "handoffs_total": row[0],
        "handoffs_live": row[1],
        "handoffs_acked_total": row[2],
        "handoffs_with_recall_proof": row[3],
    }
