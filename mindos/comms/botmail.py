"""Botmail: the provider-neutral envelope between bots, checked before it is accepted.

Bots (Hermes, DSH, OpenCode, Codex, Claude Code, ...) talk to each other through one
envelope format; a delivery either lands once or is refused with a reason, and every
attempt leaves a receipt.  Bot chat is its own channel: it is never a user relay, a handoff
or a task receipt (those have their own commands and audit trails).

The envelope (JSON object, format ``mindos.botmail/1``)::

    {"format": "mindos.botmail/1", "id": "<sender's idempotency key>", "from": "<bot>",
     "to": "<bot>", "profile": "<profile scope>", "class": "chat|status|question|answer|alert",
     "body": "<text>", "thread": "<optional>", "epoch": <capability epoch>,
     "sent_at": "<ISO 8601>", "expires_at": "<ISO 8601 or null>",
     "provenance": {"harness": "<hermes|dsh|opencode|codex|claude-code|other>", ...},
     "digest": "<sha256 of the canonical envelope without digest>"}

Design decisions
  * **Checked in one order, one reason each** (every reason has a test):
    ``malformed`` (not an envelope of this format) -> ``id_reuse`` (the sender's id was
    already accepted for a different envelope) -> ``unknown_peer`` (no allowlist entry for
    this sender at this recipient) -> ``peer_revoked`` -> ``provenance`` (unknown harness,
    or the digest does not match the envelope) -> ``clock_skew`` (sent in the future) ->
    ``capability_epoch`` (not the entry's current epoch) -> ``profile_scope`` (not the
    entry's profile) -> ``content_class`` (not allowed to this peer; the reserved classes
    ``user_relay``, ``handoff``, ``task_receipt`` never are) -> ``too_large`` ->
    ``secret`` (credential-shaped body or thread) -> (a past ``expires_at``: ``expired``) ->
    ``replay_budget`` (the peer's accepted messages in its window are used up).
  * **Idempotent delivery.**  ``(sender, id)`` is unique: the same envelope delivered again
    is a ``duplicate`` (pointing at the first delivery), never a second message.  A
    past ``expires_at`` is ``expired``; a delivery the store cannot complete is ``failed``.
    Each outcome is a receipt row and a ``botmail_<outcome>`` audit event, written in the
    delivery's own transaction.
  * **Capability epochs.**  Any change to a peer's entry (profile, classes, budget) and any
    revocation bump its epoch, so envelopes minted under the old capabilities are refused.
  * **Bounded, redacted, profile-scoped context.**  :func:`context` packs a recipient's
    messages of one profile, newest first, within a character budget, every string
    redacted, sealed with a digest.
"""

import json

from mindos.core import canonical, clock, secrets, validate
from mindos.errors import InvalidInput, MindosError, NotFound, Refused
from mindos.store import db, ledger

FORMAT = "mindos.botmail/1"
HARNESSES = ("hermes", "dsh", "opencode", "codex", "claude-code", "other")
CONTENT_CLASSES = ("chat", "status", "question", "answer", "alert")
RESERVED_CLASSES = ("user_relay", "handoff", "task_receipt")
OUTCOMES = ("accepted", "rejected", "duplicate", "expired", "failed")
REASONS = ("malformed", "id_reuse", "unknown_peer", "peer_revoked", "provenance", "clock_skew",
           "capability_epoch", "profile_scope", "content_class", "too_large", "secret", "replay_budget")
MAX_BODY = 16384
MAX_SKEW_SECONDS = 300
DEFAULT_REPLAY_BUDGET = 60
DEFAULT_WINDOW_SECONDS = 3600
DEFAULT_CONTEXT_BUDGET = 2000
_FIELDS = {"format", "id", "from", "to", "profile", "class", "body", "thread", "epoch", "sent_at", "expires_at",
           "provenance", "digest"}
_REQUIRED = ("format", "id", "from", "to", "profile", "class", "body", "epoch", "sent_at", "provenance", "digest")


