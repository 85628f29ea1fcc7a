"""Streamed artifacts: one POSIX tar (pax) of a sealed manifest, a database copy and receipt files.

Snapshots (``autopilot-snapshot-v2``) and archives (``autopilot-archive-v2``) share this
shape and every piece that writes and reads it, so neither ever holds the whole artifact
in memory:

  * :func:`staging_dir` makes the private scratch directory a writer stages its database
    copy and receipt files in (and a reader streams the members into);
  * :func:`stage_receipts` copies the receipt files a copy's rows index into the staging
    directory, one at a time, and describes each (size, SHA-256);
  * :func:`describe_tables` digests every table of a database copy a chunk at a time;
  * :func:`write_tar` streams the tar: the sealed manifest, the database copy, the staged
    receipt files, in that order;
  * :func:`read` reads such a tar front to back: the manifest's seal and signature first
    (an untrusted signer is refused before anything else is read), then each member is
    hashed as it streams past (``CHUNK`` bytes at a time) and compared with the manifest;
    a changed byte, a missing, extra, reordered or truncated member, a changed header or
    padding, or data after the end is refused;
  * :func:`verify_copy` re-digests every table of a streamed-in database copy against the
    manifest, optionally checking each chunk of rows in the same pass.

Error messages name the artifact kind (``what``: "snapshot", "archive")."""

import os
import shutil
import sqlite3

from mindos.errors import IntegrityError, Refused
from mindos.recovery import artifacts, rowcheck, tables

CHUNK = 1024 * 1024  # bytes per read or write of a streamed member
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 512 * 1024 * 1024  # the sealed manifest is read whole (a million receipts fit)
MAX_DIGEST_CHUNK_ROWS = 65536  # rows per digest chunk a manifest may name (each chunk is held in memory)


def staging_beside(path, prefix):
    """:func:`staging_dir` in the directory of the artifact ``path`` a writer is about to
    write, made first (0700) when missing."""
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise Refused(f"cannot write {path}: {exc.strerror or exc}") from None
    return staging_dir(directory, prefix)


def staging_dir(directory, prefix):
    """A new private scratch directory ``<directory>/<prefix>.<pid>.<hex>``; the ones a killed
    process left there (its pid gone, an hour old) are removed first."""
    import re  # lazy: writers and restores only

    from mindos.core import files  # lazy: as above

    leftovers = re.escape(prefix) + r"\.([0-9]{1,10})\.[0-9a-f]{8}"
    for name in files.stale_temps(directory, pattern=leftovers, directories=True):
        shutil.rmtree(os.path.join(directory, name), ignore_errors=True)
    made = os.path.join(directory, f"{prefix}.{os.getpid()}.{os.urandom(4).hex()}")
    try:
        os.mkdir(made, 0o700)
    except OSError as exc:
        raise Refused(f"cannot create a scratch directory in {directory}: {exc.strerror or exc}") from None
    return made


def describe_tables(source):
    """``{table: {"rows", "sha256"}}`` of every data table of the open copy ``source``."""
    digests = {}
    for name in tables.data_tables(source):
        rows, digest = tables.digest_table(source, name)
        digests[name] = {"rows": rows, "sha256": digest}
    return digests


def stage_receipts(home, paths, staging):
    """Copy the receipt files of ``paths`` that exist into ``<staging>/receipts/``, one at a
    time; return ``({stored: {"bytes", "sha256"}}, refused)`` (planted links and special
    files are left out and named in ``refused``, see :func:`artifacts.receipt_bytes`)."""
    from mindos.core import canonical  # lazy: writers only

    refused, carried = [], {}
    os.mkdir(os.path.join(staging, "receipts"), 0o700)
    for stored, data in artifacts.receipt_bytes(home, paths, refused):
        with open(os.path.join(staging, stored), "xb") as handle:  # stored is receipts/<id>.json (checked)
            handle.write(data)
        carried[stored] = {"bytes": len(data), "sha256": canonical.sha256_hex(data)}
    return carried, refused


