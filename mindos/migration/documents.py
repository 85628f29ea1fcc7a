"""The sealed documents of migration, written and read one way.

Inventories, brain manifests, import results (the rollback journals), onboarding and
brain-import reports are all :mod:`mindos.recovery.artifacts` documents: canonical JSON with
every field, ``created_at`` included, inside the seal, read back byte-exact.  What the
commands add around that shape lives here once: the ``--out`` check made before any work,
the seal-and-write that answers with the summary head every sealing command reports, the
read that names a missing document, and the facts every ``-check`` command reports.
"""

import os

from mindos.core import clock
from mindos.errors import InvalidInput, NotFound
from mindos.recovery import artifacts


def check_out(out, *, force=False):
    """Refuse an ``--out`` that is not a path, or that must not be written (before any work)."""
    if not isinstance(out, str) or not out:
        raise InvalidInput("invalid --out: expected a file path")
    from mindos.core import files  # lazy: the writers only

    files.check_out(out, force=force)


def seal(out, fmt, body, *, force=None):
    """Stamp ``body`` with ``created_at``, seal it as ``fmt`` into ``out`` (atomic, 0600) and
    return ``(document, head)``; ``head`` holds ``format``, ``out`` (absolute), ``digest``,
    ``file_sha256`` and ``content_digest``, the keys every sealing command reports.
    ``force``: True or False for the user's ``--out`` (an existing file refused unless True),
    None for a path MindOS chose (replaced atomically); see :func:`mindos.recovery.artifacts.seal_write`."""
    body["created_at"] = clock.now_iso()
    out = os.path.abspath(out)
    doc, file_hash = artifacts.seal_write(out, fmt, body, force=force)
    return doc, {"format": fmt, "out": out, "digest": doc["seal"]["digest"], "file_sha256": file_hash,
                 "content_digest": artifacts.content_digest(doc)}


def read(path, fmt, what):
    """The sealed ``fmt`` document at ``path``, verified byte-exact (IntegrityError on any
    changed byte); NotFound naming ``what`` when nothing is there."""
    if not isinstance(path, str) or not os.path.lexists(path):
        raise NotFound(f"{what} {path} not found")  # a FIFO or link: named by the reader
    return artifacts.read(path, fmt)


def facts(doc, fmt):
    """What every ``-check`` command reports of a verified document: ``ok``, ``format``,
    ``digest``, ``content_digest`` (everything but ``created_at`` and the seal) and ``created_at``."""
    return {"ok": True, "format": fmt, "digest": doc["seal"]["digest"], "content_digest": artifacts.content_digest(doc),
            "created_at": doc.get("created_at")}
