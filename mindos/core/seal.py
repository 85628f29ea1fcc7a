"""Sealed documents: one shape for every artifact MindOS writes and later trusts.

A sealed document is a JSON object with a versioned ``format`` name, its body fields and a
``seal``: the SHA-256 of the canonical JSON of every field except the seal itself and the
few fields named as *outside* the seal (by default ``created_at``, so two documents built
from the same state differ only there).  The seal records which fields it leaves out, and
:func:`verify` refuses a document whose list differs from the one the reader expects, so a
tamperer cannot move a field out of the seal.

Receipts use it today; snapshots, archives, checkpoints, work orders, inventories and
reports use it as they arrive.  Files are written with the one atomic 0600 write, as
canonical JSON plus a newline, and :func:`read` verifies before returning anything.
"""

from mindos.core.atomic import atomic_write
from mindos.core.canonical import canonical_json, sha256_hex
from mindos.errors import IntegrityError

SEAL_KEY = "seal"
DEFAULT_OUTSIDE = ("created_at",)


def _sealed_digest(doc, outside):
    inside = {key: value for key, value in doc.items() if key != SEAL_KEY and key not in outside}
    return sha256_hex(canonical_json(inside))


def seal(format, body, outside=DEFAULT_OUTSIDE):
    """Return ``body`` as a sealed document of ``format`` (a new dict; ``body`` is not changed)."""
    if SEAL_KEY in body or "format" in body:
        raise ValueError("a sealed body may not carry its own 'format' or 'seal' field")
    outside = tuple(sorted(outside))
    doc = {"format": format, **body}
    doc[SEAL_KEY] = {"algorithm": "sha256", "digest": _sealed_digest(doc, outside), "outside": list(outside)}
    return doc


def verify(doc, format=None, outside=DEFAULT_OUTSIDE):
    """Check a sealed document; return it unchanged, or raise IntegrityError saying why.

    ``format`` (when given) must match exactly; the seal must leave out exactly ``outside``.
    """
    if not isinstance(doc, dict) or not isinstance(doc.get(SEAL_KEY), dict):
        raise IntegrityError("not a sealed document (no seal)")
    if format is not None and doc.get("format") != format:
        raise IntegrityError(f"sealed document has format {doc.get('format')!r:.80}, expected {format!r}")
    stamp = doc[SEAL_KEY]
    if stamp.get("algorithm") != "sha256" or stamp.get("outside") != sorted(outside):
        raise IntegrityError("seal does not match this document's format (algorithm or unsealed fields differ)")
    try:
        actual = _sealed_digest(doc, tuple(outside))
    except (TypeError, ValueError):
        raise IntegrityError("sealed document holds values canonical JSON cannot express") from None
    if actual != stamp.get("digest"):
        raise IntegrityError("seal mismatch: the document was changed after it was sealed")
    return doc


def dumps(doc):
    """The exact bytes a sealed document is stored as."""
    return (canonical_json(doc) + "\n").encode("utf-8")


def write(path, doc, *, confined=None):
    """Write a sealed document atomically with mode 0600; return the file's SHA-256.
    ``confined``: see :func:`mindos.core.atomic.atomic_write` (no symlinked component)."""
    return atomic_write(path, dumps(doc), confined=confined)


def loads(data, format=None, outside=DEFAULT_OUTSIDE):
    """Parse and verify the bytes of a sealed document; return the document."""
    import json  # lazy: only readers of sealed files pay for the parser

    try:
        doc = json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise IntegrityError("sealed document is not valid JSON") from None
    return verify(doc, format, outside)


def read(path, format=None, outside=DEFAULT_OUTSIDE):
    """Read and verify a sealed document file; return the document."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise IntegrityError(f"cannot read sealed document {path}: {exc.strerror}") from None
    return loads(data, format, outside)