def database_entry(member, copy):
    """The manifest's description of the database copy ``copy`` carried as ``member``."""
    from mindos.core import files  # lazy: writers only

    return {"member": member, "bytes": os.path.getsize(copy), "sha256": files.digest(copy)[0]}


def staged_receipts(home, staging, manifest):
    """``{stored: (target in the home, staged file)}``, every target confined to the home's
    receipts directory."""
    return {stored: (artifacts.receipt_target(home, stored), os.path.join(staging, stored))
            for stored in manifest["receipt_files"]}


def _member(name, size):
    import tarfile  # lazy: streamed artifacts only

    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime, info.type = size, 0o600, 0, tarfile.REGTYPE
    return info


def write_tar(handle, sealed, staging, manifest):
    """Stream the tar to ``handle``: the sealed manifest, the database copy (the manifest's
    ``database`` entry, staged under its member name), the staged receipt files."""
    import io  # lazy: streamed artifacts only
    import tarfile  # lazy: as above

    database = manifest["database"]
    with tarfile.open(fileobj=handle, mode="w|", format=tarfile.PAX_FORMAT, bufsize=CHUNK) as tar:
        tar.addfile(_member(MANIFEST, len(sealed)), io.BytesIO(sealed))
        with open(os.path.join(staging, database["member"]), "rb") as copy:
            tar.addfile(_member(database["member"], database["bytes"]), copy)
        for stored, entry in sorted(manifest["receipt_files"].items()):
            with open(os.path.join(staging, stored), "rb") as receipt:
                tar.addfile(_member(stored, entry["bytes"]), receipt)


class _Reader:
    """A read-only file object over an open descriptor that remembers the largest read
    asked of it (``largest``): the readers' memory bound, checked by tests."""

    def __init__(self, fd):
        self.fd, self.largest, self.total = fd, 0, 0

    def read(self, size=-1):
        if size is None or size < 0:
            raise ValueError("a streamed artifact is never read whole")
        self.largest = max(self.largest, size)
        data = os.read(self.fd, size)
        self.total += len(data)
        return data


LAST_READER = None  # the last _Reader opened (tests inspect its largest read)


def check_manifest(manifest, path, what, database):
    """The manifest fields every streamed artifact has, in the shapes the reader relies on
    (it is sealed: a writer made it, but maybe not MindOS); ``database``: the member name
    of its database copy."""
    def entry_ok(entry):
        return (isinstance(entry, dict) and type(entry.get("bytes")) is int and entry["bytes"] >= 0
                and isinstance(entry.get("sha256"), str))

    tables_ok = isinstance(manifest.get("tables"), dict) and all(
        isinstance(e, dict) and type(e.get("rows")) is int and isinstance(e.get("sha256"), str)
        for e in manifest["tables"].values())
    receipts = manifest.get("receipt_files")
    chunk = manifest.get("digest_chunk_rows")
    if (not isinstance(manifest.get("schema_version"), int) or type(chunk) is not int
            or not 1 <= chunk <= MAX_DIGEST_CHUNK_ROWS or not entry_ok(manifest.get("database"))
            or manifest["database"].get("member") != database or not tables_ok
            or not isinstance(manifest.get("counts"), dict) or not isinstance(receipts, dict)
            or not all(entry_ok(e) and e["bytes"] <= artifacts.MAX_RECEIPT_BYTES for e in receipts.values())):
        raise IntegrityError(f"{path}: the {what}'s manifest is malformed")
    for stored in receipts:
        artifacts.receipt_target("/", stored)  # a confined receipts/<id>.json name, or Refused


