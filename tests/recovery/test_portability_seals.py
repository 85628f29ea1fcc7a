"""Every sealed portability document refuses every single-byte change (the created_at value
excepted: it sits outside the seal by design, so identical state re-seals identically)."""

import json
import os

import pytest

import migratekit
import sessionkit_brain
from mindos.core import seal
from mindos.errors import MindosError
from mindos.recovery import brain_import, brain_inventory, migrate_import, migrate_inventory, onboard


def _documents(conn, tmp_path):
    root = migratekit.machine(str(tmp_path / "old"))
    inv = str(tmp_path / "inv.json")
    migrate_inventory.inventory(conn, root, inv)
    report = str(tmp_path / "onboard.json")
    outcome, _ = onboard.onboard(conn, inv, apply=True, out=report)
    result = [s for s in outcome["stages"] if s["stage"] == "import_apply"][0]["journal"]
    homes = sessionkit_brain.installation(tmp_path / "b")
    brain = str(tmp_path / "brain.json")
    brain_inventory.inventory(brain, home=homes["home"], hermes=homes["hermes"], claude=homes["claude"])
    done = brain_import.brain_import(brain, str(tmp_path / "new"), apply=True)
    return [(inv, migrate_inventory.FORMAT), (result, migrate_import.RESULT_FORMAT), (report, onboard.FORMAT),
            (brain, brain_inventory.FORMAT), (done["report"], brain_import.FORMAT),
            (done["provenance"], brain_import.PROVENANCE_FORMAT)]


def test_every_single_byte_change_is_refused(conn, tmp_path):
    checked = 0
    for path, fmt in _documents(conn, tmp_path):
        data = open(path, "rb").read()
        seal.loads(data, fmt)  # intact
        doc = json.loads(data)
        skip = set()
        if "created_at" in doc:
            value = json.dumps(doc["created_at"]).encode()
            start = data.index(b'"created_at":' + value) + len(b'"created_at":')
            skip = set(range(start + 1, start + len(value) - 1))  # the timestamp's characters
        step = max(1, len(data) // 1500)
        for offset in range(0, len(data), step):
            if offset in skip:
                continue
            changed = bytearray(data)
            changed[offset] = (changed[offset] + 1) % 256
            with pytest.raises(MindosError):
                seal.loads(bytes(changed), fmt)
            checked += 1
    assert checked > 3000
