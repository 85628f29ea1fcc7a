"""Shared shapes for everything written to disk or hashed.

One implementation each of: canonical JSON, SHA-256, and the atomic 0600 write
(temp file in the same directory, fsync, rename, fsync the directory), so a killed
process leaves either the old file or the new one, never a torn one.
"""

import json
import os

try:  # the C sha256 alone; hashlib pulls in OpenSSL, which costs ~15 ms per process
    from _sha256 import sha256 as _sha256
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import sha256 as _sha256


def canonical_json(obj):
    """Return the canonical text form used for hashing and sealing."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(data):
    """Hex SHA-256 of bytes or text (text is UTF-8 encoded)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _sha256(data).hexdigest()


def sha256_constructor():
    """Return the fastest SHA-256 constructor available, for bulk hashing.

    OpenSSL's is ~1.7x faster per call than the builtin, but loading it costs a few
    milliseconds, so only bulk paths (chain verification) ask for it, at call time.
    """
    try:
        from _hashlib import openssl_sha256
    except ImportError:  # pragma: no cover - builds without OpenSSL
        return _sha256
    return openssl_sha256


def atomic_write(path, data, mode=0o600):
    """Write bytes to ``path`` atomically with permissions ``mode``; return the bytes' SHA-256."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    temp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        pass
    else:
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return sha256_hex(data)
