"""The atomic 0600 file write, and the atomic directory publish.

Temp file in the same directory, fsync, rename, fsync the directory: a killed process
leaves either the old file or the new one, never a torn one.  Every artifact MindOS writes
(receipts, sealed documents) goes through :func:`atomic_write`.  A set of files that must
appear together (a migrated vault copy, a registered Hermes home) goes through
:class:`StagedTree`: the same idea one level up, a staging directory renamed into place.
"""

import os

from mindos.core.canonical import sha256_hex
from mindos.errors import Refused


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def atomic_write(path, data, mode=0o600, *, confined=None, exclusive=False):
    """Write bytes to ``path`` atomically with permissions ``mode``; return the bytes' SHA-256.

    ``exclusive``: the file must be new; it is linked into place, so a path that exists (or
    appears meanwhile) raises FileExistsError and is never replaced.

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
        _fill(fd, data, mode)
        if exclusive:
            link_new(temp, path)
        else:
            os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)
    return sha256_hex(data)


def link_new(temp, path):
    """Move ``temp`` to the new name ``path`` without ever replacing an existing one
    (FileExistsError, ``temp`` left for the caller, when ``path`` exists)."""
    try:
        os.link(temp, path)
    except FileExistsError:
        raise
    except OSError:  # a filesystem without hard links: check, then rename
        if os.path.lexists(path):
            raise FileExistsError(path) from None
        os.replace(temp, path)
        return
    os.unlink(temp)


def _fill(fd, data, mode):
    """Write ``data`` to the new file ``fd`` (closed after), set ``mode`` exactly (the umask
    may have narrowed it) and fsync it."""
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fchmod(handle.fileno(), mode)
        os.fsync(handle.fileno())


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
            _fill(out, data, mode)
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


class StagedTree:
    """A directory that appears all at once, or not at all.

    ``StagedTree(target, confined=home)`` checks that ``target`` does not exist and lies
    inside ``confined`` with every directory from there down a real directory, never a
    symlink (Refused otherwise), creates the missing parents, and opens a private staging
    directory beside ``target`` (sweeping a killed earlier attempt's).  :meth:`write` puts
    files into it (fsynced); :meth:`publish` moves it into place with one rename;
    :meth:`discard` removes it.  A killed process leaves no ``target`` or a complete one.
    """

    def __init__(self, target, *, confined):
        confined, target = os.path.abspath(confined), os.path.abspath(target)
        relative = os.path.relpath(target, confined)
        if relative == os.curdir or relative.startswith(os.pardir) or os.path.isabs(relative):
            raise Refused(f"refusing to write {target}: it is outside {confined}")
        self.target, self.created, current = target, [], confined
        for part in relative.split(os.sep)[:-1]:
            current = os.path.join(current, part)
            if not os.path.lexists(current):
                os.mkdir(current, 0o700)
                self.created.append(current)
            elif os.path.islink(current) or not os.path.isdir(current):
                raise Refused(f"refusing to write {target}: {current} is a symlink or not a directory, and files "
                              f"never leave {confined}")
        if os.path.lexists(target):
            raise Refused(f"refusing to write {target}: it already exists")
        self.parent, name = os.path.split(target)
        prefix = f".{name}.staging-"
        for entry in os.listdir(self.parent):  # a killed earlier attempt's leftovers
            if entry.startswith(prefix) and not os.path.islink(os.path.join(self.parent, entry)):
                _remove_tree(os.path.join(self.parent, entry))
        self.staging = os.path.join(self.parent, f"{prefix}{os.getpid()}.{os.urandom(4).hex()}")
        os.mkdir(self.staging, 0o700)
        self.folders = {self.staging}

    def write(self, rel, data, mode=0o600):
        """Write ``data`` at the posix relative path ``rel`` of the staged tree; return its SHA-256."""
        parts = rel.split("/") if isinstance(rel, str) else []
        if not parts or os.path.isabs(rel) or any(p in ("", os.curdir, os.pardir) for p in parts):
            raise Refused(f"refusing to write {rel!r:.80}: not a plain relative path")
        folder = self.staging
        for part in parts[:-1]:
            folder = os.path.join(folder, part)
            if folder not in self.folders:
                os.makedirs(folder, 0o700, exist_ok=True)
                self.folders.add(folder)
        _fill(os.open(os.path.join(folder, parts[-1]), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode),
              data, mode)
        return sha256_hex(data)

    def publish(self):
        """Rename the staged tree into place; return the directories created for it (absolute
        paths, outermost first, ``target`` last)."""
        for folder in sorted(self.folders, key=len, reverse=True):
            _fsync_dir(folder)
        if os.path.lexists(self.target):
            raise Refused(f"refusing to write {self.target}: it already exists")
        os.rename(self.staging, self.target)
        _fsync_dir(self.parent)
        return self.created + [self.target]

    def discard(self):
        """Remove the staging directory and the parents created for it that are left empty."""
        _remove_tree(self.staging)
        _remove_empty(self.created)

    @staticmethod
    def remove(published):
        """Take a published tree back out (``published``: what :meth:`publish` returned)."""
        _remove_tree(published[-1])
        _remove_empty(published[:-1])


def _remove_empty(folders):
    for folder in reversed(folders):
        try:
            os.rmdir(folder)
        except OSError:
            break


def _remove_tree(path):
    import shutil  # lazy: only staged trees remove directories

    shutil.rmtree(path, ignore_errors=True)


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
