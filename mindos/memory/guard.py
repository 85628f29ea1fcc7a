"""The secret guard: the privacy boundary on every write that stores agent text.

Credentials never enter shared memory.  Each write path passes its fields through
:func:`guard` inside its write transaction: the detector (:mod:`mindos.core.secrets`)
names what it finds by kind, and the write is refused (``secret_blocked``, recorded even
though the write rolls back), stored redacted (``secret_redacted``) or, on an explicit
override, stored verbatim (``secret_allowed``).  :func:`sweep` finds what is already
stored; :func:`metrics` counts the outcomes.
"""

import json

from mindos.core import secrets
from mindos.errors import InvalidInput, Refused
from mindos.store import ledger


def guard(conn, entity_type, entity_id, fields, *, redact=False, allow_secret=False):
    """Enforce the privacy boundary on ``fields`` (name -> str or list of str); call inside ``db.write``.

    Returns ``(fields, outcome)``.  No findings: ``(fields, None)``.  Findings and no flag:
    records ``secret_blocked`` (kinds + field names) via ``ledger.append_refusal`` and raises
    Refused.  ``redact``: returns redacted copies and audits ``secret_redacted``;
    ``allow_secret``: returns the fields unchanged and audits ``secret_allowed``.  outcome is
    ``{"secret_kinds": [...], "secret_action": "redacted" | "allowed"}``.
    """
    return guard_record(conn, entity_type, entity_id, fields, {}, redact=redact, allow_secret=allow_secret)


def guard_record(conn, entity_type, entity_id, fields, identities, *, redact=False, allow_secret=False):
    """:func:`guard` for a row that also names agents: ``identities`` (name -> agent/source id).

    A credential-shaped identity is refused whatever the flags (an id cannot hold a
    ``[REDACTED:<kind>]`` label, and an override would plant the credential in every event
    and listing that names the agent): ``secret_blocked`` records the kinds and every
    flagged field name, then Refused is raised.  Otherwise behaves exactly like
    :func:`guard` on ``fields``.  Call inside ``db.write``.
    """
    if redact and allow_secret:
        raise InvalidInput("pass at most one of --redact and --allow-secret")
    id_kinds, id_flagged = _row_findings(identities)
    kinds, flagged = _row_findings(fields)
    if id_kinds:
        payload = {"kinds": sorted(set(id_kinds) | set(kinds)), "fields": sorted(id_flagged + flagged)}
        ledger.append_refusal(conn, entity_type, entity_id, "secret_blocked", payload)
        raise Refused(
            f"secret guard: refused a credential-shaped agent name ({', '.join(id_kinds)}) in "
            f"{', '.join(id_flagged)}; an id cannot be redacted or allowed, use a plain agent name", code="secret_blocked"
        )
    if not kinds:
        return fields, None
    payload = {"kinds": kinds, "fields": flagged}
    if not redact and not allow_secret:
        ledger.append_refusal(conn, entity_type, entity_id, "secret_blocked", payload)
        raise Refused(
            f"secret guard: refused to store credential-shaped content ({', '.join(kinds)}) in "
            f"{', '.join(flagged)}; pass --redact to store a [REDACTED:<kind>] copy or "
            "--allow-secret to store it verbatim (audited)", code="secret_blocked"
        )
    if allow_secret:
        ledger.append_event(conn, entity_type, entity_id, "secret_allowed", payload)
        return fields, {"secret_kinds": kinds, "secret_action": "allowed"}
    cleaned = {}
    for name, value in fields.items():
        if isinstance(value, str):
            cleaned[name] = secrets.redact(value)[0]
        elif value is None:
            cleaned[name] = value
        else:
            cleaned[name] = [secrets.redact(item)[0] if isinstance(item, str) else item for item in value]
    ledger.append_event(conn, entity_type, entity_id, "secret_redacted", payload)
    return cleaned, {"secret_kinds": kinds, "secret_action": "redacted"}


def _row_findings(fields):
    kinds, names = set(), []
    for name, value in fields.items():
        hit = set()
        for text in secrets.texts(value):
            hit.update(secrets.scan(text))
        if hit:
            kinds |= hit
            names.append(name)
    return sorted(kinds), sorted(names)


_HANDOFF_LISTS = ("evidence", "constraints", "decisions", "files", "next_actions", "risks")
# agent names a handoff row stores (acked_by can only ever equal to_agent, but legacy rows are swept too)
_HANDOFF_IDENTITIES = ("from_agent", "to_agent", "acked_by")


def sweep(conn, *, include_all=False):
    """Read-only fleet sweep of live notes and handoffs (``include_all``: superseded rows too).

    Every stored text is scanned: note content and source; handoff objective, status,
    commit, list fields and agent names (from_agent, to_agent, acked_by).

    Returns ``{"findings": [{"table", "id", "task_id", "kinds", "fields", "superseded"}],
    "findings_total", "by_kind", "notes_scanned", "handoffs_scanned", "include_superseded"}``.
    Findings name kinds and row ids only, never values.
    """

    live = "" if include_all else " WHERE superseded_by IS NULL"
    findings, by_kind, scanned = [], {}, {"notes": 0, "handoffs": 0}
    rows = conn.execute(f"SELECT id, task_id, content, source, superseded_by FROM notes{live} ORDER BY id")
    for row in rows:
        scanned["notes"] += 1
        kinds, names = _row_findings({"content": row["content"], "source": row["source"]})
        if kinds:
            findings.append({"table": "notes", "id": row["id"], "task_id": row["task_id"], "kinds": kinds,
                             "fields": names, "superseded": row["superseded_by"] is not None})
    scalars = ("objective", "status", "commit_ref", *_HANDOFF_IDENTITIES)
    columns = ", ".join((*scalars, *_HANDOFF_LISTS))
    rows = conn.execute(f"SELECT id, task_id, superseded_by, {columns} FROM handoffs{live} ORDER BY id")
    for row in rows:
        scanned["handoffs"] += 1
        fields = {name: row[name] for name in scalars}
        for name in _HANDOFF_LISTS:
            try:
                value = json.loads(row[name] or "[]")
            except ValueError:
                value = row[name]  # a malformed legacy list is still text worth scanning
            fields[name] = value if isinstance(value, (str, list)) else str(value)
        kinds, names = _row_findings(fields)
        if kinds:
            findings.append({"table": "handoffs", "id": row["id"], "task_id": row["task_id"], "kinds": kinds,
                             "fields": names, "superseded": row["superseded_by"] is not None})
    for item in findings:
        for found in item["kinds"]:
            by_kind[found] = by_kind.get(found, 0) + 1
    return {"findings": findings, "findings_total": len(findings), "by_kind": by_kind,
            "notes_scanned": scanned["notes"], "handoffs_scanned": scanned["handoffs"],
            "include_superseded": bool(include_all)}


def metrics(conn):
    """Secret-guard counters for ``metrics`` (audit events by outcome)."""
    return {
        "secrets_blocked_total": ledger.count_action(conn, "secret_blocked"),
        "secrets_redacted_total": ledger.count_action(conn, "secret_redacted"),
        "secrets_allowed_total": ledger.count_action(conn, "secret_allowed"),
    }