class _Reject(Exception):
    def __init__(self, reason, detail):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


# ---------------------------------------------------------------------------------------
# Envelopes


def envelope_digest(envelope):
    """SHA-256 of the canonical envelope without its ``digest`` field."""
    return canonical.digest({k: v for k, v in envelope.items() if k != "digest"})


def compose(sender, recipient, profile, body, *, klass="chat", epoch, harness, thread="", envelope_id=None,
            ttl_seconds=None, session=""):
    """A sealed envelope ready to deliver (``id`` random unless given: reuse it to retry)."""
    import os  # lazy: only a composed envelope needs a fresh id

    now = clock.now_iso()
    envelope = {
        "format": FORMAT, "id": envelope_id or f"bm-{os.urandom(8).hex()}", "from": sender, "to": recipient,
        "profile": profile, "class": klass, "body": body, "thread": thread, "epoch": epoch, "sent_at": now,
        "expires_at": clock.shift(now, ttl_seconds) if ttl_seconds else None,
        "provenance": {"harness": harness, **({"session": session} if session else {})},
    }
    envelope["digest"] = envelope_digest(envelope)
    return envelope


def _shape(envelope):
    """Refuse anything that is not a well-formed envelope (reason ``malformed``)."""
    if not isinstance(envelope, dict):
        raise _Reject("malformed", "the envelope must be a JSON object")
    unknown = sorted(set(envelope) - _FIELDS)
    if unknown:
        raise _Reject("malformed", f"unknown envelope field {unknown[0]!r}")
    missing = [name for name in _REQUIRED if name not in envelope]
    if missing:
        raise _Reject("malformed", f"missing envelope field {missing[0]!r}")
    if envelope["format"] != FORMAT:
        raise _Reject("malformed", f"format must be {FORMAT!r}")
    try:
        validate.identifier(envelope["id"], "id")
        validate.agent(envelope["from"], "from")
        validate.agent(envelope["to"], "to")
        validate.identifier(envelope["profile"], "profile")
        validate.text(envelope["body"], "body", required=True, max_len=10 * MAX_BODY)
        validate.line(envelope.get("thread", "") or "", "thread", max_len=200)
        clock.normalize(envelope["sent_at"], "sent_at")
        if envelope.get("expires_at") is not None:
            clock.normalize(envelope["expires_at"], "expires_at")
    except InvalidInput as exc:
        raise _Reject("malformed", str(exc)) from None
    if not isinstance(envelope["class"], str) or not envelope["class"]:
        raise _Reject("malformed", "class must be a non-empty string")
    try:
        validate.line(envelope["class"], "class", max_len=64)
    except InvalidInput as exc:
        raise _Reject("malformed", str(exc)) from None
    if isinstance(envelope["epoch"], bool) or not isinstance(envelope["epoch"], int) or envelope["epoch"] < 0:
        raise _Reject("malformed", "epoch must be a non-negative integer")
    if not isinstance(envelope["provenance"], dict):
        raise _Reject("malformed", "provenance must be an object")
    if not isinstance(envelope["digest"], str):
        raise _Reject("malformed", "digest must be a string")


def _parse(envelope):
    if isinstance(envelope, str):
        try:
            envelope = canonical.loads_strict(envelope, "--envelope")
        except InvalidInput as exc:
            raise _Reject("malformed", str(exc)) from None
    _shape(envelope)
    return envelope


# ---------------------------------------------------------------------------------------
# The peer allowlist


def _peer_row(conn, recipient, peer):
    return conn.execute("SELECT * FROM botmail_peers WHERE recipient = ? AND peer = ?", (recipient, peer)).fetchone()


def _peer_dict(row):
    peer = dict(row)
    peer["classes"] = json.loads(peer["classes"])
    peer["revoked"] = peer["revoked_at"] is not None
    return peer


