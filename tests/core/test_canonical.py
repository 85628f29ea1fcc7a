"""Canonical JSON and its digest: golden forms that stored hashes depend on."""

import math

import pytest

from mindos.core import canonical
from mindos.errors import InvalidInput

TRICKY = {"b": [1, 2.5, None, True], "a": "é\u2028\n\"\x01", "c": {"z": -0.0, "y": 1e100, "x": 10**20}}


def test_canonical_json_of_a_tricky_value_is_pinned():
    # sorted keys at every depth, no spaces, UTF-8 kept, control characters escaped,
    # big integers exact: any change here changes every stored digest
    assert canonical.canonical_json(TRICKY) == (
        '{"a":"é\u2028\\n\\"\\u0001","b":[1,2.5,null,true],"c":{"x":100000000000000000000,"y":1e+100,"z":-0.0}}'
    )


def test_digest_is_sha256_of_the_canonical_form():
    assert canonical.digest({"k": "v"}) == "666c1aa02e8068c6d5cc1d3295009432c16790bec28ec8ce119d0d1a18d61319"
    assert canonical.digest({"k": "v"}) == canonical.sha256_hex('{"k":"v"}')
    assert canonical.digest({"a": 1, "b": 2}) == canonical.digest({"b": 2, "a": 1})


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, {"x": [math.nan]}])
def test_nan_and_infinity_are_refused(value):
    with pytest.raises(ValueError):
        canonical.canonical_json(value)


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "{", "", "[1,]"])
def test_loads_strict_refuses_non_json_naming_the_flag(text):
    with pytest.raises(InvalidInput, match="invalid --payload: malformed JSON"):
        canonical.loads_strict(text, "--payload")


def test_loads_strict_reports_deep_nesting_cleanly():
    with pytest.raises(InvalidInput, match="nested too deeply"):
        canonical.loads_strict("[" * 100000 + "]" * 100000, "--payload")


def test_sha256_is_hashlibs_and_matches_the_standard_vector():
    import hashlib

    from mindos.core import canonical

    assert canonical.sha256() is hashlib.sha256
    assert canonical.sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    data = b"x" * 70000
    assert canonical.sha256_hex(data) == hashlib.sha256(data).hexdigest()



# -- the pure-Python SHA-256 of short inputs ----------------------------------------------

def test_the_python_sha256_gives_hashlibs_digest_at_every_length_and_block_boundary():
    import hashlib
    import random

    from mindos.core import canonical

    rng = random.Random(32)
    lengths = list(range(0, 2001)) + [55, 56, 63, 64, 119, 120] * 20
    for size in lengths:
        data = bytes(rng.getrandbits(8) for _ in range(size))
        assert canonical._sha256_python(data) == hashlib.sha256(data).hexdigest(), size
    for data in (b"", b"abc", b"\xff" * 64, b"\x00" * 120, "é\x1f✓".encode("utf-8") * 37):
        assert canonical._sha256_python(data) == hashlib.sha256(data).hexdigest()
    assert canonical._sha256_python(bytearray(b"abc")) == hashlib.sha256(b"abc").hexdigest()


@pytest.fixture
def without_hashlib(monkeypatch):
    """The state of a fresh process: hashlib not loaded, the whole pure-Python budget left.
    Returns ``(lengths hashed in Python, the hashlib module)``: importing hashlib in a test
    would load it again."""
    import hashlib
    import sys

    from mindos.core import canonical

    monkeypatch.delitem(sys.modules, "hashlib", raising=False)
    monkeypatch.setattr(canonical, "_sha256", None)
    monkeypatch.setattr(canonical, "_pure_left", canonical.PURE_BLOCKS)
    calls = []
    real = canonical._sha256_python
    monkeypatch.setattr(canonical, "_sha256_python", lambda data: calls.append(len(data)) or real(data))
    return calls, hashlib


