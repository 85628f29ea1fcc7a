"""The ``metrics`` snapshot: every domain contributes its own counters.

Each provider module defines ``metrics(conn) -> dict``; the snapshot is their union.  A
domain adds its counters by adding its module name here, not by editing another domain.
"""

from mindos.core import load_module

PROVIDERS = [
    "mindos.memory.notes", "mindos.memory.secret_sweep",
    "mindos.work.leases", "mindos.work.progress", "mindos.work.lifecycle", "mindos.work.policies", "mindos.work.sweeps",
    "mindos.work.approvals", "mindos.work.graph",
    "mindos.memory.handoffs",
    "mindos.work.tasks",
    "mindos.work.receipts",
    "mindos.memory.memories", "mindos.memory.facts",
    "mindos.context.recall",
    "mindos.context.prime",
    "mindos.autonomy.grants", "mindos.autonomy.nanny",
    "mindos.memory.sessions",
]


def collect(conn):
    """Return the merged counters of every provider."""
    snapshot = {}
    for name in PROVIDERS:
        snapshot.update(load_module(name).metrics(conn))
    return snapshot
