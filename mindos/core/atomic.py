"""The atomic 0600 file write.

Temp file in the same directory, fsync, rename, fsync the directory: a killed process
leaves either the old file or the new one, never a torn one.  Every artifact MindOS writes
(receipts, sealed documents) goes through :func:`atomic_write`.
"""

import os

from mindos.core.canonical import sha256_hex


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