def read(path, home, *, format, what, database, check=None, staging=None, action, trust_unsigned=True):
    """Read a streamed artifact of ``format`` front to back, verifying as it goes; return
    ``(manifest, provenance)``.  ``check(manifest, path)``: the kind's own manifest checks
    (after :func:`check_manifest`).  ``staging``: also write the database copy and receipt
    files there.  An untrusted signer is refused (unless ``trust_unsigned``) right after
    the manifest, before any other member is read."""
    import tarfile  # lazy: readers only

    from mindos.core import files  # lazy: as above
    from mindos.core.canonical import sha256  # lazy: as above
    from mindos.errors import NotFound  # lazy: as above

    global LAST_READER
    try:
        fd, _ = files.open_regular(path)
    except NotFound:
        raise IntegrityError(f"no such file: {path}") from None
    except Refused as exc:
        raise IntegrityError(str(exc), code=exc.code) from None
    reader = LAST_READER = _Reader(fd)
    try:
        try:
            tar = tarfile.open(fileobj=reader, mode="r|", bufsize=tarfile.RECORDSIZE)
            members = iter(tar)
            info = next(members, None)
            if info is None or info.name != MANIFEST or not info.isreg() or info.size > MAX_MANIFEST_BYTES:
                raise IntegrityError(f"{path}: not a streamed {what} (its first member is not a manifest)")
            spans = [_span(info, path, what)]
            manifest, provenance = artifacts.loads_signed(tar.extractfile(info).read(info.size), format, home, path)
            check_manifest(manifest, path, what, database)
            if check is not None:
                check(manifest, path)
            artifacts.require_trusted(provenance, path, action, trust_unsigned)
            expected = {database: manifest["database"], **manifest["receipt_files"]}
            seen = []
            for info in members:
                entry = expected.pop(info.name, None)
                if entry is None or not info.isreg():
                    found = "a second copy of" if info.name in seen else "an unexpected member"
                    raise IntegrityError(f"{path}: the {what} holds {found} {info.name[:80]!r}")
                if info.name != database and not seen:
                    raise IntegrityError(f"{path}: the {what}'s database copy is not its second member")
                if info.size != entry["bytes"]:
                    raise IntegrityError(f"{path}: {info.name} is {info.size} bytes, its manifest says"
                                         f" {entry['bytes']}")
                _copy_member(tar.extractfile(info), info, entry, path, what, staging, sha256)
                seen.append(info.name)
                spans.append(_span(info, path, what))
            while reader.read(CHUNK):  # to the end of the file, so its length is known
                pass
            _zero_padding(fd, spans, reader.total, path, what)
        except (tarfile.TarError, EOFError) as exc:
            raise IntegrityError(f"{path}: the {what} is truncated or damaged ({exc})") from None
        if expected:
            missing = sorted(expected)
            raise IntegrityError(f"{path}: the {what} is missing {missing[0]}"
                                 + (f" and {len(missing) - 1} more member(s)" if len(missing) > 1 else ""))
    finally:
        os.close(fd)
    return manifest, provenance


def _copy_member(source, info, entry, path, what, staging, sha256):
    """Hash one member as it streams past (and write it into ``staging`` when given)."""
    digest = sha256()()
    target = None if staging is None else open(os.path.join(staging, info.name), "xb")
    try:
        left = info.size
        while left:
            block = source.read(min(CHUNK, left))
            if not block:
                raise IntegrityError(f"{path}: the {what} is truncated (inside {info.name})")
            digest.update(block)
            left -= len(block)
            if target is not None:
                target.write(block)
    finally:
        if target is not None:
            target.close()
    if digest.hexdigest() != entry["sha256"]:
        raise IntegrityError(f"{path}: {info.name} does not match its sha256 in the sealed manifest"
                             " (the file was changed)")


def _span(info, path, what):
    """``(header offset, data offset, size)`` of a member, refusing header records the
    writer never makes (a pax record other than the ``size`` of a member over 8 GiB): bytes
    slipped in as a ``comment`` would change nothing restored, yet the file would not be the
    one written."""
    if set(info.pax_headers) - {"size"}:
        raise IntegrityError(f"{path}: a member header of the {what} holds records its writer never writes"
                             " (the file was changed)")
    return info.offset, info.offset_data, info.size