def allow_peer(conn, recipient, peer, *, profile, classes=("chat",), replay_budget=DEFAULT_REPLAY_BUDGET,
               window_seconds=DEFAULT_WINDOW_SECONDS):
    """Allow ``peer`` to write to ``recipient`` in ``profile`` with ``classes``; return the entry.

    A new entry starts at epoch 1; any change to an existing one (or re-allowing a revoked
    one) bumps the epoch; an identical call changes nothing (``changed: false``).  Audited
    ``botmail_peer_allowed``.
    """
    recipient = validate.agent(recipient, "--recipient")
    peer = validate.agent(peer, "--peer")
    profile = validate.identifier(profile, "--profile")
    classes = sorted(set(classes or ()))
    if not classes:
        raise InvalidInput("invalid --class: at least one content class is required")
    for klass in classes:
        if klass not in CONTENT_CLASSES:
            raise InvalidInput(f"invalid --class: {validate.shown(klass, 30)} (choose from {', '.join(CONTENT_CLASSES)};"
                               " handoffs, task receipts and user relay are not bot chat)")
    replay_budget = validate.positive_int(replay_budget, "--replay-budget", maximum=100000)
    window_seconds = validate.positive_int(window_seconds, "--window-seconds", maximum=30 * 86400)
    with db.write(conn):
        now = clock.now_iso()
        row = _peer_row(conn, recipient, peer)
        wanted = (profile, canonical.canonical_json(classes), replay_budget, window_seconds)
        if row is None:
            conn.execute(
                "INSERT INTO botmail_peers(recipient, peer, profile, classes, epoch, replay_budget,"
                " replay_window_seconds, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?)",
                (recipient, peer, *wanted, now, now))
        elif (row["profile"], row["classes"], row["replay_budget"], row["replay_window_seconds"]) == wanted \
                and row["revoked_at"] is None:
            return {**_peer_dict(row), "changed": False}
        else:
            conn.execute(
                "UPDATE botmail_peers SET profile = ?, classes = ?, replay_budget = ?, replay_window_seconds = ?,"
                " epoch = epoch + 1, revoked_at = NULL, updated_at = ? WHERE recipient = ? AND peer = ?",
                (*wanted, now, recipient, peer))
        entry = _peer_dict(_peer_row(conn, recipient, peer))
        ledger.append_event(conn, "botmail_peer", f"{recipient}<-{peer}", "botmail_peer_allowed",
                            {"profile": profile, "classes": classes, "epoch": entry["epoch"],
                             "replay_budget": replay_budget, "window_seconds": window_seconds})
    return {**entry, "changed": True}


def revoke_peer(conn, recipient, peer):
    """Revoke ``peer`` at ``recipient`` (bumps the epoch; idempotent); return the entry."""
    recipient = validate.agent(recipient, "--recipient")
    peer = validate.agent(peer, "--peer")
    with db.write(conn):
        row = _peer_row(conn, recipient, peer)
        if row is None:
            raise NotFound(f"no botmail peer '{peer}' at '{recipient}'")
        if row["revoked_at"] is not None:
            return {**_peer_dict(row), "changed": False}
        conn.execute("UPDATE botmail_peers SET revoked_at = ?, epoch = epoch + 1, updated_at = ?"
                     " WHERE recipient = ? AND peer = ?", (clock.now_iso(), clock.now_iso(), recipient, peer))
        entry = _peer_dict(_peer_row(conn, recipient, peer))
        ledger.append_event(conn, "botmail_peer", f"{recipient}<-{peer}", "botmail_peer_revoked",
                            {"epoch": entry["epoch"]})
    return {**entry, "changed": True}


def peers(conn, recipient=None):
    """Allowlist entries (of ``recipient``), ordered by recipient then peer."""
    sql, params = "SELECT * FROM botmail_peers", ()
    if recipient is not None:
        sql, params = sql + " WHERE recipient = ?", (validate.agent(recipient, "--recipient"),)
    return [_peer_dict(row) for row in conn.execute(sql + " ORDER BY recipient, peer", params)]


def current_epoch(conn, recipient, peer):
    """The epoch a local sender should stamp (0 when there is no entry: it will be refused)."""
    row = _peer_row(conn, recipient, peer)
    return row["epoch"] if row else 0


