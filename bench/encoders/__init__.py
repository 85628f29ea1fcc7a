"""Adapters that plug a real sentence encoder into MindOS's semantic layer
(``MINDOS_EMBEDDER=bench.encoders.<module>:encode``).  They import their third-party
libraries lazily, on the first call: MindOS itself stays standard library only."""
