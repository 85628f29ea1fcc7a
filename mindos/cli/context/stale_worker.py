"""The front door of a recall-stale worker interpreter (see :mod:`mindos.context.stale_shares`):
:func:`command` starts one, :func:`work` is its whole life."""

import json
import os
import sys

from mindos.context import recall


def command():
    """A worker interpreter's command line, importing the package from this checkout:
    ``python3 -I -S`` (no site packages, nothing from the environment's Python settings).
    ``recall-stale`` hands it to :func:`mindos.context.stale_shares.sweep`."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    code = f"import sys; sys.path.insert(0, {root!r}); from mindos.cli.context.stale_worker import work; work()"
    return [sys.executable, "-I", "-S", "-c", code]


def work():
    """A worker's whole life: read ``{"home", "plan"}`` on stdin, check the plan's share,
    write its items as JSON on stdout, exit 0; on any failure exit 1 (the caller then
    checks the share itself)."""
    from mindos.store import db  # lazy: a worker interpreter starts here

    try:
        request = json.loads(sys.stdin.buffer.read())
        conn = db.connect(request["home"], create=False)
        items = recall.check_cited(conn, request["plan"])
        sys.stdout.write(json.dumps(items))
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - anything, Ctrl-C included: the caller redoes the share
        os._exit(1)
    os._exit(0)