def test_short_inputs_hash_in_python_until_the_budget_is_spent_then_hashlib_loads(without_hashlib):
    import sys

    calls, real_hashlib = without_hashlib

    from mindos.core import canonical

    text = "x" * 200  # 4 blocks with the padding
    assert canonical.sha256_hex(text) == real_hashlib.sha256(text.encode()).hexdigest()
    assert calls == [200] and canonical._pure_left == canonical.PURE_BLOCKS - 4
    assert "hashlib" not in sys.modules and canonical._sha256 is None
    # an input larger than the blocks left goes to hashlib, and hashlib stays from then on
    big = b"y" * (64 * canonical._pure_left)
    assert canonical.sha256_hex(big) == real_hashlib.sha256(big).hexdigest()
    assert "hashlib" in sys.modules and canonical._sha256 is not None
    assert canonical.sha256_hex(b"abc") == real_hashlib.sha256(b"abc").hexdigest()
    assert calls == [200]


def test_a_process_that_loaded_hashlib_already_never_hashes_in_python(without_hashlib, monkeypatch):
    import sys

    from mindos.core import canonical

    calls, hashlib = without_hashlib
    monkeypatch.setitem(sys.modules, "hashlib", hashlib)
    assert canonical.sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert calls == []


@pytest.mark.parametrize("key_size", [0, 1, 32, 63, 64, 65, 200])
@pytest.mark.parametrize("size", [0, 1, 55, 64, 119, 500, 5000])
def test_the_seal_signature_is_the_standard_librarys_hmac_byte_for_byte(key_size, size):
    import hashlib
    import hmac
    import random

    from mindos.core import seal

    rng = random.Random(key_size * 7919 + size)
    key = bytes(rng.getrandbits(8) for _ in range(key_size))
    data = bytes(rng.getrandbits(8) for _ in range(size))
    mac = hmac.new(key, data, hashlib.sha256).hexdigest()
    assert seal._mac(key, data) == mac
    assert seal._same(seal._mac(key, data), mac) and hmac.compare_digest(mac, mac)
    for other in (mac[:-1] + ("0" if mac[-1] != "0" else "1"), mac[:-1], "", "é" * 64, mac.upper()):
        assert seal._same(mac, other) is hmac.compare_digest(mac.encode(), other.encode("utf-8"))


def test_a_signed_seal_neither_made_nor_checked_loads_hmac():
    """Signing and checking a signature import hashlib only (hmac costs 1.8M instructions
    more): checked in a fresh interpreter."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    probe = ("import sys; sys.path.insert(0, %r)\n"
             "from mindos.core import seal\n"
             "doc, data = seal.seal_bytes('f-v1', {'a': 1}, outside=(), key=b'k' * 32)\n"
             "back, who = seal.loads(data, 'f-v1', outside=(), exact=True, keys={seal.key_id(b'k' * 32): ('me', b'k' * 32)})\n"
             "print(who[0], 'hmac' in sys.modules)\n" % root)
    proc = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["me", "False"]


@pytest.mark.parametrize("value", [TRICKY, "plain é text", "", 0, -1.5, 10**30, None, True, [], {}, [{"b": 1, "a": [{}]}],
                                   {"ключ": "значение", "\u2028": "\x00\x1f"}, [1e-7, 1e16, 123456789.125]])
def test_the_shared_encoder_writes_what_json_dumps_writes_with_the_canonical_options(value):
    # canonical_json reuses one encoder instead of building one per call: the bytes must not move
    import json

    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    assert canonical.canonical_json(value) == expected
    assert canonical.canonical_json(value) == expected  # and again: the encoder keeps no state between calls


def test_a_refused_value_leaves_the_shared_encoder_usable():
    shared = {"a": [1, 2]}
    with pytest.raises(ValueError):
        canonical.canonical_json({"x": shared, "y": math.nan})
    with pytest.raises(TypeError):
        canonical.canonical_json({"x": shared, "y": object()})
    assert canonical.canonical_json({"x": shared}) == '{"x":{"a":[1,2]}}'  # no stale circular-reference marker
