#!/usr/bin/env python3
"""Secret-guard corpus figures: positives caught and clean texts refused, for any detector.

    python3 bench/secret_corpus_figures.py                       # this checkout's mindos/core/secrets.py
    python3 bench/secret_corpus_figures.py --detector OLD.py     # e.g. from `git show main:mindos/core/secrets.py`

Prints JSON: positives caught / total (and the kinds missed), negatives refused / total, and
the median time to scan a 64 KiB engineering text.
"""

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import secret_corpus  # noqa: E402


def load(path):
    if path is None:
        from mindos.core import secrets

        return secrets
    spec = importlib.util.spec_from_file_location("detector_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figures(detector):
    caught, missed = 0, []
    for kind, value, text in secret_corpus.secret_texts():
        found = detector.scan(text)
        redacted, _ = detector.redact(text)
        if kind in found and value not in redacted:
            caught += 1
        else:
            missed.append(f"{kind}: {text[:50]!r}")
    refused = [text[:60] for text in secret_corpus.CLEAN if detector.scan(text)]
    prose = ("The retry path in the connection pool drops the lease when the heartbeat is late; "
             "see the runbook for the password policy and token budget. ")
    big = (prose * (65536 // len(prose) + 1))[:65536]
    detector.scan(big)  # compile outside the timing
    samples = []
    for _ in range(15):
        started = time.perf_counter()
        detector.scan(big)
        samples.append((time.perf_counter() - started) * 1000)
    return {"positives": len(secret_corpus.SECRETS), "positives_caught": caught, "missed": missed,
            "negatives": len(secret_corpus.CLEAN), "negatives_refused": len(refused), "false_positives": refused,
            "scan_64k_median_ms": round(statistics.median(samples), 2)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detector", help="path of a secrets.py to measure (default: this checkout's)")
    args = parser.parse_args(argv)
    print(json.dumps(figures(load(args.detector)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