def _checksum_as_written(header):
    """True when tar header block ``header`` holds its checksum field as the writer spells it:
    six octal digits, a NUL and a space.  tar reads the number loosely (leading spaces for
    zeros, any last byte), so a field respelled with the same value would pass its own check
    while the file is no longer the one written."""
    field = 148
    total = sum(header[:field]) + sum(header[field + 8:]) + 8 * 32  # the field counted as spaces
    return header[field:field + 8] == b"%06o\0 " % total


def _zero_padding(fd, spans, size, path, what):
    """The members' headers follow each other with nothing between them, and every byte
    their contents and headers do not cover is tar padding and must be zero: the rest of
    each member's last block, the end-of-archive blocks and the record padding after them
    (``spans``: ``(header offset, data offset, size)`` of each member, in order).  So no byte
    of the file can change unnoticed: headers carry tar's checksum, contents the seal."""
    block = 512
    end = 0
    for header, offset, length in spans:
        # one header block, or a pax record of the size (a header, one block of records) and then the header
        if header != end or offset - header not in (block, 3 * block):
            raise IntegrityError(f"{path}: the {what} holds bytes between its members (the file was changed)")
        # every header block (the pax record's too) holds its checksum exactly as written
        for at in ((header, offset - block) if offset - header > block else (offset - block,)):
            if not _checksum_as_written(os.pread(fd, block, at)):
                raise IntegrityError(f"{path}: a member header of the {what} was changed")
        pad = -length % block
        if pad and os.pread(fd, pad, offset + length).count(0) != pad:
            raise IntegrityError(f"{path}: the {what}'s padding holds data (the file was changed)")
        end = offset + length + pad
    if size % block or size - end < 2 * block:
        raise IntegrityError(f"{path}: the {what} does not end as a tar file ends (truncated or changed)")
    while end < size:
        data = os.pread(fd, min(CHUNK, size - end), end)
        if not data or data.count(0) != len(data):
            raise IntegrityError(f"{path}: the {what} has data after its end (the file was changed)")
        end += len(data)


def verify_copy(copy, manifest, path, *, visit_for=None):
    """Re-digest every table of the streamed-in database copy ``copy`` against the manifest;
    ``visit_for(table)`` (optional) returns a ``visit(columns, rows)`` that checks each chunk
    of that table's rows in the same pass (or None)."""
    from mindos.store import backup  # lazy: restores only

    source = backup.open_copy(copy)
    try:
        if backup.schema_version(source) != manifest["schema_version"]:
            raise IntegrityError(f"{path}: the database copy's schema version differs from its manifest")
        names = tables.data_tables(source)
        if sorted(manifest["tables"]) != names:
            raise IntegrityError(f"{path}: the database copy's tables differ from its manifest")
        for name in names:
            visit = visit_for(name) if visit_for is not None else None
            rows, digest = tables.digest_table(source, name, chunk=manifest["digest_chunk_rows"], visit=visit)
            entry = manifest["tables"][name]
            if rows != entry["rows"] or digest != entry["sha256"]:
                raise IntegrityError(f"{path}: table {name} of the database copy does not match its digest in the"
                                     " sealed manifest")
    except sqlite3.DatabaseError as exc:
        raise IntegrityError(f"{path}: the database copy is damaged ({exc})") from None
    finally:
        source.close()


def row_checker(table, action, *, guard, limit):
    """A ``visit(columns, rows)`` for :func:`verify_copy` that checks each chunk of ``table``'s
    rows by the write path's rules (and, when ``guard``, the secret guard), refusing as ``action``."""
    def visit(columns, rows):
        rowcheck.check_chunk(table, columns, rows, action=action, limit=limit, guard=guard)
    return visit
