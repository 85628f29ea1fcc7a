#!/usr/bin/env python3
"""Measure audit.verify_chain throughput on a seeded ledger.

Usage: python3 bench/verify_chain_speed.py [EVENTS]   (default 300000)

Builds a throwaway home under a temp directory, seeds EVENTS chained audit rows with
realistic payloads (bulk insert, same hashing as db.append_event), then times
audit.verify_chain and prints events/second.  Not a test: timings vary by machine.
"""

import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mindos import audit, db  # noqa: E402
from mindos.files import canonical_json  # noqa: E402


def seed(conn, count):
    prev = db.GENESIS_HASH
    rows = []
    for event_id in range(1, count + 1):
        task = f"t-{event_id % 5000:08x}"
        payload = canonical_json({"owner": "hermes", "lease_epoch": event_id % 7, "minutes": 30,
                                  "note": "Running verification for the nightly build"})
        created = f"2026-08-21T{(event_id // 3600) % 24:02d}:{(event_id // 60) % 60:02d}:{event_id % 60:02d}Z"
        digest = db.event_hash(event_id, prev, "task", task, "claimed", payload, created)
        rows.append((event_id, "task", task, "claimed", payload, created, prev, digest))
        prev = digest
    with db.write(conn):
        conn.executemany(
            "INSERT INTO audit_events(id, entity_type, entity_id, action, payload_json, created_at, prev_hash, hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300000
    with tempfile.TemporaryDirectory() as home:
        conn = db.connect(home)
        seed(conn, count)
        best = best_cpu = None
        for _ in range(5):
            start, start_cpu = time.perf_counter(), time.process_time()
            report = audit.verify_chain(conn)
            elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
            assert report["ok"] and report["events"] == count, report
            best = elapsed if best is None else min(best, elapsed)
            best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
        conn.close()
    # CPU time is reported too: on a shared machine wall time mostly measures the neighbours
    print(f"verify_chain: {count} events, best of 5: wall {best:.3f}s = {count / best:,.0f} events/s;"
          f" cpu {best_cpu:.3f}s = {count / best_cpu:,.0f} events/s")


if __name__ == "__main__":
    main()
