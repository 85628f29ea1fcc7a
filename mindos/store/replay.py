"""Idempotent retries: ``--request-id KEY`` remembers the first result of a write.

An agent whose process died after the commit but before it read the answer cannot tell
whether its ``create``, ``receipt``, ``note``, ``handoff`` or ``next --claim`` happened.  With
a request id it simply retries: the same key from the same actor returns the original
result, flagged ``replayed: true``, instead of a second task, receipt, note, handoff or
lease.

Design decisions
  * The lookup, the effect and the remembered result share one write transaction
    (:func:`run`), so two concurrent retries cannot both act: the second waits for the
    write lock and then finds the first one's answer.
  * A key is scoped to its actor (the owner, source or sending agent) and bound to the
    command and a digest of its arguments: reusing a key for a different request is a
    Conflict, never a silent replay of something else.
  * Only successful results are remembered; a refusal changes nothing, so a retry is
    evaluated afresh.
"""

import json
import re

from mindos.core import canonical, clock, validate
from mindos.errors import Conflict, InvalidInput
from mindos.store import db

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")


def check_key(value, flag="--request-id"):
    """A request id: 1-128 characters of A-Z a-z 0-9 . _ : -, starting alphanumeric, and not
    credential-shaped (it is stored with the result it replays)."""
    if not isinstance(value, str) or not _KEY.match(value):
        raise InvalidInput(f"invalid {flag}: use 1-128 characters of A-Z a-z 0-9 . _ : -, starting with a letter"
                           " or digit")
    return validate.not_secret(value, flag)


def run(conn, actor, request_id, command, arguments, act):
    """Run ``act()`` once per ``(actor, request_id)``; return ``(result, replayed)``.

    ``arguments`` (a JSON-able dict) must match the first call's; ``act`` returns a
    JSON-able dict or list and must do its writes through ``db.write`` (they join this
    transaction).
    """
    request_id = check_key(request_id)
    digest = canonical.digest({"command": command, "arguments": arguments})
    with db.write(conn):
        row = conn.execute("SELECT command, args_digest, result_json FROM request_replays"
                           " WHERE actor = ? AND request_id = ?", (actor, request_id)).fetchone()
        if row is not None:
            if row["command"] != command or row["args_digest"] != digest:
                raise Conflict(f"request id {request_id!r} was already used by {actor or 'this caller'!r} for a"
                               f" different {row['command']} request; use a new request id")
            return json.loads(row["result_json"]), True
        result = act()
        conn.execute("INSERT INTO request_replays(actor, request_id, command, args_digest, result_json, created_at)"
                     " VALUES (?, ?, ?, ?, ?, ?)",
                     (actor, request_id, command, digest, json.dumps(result, sort_keys=True), clock.now_iso()))
        return result, False
