"""The recovery artifacts' common shape: fully sealed, byte-exact, written 0600.

Snapshots, archives, checkpoints and work orders are sealed documents
(:mod:`mindos.core.seal`) with *every* field inside the seal, ``created_at`` included, and
are read back byte-exact (``seal.read(..., exact=True)``): any single changed byte of the
file is refused, whether it changes a value, a timestamp or only whitespace.  Content
identity that must not depend on when a document was written (a re-exported work order)
is :func:`content_digest`.

Receipt files travel inside artifacts as ``{"sha256", "text"}`` under their home-relative
path; :func:`receipt_target` is the one place that turns such a path into a file name and
refuses anything outside ``<home>/receipts/``.
"""

import os
import re

from mindos.core import canonical, clock, seal
from mindos.errors import IntegrityError, NotFound, Refused
from mindos.store import db
from mindos.work.receipts import MAX_FILE_BYTES as MAX_RECEIPT_BYTES

OUTSIDE = ()
RECEIPT_PATH = re.compile(r"receipts/([A-Za-z0-9][A-Za-z0-9._:-]{0,127})\.json")


def seal_doc(format, body):
    """``body`` sealed as ``format`` with every field inside the seal."""
    return seal.seal(format, body, outside=OUTSIDE)


def seal_write(path, format, body, *, force=None, home=None):
    """Seal ``body`` as ``format`` and write it atomically (0600) in one serialization pass;
    return ``(doc, file sha256)``.

    ``force`` (True or False) marks ``path`` as a user-named ``--out``: it goes through
    :func:`mindos.core.files.write_new` (an existing path refused unless ``force``; a
    database, its side files, a symlink or a non-regular file always).  ``None``: a path
    MindOS chose itself, replaced atomically.  ``home``: sign it with that home's key
    (created on first use, see :mod:`mindos.recovery.keys`).
    """
    from mindos.core.atomic import atomic_write  # lazy: only writers need it

    if force is not None:
        from mindos.core import files  # lazy: only --out writers need it

        files.check_out(path, force=force)  # before sealing a large body
    key = None
    if home is not None:
        from mindos.recovery import keys  # lazy: only signed artifacts read the key

        key = keys.home_key(home, create=True)
    doc, data = seal.seal_bytes(format, body, outside=OUTSIDE, key=key)
    try:
        if force is not None:
            return doc, files.write_new(path, data, force=force)
        return doc, atomic_write(path, data)
    except OSError as exc:
        raise Refused(f"cannot write {path}: {exc.strerror}") from None


def write(path, doc):
    """Write a sealed artifact atomically (mode 0600); return the file's SHA-256."""
    try:
        return seal.write(path, doc)
    except OSError as exc:
        raise Refused(f"cannot write {path}: {exc.strerror}") from None


def atomic_write_bytes(path, data, *, home):
    """Write a receipt file atomically with mode 0600 inside ``home``; return its SHA-256.
    Like ``receipt`` itself, never through a symlinked ``receipts/`` (Refused)."""
    from mindos.core.atomic import atomic_write  # lazy: only restores write receipt files

    try:
        return atomic_write(path, data, confined=home)
    except OSError as exc:
        raise Refused(f"cannot write {path}: {exc.strerror}") from None


def read(path, format):
    """Read and verify an artifact of ``format``; any changed byte raises IntegrityError.
    Read through :func:`mindos.core.seal.read` (the file-safety reader: a missing path, a
    symlink, a FIFO or device is refused as such, before anything is read)."""
    try:
        return seal.read(path, format, outside=OUTSIDE, exact=True)
    except IntegrityError as exc:
        raise IntegrityError(named(path, exc, format)) from None


def read_signed(path, format, home):
    """Read and verify an artifact of ``format`` and say who signed it: ``(doc, provenance)``
    with provenance ``{"trust": signed_by_this_home | signed_by_trusted_key | unsigned,
    "key_id": the signing key's id or None}``.  A signature that does not match a known key
    raises IntegrityError (the file was changed and resealed)."""
    from mindos.recovery import keys  # lazy: only restores and checks weigh signatures

    try:
        doc, (trust, key_id) = seal.read(path, format, outside=OUTSIDE, exact=True, keys=keys.keyring(home))
    except IntegrityError as exc:
        raise IntegrityError(named(path, exc, format)) from None
    return doc, {"trust": trust, "key_id": key_id}


