"""Continuous replication with Litestream: where the replica is and how far behind.

MindOS does not replicate by itself; an operator runs Litestream (an existing, proven
engine) against ``<home>/state.db`` with a config at ``<home>/litestream.yml``.  The
doctor reports the replica's lag when that config is present: the newest write to the
database (file or WAL) against the newest file in the replica directory.  Only file
replicas (``path:`` or ``url: file://...``) can be measured locally; other replica types
are reported as ``unmeasured``.  Reads only.
"""

import os
import re

CONFIG_NAME = "litestream.yml"


def config_path(home):
    """Where a home's Litestream config lives."""
    return os.path.join(home, CONFIG_NAME)


def replica_paths(text):
    """Local file replica directories named by a Litestream config (a tiny YAML subset)."""
    found = []
    for line in text.splitlines():
        match = re.match(r"\s*(?:-\s*)?(path|url)\s*:\s*['\"]?([^'\"#]+?)['\"]?\s*(?:#.*)?$", line)
        if not match:
            continue
        key, value = match.groups()
        if key == "url":
            if value.startswith("file://"):
                found.append(value[len("file://"):])
        else:
            found.append(value)
    return found


def _newest(path):
    from mindos.core import files  # lazy: only a configured replica is walked
    from mindos.errors import MindosError

    newest = None
    try:
        found, _ = files.walk(os.path.realpath(path), max_files=100_000)  # the configured replica itself may be a link
    except MindosError:
        return None
    for _, name in found:
        try:
            mtime = os.lstat(name).st_mtime
        except OSError:
            continue
        newest = mtime if newest is None or mtime > newest else newest
    return newest


def status(home):
    """``None`` without a config; else ``{"config", "replicas": [{"path", "lag_seconds", "status"}]}``."""
    from mindos.core import files  # lazy: only a doctor sweep looks for the config
    from mindos.errors import MindosError

    config = config_path(home)
    try:  # a FIFO planted as the config must not hang the doctor
        text = files.read_bytes(config, max_bytes=1 << 20, follow_symlinks=True).decode("utf-8")
    except (MindosError, OSError, UnicodeDecodeError):
        return None
    database = os.path.join(home, "state.db")
    written = [os.stat(p).st_mtime for p in (database, database + "-wal") if os.path.exists(p)]
    last_write = max(written) if written else None
    paths = [p for p in replica_paths(text) if os.path.abspath(p) != os.path.abspath(database)]
    replicas = []
    for path in paths:
        newest = _newest(path) if os.path.isdir(path) else None
        if newest is None:
            replicas.append({"path": path, "status": "empty", "lag_seconds": None})
            continue
        lag = max(0.0, (last_write or newest) - newest)
        replicas.append({"path": path, "status": "ok", "lag_seconds": round(lag, 3)})
    return {"config": config, "replicas": replicas or [{"path": None, "status": "unmeasured", "lag_seconds": None}]}
