"""The store: the only package that opens the database and owns its schema.

:mod:`~mindos.store.db` (connections, transactions, the schema), :mod:`~mindos.store.migrations`
(the numbered steps), :mod:`~mindos.store.ledger` (the audit chain), :mod:`~mindos.store.fts`
(full-text indexes), :mod:`~mindos.store.guard` (the secret guard on writes),
:mod:`~mindos.store.replay` (``--request-id``), :mod:`~mindos.store.deferred` (audit events
a time-bounded caller deferred) and :mod:`~mindos.store.sql` (shared SQL fragments).
"""
