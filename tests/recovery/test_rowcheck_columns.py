"""The column-at-a-time row check and secret guard of restores (rowcheck._fast_check,
rowcheck._guard_clean) clear only what the row-by-row pass clears, and whatever they cannot
clear is refused by that pass with the message it always gave (the first row, the field)."""

import pytest

from mindos.errors import IntegrityError, MindosError
from mindos.recovery import rowcheck

LIMIT = "2026-03-01T00:00:00Z"
COLUMNS = list(rowcheck.RULES["tasks"])
AWS = "AKIA" + "Q" * 16


def _row(n):
    row = {name: "" for name in COLUMNS}
    row.update(id=f"t-{n:06d}", project="proj-1", title=f"Task {n} in the api service", description=f"do {n}: a: b",
               status="queued", priority="P2", tags='["area:db"]', due_at=None, lease_expires_at=None,
               created_at=f"2026-01-{n % 28 + 1:02d}T10:{n % 60:02d}:00Z", updated_at="2026-02-28T23:59:59Z",
               lease_epoch=n % 3, retry_count=0, recover_after=None, not_before=None, requires_receipts="[]")
    if n % 7 == 0:  # a live lease, well within the longest one
        row.update(status="claimed", lease_owner="agent-a", lease_expires_at="2026-03-01T00:10:00Z")
    return [row[name] for name in COLUMNS]


def _block(mutate=None, at=2500, rows=3000):
    data = [_row(n) for n in range(1, rows + 1)]
    if mutate is not None:
        column, value = mutate
        data[at][COLUMNS.index(column)] = value
    return {"tasks": {"columns": COLUMNS, "rows": data}}


def _outcome(call):
    try:
        call()
    except MindosError as exc:
        return type(exc).__name__, str(exc)
    return None


def _both(blocks):
    """(the whole check's outcome, the row-by-row pass's outcome) of ``blocks``."""
    whole = _outcome(lambda: rowcheck.check_blocks(blocks, action="snapshot-restore", limit=LIMIT))
    rows = _outcome(lambda: rowcheck._check_rows(blocks, action="snapshot-restore", limit=LIMIT, skip=()))
    return whole, rows


def test_a_valid_block_is_cleared_column_by_column():
    blocks = _block()
    assert rowcheck._fast_check("tasks", blocks["tasks"], LIMIT, ())
    assert _both(blocks) == (None, None)


@pytest.mark.parametrize("mutate", [
    ("owner", "eve\nmallory"),  # a newline would split a joined column into two valid names
    ("lease_owner", "agent-a\nb"),
    ("id", "t-1\nt-2"),
    ("project", "proj 1"),
    ("id", "ghp_" + "a1B2" * 9),  # charset-valid, credential-shaped: the validator's own refusal
    ("created_at", "2026-02-29T10:00:00Z"),  # no 29 February in 2026
    ("updated_at", "2026-04-31T10:00:00Z"),
    ("created_at", "2026-01-01T10:00:00Z\n2026-01-01T10:00:00Z"),
    ("created_at", "2026-01-01T10:00:00+00:00"),
    ("due_at", "2026-01-01"),
    ("lease_epoch", 1.0),  # equal to 1, which the column holds: deduplication must not hide it
    ("lease_epoch", True),
    ("retry_count", -1),
    ("lease_epoch", 2 ** 62 + 1),
    ("status", "bogus_status"),
    ("priority", "P9"),
    ("title", "   "),
    ("title", "two\x1blines"),
    ("title", "x" * 501),
    ("branch", "main\rforged"),
    ("description", "nul \x00 here"),
    ("description", "lone \udc80 surrogate"),
    ("tags", '["Not A Tag"]'),
    ("lease_expires_at", "2026-03-02T00:00:00Z"),  # a lease longer than the longest
])
def test_a_bad_value_is_refused_as_the_row_by_row_pass_refuses_it(mutate):
    blocks = _block(mutate)
    assert not rowcheck._fast_check("tasks", blocks["tasks"], LIMIT, ())
    whole, rows = _both(blocks)
    assert whole is not None and whole == rows
    # (a credential-shaped id is the validator's own refusal, naming no row, as it always was)
    assert "row 2501" in whole[1] or "credential-shaped id" in whole[1]


def test_values_the_fast_forms_leave_to_the_rule_still_pass():
    blocks = _block(("created_at", "2024-02-29T10:00:00Z"))  # a leap day: decided by the rule itself
    assert _both(blocks) == (None, None)
    blocks = _block(("owner", "agent-with-a-long-name-1"))  # long enough to be scanned: clean
    assert _both(blocks) == (None, None)


def test_the_guard_refuses_a_credential_in_any_row_with_the_same_message():
    blocks = _block(("description", f"the key is {AWS} here"))
    assert not rowcheck._guard_clean("tasks", blocks["tasks"], __import__("mindos.core.secrets").core.secrets)
    with pytest.raises(IntegrityError) as caught:
        rowcheck.guard_blocks(blocks, action="snapshot-restore")
    assert "row 2501" in str(caught.value) and "field description" in str(caught.value)
    assert "aws_access_key" in str(caught.value) and AWS not in str(caught.value)
    assert rowcheck.guard_blocks(_block(), action="snapshot-restore") is None


def test_the_guard_of_derived_tables_scans_each_value_after_a_joined_hit():
    rows = [[n, "task", f"t-{n}", '{"title": "plain text"}'] for n in range(1, 3001)]
    rows[1200][3] = '{"title": "key ' + AWS + '"}'
    blocks = {"audit_events": {"columns": ["id", "entity_type", "entity_id", "payload_json"], "rows": rows}}
    with pytest.raises(IntegrityError) as caught:
        rowcheck.guard_blocks(blocks, action="snapshot-restore")
    assert "table audit_events row 1201" in str(caught.value) and "field payload_json" in str(caught.value)
