"""Spreading pure computation over forked workers: the same results in the same order,
whether the batch runs here or over the pool."""

import os

from mindos.core import workers


def _square(value):
    return value * value, os.getpid()


def test_a_small_batch_runs_here_in_order():
    results = workers.spread(_square, [3, 1, 2], max_workers=4, big_enough=False, chunks_per_worker=4)
    assert [r for r, _ in results] == [9, 1, 4] and {pid for _, pid in results} == {os.getpid()}


def test_a_big_batch_gives_the_same_results_in_the_same_order():
    items = list(range(-40, 40))
    spread = workers.spread(_square, items, max_workers=2, big_enough=True, chunks_per_worker=4)
    assert [r for r, _ in spread] == [v * v for v in items]
    if (os.cpu_count() or 1) >= 2:  # computed in workers, not here
        assert os.getpid() not in {pid for _, pid in spread}


def test_an_empty_batch_is_empty():
    assert workers.spread(_square, [], max_workers=4, big_enough=True, chunks_per_worker=8) == []


def test_a_process_running_threads_computes_here(monkeypatch):
    """Forking copies the locks other threads hold (the MCP server's transports run threads),
    so a threaded process never forks: same results, this process."""
    import threading

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert workers.can_fork() is hasattr(os, "fork")
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert workers.can_fork() is False
        results = workers.spread(_square, list(range(20)), max_workers=2, big_enough=True, chunks_per_worker=4)
    finally:
        stop.set()
        thread.join()
    assert [r for r, _ in results] == [v * v for v in range(20)] and {pid for _, pid in results} == {os.getpid()}


def test_one_cpu_computes_here(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert workers.can_fork() is False
    results = workers.spread(_square, [2, 3], max_workers=2, big_enough=True, chunks_per_worker=4)
    assert results == [(4, os.getpid()), (9, os.getpid())]
