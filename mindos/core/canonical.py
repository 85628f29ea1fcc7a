"""Canonical JSON and SHA-256: the one form everything hashed or sealed is written in.

Stored digests (audit event hashes, receipt seals, recall digests, sealed documents)
depend on these bytes, so the form is pinned by golden tests: keys sorted, no whitespace
between tokens, UTF-8 characters kept as themselves, and NaN / Infinity refused (they are
not JSON, and two producers would spell them differently).
"""

import json

try:  # the C sha256 alone; hashlib pulls in OpenSSL, which costs ~15 ms per process
    from _sha256 import sha256 as _sha256
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import sha256 as _sha256

from mindos.errors import InvalidInput


def canonical_json(obj):
    """Return the canonical text form of ``obj`` (raises ValueError on NaN or Infinity)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(data):
    """Hex SHA-256 of bytes or text (text is UTF-8 encoded)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _sha256(data).hexdigest()


def digest(obj):
    """Hex SHA-256 of ``obj``'s canonical JSON."""
    return sha256_hex(canonical_json(obj))


# Below this many bytes the builtin is cheaper overall: OpenSSL hashes ~1.7x faster per
# call but costs ~11 million instructions to load (more than the baseline process's
# whole import of sqlite3, json and argparse).
BULK_BYTES = 4 << 20


def sha256_constructor(volume=None):
    """Return the cheaper SHA-256 constructor for hashing about ``volume`` bytes in all.

    ``None`` means "unknown, possibly large": OpenSSL's.  Small volumes get the builtin,
    whose load is free.
    """
    if volume is not None and volume < BULK_BYTES:
        return _sha256
    try:
        from _hashlib import openssl_sha256
    except ImportError:  # pragma: no cover - builds without OpenSSL
        return _sha256
    return openssl_sha256


def _refuse_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def loads_strict(text, flag):
    """Parse JSON text (NaN and Infinity refused) or raise InvalidInput naming ``flag``."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(f"invalid {flag}: malformed JSON ({exc.__class__.__name__}: {str(exc)[:80]})") from None
    except RecursionError:
        raise InvalidInput(f"invalid {flag}: malformed JSON (nested too deeply)") from None
