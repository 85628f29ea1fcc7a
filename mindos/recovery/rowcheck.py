"""Rows loaded from an artifact pass the rules rows written by commands pass.

A seal proves a file is what some writer sealed, not that the writer was MindOS: a resealed
snapshot could carry a task in status ``bogus_status``, a lease for "mallory" until 2999 or a
title holding a newline and ESC, and a restore would load them as they are.  Before any row
of a snapshot, archive or work order is inserted, :func:`check_blocks` runs every row of the
tables below through the validators of the write path (:mod:`mindos.core.validate`: status
and priority enums, the id, agent and tag charsets, one-line and free-text rules, timestamps
in storage form) plus the row rules no single field shows (a lease's owner, status and
expiry agree), and refuses the whole artifact at the first invalid row, naming the table,
the row and the field.  Every table, known or not, also gets the storage rules (text is
UTF-8 without NUL), and :func:`guard_blocks` runs the secret guard over every text value of
an unsigned artifact (one whose text no home this one trusts has guarded).

Foreign keys are checked by SQLite after the load (inside the restore's transaction) and the
audit ledger by re-deriving its chain, so neither is repeated here.
"""

import json

from mindos.core import clock, validate
from mindos.errors import IntegrityError, InvalidInput


def _optional(rule):
    def check(value, field):
        return None if value is None else rule(value, field)
    return check


def _empty_or(rule):
    def check(value, field):
        return value if value == "" else rule(value, field)
    return check


def _timestamp(value, field):
    if not isinstance(value, str) or clock.normalize(value, field) != value:
        raise InvalidInput(f"{field} is not a timestamp in storage form ({validate.shown(value, 40)})")
    return value


def _integer(minimum=None, maximum=None):
    def check(value, field):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidInput(f"{field} is not an integer ({validate.shown(value, 40)})")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise InvalidInput(f"{field} is out of range ({value})")
        return value
    return check


def _json_list(item):
    def check(value, field):
        try:
            items = json.loads(value) if isinstance(value, str) else None
        except ValueError:
            items = None
        if not isinstance(items, list):
            raise InvalidInput(f"{field} is not a JSON list")
        for each in items:
            item(each, field)
        return value
    return check


def _text(max_len=validate.MAX_TEXT):
    return lambda value, field: validate.text(value, field, max_len=max_len)


def _line(max_len=4096):
    return lambda value, field: validate.line(value, field, max_len=max_len)


def _hex_or_empty(value, field):
    return validate.digest(value, field) if value else value


def _receipt_path(value, field):
    """A receipt row's file: ``receipts/<id>.json`` inside the home, nothing else."""
    from mindos.recovery.artifacts import RECEIPT_PATH  # lazy: the one confinement rule

    if not isinstance(value, str) or not RECEIPT_PATH.fullmatch(value):
        raise InvalidInput(f"{field} {validate.shown(value, 60)} is not a file under the home's receipts directory")
    return value


_id = validate.identifier
_agent = _empty_or(validate.agent)
_ts = _timestamp
_maybe_ts = _optional(_timestamp)
_count = _integer(minimum=0, maximum=2 ** 62)  # the write path's epoch bound

_id_or_none = _optional(_empty_or(_id))
_tags = _json_list(validate.tag)
_serial = _integer(minimum=1)
_maybe_serial = _optional(_serial)
_flag = _integer(0, 1)
# rules whose values are proven free of credentials once they pass (see guard_blocks)
_STRUCTURED = frozenset({_id, _agent, _ts, _maybe_ts, _count, validate.tag, validate.status, validate.priority,
                         _id_or_none, _tags,
                         _serial, _maybe_serial, _flag, _hex_or_empty, validate.agent})

