"""Recovery and portability: inspect a home without touching it, back it up and restore it
exactly, prove history was not cut, retire old work, move one task between homes, and
switch homes reversibly.

One concept per module: ``doctor`` (the read-only sweep), ``reindex`` (fts-rebuild),
``receipt_sweep`` (crash leftovers), ``snapshot``, ``checkpoint``, ``archive``, ``workorder``
(export-task / import-task), ``homes`` (home selection), ``replication`` (Litestream lag);
shared by them: ``tables`` (every table, generically) and ``artifacts`` (the sealed,
byte-exact file shape).
"""
