"""Sealed documents: one shape for every artifact MindOS writes and later trusts.

A sealed document is a JSON object with a versioned ``format`` name, its body fields and a
``seal``: the SHA-256 of the canonical JSON of every field except the seal itself and the
few fields named as *outside* the seal (by default ``created_at``, so two documents built
from the same state differ only there).  The seal records which fields it leaves out, and
:func:`verify` refuses a document whose list differs from the one the reader expects, so a
tamperer cannot move a field out of the seal.

A seal can also be *signed* (:func:`seal_bytes` with a ``key``): an HMAC-SHA256 over the
same canonical body rides inside the seal stamp as ``signature`` (``algorithm``, ``key_id``,
``mac``), and the digest of a signed document covers the signature too (the body's bytes,
a unit separator, the signature's canonical JSON), so no byte of it can change unnoticed
even by a reader without the key.  The digest alone proves integrity (anyone can recompute
it); the signature proves which key made the document, so a reader that holds the key
(:func:`signer`) can tell a document it made from one that was edited and resealed.  Unsigned documents stay valid
sealed documents; what to trust is the reader's decision.

Receipts use it today; snapshots, archives, checkpoints, work orders, inventories and
reports use it as they arrive.  Files are written with the one atomic 0600 write, as
canonical JSON plus a newline, and :func:`read` verifies before returning anything.
"""

from mindos.core.atomic import atomic_write
from mindos.core.canonical import canonical_json, sha256, sha256_hex
from mindos.errors import IntegrityError

SEAL_KEY = "seal"
MAX_READ_BYTES = 4 * 1024 * 1024 * 1024  # a sealed document file read whole
DEFAULT_OUTSIDE = ("created_at",)
SIGNATURE_ALGORITHM = "hmac-sha256"


def key_id(key):
    """The public name of a signing key: 16 hex characters of a digest of it."""
    return sha256_hex(b"mindos-seal-key-id\x1f" + key)[:16]


def _mac(key, data):
    """Hex HMAC-SHA256 (RFC 2104) of ``data`` under ``key``: the standard library's
    ``hmac.new(key, data, hashlib.sha256).hexdigest()`` byte for byte (tested), built here
    over the package's one SHA-256 because importing hmac costs about 1.8M instructions more
    than hashlib alone (a nanny tick signs and checks its checkpoint pin every time)."""
    sha = sha256()
    if len(key) > 64:
        key = sha(key).digest()
    key = key.ljust(64, b"\0")
    inner = sha(bytes(byte ^ 0x36 for byte in key) + data).digest()
    return sha(bytes(byte ^ 0x5C for byte in key) + inner).hexdigest()


def _same(mac, expected):
    """``mac == expected`` (two hex texts) in time independent of where they differ, as
    ``hmac.compare_digest`` compares (without importing hmac)."""
    if len(mac) != len(expected):
        return False
    difference = 0
    for a, b in zip(mac.encode("ascii", "replace"), expected.encode("ascii", "replace")):
        difference |= a ^ b
    return difference == 0


def _sealed_digest(doc, outside):
    inside = {key: value for key, value in doc.items() if key != SEAL_KEY and key not in outside}
    return _digest_of(canonical_json(inside).encode("utf-8"), doc[SEAL_KEY].get("signature"))


def _digest_of(body, signature):
    """The seal digest of ``body`` (bytes): of the body alone when unsigned, else of the body,
    a unit separator and the signature's canonical JSON (so the signature is sealed too)."""
    digest = sha256()(body)  # streamed: a signed snapshot's body is never copied to append the signature
    if signature is not None:
        digest.update(b"\x1f" + canonical_json(signature).encode("utf-8"))
    return digest.hexdigest()


def seal(format, body, outside=DEFAULT_OUTSIDE):
    """Return ``body`` as a sealed document of ``format`` (a new dict; ``body`` is not changed)."""
    if SEAL_KEY in body or "format" in body:
        raise ValueError("a sealed body may not carry its own 'format' or 'seal' field")
    outside = tuple(sorted(outside))
    doc = {"format": format, **body}
    doc[SEAL_KEY] = {"algorithm": "sha256", "outside": list(outside)}
    doc[SEAL_KEY]["digest"] = _sealed_digest(doc, outside)
    return doc


