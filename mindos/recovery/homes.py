"""Runtime home selection: explicit, verified, reversible.

The home is resolved by :mod:`mindos.core.home` (environment, then the selector file, then
the rollback default ``~/.hermes/autopilot``).  These functions are the only writers of
the selector: ``home-select`` verifies first (a read-only doctor sweep of the target,
which must come back clean) and refuses the rollback default itself; ``home-deselect``
is the one-command rollback (a dry-run plan unless ``apply``).  No home's data is ever
touched: the doctor opens the target read-only and the selector lives outside every home.
"""

import os

from mindos.core import clock, home as homes_core
from mindos.errors import IntegrityError, InvalidInput, MindosError, Refused
from mindos.recovery import artifacts, doctor

SELECTOR_FORMAT = "autopilot-home-selector-v1"


def _path(value, flag="--home"):
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise InvalidInput(f"invalid {flag}: a directory path is required")
    return os.path.abspath(os.path.expanduser(value))


def rollback_default():
    """The immutable rollback default home."""
    return os.path.abspath(os.path.expanduser(homes_core.DEFAULT_HOME))


def show():
    """Which home is active and why: ``{"home", "source", "selector_path", "selector",
    "rollback_default", "overridden_by"}``."""
    home, source = homes_core.resolve()
    path = homes_core.selector_path()
    selected = homes_core.read_selector()
    try:
        artifacts.read(path, SELECTOR_FORMAT)
        sealed = True
    except IntegrityError:
        sealed = False
    return {"home": home, "source": source, "selector_path": path,
            "selector": {"present": os.path.exists(path), "home": selected, "valid": selected is not None,
                         "sealed": sealed},
            "rollback_default": rollback_default(),
            "overridden_by": source if source in ("HERMES_AUTOPILOT_HOME", "MINDOS_HOME") else None}


def doctor_home(home):
    """The read-only doctor sweep of an explicit home (``--home``)."""
    return doctor.run(_path(home))


def _same(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


def _selector(value):
    """The selector file to act on: ``--selector PATH`` when given (absolute; never a
    symlink, never a file that is not a selector), else the one in force."""
    if value is None:
        return homes_core.selector_path()
    path = _path(value, "--selector")
    if os.path.islink(path):
        raise Refused(f"refused --selector {path}: it is a symlink (symlinks are never followed)")
    if os.path.isdir(path):
        raise InvalidInput(f"invalid --selector: {path} is a directory (name the selector file)")
    if os.path.exists(path) and not _is_selector(path):
        raise Refused(f"refused --selector {path}: the file there is not a home selector; it is left alone")
    return path


def _is_selector(path):
    """True when ``path`` holds a home selector: a JSON object with a ``home`` key."""
    import json  # lazy: only a named --selector is read

    from mindos.core import files  # lazy: as above

    try:  # a FIFO, device or oversized file named as --selector is not a selector (never blocks)
        doc = json.loads(files.read_bytes(path, max_bytes=65536).decode("utf-8"))
    except (MindosError, OSError, ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and "home" in doc


def select(home, *, selector=None):
    """Point the selector at ``home`` after a clean doctor sweep; return the selection report.

    Refuses the rollback default, a path without a database and an unhealthy home (naming
    every problem).  Writes only the selector file (atomic, 0600): ``selector`` names it
    (default: the one in force), and an existing file there must already be a selector.
    """
    target = _path(home)
    chosen = _selector(selector)
    if _same(target, rollback_default()):
        raise Refused(f"home-select refused: {target} is the rollback default; use home-deselect --apply to return to it")
    report = doctor.run(target)
    if not report["ok"]:
        named = "; ".join(_describe(p) for p in report["problems"])
        raise Refused(f"home-select refused: {target} is unhealthy ({sum(report['problems_by_kind'].values())}"
                      f" problem(s): {named})")
    path = chosen
    previous = homes_core.read_selector(path)
    artifacts.seal_write(path, SELECTOR_FORMAT, {"home": target, "selected_at": clock.now_iso()})
    now_home, source = homes_core.resolve()
    return {"selected": target, "selector_path": path, "previous": previous, "doctor": {"ok": True,
            "checks": report["checks"]}, "active_home": now_home, "active_source": source}


def _describe(problem):
    ids = ", ".join(f"{k}={v}" for k, v in problem.items() if k != "kind" and not isinstance(v, (list, dict)))
    return f"{problem['kind']} ({ids})" if ids else problem["kind"]


def deselect(*, apply=False, selector=None):
    """Plan (or with ``apply`` carry out) removing the selector; return the report.

    ``selector`` names the selector file (default: the one in force); a file there that is
    not a selector, or a symlink, is refused and left alone.
    """
    path = _selector(selector)
    present = os.path.exists(path)
    report = {"apply": bool(apply), "selector_path": path, "present": present,
              "selected_home": homes_core.read_selector(path), "falls_back_to": rollback_default(),
              "removed": False}
    if apply and present:
        try:
            os.unlink(path)
        except OSError as exc:
            raise Refused(f"home-deselect failed: cannot remove {path}: {exc.strerror}") from None
        report["removed"] = True
    report["active_home"], report["active_source"] = homes_core.resolve()
    return report
