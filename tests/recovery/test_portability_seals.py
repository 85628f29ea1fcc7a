"""Every sealed portability document refuses every single-byte change -- a value, a key, the
created_at timestamp, the seal itself, whitespace or the final newline -- at its checker or
consumer; created_at sits inside the seal like every other field."""

import json
import os

import pytest

from conftest import overwrite
import migratekit
import sessionkit_brain
from mindos.core import seal
from mindos.errors import IntegrityError, MindosError
from mindos.migration import brain_import, brain_inventory, onboard, rollback
from mindos.migration import importer as migrate_import
from mindos.migration import inventory as migrate_inventory

HERMES_FORMAT, VAULT_FORMAT = "autopilot-hermes-registration-v1", "autopilot-vault-archive-v1"


@pytest.fixture
def documents(conn, tmp_path, home):
    """``[(kind, path, format, consumer)]``: one of every sealed portability document, with the
    call that reads it for real (each must refuse a changed byte)."""
    root = migratekit.machine(str(tmp_path / "old"))
    inv = str(tmp_path / "inv.json")
    summary = migrate_inventory.inventory(conn, root, inv)
    ids = {s["kind"]: s["source_id"] for s in summary["sources"]}
    report = str(tmp_path / "onboard.json")
    outcome = onboard.onboard(conn, inv, apply=True, out=report)
    assert outcome["ok"], outcome
    applied = [s for s in outcome["stages"] if s["stage"] == "import_apply"][0]
    journals = {step["kind"]: step["journal"] for step in applied["steps"]}
    homes = sessionkit_brain.installation(tmp_path / "b")
    brain = str(tmp_path / "brain.json")
    brain_inventory.inventory(brain, home=homes["home"], hermes=homes["hermes"], claude=homes["claude"])
    done = brain_import.brain_import(brain, str(tmp_path / "new"), apply=True)

    def manifest_consumer(kind):
        def consume(path):  # the re-run reads the copy's manifest: a changed byte is a different copy
            plan = migrate_import.migrate_import(conn, inv, ids[kind])
            if "refusal_on_apply" not in plan:
                return
            migrate_import.migrate_import(conn, inv, ids[kind], apply=True)
        return consume

    return [
        ("migration inventory", inv, migrate_inventory.FORMAT,
         lambda p: (migrate_inventory.check(p), migrate_import.migrate_import(conn, p, ids["autopilot_sqlite"]))),
        ("migration result", applied["journal"], migrate_import.RESULT_FORMAT,
         lambda p: rollback.rollback(conn, p)),
        ("copy-step result", journals["obsidian_vault"], migrate_import.RESULT_FORMAT,
         lambda p: rollback.rollback(conn, p)),
        ("onboarding report", report, onboard.FORMAT, onboard.load_report),
        ("brain inventory", brain, brain_inventory.FORMAT,
         lambda p: (brain_inventory.check(p), brain_import.plan(p, str(tmp_path / "new")))),
        ("brain-import report", done["report"], brain_import.FORMAT, brain_import.load_report),
        ("brain provenance", done["provenance"], brain_import.PROVENANCE_FORMAT,
         lambda p: brain_import.load_report(p, brain_import.PROVENANCE_FORMAT)),
        ("hermes registration", os.path.join(str(home), "hermes", "registered", ids["hermes_home"], "manifest.json"),
         HERMES_FORMAT, manifest_consumer("hermes_home")),
        ("vault archive", os.path.join(str(home), "archive", "obsidian", ids["obsidian_vault"], "manifest.json"),
         VAULT_FORMAT, manifest_consumer("obsidian_vault")),
    ]


def _flip(data, offset, mask=0x01):
    changed = bytearray(data)
    changed[offset] ^= mask
    return bytes(changed)


def _sample(data):
    """Offsets covering every field: the first and middle byte of each top-level member's key
    and the first, middle and last byte of its value, every byte of created_at, every third
    byte of the seal member and the final newline."""
    doc = json.loads(data)
    text = data.decode("utf-8")
    offsets = {len(data) - 1}
    for key, value in doc.items():
        member = json.dumps(key, ensure_ascii=False) + ":" + json.dumps(value, sort_keys=True, separators=(",", ":"),
                                                                         ensure_ascii=False)
        start = len(text[:text.index(member)].encode("utf-8"))
        size = len(member.encode("utf-8"))
        if key in ("created_at", "seal"):
            offsets.update(range(start, start + size, 1 if key == "created_at" else 3))
        else:
            key_size = len(json.dumps(key).encode("utf-8"))
            offsets.update({start, start + key_size // 2, start + key_size + 1, start + key_size + 1 + (size - key_size) // 2,
                            start + size - 1})
    return sorted(offsets)


@pytest.mark.slow
def test_every_single_byte_change_is_refused(documents, tmp_path):
    kinds, checked = set(), 0
    for kind, path, fmt, consume in documents:
        data = open(path, "rb").read()
        doc = seal.loads(data, fmt, outside=(), exact=True)  # intact, fully sealed
        assert doc["seal"]["outside"] == [] and ("created_at" in doc or kind == "brain provenance"), kind
        consume(path)  # the intact document is accepted by its consumer
        # every byte, through the byte-exact reader every consumer uses
        for offset in range(len(data)):
            with pytest.raises(IntegrityError):
                seal.loads(_flip(data, offset), fmt, outside=(), exact=True)
            checked += 1
        # every field (created_at byte by byte, the seal), through the real consumer
        original = data
        for offset in _sample(data):
            overwrite(path, _flip(original, offset))
            with pytest.raises(MindosError):
                consume(path)
            checked += 1
        hexdigit = data.index(b'"seal":{"algorithm":"sha256","digest":"') + 45
        for offset in (hexdigit, len(data) - 1):  # a case-flipped hex digit, whitespace
            for changed in (original[:offset] + b" " + original[offset + 1:], _flip(original, offset, 0x20)):
                with open(path, "wb") as handle:
                    handle.write(changed)
                with pytest.raises(MindosError):
                    consume(path)
        for changed in (original[:-1], original + b" ", b" " + original):  # a byte more or less
            with open(path, "wb") as handle:
                handle.write(changed)
            with pytest.raises(MindosError):
                consume(path)
        with open(path, "wb") as handle:
            handle.write(original)
        consume(path)
        kinds.add(kind)
    assert len(kinds) == 9 and checked > 20000, checked


def test_created_at_is_sealed_and_content_digest_ignores_it(conn, tmp_path):
    from mindos.core import clock

    root = migratekit.machine(str(tmp_path / "old"))
    first = migrate_inventory.inventory(conn, root, str(tmp_path / "a.json"))
    clock.advance(hours=1)
    second = migrate_inventory.inventory(conn, root, str(tmp_path / "b.json"))
    assert first["digest"] != second["digest"] and first["content_digest"] == second["content_digest"]
    data = open(tmp_path / "a.json", "rb").read()
    doc = json.loads(data)
    moved = data.replace(doc["created_at"].encode(), doc["created_at"].replace("09:", "08:").encode())
    assert moved != data
    open(tmp_path / "c.json", "wb").write(moved)
    with pytest.raises(IntegrityError, match="seal mismatch"):
        migrate_inventory.check(str(tmp_path / "c.json"))
