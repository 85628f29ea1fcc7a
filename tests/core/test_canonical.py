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

