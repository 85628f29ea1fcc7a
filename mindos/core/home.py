"""Where the MindOS home is.

Precedence, strictest first:
  1. ``HERMES_AUTOPILOT_HOME`` (always wins),
  2. ``MINDOS_HOME``,
  3. the selector file ``~/.hermes/autopilot-home-selector.json`` (path overridable with
     ``AUTOPILOT_HOME_SELECTOR``) whose ``home`` key names an existing directory,
  4. the rollback default ``~/.hermes/autopilot``.

A missing, unreadable or malformed selector, or one naming a directory that no longer
exists, is ignored: selection never makes the runtime fail.
"""

import os

DEFAULT_HOME = os.path.join("~", ".hermes", "autopilot")
DEFAULT_SELECTOR = os.path.join("~", ".hermes", "autopilot-home-selector.json")


def selector_path():
    """Return the selector file path in force."""
    return os.path.expanduser(os.environ.get("AUTOPILOT_HOME_SELECTOR") or DEFAULT_SELECTOR)


def read_selector(path=None):
    """Return the home named by the selector file (``path``, default :func:`selector_path`),
    or None when it should be ignored."""
    from mindos.core import files  # lazy: only a call without a home variable reads the selector
    from mindos.errors import MindosError

    path = selector_path() if path is None else path
    try:  # never blocks on a FIFO planted as the selector; a linked dotfile is fine
        raw = files.read_bytes(path, max_bytes=65536, follow_symlinks=True).decode("utf-8")
    except (MindosError, OSError, ValueError):  # missing, unreadable, special, too large, or not UTF-8
        return None
    import json  # only paid for when a selector exists

    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    home = doc.get("home") if isinstance(doc, dict) else None
    if not isinstance(home, str) or not home.strip():
        return None
    try:
        home = os.path.expanduser(home)
        # a relative path would resolve against whatever directory each agent started in,
        # splitting one fleet across several homes: treat it as malformed
        return home if os.path.isabs(home) and os.path.isdir(home) else None
    except ValueError:  # an embedded NUL byte
        return None


def resolve():
    """Return ``(home, source)`` where source names the rule that chose it."""
    for var in ("HERMES_AUTOPILOT_HOME", "MINDOS_HOME"):
        value = os.environ.get(var)
        if value:
            return os.path.abspath(os.path.expanduser(value)), var
    selected = read_selector()
    if selected:
        return os.path.abspath(selected), "selector"
    return os.path.abspath(os.path.expanduser(DEFAULT_HOME)), "default"


def home_dir():
    """Return the home directory path in force."""
    return resolve()[0]