def loads_signed(data, format, home, path):
    """:func:`read_signed` for bytes already read (a streamed artifact's sealed manifest)."""
    from mindos.recovery import keys  # lazy: as read_signed

    try:
        doc, (trust, key_id) = seal.loads(data, format, outside=OUTSIDE, exact=True, keys=keys.keyring(home))
    except IntegrityError as exc:  # the manifest inside a tar: named as such, never as the tar itself
        text = str(exc).replace("sealed document", "sealed manifest", 1)
        raise IntegrityError(text if str(path) in text else f"{path}: {text}") from None
    return doc, {"trust": trust, "key_id": key_id}


def named(path, exc, format):
    text = str(exc)
    if text == "sealed document is not valid JSON" and is_tar(path):  # a streamed snapshot or archive
        text = f"sealed document is a streamed (tar) snapshot or archive, expected {format!r}"
    return text if str(path) in text else f"{path}: {text}"


def is_tar(path):
    """True when ``path`` is a tar file (a streamed snapshot or archive), False for anything else.
    Reads at most 512 bytes, through the file-safety reader (never a symlink or a FIFO)."""
    from mindos.core import files  # lazy: readers only

    try:
        fd, _ = files.open_regular(path)
    except (NotFound, Refused):
        return False  # the JSON reader names the problem
    try:
        head = os.read(fd, 512)
    finally:
        os.close(fd)
    return len(head) == 512 and head[257:262] == b"ustar"


def seal_signed(format, body, home):
    """``(doc, bytes)`` of ``body`` sealed as ``format`` and signed with ``home``'s key (the
    bytes :func:`seal_write` would write; for artifacts that carry the sealed text inside a
    larger file)."""
    from mindos.recovery import keys  # lazy: only signed artifacts read the key

    return seal.seal_bytes(format, body, outside=OUTSIDE, key=keys.home_key(home, create=True))


