"""bench/phrase_probe.py on a small home: every probe it weighs (the trigram index's NEAR
pair, three runs, a detail=none trigram index, the pair index) names every task holding the
phrase as LIKE sees it, so the instructions it reports compare probes that answer alike."""

import os
import sqlite3
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import phrase_probe  # noqa: E402

from mindos.store import db, fts  # noqa: E402
from mindos.work import tasks  # noqa: E402


def test_every_probe_names_every_task_holding_the_phrase(tmp_path):
    if not db.trigram_supported():
        pytest.skip("SQLite without the trigram tokenizer")
    home = str(tmp_path / "home")
    conn = db.connect(home)
    texts = ["please retry payments now", "payments retry", "Deploy Gateway", "deploy the gateway", "cache api v2",
             "CACHE layer in api", "rate limit", "schema migration worker", "schema migration in worker"]
    for n, text in enumerate(texts * 3):
        tasks.create(conn, task_id=f"t{n:02d}", project="Trove", title=f"task {n}", description=text)
    conn.close()
    built = phrase_probe.build(home)
    assert set(built) == {phrase_probe.NONE, phrase_probe.PAIRS}
    scratch = sqlite3.connect(os.path.join(home, "state.db"))
    try:
        for phrase in phrase_probe.PHRASES:
            found = phrase_probe.probes(scratch, phrase)
            assert {"near", "near3", "none", "pairs"} <= set(found), phrase
            holding = {seq for (seq,) in scratch.execute("SELECT seq FROM tasks WHERE description LIKE ? ESCAPE '\\'",
                                                         (fts.like_pattern(phrase),))}
            assert len(holding) == 3, phrase
            for label, (sql, expression) in found.items():
                named = {row[0] for row in scratch.execute(sql, (expression,))}
                assert holding <= named, (phrase, label)
    finally:
        scratch.close()
