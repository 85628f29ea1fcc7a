"""``ops.py recall-stale`` across processes: a large sweep checked in shares, one per CPU.

Rebuilding a cited bundle is CPU work, nearly all of it SQLite and pack building, and every
cited handoff is independent of the others.  So a sweep over many handoffs is planned once
(:func:`mindos.context.recall.stale_plan`: what to check and the instant to check it at),
cut into contiguous shares, and the shares are checked at once: the first by this process,
each other one by a worker interpreter started for it.  The worker's command line comes
from the caller (``recall-stale`` passes
:func:`mindos.cli.context.stale_worker.command`: ``python3 -I -S``, no site packages,
nothing from the environment's Python settings), so context never names the CLI.

Every share is checked in its own read snapshot at the plan's instant, with the same code
as a serial sweep; the items come back in plan order.  A worker that cannot start or
fails leaves its share to this process, so the report is whole either way.  A small sweep,
a machine with one CPU, or a caller with no worker command is checked here alone.
"""

import json
import os

from mindos.context import recall

MIN_SHARE = 150  # below this many cited handoffs per process, starting a worker costs more than it saves
MAX_PROCESSES = 4


def processes_for(count):
    """How many processes check ``count`` cited handoffs: one per usable CPU, at most
    MAX_PROCESSES, each with at least MIN_SHARE of them."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_PROCESSES, count // MIN_SHARE))


def shares(cited, parts):
    """``cited`` cut into ``parts`` contiguous shares of near-equal size."""
    size, extra = divmod(len(cited), parts)
    out, start = [], 0
    for part in range(parts):
        end = start + size + (1 if part < extra else 0)
        out.append(cited[start:end])
        start = end
    return out


def sweep(conn, *, recompute=False, processes=None, worker_command=None):
    """The recall-stale report of ``conn``'s home, its shares checked in ``processes``
    processes (default: :func:`processes_for`), each worker started with the argv
    ``worker_command()`` returns (None: no workers, every share is checked here).  The plan
    and this process's share are read in one snapshot; so is a sweep checked here alone
    (:func:`mindos.context.recall.stale`)."""
    from mindos.store import db  # lazy: the read snapshot only

    with db.read(conn):
        plan = recall.stale_plan(conn, recompute=recompute)
        cited = plan["cited"]
        parts = processes_for(len(cited)) if processes is None else max(1, min(processes, len(cited)))
        if parts <= 1 or worker_command is None:
            return recall.stale_report(recall.check_cited(conn, plan))
        first, *rest = shares(cited, parts)
        workers = [_Worker(worker_command(), conn.home, {**plan, "cited": share}) for share in rest]
        try:
            items = recall.check_cited(conn, {**plan, "cited": first})
            for worker in workers:
                checked = worker.result()
                items.extend(recall.check_cited(conn, worker.plan) if checked is None else checked)
        finally:
            for worker in workers:
                worker.stop()
    return recall.stale_report(items)


class _Worker:
    """One share checked by a worker interpreter; its input and output travel as JSON
    through a pipe, fed and drained by a thread so neither side waits on a full pipe."""

    def __init__(self, command, home, plan):
        import subprocess  # lazy: only a sweep large enough to share starts workers
        import threading  # lazy: as above

        self.plan = plan  # the plan cut to this worker's share
        self.output = None
        self.process = None
        payload = json.dumps({"home": home, "plan": plan}).encode()
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:  # no process to spare: this process checks the share itself
            return
        self.thread = threading.Thread(target=self._talk, args=(payload,), daemon=True)
        self.thread.start()

    def _talk(self, payload):
        try:
            self.output, _ = self.process.communicate(payload)
        except (OSError, ValueError):
            self.output = None

    def result(self):
        """The share's checked items, or None when the worker did not deliver them."""
        if self.process is None:
            return None
        self.thread.join()
        if self.process.returncode != 0 or not self.output:
            return None
        try:
            items = json.loads(self.output)
        except ValueError:
            return None
        return items if isinstance(items, list) and len(items) == len(self.plan["cited"]) else None

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