def verify(doc, format=None, outside=DEFAULT_OUTSIDE):
    """Check a sealed document; return it unchanged, or raise IntegrityError saying why.

    ``format`` (when given) must match exactly; the seal must leave out exactly ``outside``.
    """
    verify_stamp(doc, format, outside)
    try:
        actual = _sealed_digest(doc, tuple(outside))
    except (TypeError, ValueError):
        raise IntegrityError("sealed document holds values canonical JSON cannot express") from None
    if actual != doc[SEAL_KEY].get("digest"):
        raise IntegrityError("seal mismatch: the document was changed after it was sealed")
    return doc


def dumps(doc):
    """The exact bytes a sealed document is stored as."""
    return (canonical_json(doc) + "\n").encode("utf-8")


def write(path, doc, *, confined=None):
    """Write a sealed document atomically with mode 0600; return the file's SHA-256.
    ``confined``: see :func:`mindos.core.atomic.atomic_write` (no symlinked component)."""
    return atomic_write(path, dumps(doc), confined=confined)


def _members(doc):
    """``{key: '"key":<canonical value>'}``: each top-level member serialized once."""
    return {key: canonical_json(key) + ":" + canonical_json(value) for key, value in doc.items()}


def _join(members, keys):
    return "{" + ",".join(members[key] for key in sorted(keys)) + "}"


def seal_bytes(format, body, outside=DEFAULT_OUTSIDE, key=None):
    """:func:`seal` and :func:`dumps` in one pass: return ``(doc, bytes)``.

    Large documents (snapshots) are serialized once instead of twice: the sealed text is
    the top-level members joined without the seal, the file the same members with it.
    ``key`` (bytes): also sign the sealed text (HMAC-SHA256), see :func:`signer`.
    """
    if SEAL_KEY in body or "format" in body:
        raise ValueError("a sealed body may not carry its own 'format' or 'seal' field")
    outside = tuple(sorted(outside))
    doc = {"format": format, **body}
    members = _members(doc)
    inside = _join(members, [key for key in doc if key not in outside])
    data = inside.encode("utf-8")
    signature = None
    if key is not None:
        signature = {"algorithm": SIGNATURE_ALGORITHM, "key_id": key_id(key), "mac": _mac(key, data)}
    doc[SEAL_KEY] = {"algorithm": "sha256", "digest": _digest_of(data, signature),
                     "outside": list(outside)}
    if signature is not None:
        doc[SEAL_KEY]["signature"] = signature
    members[SEAL_KEY] = canonical_json(SEAL_KEY) + ":" + canonical_json(doc[SEAL_KEY])
    return doc, (_join(members, doc) + "\n").encode("utf-8")


def _verify_exact(data, doc, format):
    """Check a fully sealed document (nothing outside the seal) against its exact bytes.

    The file must be the canonical text the seal was taken over with the seal member
    spliced in at its sorted place, plus one newline: the seal member is located by its own
    canonical text and the digest is recomputed over the bytes without it, so no byte of
    the file can change unnoticed and nothing is serialized again.
    """
    verify_stamp(doc, format, ())
    member = (canonical_json(SEAL_KEY) + ":" + canonical_json(doc[SEAL_KEY])).encode("utf-8")
    keys = sorted(doc)
    position = keys.index(SEAL_KEY)
    at = data.find(member)
    if not data.endswith(b"}\n") or at < 1 or data.find(member, at + 1) != -1:
        raise IntegrityError("sealed document is not in canonical form: the file was changed after it was sealed")
    if position > 0 and data[at - 1:at] == b",":
        inside = data[:at - 1] + data[at + len(member):-1]
    elif position == 0 and data[at - 1:at] == b"{" and data[at + len(member):at + len(member) + 1] in (b",", b"}"):
        rest = data[at + len(member):-1]
        inside = data[:at] + (rest[1:] if rest.startswith(b",") else rest)
    else:
        raise IntegrityError("sealed document is not in canonical form: the file was changed after it was sealed")
    if _digest_of(inside, doc[SEAL_KEY].get("signature")) != doc[SEAL_KEY].get("digest"):
        raise IntegrityError("seal mismatch: the document was changed after it was sealed")
    # the hashed bytes are proven; the seal must also sit at its sorted place
    after = data[at + len(member):]
    expected = (b"," + canonical_json(keys[position + 1]).encode("utf-8") + b":") if position + 1 < len(keys) \
        else b"}\n"
    if not after.startswith(expected):
        raise IntegrityError("sealed document is not in canonical form: the file was changed after it was sealed")
    return inside


