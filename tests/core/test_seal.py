"""Sealed documents: the golden seal, verification, and refusal of any change."""

import json
import os
import stat

import pytest

from mindos.core import seal
from mindos.core.canonical import sha256_hex
from mindos.errors import IntegrityError

BODY = {"created_at": "2026-01-01T00:00:00Z", "rows": [{"id": "t1", "n": 3}], "name": "snap"}


def test_a_fixed_document_has_a_pinned_seal():
    doc = seal.seal("mindos-golden-v1", BODY)
    assert doc["seal"] == {"algorithm": "sha256", "outside": ["created_at"],
                           "digest": "f30e49b380374cdc37934e57989eb0104c7a74218b28520bbbf17496a601ada7"}
    assert doc["format"] == "mindos-golden-v1" and BODY == {**BODY}  # the body is not mutated
    assert "seal" not in BODY


def test_fields_outside_the_seal_may_differ_and_nothing_else():
    one = seal.seal("f-v1", BODY)
    two = seal.seal("f-v1", {**BODY, "created_at": "2027-05-05T05:05:05Z"})
    assert one["seal"] == two["seal"]
    assert seal.seal("f-v1", {**BODY, "name": "other"})["seal"] != one["seal"]
    assert seal.seal("f-v2", BODY)["seal"] != one["seal"]


def test_write_and_read_round_trip_with_mode_0600(tmp_path):
    path = tmp_path / "doc.json"
    doc = seal.seal("f-v1", BODY)
    digest = seal.write(str(path), doc)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert seal.read(str(path), "f-v1") == doc
    assert digest == sha256_hex(path.read_bytes())


def test_every_single_byte_change_inside_the_seal_is_refused(tmp_path):
    data = seal.dumps(seal.seal("f-v1", BODY))
    text = data.decode("utf-8")
    start = text.index('"created_at":"') + len('"created_at":"')
    outside = range(start, start + len(BODY["created_at"]))  # the one field left outside on purpose
    refused = 0
    for position in range(len(data) - 1):  # the trailing newline is not part of the document
        if position in outside:
            continue
        for replacement in {ord("0"), ord("x"), ord(" ")} - {data[position]}:
            changed = data[:position] + bytes([replacement]) + data[position + 1:]
            try:
                seal.loads(changed, "f-v1")
            except IntegrityError:
                refused += 1
                continue
            pytest.fail(f"a change at byte {position} was accepted: {changed!r}")
    assert refused > 2 * (len(data) - len(outside))


def test_wrong_format_missing_seal_and_moved_fields_are_refused():
    doc = seal.seal("f-v1", BODY)
    with pytest.raises(IntegrityError, match="expected 'f-v2'"):
        seal.verify(doc, "f-v2")
    with pytest.raises(IntegrityError, match="no seal"):
        seal.verify({k: v for k, v in doc.items() if k != "seal"})
    # moving "name" outside the seal and then editing it must not pass
    moved = json.loads(json.dumps(doc))
    moved["seal"]["outside"] = ["created_at", "name"]
    moved["name"] = "edited"
    with pytest.raises(IntegrityError, match="unsealed fields differ"):
        seal.verify(moved)


def test_unreadable_and_non_json_files_are_refused(tmp_path):
    with pytest.raises(IntegrityError, match="cannot read sealed document"):
        seal.read(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe not json")
    with pytest.raises(IntegrityError, match="not valid JSON"):
        seal.read(str(bad))


def test_a_body_may_not_carry_its_own_seal_or_format():
    with pytest.raises(ValueError):
        seal.seal("f-v1", {"seal": "x"})
    with pytest.raises(ValueError):
        seal.seal("f-v1", {"format": "other"})


# -- signed seals -----------------------------------------------------------------------------


def test_a_signed_seal_names_its_signer_and_seals_the_signature_too():
    from mindos.errors import IntegrityError

    key, other = b"k" * 32, b"o" * 32
    doc, data = seal.seal_bytes("demo-v1", {"a": 1, "b": "two"}, outside=(), key=key)
    signature = doc["seal"]["signature"]
    assert signature["algorithm"] == "hmac-sha256" and signature["key_id"] == seal.key_id(key)
    keys = {seal.key_id(key): ("mine", key)}
    loaded, (label, key_id) = seal.loads(data, "demo-v1", outside=(), exact=True, keys=keys)
    assert loaded == doc and (label, key_id) == ("mine", seal.key_id(key))
    assert seal.loads(data, "demo-v1", outside=(), exact=True, keys={})[1] == ("unsigned", seal.key_id(key))
    # the same key id with another key: the mac cannot match
    with pytest.raises(IntegrityError, match="signature mismatch"):
        seal.loads(data, "demo-v1", outside=(), exact=True, keys={seal.key_id(key): ("mine", other)})
    # any change of the signature itself breaks the digest, even for a reader without keys
    forged = data.replace(signature["mac"].encode(), ("0" * 64).encode())
    with pytest.raises(IntegrityError, match="seal mismatch"):
        seal.loads(forged, "demo-v1", outside=(), exact=True)
    # unsigned documents are unchanged: the digest is the body's alone
    plain, plain_bytes = seal.seal_bytes("demo-v1", {"a": 1, "b": "two"}, outside=())
    assert "signature" not in plain["seal"]
    assert seal.loads(plain_bytes, "demo-v1", outside=(), exact=True, keys=keys)[1] == ("unsigned", None)
    assert plain["seal"]["digest"] == seal.seal("demo-v1", {"a": 1, "b": "two"}, outside=())["seal"]["digest"]