# table -> {column: rule(value, field)}; columns a table lacks are skipped (older schemas)
RULES = {
    "tasks": {
        "id": _id, "project": _id, "title": validate.title, "description": _text(),
        "status": validate.status, "priority": validate.priority,
        "next_action": _text(4096), "blocked_reason": _text(4096), "owner": _agent, "tags": _tags,
        "due_at": _maybe_ts, "worktree": _line(), "branch": _line(), "pr_url": _line(), "lease_owner": _agent,
        "lease_expires_at": _maybe_ts, "created_at": _ts, "updated_at": _ts, "lease_epoch": _count,
        "retry_count": _count, "recover_after": _maybe_ts, "not_before": _maybe_ts,
        "requires_receipts": _tags, "recall_digest": _hex_or_empty,
    },
    "dependencies": {"task_id": _id, "depends_on": _id, "created_at": _ts},
    "receipts": {"id": _id, "task_id": _id, "kind": validate.tag, "path": _receipt_path,
                 "file_hash": _hex_or_empty, "created_at": _ts},
    "heartbeats": {"task_id": _id, "owner": validate.agent, "note": _text(4096), "at": _ts},
    "task_tags": {"tag": validate.tag, "task_id": _id},
    "notes": {"id": _serial, "task_id": _id, "kind": _line(64), "content": _text(),
              "source": _agent, "pinned": _flag, "expires_at": _maybe_ts,
              "supersedes": _maybe_serial, "superseded_by": _maybe_serial,
              "superseded_at": _maybe_ts, "created_at": _ts},
    "handoffs": {"id": _serial, "task_id": _id, "from_agent": _agent, "to_agent": _agent,
                 "status": _text(), "objective": _text(), "evidence": _json_list(_text()),
                 "constraints": _json_list(_text()), "decisions": _json_list(_text()), "files": _json_list(_text()),
                 "commit_ref": _text(), "next_actions": _json_list(_text()), "risks": _json_list(_text()),
                 "recall_digest": _hex_or_empty, "payload_hash": _hex_or_empty,
                 "supersedes": _maybe_serial, "superseded_by": _maybe_serial,
                 "superseded_at": _maybe_ts, "acked_by": _agent, "acked_at": _maybe_ts,
                 "ack_recall_digest": _hex_or_empty, "created_at": _ts},
    "facts": {"id": _serial, "subject": validate.tag,
              "predicate": validate.tag, "object": validate.tag,
              "source": _agent, "task_id": _id_or_none, "valid_from": _ts, "valid_until": _maybe_ts,
              "retracted_at": _maybe_ts, "retract_reason": _text(4096), "created_at": _ts},
    "memories": {"id": _line(128), "project": _empty_or(_id), "kind": _line(64), "content": _text(),
                 "source": _agent, "retracted_at": _maybe_ts, "created_at": _ts},
}


def _lease(row, limit):
    """A task row's lease fields agree: no owner, no expiry; an owner holds a live status and
    an expiry no further ahead than the longest lease from ``limit`` (the artifact's time)."""
    from mindos.work.leases import MAX_MINUTES  # lazy: the one lease length rule

    owner, expires, status = row.get("lease_owner"), row.get("lease_expires_at"), row.get("status")
    if not owner:
        if expires is not None:
            return "lease_expires_at", "a lease expiry without a lease owner"
        return None
    if status in validate.TERMINAL_STATUSES:
        return "lease_owner", f"a {status} task cannot hold a lease"
    if expires is None:
        return "lease_expires_at", "a lease owner without a lease expiry"
    if expires > clock.shift(limit, MAX_MINUTES * 60):
        return "lease_expires_at", f"a lease until {expires} is longer than the longest lease ({MAX_MINUTES} minutes)"
    return None


def artifact_time(doc):
    """An artifact's ``created_at`` in storage form, the reference for lease lengths (now
    when it has none usable)."""
    try:
        return clock.normalize(doc.get("created_at"), "created_at")
    except (InvalidInput, TypeError):
        return clock.now_iso()


def _storage(value, field):
    """What every text value must be to be stored: UTF-8 without NUL."""
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidInput(f"{field} contains a NUL character")
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInput(f"{field} is not valid UTF-8 text") from None
    elif isinstance(value, (list, dict)) and not (isinstance(value, dict) and set(value) == {"$b64"}):
        raise InvalidInput(f"{field} holds a JSON {type(value).__name__}, not a column value")


def _row_name(columns, row, number):
    for key in ("id", "task_id", "seq"):
        if key in columns:
            value = row[columns.index(key)]
            return f"row {number} ({key} {validate.shown(value, 40)})"
    return f"row {number}"