# ---------------------------------------------------------------------------------------
# Delivery


def _check(conn, envelope, digest, now):
    """Run the checks after the shape; return ``(outcome, reason, detail, message_id)``."""
    sender, recipient = envelope["from"], envelope["to"]
    prior = conn.execute("SELECT id, envelope_hash FROM botmail WHERE sender = ? AND envelope_id = ?",
                         (sender, envelope["id"])).fetchone()
    if prior is not None:
        if prior["envelope_hash"] == digest:
            return "duplicate", "", "already delivered", prior["id"]
        raise _Reject("id_reuse", "this sender already used this id for a different envelope")
    row = _peer_row(conn, recipient, sender)
    if row is None:
        raise _Reject("unknown_peer", f"'{sender}' is not an allowed peer of '{recipient}'")
    if row["revoked_at"] is not None:
        raise _Reject("peer_revoked", f"'{sender}' was revoked at '{recipient}'")
    harness = envelope["provenance"].get("harness")
    if harness not in HARNESSES:
        raise _Reject("provenance", f"provenance.harness must be one of {', '.join(HARNESSES)}")
    if envelope["digest"] != digest:
        raise _Reject("provenance", "the digest does not match the envelope (altered in transit?)")
    if clock.seconds_between(now, clock.normalize(envelope["sent_at"], "sent_at")) > MAX_SKEW_SECONDS:
        raise _Reject("clock_skew", f"sent_at is more than {MAX_SKEW_SECONDS} seconds in the future")
    if envelope["epoch"] != row["epoch"]:
        raise _Reject("capability_epoch", f"epoch {envelope['epoch']} is not the peer's current epoch")
    if envelope["profile"] != row["profile"]:
        raise _Reject("profile_scope", f"this peer may write only in profile '{row['profile']}'")
    klass = envelope["class"]
    if klass in RESERVED_CLASSES:
        raise _Reject("content_class", f"'{klass}' is not bot chat: use its own channel (handoff, receipt, relay)")
    if klass not in json.loads(row["classes"]):
        raise _Reject("content_class", f"class '{klass}' is not allowed for this peer")
    if len(envelope["body"]) > MAX_BODY:
        raise _Reject("too_large", f"body is over {MAX_BODY} characters")
    kinds = secrets.scan(envelope["body"]) + secrets.scan(envelope.get("thread") or "") \
        + secrets.scan(envelope["id"]) + secrets.scan(canonical.canonical_json(envelope["provenance"]))
    if kinds:
        raise _Reject("secret", "credential-shaped content: " + ", ".join(sorted(set(kinds))))
    if envelope.get("expires_at") and clock.normalize(envelope["expires_at"], "expires_at") <= now:
        return "expired", "", "expired before delivery", None
    since = clock.shift(now, -row["replay_window_seconds"])
    used = conn.execute("SELECT count(*) FROM botmail WHERE recipient = ? AND sender = ? AND delivered_at > ?",
                        (recipient, sender, since)).fetchone()[0]
    if used >= row["replay_budget"]:
        raise _Reject("replay_budget", f"{used} messages in the last {row['replay_window_seconds']} seconds"
                                       f" (budget {row['replay_budget']})")
    return "accepted", "", "", None


