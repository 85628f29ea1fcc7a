"""Canonical JSON and SHA-256: the one form everything hashed or sealed is written in.

Stored digests (audit event hashes, receipt seals, recall digests, sealed documents)
depend on these bytes, so the form is pinned by golden tests: keys sorted, no whitespace
between tokens, UTF-8 characters kept as themselves, and NaN / Infinity refused (they are
not JSON, and two producers would spell them differently).
"""

import json
import sys

from mindos.errors import InvalidInput

_sha256 = None  # hashlib.sha256, imported on the first hash: reads that hash nothing skip OpenSSL's load
# Importing hashlib initialises OpenSSL, which costs about as much as hashing a dozen 64-byte
# blocks in pure Python (bench/NOTES.md).  A write call hashes one short preimage, so
# sha256_hex hashes in Python until this many blocks are spent in the process, then loads
# hashlib for good: a process never pays more than about twice the cheaper of the two.
PURE_BLOCKS = 12 if sys.version_info < (3, 12) else 8  # a block costs about 1.0M instructions on 3.11, 1.2M on 3.13
_pure_left = PURE_BLOCKS


# One encoder for every call: ``json.dumps`` with these options builds a new JSONEncoder each
# time, which costs about a third of encoding a short row (and every packed item is costed
# through this).  The encoder keeps no state between calls, so sharing it is safe.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_json(obj):
    """Return the canonical text form of ``obj`` (raises ValueError on NaN or Infinity)."""
    return _ENCODER.encode(obj)


def sha256_hex(data):
    """Hex SHA-256 of bytes or text (text is UTF-8 encoded).

    Short inputs are hashed by :func:`_sha256_python` while hashlib is not loaded and the
    process has pure-Python blocks left (``PURE_BLOCKS``); everything else by hashlib.  Both
    give the same digest (tests compare them over every length up to 2000 bytes)."""
    global _pure_left
    if isinstance(data, str):
        data = data.encode("utf-8")
    if _sha256 is None:
        blocks = (len(data) + 72) // 64  # with the 0x80 byte and the 8-byte length
        if blocks <= _pure_left and "hashlib" not in sys.modules:
            _pure_left -= blocks
            return _sha256_python(data)
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


# FIPS 180-4: the first 32 bits of the fractional parts of the cube roots of the first 64
# primes (round constants) and of the square roots of the first 8 (initial hash value)
_K = (
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
)
_H0 = (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)


def _sha256_python(data):
    """Hex SHA-256 of ``data`` (bytes) in pure Python, for short inputs (see :func:`sha256_hex`).

    A 32-bit word times 0x100000001 holds the word twice, so one right shift of it is a
    rotation (its low 32 bits); the garbage above bit 31 is dropped by the masks, since the
    low bits of a sum depend only on the low bits of its terms.  Maj(a, b, c) is written
    b ^ ((a ^ b) & (b ^ c)), where b ^ c is the previous round's a ^ b.  About a million
    instructions a block (CPython 3.11)."""
    size = len(data)
    data = bytes(data) + b"\x80" + bytes((55 - size) % 64) + (size * 8).to_bytes(8, "big")
    h0, h1, h2, h3, h4, h5, h6, h7 = _H0
    mask, twice, word = 0xFFFFFFFF, 0x100000001, int.from_bytes
    for start in range(0, len(data), 64):
        w = [word(data[i:i + 4], "big") for i in range(start, start + 64, 4)]
        for t in range(16, 64):
            x, y = w[t - 15], w[t - 2]
            x2, y2 = x * twice, y * twice
            w.append((w[t - 16] + w[t - 7] + ((x2 >> 7) ^ (x2 >> 18) ^ (x >> 3))
                      + ((y2 >> 17) ^ (y2 >> 19) ^ (y >> 10))) & mask)
        a, b, c, d, e, f, g, h = h0, h1, h2, h3, h4, h5, h6, h7
        bc = b ^ c
        for k, wt in zip(_K, w):
            e2, a2, ab = e * twice, a * twice, a ^ b
            t1 = h + ((e2 >> 6) ^ (e2 >> 11) ^ (e2 >> 25)) + (g ^ (e & (f ^ g))) + k + wt
            t2 = ((a2 >> 2) ^ (a2 >> 13) ^ (a2 >> 22)) + (b ^ (ab & bc))
            h, g, f, e, d, c, b, a, bc = g, f, e, (d + t1) & mask, c, b, a, (t1 + t2) & mask, ab
        h0, h1, h2, h3 = (h0 + a) & mask, (h1 + b) & mask, (h2 + c) & mask, (h3 + d) & mask
        h4, h5, h6, h7 = (h4 + e) & mask, (h5 + f) & mask, (h6 + g) & mask, (h7 + h) & mask
    return "%08x%08x%08x%08x%08x%08x%08x%08x" % (h0, h1, h2, h3, h4, h5, h6, h7)


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
