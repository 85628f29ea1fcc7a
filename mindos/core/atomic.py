"""The atomic 0600 file write.

Temp file in the same directory, fsync, rename, fsync the directory: a killed process
leaves either the old file or the new one, never a torn one.  Every artifact MindOS writes
(receipts, sealed documents) goes through :func:`atomic_write`.
"""

import os

from mindos.core.canonical import sha256_hex
from mindos.errors import Refused


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def atomic_write(path, data, mode=0o600, *, confined=None):
    """Write bytes to ``path`` atomically with permissions ``mode``; return the bytes' SHA-256.

    ``confined`` (a directory): the file must stay inside it, so every path component from
    there down must be a real directory, never a symlink (Refused otherwise), and the write
    goes through no-follow directory descriptors: a symlink swapped in cannot redirect it.
    """
    directory = os.path.dirname(os.path.abspath(path))
    if confined is not None:
        return _confined_write(os.path.abspath(confined), directory, os.path.basename(path), data, mode)
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


def _confined_write(root, directory, name, data, mode):
    """:func:`atomic_write` under ``root`` with no-follow opens of every component."""
    import errno  # lazy: the confined path only

    relative = os.path.relpath(directory, root)
    if relative.startswith(os.pardir) or os.path.isabs(relative):
        raise Refused(f"refusing to write {os.path.join(directory, name)}: it is outside {root}")
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for part in ([] if relative == os.curdir else relative.split(os.sep)):
            try:
                os.mkdir(part, 0o700, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                child = os.open(part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Refused(f"refusing to write {os.path.join(directory, name)}: {os.path.join(root, part)}"
                                  f" is a symlink or not a directory, and files never leave {root}") from None
                raise
            os.close(fd)
            fd = child
        temp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        out = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode, dir_fd=fd)
        try:
            with os.fdopen(out, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fchmod(handle.fileno(), mode)  # the umask may have narrowed or widened nothing else
                os.fsync(handle.fileno())
            os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=fd)
            except OSError:
                pass
            raise
        os.fsync(fd)
    finally:
        os.close(fd)
    return sha256_hex(data)