def signer(doc, body, keys):
    """Who signed a verified sealed document: ``(label, key id)``.

    ``body`` is the exact sealed text (what :func:`loads` proved with ``exact``); ``keys``
    maps key ids to ``(label, key bytes)``.  Returns ``("unsigned", None)`` without a
    signature, ``("unsigned", key id)`` when the signing key is not among ``keys`` (it cannot
    be checked, so it proves nothing), ``(label, key id)`` when the signature is true.  A
    signature that does not match its known key raises IntegrityError: the document was
    changed (and resealed) after it was signed.
    """
    signature = doc[SEAL_KEY].get("signature")
    if signature is None:
        return "unsigned", None
    if (not isinstance(signature, dict) or signature.get("algorithm") != SIGNATURE_ALGORITHM
            or not isinstance(signature.get("key_id"), str) or not isinstance(signature.get("mac"), str)):
        raise IntegrityError("the seal's signature is malformed")
    known = keys.get(signature["key_id"])
    if known is None:
        return "unsigned", signature["key_id"]
    if not _same(_mac(known[1], body), signature["mac"]):
        raise IntegrityError(f"signature mismatch: the document was changed after key {signature['key_id']} signed it")
    return known[0], signature["key_id"]


def verify_stamp(doc, format=None, outside=DEFAULT_OUTSIDE):
    """The cheap half of :func:`verify`: shape, format and seal parameters (no digest)."""
    if not isinstance(doc, dict) or not isinstance(doc.get(SEAL_KEY), dict):
        raise IntegrityError("not a sealed document (no seal)")
    if format is not None and doc.get("format") != format:
        raise IntegrityError(f"sealed document has format {doc.get('format')!r:.80}, expected {format!r}")
    stamp = doc[SEAL_KEY]
    if stamp.get("algorithm") != "sha256" or stamp.get("outside") != sorted(outside):
        raise IntegrityError("seal does not match this document's format (algorithm or unsealed fields differ)")


def loads(data, format=None, outside=DEFAULT_OUTSIDE, exact=False, keys=None):
    """Parse and verify the bytes of a sealed document; return the document.

    ``exact`` (only with nothing outside the seal): the bytes must be exactly what
    :func:`seal_bytes` / :func:`dumps` wrote, so no byte can change without refusal
    (whitespace, escapes and key order included); used by the recovery artifacts.
    ``keys`` (with ``exact``): return ``(doc, (label, key id))`` with :func:`signer`'s answer.
    """
    import json  # lazy: only readers of sealed files pay for the parser

    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise IntegrityError("sealed document is not valid JSON") from None
    if exact:
        if tuple(outside):
            raise ValueError("exact reading needs every field inside the seal (outside=())")
        try:
            body = _verify_exact(data, doc, format)
        except (TypeError, ValueError):
            raise IntegrityError("sealed document holds values canonical JSON cannot express") from None
        return doc if keys is None else (doc, signer(doc, body, keys))
    return verify(doc, format, outside)


def read(path, format=None, outside=DEFAULT_OUTSIDE, exact=False, keys=None):
    """Read and verify a sealed document file; return the document (see :func:`loads`)."""
    from mindos.core import files  # lazy: only file readers
    from mindos.errors import MindosError

    try:  # no symlink, no FIFO or device, at most MAX_READ_BYTES
        data = files.read_bytes(path, max_bytes=MAX_READ_BYTES)
    except MindosError as exc:
        raise IntegrityError(f"cannot read sealed document {path}: {exc}") from None
    return loads(data, format, outside, exact, keys)
