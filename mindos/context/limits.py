"""The bounds every context pack and recall bundle shares: its character budget, how many
related items a section may ask for, and where related items may come from.

A leaf on purpose: the command-line flags that state these bounds in their help are built
by calls that never pack anything (``next`` without ``--recall``), and must not load the
pack builder to say them.
"""

DEFAULT_BUDGET = 4000
MAX_BUDGET = 10_000_000
MAX_RELATED = 100
RELATED_SCOPES = ("project", "global")