def _receipt(conn, envelope, outcome, reason, detail, message_id, digest):
    """Record one receipt row and its audit event; return the receipt dict."""
    env = envelope if isinstance(envelope, dict) else {}
    ids = {key: (env.get(key) if isinstance(env.get(key), str) else "")[:64] for key in ("id", "from", "to")}
    # an id that is credential-shaped or holds a line break is left out of the record (an id
    # can be neither redacted nor kept, and a second line would forge a listing's row)
    ids = {key: "" if value and (secrets.scan(value) or not validate.single_line(value)) else value for key, value in ids.items()}
    detail = secrets.redact(detail)[0] if secrets.scan(detail) else detail
    if not detail.isprintable():  # a rejected value quoted in the reason: its controls as escapes
        from mindos.core.text import inert  # lazy: only such a detail pays for it

        detail = inert(detail)
    now = clock.now_iso()
    cursor = conn.execute(
        "INSERT INTO botmail_receipts(envelope_id, sender, recipient, outcome, reason, detail, message_id,"
        " envelope_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (ids["id"], ids["from"], ids["to"], outcome, reason, detail, message_id, digest, now))
    receipt = {"receipt_id": cursor.lastrowid, "envelope_id": ids["id"], "sender": ids["from"],
               "recipient": ids["to"], "outcome": outcome, "reason": reason, "detail": detail,
               "message_id": message_id, "envelope_hash": digest, "created_at": now}
    ledger.append_event(conn, "botmail", ids["id"] or "-", f"botmail_{outcome}",
                        {k: receipt[k] for k in ("sender", "recipient", "reason", "message_id", "envelope_hash")})
    return receipt


def deliver(conn, envelope):
    """Deliver one envelope (dict or JSON text); return its receipt.

    Receipt: ``{"receipt_id", "envelope_id", "sender", "recipient", "outcome", "reason",
    "detail", "message_id", "envelope_hash", "created_at"}``; ``outcome`` is one of
    :data:`OUTCOMES`, ``reason`` one of :data:`REASONS` for a rejection.  Never raises for a
    bad envelope: that is a ``rejected`` receipt.
    """
    digest = ""
    try:
        with db.write(conn):
            now = clock.now_iso()
            try:
                envelope = _parse(envelope)
                digest = envelope_digest(envelope)
                outcome, reason, detail, message_id = _check(conn, envelope, digest, now)
            except _Reject as rejected:
                return _receipt(conn, envelope, "rejected", rejected.reason, rejected.detail, None, digest)
            if outcome == "accepted":
                message_id = conn.execute(
                    "INSERT INTO botmail(envelope_id, sender, recipient, profile, class, body, thread, epoch,"
                    " harness, provenance, envelope_hash, sent_at, expires_at, delivered_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (envelope["id"], envelope["from"], envelope["to"], envelope["profile"], envelope["class"],
                     envelope["body"], envelope.get("thread") or "", envelope["epoch"],
                     envelope["provenance"]["harness"], canonical.canonical_json(envelope["provenance"]), digest,
                     clock.normalize(envelope["sent_at"], "sent_at"),
                     clock.normalize(envelope["expires_at"], "expires_at") if envelope.get("expires_at") else None,
                     now)).lastrowid
            return _receipt(conn, envelope, outcome, reason, detail, message_id, digest)
    except MindosError as exc:  # the store could not complete the delivery: a failed receipt
        failed = {"receipt_id": None, "envelope_id": "", "sender": "", "recipient": "", "outcome": "failed",
                  "reason": "", "detail": str(exc), "message_id": None, "envelope_hash": digest,
                  "created_at": clock.now_iso()}
        try:
            with db.write(conn):
                failed = _receipt(conn, envelope, "failed", "", str(exc), None, digest)
        except MindosError:
            pass  # the store is unavailable: the caller still gets its failed receipt
        return failed


# ---------------------------------------------------------------------------------------
# Reading


def _message(row):
    message = dict(row)
    message["provenance"] = json.loads(message["provenance"])
    message["acked"] = message["acked_at"] is not None
    if secrets.scan(message["body"]):  # belt and braces: stored bodies passed the guard
        message["body"] = secrets.redact(message["body"])[0]
    return message


def inbox(conn, recipient, *, profile=None, unacked_only=False, limit=50):
    """Messages delivered to ``recipient`` (in ``profile``), newest first.

    Returns ``{"recipient", "count", "unacked", "messages": [...]}``.
    """
    recipient = validate.agent(recipient, "--recipient")
    clauses, params = ["recipient = ?"], [recipient]
    if profile is not None:
        clauses.append("profile = ?")
        params.append(validate.identifier(profile, "--profile"))
    if unacked_only:
        clauses.append("acked_at IS NULL")
    limit = validate.positive_int(limit, "--limit", maximum=10000)
    rows = conn.execute(f"SELECT * FROM botmail WHERE {' AND '.join(clauses)} ORDER BY id DESC LIMIT ?",
                        (*params, limit)).fetchall()
    messages = [_message(row) for row in rows]
    return {"recipient": recipient, "count": len(messages), "unacked": sum(not m["acked"] for m in messages),
            "messages": messages}


