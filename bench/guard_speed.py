#!/usr/bin/env python3
"""Secret-guard speed: median milliseconds of the write guard's check on 64 KiB texts.

    python3 bench/guard_speed.py                         # this checkout's mindos/core/secrets.py
    python3 bench/guard_speed.py --detector OLD.py       # e.g. from `git show main:mindos/core/secrets.py`
    python3 bench/guard_speed.py --compare OLD.py        # both, interleaved, side by side
    python3 bench/guard_speed.py --repeat 41 --only prose

Each text is 64 KiB: engineering prose (the corpus's clean texts: clean, with its secrets
mixed in, ASCII only, with non-ASCII typography, already redacted) and hostile shapes (one
trigger word repeated, 64 KiB of "a", base64, hex, a line with no spaces, runs of "=" or
":", labels, fullwidth text, zero-width splits).  ``scan`` is what every write path runs
(normalization, every detector, the ``[REDACTED:`` placeholder handling); ``redact`` is
the ``--redact`` path.  The target (issue 8) is ``scan`` under 5 ms on every text.

``first_scan_ms`` is what every write pays once per process: a fresh interpreter importing
the detector and scanning one short field (the detectors are built then).

Prints JSON: ``{name: {"scan_ms", "scan_cpu_ms", "redact_ms", "kinds"}}`` (medians; the CPU
figure is this thread's CPU time, which a machine shared with other work disturbs less).
Repetitions run round-robin over the texts, so a busy spell touches every text alike.
"""

import argparse
import base64
import json
import os
import random
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# the corpus figures script loads a detector by path and puts the tests' corpus in reach
from secret_corpus_figures import load, secret_corpus  # noqa: E402

SIZE = 65536


def _fill(unit):
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


def texts():
    """``{name: 64 KiB text}``."""
    rng = random.Random(8)
    clean = list(secret_corpus.CLEAN)
    rng.shuffle(clean)
    mixed = [text for _, _, text in secret_corpus.secret_texts()] + clean
    rng.shuffle(mixed)
    with_secrets = _fill("\n".join(mixed) + "\n")
    prose = _fill("\n".join(clean) + "\n")
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    from mindos.core import secrets

    return {
        "prose": prose,
        "prose_ascii": _fill("\n".join(text.encode("ascii", "ignore").decode() for text in clean) + "\n"),
        "prose_with_secrets": with_secrets,
        # curly quotes, dashes, an ellipsis (NFKC changes it), a fullwidth word, a zero-width
        # space and a soft hyphen on every line
        "prose_unicode": _fill("\n".join(f"{text} \u2014 \u201cok\u201d\u2026 \uff54\uff4f\uff4b\uff45\uff4e "
                                         f"pass\u200bword po\u00adlicy" for text in clean) + "\n"),
        "prose_redacted": _fill(secrets.redact(with_secrets[:SIZE // 4])[0]),
        "token_words": _fill("token "),
        "password_words": _fill("password "),
        "key_eq": _fill("key="),
        "token_eq_no_spaces": _fill("token="),
        "secret_colon": _fill("secret: "),
        "a": "a" * SIZE,
        "base64": base64.b64encode(rng.randbytes(SIZE)).decode()[:SIZE],
        "base64_lines": _fill(base64.encodebytes(rng.randbytes(SIZE)).decode()),
        "hex": rng.randbytes(SIZE // 2).hex(),
        "no_spaces": "".join(rng.choice(alphabet + "._-/:=+@") for _ in range(SIZE)),
        "equals": "=" * SIZE,
        "colons": ":" * SIZE,
        "dots": "." * SIZE,
        "a_eq_b": _fill("a=b:"),
        "api_key_eq_long": _fill("api_key=" + "a1" * 400 + " "),
        "bearer_words": _fill("Bearer "),
        "urls": _fill("https://user@host.example/" + "a" * 40 + " "),
        "redacted_labels": _fill("[REDACTED:api_key_assignment] "),
        "redacted_open": _fill("[REDACTED:"),
        "fullwidth": _fill("\uff54\uff4f\uff4b\uff45\uff4e\uff1d\uff41\uff42\uff43\uff11\uff12\uff13 "),
        "zwsp": _fill("pass\u200bword=abc123 "),
    }


def _time(call, text):
    wall, cpu = time.perf_counter(), time.thread_time()
    call(text)
    return (time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000


def figures(detectors, repeat=15, only=None):
    """``{label: {name: figures}}`` for each ``(label, module)`` in ``detectors``."""
    chosen = {name: text for name, text in texts().items() if not only or only in name}
    samples = {(label, name, what): [] for label, _ in detectors for name in chosen for what in ("scan", "redact")}
    for label, detector in detectors:
        for text in chosen.values():  # compile and warm outside the timing
            detector.scan(text)
            detector.redact(text)
    for _ in range(repeat):
        for name, text in chosen.items():
            for label, detector in detectors:
                samples[(label, name, "scan")].append(_time(detector.scan, text))
                samples[(label, name, "redact")].append(_time(detector.redact, text))
    results = {}
    for label, detector in detectors:
        rows = results[label] = {}
        for name, text in chosen.items():
            scans, redacts = samples[(label, name, "scan")], samples[(label, name, "redact")]
            rows[name] = {"scan_ms": round(statistics.median(wall for wall, _ in scans), 2),
                          "scan_cpu_ms": round(statistics.median(cpu for _, cpu in scans), 2),
                          "redact_ms": round(statistics.median(wall for wall, _ in redacts), 2),
                          "kinds": len(detector.scan(text))}
        rows["max_scan_ms"] = max(row["scan_ms"] for row in rows.values())
    return results


# A fresh interpreter's import of the detector and its first scan of a short field: what
# every write pays once per process (the detectors are built on the first scan).
# (The source is compiled before the clock starts, so a file without cached bytecode is not
# penalized: the figure is the module's body and the first scan.)
_FIRST_SCAN = """
import sys, time, types
with open(sys.argv[1], encoding="utf-8") as handle:
    code = compile(handle.read(), sys.argv[1], "exec")
module = types.ModuleType("detector")
module.__file__ = sys.argv[1]
sys.modules["detector"] = module
started = time.perf_counter()
exec(code, module.__dict__)
module.scan("Fix the flaky login test in CI")
print((time.perf_counter() - started) * 1000)
"""


def first_scan_ms(path, runs=9):
    """Median milliseconds of :data:`_FIRST_SCAN` over ``runs`` fresh interpreters."""
    import subprocess

    times = [float(subprocess.run([sys.executable, "-c", _FIRST_SCAN, path], capture_output=True, text=True,
                                  check=True, cwd=ROOT).stdout) for _ in range(runs)]
    return round(statistics.median(times), 2)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detector", help="path of a secrets.py to measure (default: this checkout's)")
    parser.add_argument("--compare", help="path of another secrets.py to measure beside this checkout's")
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per text (default 15)")
    parser.add_argument("--only", help="measure only the texts whose name contains this")
    args = parser.parse_args(argv)
    detectors = [("this", load(args.detector))]
    if args.compare:
        detectors.append(("compare", load(args.compare)))
    results = figures(detectors, args.repeat, args.only)
    for label, detector in detectors:
        results[label]["first_scan_ms"] = first_scan_ms(detector.__file__)
    print(json.dumps(results if args.compare else results["this"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
