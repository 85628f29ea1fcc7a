"""The chain check's fast paths: ranges verified by forked workers, and verification from a
pinned event (a checkpoint).  Both must name exactly what the single full scan names."""

import pytest

from conftest import seed_once
from mindos.core import clock
from mindos.store import ledger
from mindos.work import tasks


def _seed(conn, count=24):
    def build(conn):  # once per session and count: later tests get a copy of the database
        for n in range(1, count + 1):
            tasks.create(conn, project="P", title=f"task {n}", task_id=f"t{n}")
            clock.advance(minutes=1)

    seed_once(conn, f"{__name__}._seed({count})", build)


def _rehash(conn, event_id, payload):
    row = conn.execute("SELECT * FROM audit_events WHERE id = ?", (event_id,)).fetchone()
    digest = ledger.event_hash(event_id, row["prev_hash"], row["entity_type"], row["entity_id"], row["action"],
                               payload, row["created_at"])
    conn.execute("UPDATE audit_events SET payload_json = ?, hash = ? WHERE id = ?", (payload, digest, event_id))


TAMPERS = {
    "clean": lambda conn: None,
    "payload_edited": lambda conn: conn.execute("UPDATE audit_events SET payload_json = '{}' WHERE id = 9"),
    "first_of_a_range_edited": lambda conn: conn.execute("UPDATE audit_events SET action = 'x' WHERE id = 13"),
    "last_row_edited": lambda conn: conn.execute("UPDATE audit_events SET entity_id = 'zz' WHERE id = 24"),
    "row_deleted_at_a_boundary": lambda conn: conn.execute("DELETE FROM audit_events WHERE id = 12"),
    "rehashed_in_place_at_a_boundary": lambda conn: _rehash(conn, 12, '{"forged":true}'),
    "relinked": lambda conn: conn.execute("UPDATE audit_events SET prev_hash = ? WHERE id = 17", ("a" * 64,)),
    "integer_written": lambda conn: conn.execute("UPDATE audit_events SET entity_id = 5 WHERE id = 18"),
    "invalid_utf8": lambda conn: conn.execute(
        "UPDATE audit_events SET payload_json = CAST(x'7bff7d' AS TEXT) WHERE id = 20"),
    "invalid_utf8_hash_before_a_boundary": lambda conn: conn.execute(
        "UPDATE audit_events SET hash = CAST(x'ff' AS TEXT) WHERE id = 12"),
}


def _record_ranges(monkeypatch, tmp_path):
    """Make every range check append ``pid after upto answer`` to a file (forked workers
    inherit the patch, so the file shows which process checked which range)."""
    import os

    log = tmp_path / "ranges.log"
    real = ledger._range_clean

    def recording(conn, after, upto, anchor=None):
        answer = real(conn, after, upto, anchor)
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {after} {upto} {answer}\n")
        return answer

    monkeypatch.setattr(ledger, "_range_clean", recording)
    return lambda: [tuple(int(v) for v in line.split()) for line in log.read_text().splitlines()] \
        if log.exists() else []


def _exact_scans(monkeypatch):
    calls = []
    real = ledger._scan
    monkeypatch.setattr(ledger, "_scan", lambda *a, **k: calls.append(a[1:3]) or real(*a, **k))
    return calls


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
@pytest.mark.parametrize("workers", [2, 3])
def test_forked_ranges_name_exactly_what_the_single_scan_names(conn, monkeypatch, tmp_path, tamper, workers):
    import os

    from mindos.core import workers as pool

    _seed(conn)
    TAMPERS[tamper](conn)
    single = ledger.verify_chain(conn, workers=1)
    monkeypatch.setattr(ledger, "PARALLEL_MIN_EVENTS", 1)
    ranges = _record_ranges(monkeypatch, tmp_path)
    exact = _exact_scans(monkeypatch)
    assert ledger.verify_chain(conn, workers=workers) == single
    assert single["ok"] is (tamper == "clean")
    checked = sorted(ranges(), key=lambda line: line[1])
    # the ranges tile the ledger: each starts where the one before ended, the last ends at its top
    assert [line[1] for line in checked] == [0] + [line[2] for line in checked[:-1]]
    assert checked[-1][2] == 24 and len(checked) == workers * ledger.RANGES_PER_WORKER
    if pool.can_fork():
        assert os.getpid() not in {line[0] for line in checked}  # checked by workers, not here
    # a clean ledger is answered by the ranges alone; a range that is not clean is scanned again
    # exactly, and only such a range
    assert exact == [(after, upto) for _, after, upto, answer in checked if answer < 0]
    assert bool(exact) is (tamper != "clean")


