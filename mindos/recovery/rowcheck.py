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
import re

from mindos.core import clock, validate
from mindos.errors import IntegrityError, InvalidInput

# rule -> prover(values): the values of a column it cannot prove pass the rule at C speed
# (see _fast_check); filled in as the rules are made
_PROVERS = {}


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
    rule = lambda value, field: validate.text(value, field, max_len=max_len)  # noqa: E731
    _PROVERS[rule] = lambda values: _prove_texts(values, max_len)
    return rule


def _line(max_len=4096):
    rule = lambda value, field: validate.line(value, field, max_len=max_len)  # noqa: E731
    _PROVERS[rule] = lambda values: _prove_texts(values, max_len, line=True)
    return rule


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

_PROVERS.update({
    validate.title: lambda values: _prove_texts(values, validate.MAX_TITLE, line=True, required=True),
    _id: lambda values: _prove_names(values, "id"),
    _agent: lambda values: _prove_names(values, "agent", {""}),
    validate.agent: lambda values: _prove_names(values, "agent"),
    validate.tag: lambda values: _prove_names(values, "tag"),
    _id_or_none: lambda values: _prove_names(values, "id", {None, ""}),
    _ts: lambda values: _prove_times(values),
    _maybe_ts: lambda values: _prove_times(values, {None}),
    _count: lambda values: _prove_integers(values, 0, 2 ** 62),
    _serial: lambda values: _prove_integers(values, 1),
    _maybe_serial: lambda values: _prove_integers(values, 1, drop={None}),
    _flag: lambda values: _prove_integers(values, 0, 1),
    validate.status: lambda values: values - _STATUSES if type(values) is set else values,
    validate.priority: lambda values: values - _PRIORITIES if type(values) is set else values,
})
_STATUSES, _PRIORITIES = frozenset(validate.STATUSES), frozenset(validate.PRIORITIES)

# The column-at-a-time check (see _fast_check): patterns a column's distinct values, joined
# one newline apart (a character none of them may hold; a join holding more newlines than
# it put in is not matched), match only when each value does.
# The name patterns are the validators' charsets exactly; the time pattern is narrower than
# the rule (no 29 February, no day a month lacks): a value outside it goes to the rule.
_TIME = ("(?!0000)[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)"
         "|(?:0[13578]|1[02])-31)T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z")
_FORMS = {"id": "[A-Za-z0-9][A-Za-z0-9._-]{0,63}", "agent": "[A-Za-z0-9][A-Za-z0-9._:@+-]{0,63}",
          "tag": "[a-z0-9:_./-]{1,64}", "time": _TIME}
_COMPILED = {}


def _runs(form):
    """The compiled pattern of a newline-joined run of ``form`` values (compiled on first use:
    only restores pay for it)."""
    pattern = _COMPILED.get(form)
    if pattern is None:
        one = _FORMS[form]
        pattern = _COMPILED[form] = re.compile(f"(?:{one})(?:\n(?:{one}))*")
    return pattern


def _all_match(values, form):
    """True when every one of ``values`` is text of ``form``, tested in one match of them
    joined one newline apart (a join holding more newlines than it put in, from a value's
    own newline, is not trusted)."""
    try:
        joined = "\n".join(values)
    except TypeError:
        return False
    return joined.count("\n") == len(values) - 1 and _runs(form).fullmatch(joined) is not None


def _prove_names(values, form, drop=frozenset()):
    """The ids, names or tags of ``values`` (a column's distinct values) the batch cannot
    prove: every value in the charset, and the long enough to hold a credential cleared by
    the secret gate (the validators' own not_secret test decides the rest)."""
    if type(values) is not set:
        return values
    values = values - drop  # the values the rule passes as they are
    if not values:
        return ()
    if not _all_match(values, form):
        return values
    # (only a value as long as the shortest credential is scanned by the validators' not_secret)
    if max(map(len, values)) < validate.SHORTEST_SECRET:
        return ()
    from itertools import compress  # lazy: restores only
    from operator import not_  # lazy: as above

    from mindos.core import secret_gate  # lazy: as above

    long = [value for value in values if len(value) >= validate.SHORTEST_SECRET]
    return list(compress(long, map(not_, secret_gate.clean_each(long))))


def _prove_times(values, drop=frozenset()):
    """The timestamps of ``values`` the batch cannot prove in storage form."""
    if type(values) is not set:
        return values
    values = values - drop
    if not values:
        return ()
    if _all_match(values, "time"):
        return ()
    if not all(isinstance(value, str) for value in values):
        return values
    one = re.compile(_TIME)
    return [value for value in values if not one.fullmatch(value)]


def _prove_integers(values, minimum, maximum=None, drop=frozenset()):
    """All of ``values`` when any is not an int in range, else none."""
    if type(values) is not set:
        return values
    values = values - drop
    if not values:
        return ()
    if set(map(type, values)) != {int} or min(values) < minimum or (maximum is not None and max(values) > maximum):
        return values
    return ()


def _prove_texts(values, max_len, *, line=False, required=False):
    """All of ``values`` when any may fail the text rule (too long, NUL, not UTF-8, a line
    break in a one-line field, blank where required), else none."""
    if type(values) is not set:
        return values
    if set(map(type, values)) != {str} or max(map(len, values)) > max_len:
        return values
    joined = "\t".join(values)  # (a tab: allowed in every text)
    if "\x00" in joined or (line and not validate.single_line(joined)):
        return values
    if required and not all(map(str.strip, values)):
        return values
    if not joined.isascii():
        try:
            joined.encode("utf-8")
        except UnicodeEncodeError:
            return values
    return ()


_NONE = type(None)
_SETTABLE = (frozenset({str, _NONE}), frozenset({int, _NONE}))  # column kinds whose values dedupe exactly


