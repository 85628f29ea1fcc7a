"""Spreading pure computation over forked worker processes, for the few scans big enough to
pay for starting them (the secret detector over a large tree or a large transcript batch).

Design decisions
  * **The caller decides when**: it knows what makes its batch big (files, bytes) and says
    so with ``big_enough``; a small batch, a one-CPU machine or a platform without ``fork``
    runs in this process, with the same results in the same order.
  * **Workers only compute.**  Every write stays in the calling process; the function given
    must be a module-level one (it is pickled by name) that reads at most.
  * **Never fork a threaded process**: a child inherits every lock another thread held at
    the fork (the MCP server's transports run threads), so such a process computes here.
"""

import os
import sys


def spread(func, items, *, max_workers, big_enough, chunks_per_worker):
    """``[func(item) for item in items]``, in order.  When ``big_enough`` and at least two CPUs
    are there, the calls run over forked worker processes (at most ``max_workers``, each
    handed about ``chunks_per_worker`` chunks of the batch); otherwise in this process."""
    workers = min(max_workers, os.cpu_count() or 1, len(items))
    if workers < 2 or not big_enough or not can_fork():
        return [func(item) for item in items]
    import concurrent.futures  # lazy: only a large batch pays for the pool
    import multiprocessing

    try:
        context = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - platforms without fork
        return [func(item) for item in items]
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(func, items, chunksize=max(1, len(items) // (workers * chunks_per_worker))))


def can_fork():
    """Whether :func:`spread` may fork here: at least two CPUs, a platform with ``fork``, and
    no other thread running in this process."""
    if (os.cpu_count() or 1) < 2 or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")  # never imported just to ask
    return threading is None or threading.active_count() <= 1
