"""Pack relevance measured (bench/pack_eval.py): the related sections carry the labelled rows
of the retrieval corpus, and never a replaced one."""

import json
import os
import sys

from mindos.core import clock
from conftest import ROOT


def test_related_sections_pack_the_expected_rows_and_no_outdated_one():
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import pack_eval
    finally:
        sys.path.remove(os.path.join(ROOT, "bench"))
    report = pack_eval.evaluate()
    clock.set_now("2026-08-21T09:00:00Z")
    assert report["queries"] >= 100 and set(report["by_section"]) == set(pack_eval.SECTION_OF.values())
    # the sections matching through the retrieval engine (stems, synonyms) find every labelled row
    for section in ("related_handoffs", "related_facts", "related_semantic"):
        assert report["by_section"][section]["expected"] > 0
        assert report["by_section"][section]["found"] >= 0.9, (section, report["by_section"][section])
    assert report["by_section"]["related_notes"]["found"] >= 0.8  # plain tokens, BM25 (the legacy section)
    assert report["by_kind"]["temporal"]["outdated_packed"] == 0
    assert report["overall"]["found"] >= 0.9
    json.dumps(report)
