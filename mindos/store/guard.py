"""The secret guard's write side: refuse, redact or allow credential-shaped fields, audited.

The privacy boundary on every write that stores agent text.  It lives in the store (below
work and memory) so every dimension can call it inside its own write transaction: tasks,
leases, lifecycle reasons, receipts and approvals as well as notes and handoffs.  The
detector itself is pure (:mod:`mindos.core.secrets`); what is recorded is the kinds and
field names, never a value.  :mod:`mindos.memory.secret_sweep` adds the read-only sweep.
"""

from mindos.core import secret_gate
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
    from mindos.core import secrets  # lazy: only a row with findings loads the detector here

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
    """``(kinds, flagged field names)`` of a row's fields (name -> str or list of str)."""
    kinds, names = set(), []
    for name, value in fields.items():
        hit = set()
        for text in secret_gate.texts(value):
            # a plain text is cleared by the gate without loading the detector (a clean text
            # holds no "://", so it holds no URL userinfo either)
            if secret_gate.clean(text):
                continue
            from mindos.core import secrets  # lazy: ~7.6M instructions to load and build

            hit.update(secrets.scan(text))
            if name.endswith("url") and secrets.url_userinfo(text):
                hit.add("url_credentials")  # a PR or repository URL never needs user:password@
        if hit:
            kinds |= hit
            names.append(name)
    return sorted(kinds), sorted(names)



def check(conn, entity_type, entity_id, fields, identities=None):
    """Refuse (``secret_blocked``, audited) credential-shaped ``fields`` or ``identities`` of a
    write that offers no override; call inside ``db.write``.  Returns nothing."""
    guard_record(conn, entity_type, entity_id, fields, identities or {})