def test_a_tampered_row_anywhere_is_named_at_its_id(conn, monkeypatch, tmp_path):
    """Every row in turn, so every range's first and last row and both sides of every
    boundary between the workers' ranges are tampered once."""
    _seed(conn)
    monkeypatch.setattr(ledger, "PARALLEL_MIN_EVENTS", 1)
    ranges = _record_ranges(monkeypatch, tmp_path)
    for event_id in range(1, 25):
        (saved,) = conn.execute("SELECT payload_json FROM audit_events WHERE id = ?", (event_id,)).fetchone()
        conn.execute("UPDATE audit_events SET payload_json = '{\"x\":1}' WHERE id = ?", (event_id,))
        report = ledger.verify_chain(conn, workers=2)
        assert report == {"ok": False, "events": 24, "problems": [{"event_id": event_id, "kind": "hash_mismatch"}]}
        assert report == ledger.verify_chain(conn, workers=1)
        conn.execute("UPDATE audit_events SET payload_json = ? WHERE id = ?", (saved, event_id))
    # each time, the range holding the edited row said so, and only it
    answers = ranges()
    assert len(answers) == 24 * 2 * ledger.RANGES_PER_WORKER
    for _, after, upto, answer in answers:
        assert answer in (-1, upto - after)
    assert sum(answer < 0 for *_, answer in answers) == 24
    assert ledger.verify_chain(conn, workers=2) == {"ok": True, "events": 24, "problems": []}


@pytest.mark.parametrize("tamper", ["clean", "payload_edited", "relinked", "integer_written", "invalid_utf8",
                                    "invalid_utf8_hash_before_a_boundary", "row_deleted_at_a_boundary"])
def test_the_range_check_answers_clean_or_not(conn, tamper):
    _seed(conn)
    TAMPERS[tamper](conn)
    expected = ledger.verify_chain(conn, workers=1)
    for after, upto in ((0, 24), (0, 12), (12, 24), (8, 16)):
        full = ledger._range_clean(conn, after, upto)
        inside = [p for p in expected["problems"] if after < p["event_id"] <= upto]
        count = conn.execute("SELECT count(*) FROM audit_events WHERE id > ? AND id <= ?", (after, upto)).fetchone()[0]
        assert full == (-1 if inside else count), (after, upto)


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
@pytest.mark.parametrize("workers", [2, 5])
def test_ranges_scanned_again_one_by_one_name_what_the_single_scan_names(conn, monkeypatch, tamper, workers):
    """Every range answers "not clean" (as a worker that cannot answer does), so each is
    scanned exactly on its own: linked across every boundary, they name what one scan names."""
    _seed(conn)
    TAMPERS[tamper](conn)
    single = ledger.verify_chain(conn, workers=1)
    monkeypatch.setattr(ledger, "PARALLEL_MIN_EVENTS", 1)
    monkeypatch.setattr(ledger, "_range_clean", lambda *a, **k: -1)
    assert ledger.verify_chain(conn, workers=workers) == single
    anchor = conn.execute("SELECT hash FROM audit_events WHERE id = 5").fetchone()[0]
    since = ledger.verify_chain(conn, after=5, anchor=anchor, workers=workers)
    monkeypatch.undo()
    assert since == ledger.verify_chain(conn, after=5, anchor=anchor, workers=1)