def stream_write(path, fill, *, force=None):
    """Write a large artifact to ``path`` atomically (0600) without holding it in memory;
    return the file's SHA-256.

    ``fill(handle)`` writes the content to a binary file object (a temp file in the same
    directory, hashed as it is written); the file is fsynced and renamed into place, so a
    killed writer leaves the old file or none, never a torn one.  ``force``: as
    :func:`seal_write` (a user-named ``--out``: an existing path refused unless ``force``,
    never replaced while it appeared meanwhile; ``None``: a path MindOS chose)."""
    from mindos.core import atomic, canonical as hashes, files  # lazy: only streamed artifacts

    if force is not None:
        path = files.check_out(path, force=force)
    files.sweep_stale_temps(os.path.dirname(os.path.abspath(path)))
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        temp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise Refused(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as raw:
            handle = _Hashing(raw, hashes.sha256()())
            fill(handle)
            raw.flush()
            os.fchmod(raw.fileno(), 0o600)
            os.fsync(raw.fileno())
        if force is None or force:
            os.replace(temp, path)
        else:
            atomic.link_new(temp, path)
    except FileExistsError:
        _unlink(temp)
        raise Refused(f"refusing to write {path}: it already exists; pass --force to replace it",
                      code="exists") from None
    except OSError as exc:
        _unlink(temp)
        raise Refused(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        _unlink(temp)
        raise
    atomic._fsync_dir(directory)
    return handle.digest.hexdigest()


class _Hashing:
    """A write-only file object that hashes what passes through it (and counts it)."""

    def __init__(self, raw, digest):
        self.raw, self.digest, self.size = raw, digest, 0

    def write(self, data):
        self.digest.update(data)
        self.size += len(data)
        return self.raw.write(data)

    def tell(self):
        return self.size


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def require_trusted(provenance, path, action, trust_unsigned):
    """Refuse an artifact that neither this home nor a trusted key signed, unless
    ``trust_unsigned`` (the operator's ``--trust-unsigned``)."""
    from mindos.recovery import keys  # lazy: as read_signed

    if provenance["trust"] != keys.UNSIGNED or trust_unsigned:
        return
    what = (f"signed by key {provenance['key_id']}, which this home does not trust" if provenance["key_id"]
            else "unsigned")
    raise Refused(f"{action} refused: {path} is {what}; nothing was changed (add the signing home's seal.key"
                  f" to {keys.TRUSTED_DIR}/ in this home, or pass --trust-unsigned to accept it anyway)",
                  code="untrusted_artifact")


def content_digest(doc, leave_out=("created_at",)):
    """SHA-256 of a document's content without its seal and ``leave_out`` fields."""
    return canonical.digest({k: v for k, v in doc.items() if k != seal.SEAL_KEY and k not in leave_out})


def backups_dir(home):
    """Where artifacts go by default: ``<home>/backups/``."""
    return os.path.join(home, "backups")


def default_path(home, kind, suffix="", ext=".json"):
    """A new, unused ``<home>/backups/<kind>-<UTC stamp>[-suffix]<ext>`` path."""
    stamp = clock.now_iso().replace("-", "").replace(":", "")
    base = os.path.join(backups_dir(home), f"{kind}-{stamp}" + (f"-{suffix}" if suffix else ""))
    path, n = base + ext, 1
    while os.path.exists(path):
        n += 1
        path = f"{base}-{n}{ext}"
    return path


def receipt_target(home, stored_path):
    """The file a receipt row's stored path names, refusing any path outside ``<home>/receipts/``."""
    if not isinstance(stored_path, str) or not RECEIPT_PATH.fullmatch(stored_path):
        raise Refused(f"refused receipt path {str(stored_path)[:80]!r}: outside the home's receipts directory")
    return os.path.join(db.receipts_dir(home), stored_path.split("/", 1)[1])


def receipt_files(home, paths, refused=None):
    """``{stored path: {"sha256", "text"}}`` for the receipt files that exist of ``paths``.

    A receipt file that is a symlink, a FIFO or device, over the receipt size limit (``MAX_RECEIPT_BYTES``), or under a
    symlinked ``receipts/`` is never read, so a planted link cannot seal what it points at:
    it is left out and, when ``refused`` (a list) is given, recorded there as ``{"path",
    "reason"}``.  A missing file is simply absent (doctor reports it).
    """
    carried = {}
    for stored, data in receipt_bytes(home, paths, refused):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        carried[stored] = {"sha256": canonical.sha256_hex(data), "text": text}
    return carried


def receipt_bytes(home, paths, refused=None):
    """Yield ``(stored path, bytes)`` for the receipt files that exist of ``paths``, one at a
    time (see :func:`receipt_files` for what is refused and how)."""
    from mindos.core import files  # lazy: only artifact writers carry receipt files

    return _receipts(home, paths, refused, lambda target: files.read_bytes(target, max_bytes=MAX_RECEIPT_BYTES))


def receipt_sizes(home, paths, refused=None):
    """Yield ``(stored path, size in bytes)`` for the receipt files :func:`receipt_bytes` would
    yield (the same refusals), each opened as it would be and sized from its ``fstat``:
    nothing is read (what a dry run counts)."""
    from mindos.core import files  # lazy: as above

    def size(target):
        fd, st = files.open_regular(target, max_bytes=MAX_RECEIPT_BYTES)
        os.close(fd)
        return st.st_size

    return _receipts(home, paths, refused, size)


def _receipts(home, paths, refused, read):
    """``(stored path, read(target))`` for each receipt file of ``paths`` that exists, is
    confined to the home's receipts directory and passes ``read``'s checks."""
    linked = os.path.islink(db.receipts_dir(home))
    for stored in sorted(set(paths)):
        try:
            target = receipt_target(home, stored)
            if linked:
                raise Refused("the receipts directory is a symlink; symlinks are never followed", code="symlink")
            # never through a symlink or a FIFO: a planted link must not seal its target
            found = read(target)
        except Refused as exc:
            if refused is not None:
                refused.append({"path": stored, "reason": str(exc)})
            continue
        except (NotFound, OSError):
            continue
        yield stored, found


def check_receipt_files(home, carried):
    """Validate carried receipt files (paths confined, hashes true); return ``{stored: (target, bytes)}``."""
    if not isinstance(carried, dict):
        raise IntegrityError("receipt_files is not an object")
    checked = {}
    for stored, entry in carried.items():
        target = receipt_target(home, stored)
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            raise IntegrityError(f"receipt file {stored} is malformed")
        data = entry["text"].encode("utf-8")
        if canonical.sha256_hex(data) != entry.get("sha256"):
            raise IntegrityError(f"receipt file {stored} does not match its sha256")
        checked[stored] = (target, data)
    return checked
