"""SQL pieces several domains share, derived from the one definition of each rule.

The terminal statuses are declared once (``mindos.core.validate.TERMINAL_STATUSES``); every
query that asks "is this task finished?" uses the fragments below, so adding a terminal
status is one edit.
"""

from mindos.core.validate import STATUSES, TERMINAL_STATUSES

# ('completed', 'failed', 'cancelled') as an SQL list (values are fixed tokens, never user text)
TERMINAL_SQL = "(" + ", ".join(f"'{status}'" for status in TERMINAL_STATUSES) + ")"
# every other status, as an SQL list (for IN tests that want an index on status)
OPEN_SQL = "(" + ", ".join(f"'{status}'" for status in STATUSES if status not in TERMINAL_STATUSES) + ")"


def open_condition(alias=""):
    """``<alias>.status NOT IN (terminal statuses)``: the task is still open."""
    prefix = f"{alias}." if alias else ""
    return f"{prefix}status NOT IN {TERMINAL_SQL}"