def test_a_range_worker_that_raises_or_dies_falls_back_to_the_exact_scan(conn, monkeypatch):
    from mindos.core import workers as pool

    _seed(conn)
    TAMPERS["relinked"](conn)
    expected = ledger.verify_chain(conn, workers=1)
    monkeypatch.setattr(ledger, "PARALLEL_MIN_EVENTS", 1)

    def broken_pool(*args, **kwargs):
        raise RuntimeError("a process in the pool was terminated abruptly")

    monkeypatch.setattr(pool, "spread", broken_pool)
    assert ledger.verify_chain(conn, workers=2) == expected
    monkeypatch.undo()

    def raising(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(ledger, "PARALLEL_MIN_EVENTS", 1)
    monkeypatch.setattr(ledger, "_range_clean", raising)
    assert ledger.verify_chain(conn, workers=2) == expected


def test_a_threaded_process_checks_the_chain_without_forking(conn, monkeypatch):
    """The MCP server runs threads: forking it could copy a lock another thread holds."""
    import threading

    from mindos.core import workers as pool

    _seed(conn)
    monkeypatch.setattr(ledger, "PARALLEL_MIN_EVENTS", 1)
    monkeypatch.setattr(pool, "spread", lambda *a, **k: pytest.fail("forked with a thread running"))
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert ledger.verify_chain(conn, workers=2) == {"ok": True, "events": 24, "problems": []}
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("tamper", ["clean", "payload_edited", "relinked", "row_deleted_at_a_boundary",
                                    "invalid_utf8", "integer_written", "last_row_edited"])
def test_verifying_after_a_pinned_event_names_what_the_full_scan_names_after_it(conn, tamper):
    _seed(conn)
    pinned = 8
    anchor = conn.execute("SELECT hash FROM audit_events WHERE id = ?", (pinned,)).fetchone()[0]
    TAMPERS[tamper](conn)
    full = ledger.verify_chain(conn)
    since = ledger.verify_chain(conn, after=pinned, anchor=anchor)
    assert since["problems"] == [p for p in full["problems"] if p["event_id"] > pinned]
    assert since["events"] == conn.execute("SELECT count(*) FROM audit_events WHERE id > ?", (pinned,)).fetchone()[0]


def test_a_wrong_anchor_breaks_the_first_link_after_it(conn):
    _seed(conn, 5)
    report = ledger.verify_chain(conn, after=2, anchor="b" * 64)
    assert report["problems"] == [{"event_id": 3, "kind": "broken_link", "previous_event_id": 2}]
    assert report["events"] == 3


@pytest.mark.parametrize("tamper", ["clean", "payload_edited", "row_deleted_at_a_boundary"])
def test_inside_a_write_the_check_reads_the_transaction_itself(conn, monkeypatch, tamper):
    """A restore or an import verifies the chain before it commits: the rows it is about to
    commit are what is checked (forked workers would read the committed state instead), and
    the check still answers (it once failed with 'Error creating function')."""
    from mindos.store import db

    import os

    monkeypatch.setattr(ledger, "PARALLEL_MIN_EVENTS", 4)
    _seed(conn, 12)

    def no_fork():
        raise AssertionError("a worker was forked inside a write")

    monkeypatch.setattr(os, "fork", no_fork)
    with db.write(conn):
        for n in range(13, 25):  # uncommitted: only this transaction sees events 13..24
            tasks.create(conn, project="P", title=f"task {n}", task_id=f"t{n}")
        TAMPERS[tamper](conn)
        inside = ledger.verify_chain(conn, workers=2)
        expected = ledger.verify_chain(conn, workers=1)
    assert inside == expected
    assert inside["events"] == (23 if tamper == "row_deleted_at_a_boundary" else 24)
    assert inside["ok"] is (tamper == "clean")
