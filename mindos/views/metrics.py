"""The ``metrics`` snapshot: every domain contributes its own counters.

Each provider module defines ``metrics(conn) -> dict``; the snapshot is their union.  A
domain of a lower floor adds its counters by adding its module name to :data:`PROVIDERS`,
not by editing another domain; an upper floor's counters (autonomy's grants and nanny) are
passed in by the ``metrics`` command (``collect(conn, providers)``), so this view never
names an upper floor.
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
    "mindos.memory.sessions",
]


def collect(conn, providers=()):
    """Return the merged counters of every provider: those of :data:`PROVIDERS`, then
    ``providers`` (callables ``(conn) -> dict`` of upper floors)."""
    snapshot = {}
    for name in PROVIDERS:
        snapshot.update(load_module(name).metrics(conn))
    for provider in providers:
        snapshot.update(provider(conn))
    return snapshot
