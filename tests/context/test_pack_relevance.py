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
    # every section matches through the retrieval engine (stems, synonyms); related notes
    # found 0.85 when they matched the task's plain tokens
    for section in pack_eval.SECTION_OF.values():
        assert report["by_section"][section]["expected"] > 0
        assert report["by_section"][section]["found"] >= 0.95, (section, report["by_section"][section])
    for kind in ("morphological", "synonym"):
        assert report["by_kind"][kind]["found"] >= 0.95, (kind, report["by_kind"][kind])
    assert report["by_kind"]["temporal"]["outdated_packed"] == 0
    assert report["overall"]["found"] >= 0.95
    json.dumps(report)
