"""Canonical JSON and SHA-256: the one form everything hashed or sealed is written in.

Stored digests (audit event hashes, receipt seals, recall digests, sealed documents)
depend on these bytes, so the form is pinned by golden tests: keys sorted, no whitespace
between tokens, UTF-8 characters kept as themselves, and NaN / Infinity refused (they are
not JSON, and two producers would spell them differently).
"""

import json

from mindos.errors import InvalidInput

_sha256 = None  # hashlib.sha256, imported on the first hash: reads that hash nothing skip OpenSSL's load


def canonical_json(obj):
    """Return the canonical text form of ``obj`` (raises ValueError on NaN or Infinity)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(data):
    """Hex SHA-256 of bytes or text (text is UTF-8 encoded)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return sha256()(data).hexdigest()


def digest(obj):
    """Hex SHA-256 of ``obj``'s canonical JSON."""
    return sha256_hex(canonical_json(obj))


def sha256():
    """Return ``hashlib.sha256``, importing hashlib on first use (only public modules)."""
    global _sha256
    if _sha256 is None:
        from hashlib import sha256 as _sha256
    return _sha256


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