def _storable(rows):
    """True when every value of ``rows`` certainly passes :func:`_storage` (C-speed checks
    over the whole block; False sends the block to the value-by-value pass that names the
    offending row)."""
    from itertools import chain  # lazy: restores only

    values = list(chain.from_iterable(rows))
    kinds = set(map(type, values))
    if dict in kinds or list in kinds:
        return False
    text = "".join([value for value in values if type(value) is str])
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_REMEMBERED = 128  # the longest value whose verdict is remembered (ids, names, times; not prose)


def check_blocks(blocks, *, action, limit, skip=()):
    """Validate every row of ``blocks`` (``{table: {"columns", "rows"}}``); raise
    IntegrityError naming the first invalid table, row and field.  ``limit``: the artifact's
    creation time, the reference for lease lengths; ``skip``: ``(table, column)`` pairs whose
    own rule the caller applies instead (the storage rules still hold)."""
    passed = set()  # (rule, value) pairs already proven: a rule's verdict depends on the value only
    for table in sorted(blocks):
        block = blocks[table]
        columns = block["columns"]
        storage = None if _storable(block["rows"]) else _storage
        rules = [(index, name, None if (table, name) in skip else RULES.get(table, {}).get(name))
                 for index, name in enumerate(columns)]
        rules = [(index, name, rule) for index, name, rule in rules if rule is not None or storage is not None]
        if not rules and table != "tasks":
            continue
        for number, row in enumerate(block["rows"], 1):
            for index, name, rule in rules:
                value = row[index]
                if storage is None and (rule, value) in passed:  # ids and times recur across tables
                    continue
                try:
                    if storage is not None:
                        storage(value, name)
                    if rule is not None:
                        rule(value, name)
                except InvalidInput as exc:
                    raise IntegrityError(f"{action} refused: table {table} {_row_name(columns, row, number)} field"
                                         f" {name}: {_reason(exc, name)}; nothing was changed") from None
                if type(value) is str and len(value) <= _REMEMBERED:
                    passed.add((rule, value))
            if table == "tasks":
                problem = _lease(dict(zip(columns, row)), limit)
                if problem is not None:
                    raise IntegrityError(f"{action} refused: table tasks {_row_name(columns, row, number)} field"
                                         f" {problem[0]}: {problem[1]}; nothing was changed")


def _reason(exc, name):
    """A validator's message without its ``invalid <flag>:`` prefix (the field is named already)."""
    text = str(exc)
    for prefix in (f"invalid {name}: ", "invalid "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


# columns that hold digests and hashes, never prose: the guard has nothing to find there
_OPAQUE = frozenset({"hash", "prev_hash", "file_hash", "payload_hash", "recall_digest", "ack_recall_digest",
                     "args_digest", "digest", "content_hash", "sha256"})


# tables MindOS derives from text it already guarded (event payloads, remembered results):
# large, and scanned a column at a time first, each value only where the column has a hit
_DERIVED = frozenset({"audit_events", "request_replays"})


def guard_blocks(blocks, *, action):
    """Run the secret guard over every text value of ``blocks``; raise IntegrityError naming
    the first table, row and field holding credential-shaped text (kinds only, never the value).

    Run after :func:`check_blocks`: the columns it proved structured (ids, names and tags,
    which their validators already ran the guard over, and timestamps, enums, counts and
    digests, which cannot hold one) are not scanned again."""
    from mindos.core import secrets  # lazy: only unsigned artifacts pay for the detector

    for table in sorted(blocks):
        block = blocks[table]
        columns, rows = block["columns"], block["rows"]
        for index, column in enumerate(columns):
            if column in _OPAQUE or RULES.get(table, {}).get(column) in _STRUCTURED:
                continue
            if table in _DERIVED:  # one scan of the whole column rules most of it out
                joined = "\n".join(row[index] for row in rows if isinstance(row[index], str))
                if not secrets.scan(joined):
                    continue
            for number, row in enumerate(rows, 1):
                value = row[index]
                if isinstance(value, str) and len(value) >= 8:
                    kinds = secrets.scan(value)
                    if kinds:
                        raise IntegrityError(
                            f"{action} refused: secret guard: table {table} {_row_name(columns, row, number)} field"
                            f" {column} holds credential-shaped text ({', '.join(kinds)}) in an unsigned"
                            " artifact; nothing was changed")