def ack(conn, message_id, recipient):
    """Acknowledge a delivered message as its recipient (idempotent); return the message."""
    recipient = validate.agent(recipient, "--recipient")
    if isinstance(message_id, str):
        message_id = validate.integer(message_id, "message id")  # ASCII digits only
    message_id = validate.positive_int(message_id, "message id")
    with db.write(conn):
        row = conn.execute("SELECT * FROM botmail WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            raise NotFound(f"unknown botmail message {message_id}")
        if row["recipient"] != recipient:
            raise Refused(f"message {message_id} is addressed to '{row['recipient']}', not '{recipient}'")
        if row["acked_at"] is not None:
            return {**_message(row), "already_acked": True}
        conn.execute("UPDATE botmail SET acked_at = ? WHERE id = ?", (clock.now_iso(), message_id))
        ledger.append_event(conn, "botmail", row["envelope_id"], "botmail_acked",
                            {"message_id": message_id, "recipient": recipient})
        row = conn.execute("SELECT * FROM botmail WHERE id = ?", (message_id,)).fetchone()
    return {**_message(row), "already_acked": False}


def receipts(conn, *, sender=None, recipient=None, outcome=None, envelope_id=None, limit=50):
    """Delivery receipts, newest first, filtered by sender / recipient / outcome / envelope id."""
    clauses, params = [], []
    for column, value, check in (("sender", sender, validate.agent), ("recipient", recipient, validate.agent),
                                 ("envelope_id", envelope_id, validate.identifier)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(check(value, f"--{column.replace('_', '-')}"))
    if outcome is not None:
        if outcome not in OUTCOMES:
            raise InvalidInput(f"invalid --outcome: {validate.shown(outcome, 20)} (choose from {', '.join(OUTCOMES)})")
        clauses.append("outcome = ?")
        params.append(outcome)
    limit = validate.positive_int(limit, "--limit", maximum=10000)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    return [dict(row) for row in conn.execute(f"SELECT * FROM botmail_receipts{where} ORDER BY id DESC LIMIT ?",
                                              (*params, limit))]


def context(conn, recipient, profile, *, budget=DEFAULT_CONTEXT_BUDGET, limit=200):
    """The bounded, redacted bot-chat context of ``recipient`` in ``profile``; read-only.

    The newest messages that fit ``budget`` characters (each costs its canonical JSON), shown
    oldest first, with a digest over them.  Returns ``{"recipient", "profile", "budget",
    "used_chars", "truncated", "messages", "digest"}``.
    """
    from mindos.context.builder import Budget  # lazy: the one budget accounting of every pack

    recipient = validate.agent(recipient, "--recipient")
    profile = validate.identifier(profile, "--profile")
    budget = validate.positive_int(budget, "--budget", maximum=10_000_000)
    meter = Budget(budget)
    packed = []
    for row in conn.execute("SELECT id, sender, class, thread, body, sent_at FROM botmail"
                            " WHERE recipient = ? AND profile = ? ORDER BY id DESC LIMIT ?",
                            (recipient, profile, limit)):
        item = {key: row[key] for key in ("id", "sender", "class", "thread", "body", "sent_at")}
        if secrets.scan(item["body"]):
            item["body"] = secrets.redact(item["body"])[0]
        if not meter.take(item):
            break  # newest first: once one does not fit, older ones are left out (no gaps)
        packed.append(item)
    packed.reverse()
    return {"recipient": recipient, "profile": profile, "budget": budget, "used_chars": meter.used,
            "truncated": meter.truncated, "messages": packed, "digest": canonical.digest(packed)}
