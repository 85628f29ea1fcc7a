"""A smoke test of bench/guard_speed.py: every 64 KiB text builds and the figures report."""

import os
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import guard_speed  # noqa: E402

from mindos.core import secrets  # noqa: E402


def test_texts_are_64_kib_and_figures_report_every_one():
    texts = guard_speed.texts()
    assert len(texts) >= 20 and all(len(text) == guard_speed.SIZE for text in texts.values())
    rows = guard_speed.figures([("this", secrets)], repeat=1, only="a_eq_b")["this"]
    assert set(rows) == {"a_eq_b", "max_scan_ms"}
    assert set(rows["a_eq_b"]) == {"scan_ms", "scan_cpu_ms", "redact_ms", "kinds"}


def test_compare_runs_two_detectors_side_by_side(capsys):
    assert guard_speed.main(["--repeat", "1", "--only", "equals", "--compare",
                             os.path.join(ROOT, "mindos", "core", "secrets.py")]) == 0
    out, err = capsys.readouterr()
    assert '"this"' in out and '"compare"' in out and err == ""