def _transposed(block):
    """``block``'s rows as columns (tuples), or None when a row is not a sequence as long as
    the columns (the row-by-row passes decide such a block)."""
    rows = block["rows"]
    try:
        if set(map(len, rows)) != {len(block["columns"])}:
            return None
        return list(zip(*rows))
    except TypeError:
        return None


def _columns_of(block, cols=None):
    """``block``'s values as columns (``cols`` when the caller transposed them already): []
    for a block without rows or columns, None for one the column passes cannot read."""
    if not block["rows"]:
        return []
    return _transposed(block) if cols is None else cols


def check_chunk(table, columns, rows, *, action, limit, guard):
    """:func:`check_blocks`, then (when ``guard``) :func:`guard_blocks`, of one chunk of
    ``table``'s rows, transposed once for both."""
    block = {"columns": columns, "rows": rows}
    cols = _transposed(block) if rows else []
    if cols is None or not _fast_check(table, block, limit, (), cols):
        _check_rows({table: block}, action=action, limit=limit, skip=())
    if guard:
        from mindos.core import secrets  # lazy: only unsigned artifacts pay for the detector

        if cols is None or not _guard_clean(table, block, secrets, cols):
            _guard_rows(table, block, action, secrets)


def _fast_check(table, block, limit, skip, cols=None):
    """True when every row of ``block`` certainly passes :func:`check_blocks` (the storage
    rules, each column's rule, the lease rule); False sends the block to the row-by-row pass,
    which decides and names the first invalid row.  A column is checked whole: its distinct
    values (where the column's kinds dedupe exactly: 1 and 1.0 are one set member) by the
    column's prover at C speed, the few left by the rule itself."""
    columns, rows = block["columns"], block["rows"]
    cols = _columns_of(block, cols)
    if not cols:
        return cols is not None
    kinds = [set(map(type, col)) for col in cols]
    if not _storable_columns(cols, kinds):
        return False
    table_rules = RULES.get(table, {})
    try:
        for name, col, held in zip(columns, cols, kinds):
            rule = None if (table, name) in skip else table_rules.get(name)
            if rule is None:
                continue
            values = set(col) if any(held <= each for each in _SETTABLE) else col
            prover = _PROVERS.get(rule)
            for value in (values if prover is None else prover(values)):
                rule(value, name)
    except Exception:  # (any refusal: the row-by-row pass raises it as it always has)
        return False
    if table == "tasks":
        return _leases_fine(columns, cols, rows, limit)
    return True


def _leases_fine(columns, cols, rows, limit):
    """True when no task row of the block breaks :func:`_lease` (only rows with a lease
    owner or expiry can)."""
    held = [cols[columns.index(name)] if name in columns else None for name in ("lease_owner", "lease_expires_at")]
    owners, expiries = held
    if (owners is None or not any(owners)) and (expiries is None or expiries.count(None) == len(rows)):
        return True
    for number, row in enumerate(rows):
        if (owners is not None and owners[number]) or (expiries is not None and expiries[number] is not None):
            if _lease(dict(zip(columns, row)), limit) is not None:
                return False
    return True


def _storable_columns(cols, kinds):
    """:func:`_storable` of a block given as columns (and each column's value types)."""
    pieces = []
    for col, held in zip(cols, kinds):
        if dict in held or list in held:
            return False
        if str in held:
            pieces.append("".join(col) if len(held) == 1 else "".join([value for value in col if type(value) is str]))
    return _storable_text("".join(pieces))


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
    return _storable_text("".join([value for value in values if type(value) is str]))


def _storable_text(text):
    """True when SQLite can store ``text`` as it is: no NUL, and valid UTF-8 (no lone surrogates)."""
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
    own rule the caller applies instead (the storage rules still hold).

    Each block is first checked a column at a time (:func:`_fast_check`); only a block that
    check cannot clear is walked row by row, which finds and names the first invalid row."""
    slow = {table: block for table, block in blocks.items() if not _fast_check(table, block, limit, skip)}
    if slow:
        _check_rows(slow, action=action, limit=limit, skip=skip)


def _check_rows(blocks, *, action, limit, skip):
    """:func:`check_blocks` row by row (the pass that names the first invalid row)."""
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
        if not _guard_clean(table, blocks[table], secrets):
            _guard_rows(table, blocks[table], action, secrets)


def _guard_clean(table, block, secrets, cols=None):
    """True when no text :func:`guard_blocks` scans in ``block`` holds a finding, decided a
    column at a time: a column's texts go through the secret gate in runs
    (:func:`mindos.core.secret_gate.clean_each`) and only those it cannot clear through the
    detector.  False (a finding, or a block not shaped as the check expects) sends the block
    to the value-by-value pass, which names the first row."""
    from itertools import compress  # lazy: restores only
    from operator import not_  # lazy: as above

    from mindos.core import secret_gate  # lazy: as above

    columns = block["columns"]
    cols = _columns_of(block, cols)
    if not cols:
        return cols is not None
    table_rules = RULES.get(table, {})
    for column, col in zip(columns, cols):
        if column in _OPAQUE or table_rules.get(column) in _STRUCTURED:
            continue
        held = set(map(type, col))
        if str not in held:
            continue
        texts = col if len(held) == 1 else [value for value in col if type(value) is str]
        if table in _DERIVED and not secrets.scan("\n".join(texts)):  # as guard_blocks: one scan first
            continue
        texts = list(dict.fromkeys(texts))  # each distinct text once (a verdict depends on the text only)
        for text in compress(texts, map(not_, secret_gate.clean_each(texts))):
            if len(text) >= 8 and secrets.scan(text):
                return False
    return True


def _guard_rows(table, block, action, secrets):
    """:func:`guard_blocks` of one block value by value (names the first finding)."""
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
