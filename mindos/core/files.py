"""File safety: the one way MindOS reads, walks and writes paths a user (or an inventory) names.

Every reader and writer of a user-named path goes through here, so the rules hold in one
place instead of being re-derived by each command:

  * :func:`open_regular` / :func:`read_bytes` look first (``lstat``: a FIFO, device,
    socket, directory or symlink is refused without being opened, since opening some
    devices acts), then open **without following a final symlink** (``O_NOFOLLOW``) and
    **with ``O_NONBLOCK``**, and ``fstat`` the descriptor, which decides: an entry swapped
    in between is still refused *before any byte is read*.  So naming a FIFO or
    ``/dev/zero`` can never hang a command or fill memory.  The size is checked against the
    caller's cap before reading and the cap is enforced again while reading (a file that
    grows, or a filesystem that lies about sizes, still stops at ``cap + 1`` bytes).
  * :func:`walk` is the one directory walk: it never follows a symlink (the root included),
    lists entries with ``scandir`` (no extra ``stat`` per entry), visits in a stable order
    (each directory's files by name, then its subdirectories by name, depth first), and is
    bounded in files and depth; whatever it leaves out is counted, never silent.
  * :func:`write_new` is the one ``--out`` writer: an atomic 0600 write
    (:func:`mindos.core.atomic.atomic_write`) that refuses an existing path unless
    ``force``, and refuses even with ``force`` a symlink, a non-regular file (FIFO, device,
    socket, directory), an SQLite database or one of its ``-wal`` / ``-shm`` / ``-journal``
    / ``.lock`` side files (the live home's database above all).  Without ``force`` the new
    file is linked into place, so a file that appears meanwhile is never replaced.
  * :func:`check_new_tree` is the rule for a command that writes a tree (a new home): the
    target may not be a system directory (``/``, ``/etc``, ``/usr``, the user's ``HOME``,
    ...) nor anything under the operating system's own trees, and must be absent or empty.
  * :func:`sweep_stale_temps` removes the temporary files of killed writers: a
    ``.<name>.<pid>.<hex>.tmp`` file (the atomic write's naming) is stale only when its pid
    is no longer running on this machine *and* it has not been touched for
    ``STALE_TEMP_SECONDS``; anything else (a live pid, a fresh file, another naming) is left
    alone.  :func:`write_new` sweeps its target directory before it writes, so the next
    artifact written to ``backups/`` (or any ``--out`` directory) clears what a killed
    snapshot left there.

The API, all of it: :func:`open_regular`, :func:`read_bytes`, :func:`walk`, :func:`walk_root`,
:func:`kind_of`, :func:`check_out`, :func:`write_new`, :func:`check_new_tree`,
:func:`stale_temps`, :func:`sweep_stale_temps`.  Symlinks are followed only where a caller asks
(``follow_symlinks=True``), and only for the user's own configuration files (a selector, an
agent's config, which dotfile managers link); never for anything sealed, imported, copied
or shared.  Nothing here is on the per-call path of ordinary commands: the module is
imported lazily by the readers and writers that need it.

Refusals are :class:`mindos.errors.Refused` with a stable ``code`` (``not_regular``,
``symlink``, ``too_large``, ``exists``, ``protected``, ``system_directory``, ``not_empty``;
``io_error`` when the system refused) and a message naming the path and what it is; a
missing file is :class:`mindos.errors.NotFound` (``not_found``).  All are listed in the
README's error table.
"""

import os
import stat

from mindos.errors import InvalidInput, NotFound, Refused

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FOLLOW_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = _FOLLOW_FLAGS | _NOFOLLOW
CHUNK = 1024 * 1024
MAX_DEPTH = 64
STALE_TEMP_SECONDS = 3600
SQLITE_MAGIC = b"SQLite format 3\x00"
SIDE_SUFFIXES = ("-wal", "-shm", "-journal", ".lock")
# a new home never goes here: the operating system's own trees (anything under them too)...
SYSTEM_TREES = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
                "/sbin", "/sys", "/usr", "/System", "/Library", "/Applications", "/private/etc", "/private/var/db")
# ...nor these directories themselves (a new home below them is fine)
SYSTEM_DIRS = ("/", "/home", "/Users", "/var", "/tmp", "/opt", "/root", "/srv", "/mnt", "/media", "/private",
               "/private/tmp", "/private/var", "/Volumes")


_KINDS = ((stat.S_ISREG, "regular file"), (stat.S_ISDIR, "directory"), (stat.S_ISLNK, "symlink"),
          (stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
          (stat.S_ISBLK, "block device"))


def kind_of(mode):
    """What a ``st_mode`` is, in words: ``regular file``, ``directory``, ``FIFO`` ..."""
    return next((name for test, name in _KINDS if test(mode)), "special file")


def _shown(path):
    return repr(path) if len(repr(path)) <= 200 else repr(path)[:197] + "..."


def _too_large(label, size, cap):
    return Refused(f"{label} is too large: {size} bytes, the limit is {cap} bytes", code="too_large")


def _not_regular(label, mode):
    if stat.S_ISLNK(mode):
        return Refused(f"{label} is a symlink; symlinks are never followed", code="symlink")
    return Refused(f"{label} is a {kind_of(mode)}, not a regular file", code="not_regular")


def open_regular(path, *, max_bytes=None, what=None, follow_symlinks=False):
    """Open ``path`` read-only as a regular file; return ``(fd, st)`` (the caller closes ``fd``).

    Never follows a final symlink, never opens a device or FIFO (an ``lstat`` first), never
    blocks (``O_NONBLOCK``, should one be swapped in) and refuses anything but a regular
    file, or one larger than ``max_bytes``, before reading.
    ``what`` names the file in messages (default: the path).  ``follow_symlinks`` is for the
    user's own configuration files only (dotfile managers link them), never for content
    that is sealed, imported or shared.
    """
    label = what or _shown(path)
    try:
        # a look before opening: a device is never opened at all (opening one can act: a tape
        # rewinds); the fstat below still decides, should the entry be swapped in between
        mode = (os.stat if follow_symlinks else os.lstat)(path).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(label, mode)
        fd = os.open(path, _FOLLOW_FLAGS if follow_symlinks else _READ_FLAGS)
    except FileNotFoundError:
        raise NotFound(f"{label}: no such file") from None
    except OSError as exc:
        import errno  # lazy: only the refusal paths read it

        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO, errno.EOPNOTSUPP):
            try:  # swapped since the look: ELOOP, a symlink; ENXIO / EOPNOTSUPP, a socket
                mode = os.lstat(path).st_mode
            except OSError:
                mode = None
            if mode is not None and not stat.S_ISREG(mode):
                raise _not_regular(label, mode) from None
        raise Refused(f"cannot read {label}: {exc.strerror or exc}", code="io_error") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(label, st.st_mode)
        if max_bytes is not None and st.st_size > max_bytes:
            raise _too_large(label, st.st_size, max_bytes)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def digest(path, *, what=None):
    """``(sha256 hex, bytes, head)`` of the regular file ``path``, opened as
    :func:`open_regular` opens it (never a symlink, FIFO or device) and read a MiB at a time;
    ``head`` is its first 16 bytes (where SQLite's magic lives)."""
    from mindos.core.canonical import sha256  # lazy: only file digests hash here

    fd, _ = open_regular(path, what=what)
    digest_, size, head = sha256()(), 0, b""
    with os.fdopen(fd, "rb") as handle:
        while True:
            chunk = handle.read(1 << 20)
            if not chunk:
                break
            if not size:
                head = chunk[:16]
            digest_.update(chunk)
            size += len(chunk)
    return digest_.hexdigest(), size, head


def read_bytes(path, *, max_bytes, what=None, follow_symlinks=False):
    """The bytes of the regular file ``path`` (see :func:`open_regular`), at most ``max_bytes``:
    a file past the cap, before or while reading, is refused (``too_large``)."""
    fd, _ = open_regular(path, max_bytes=max_bytes, what=what, follow_symlinks=follow_symlinks)
    try:
        return _read_fd(fd, max_bytes=max_bytes, what=what or _shown(path))
    finally:
        os.close(fd)


def _read_fd(fd, *, max_bytes, what):
    """Read an open descriptor to its end, refusing (``too_large``) past ``max_bytes``."""
    chunks, total = [], 0
    while True:
        chunk = os.read(fd, min(CHUNK, max_bytes + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise _too_large(what, f"more than {max_bytes}", max_bytes)


def walk(root, *, keep=None, max_files=None, max_depth=MAX_DEPTH, dirs=False):
    """Every non-directory entry under the directory ``root``, never following a symlink
    (with ``dirs``: every subdirectory instead, in the same order, for a caller that prunes).

    Returns ``(found, counts)``: ``found`` lists ``(rel, path)`` (``rel`` relative to
    ``root`` with ``/``) in a stable order (a directory's entries by name, files before its
    subdirectories, depth first) holding regular files and special files (a FIFO, socket or
    device is listed so a reader can name it; :func:`open_regular` refuses it), never
    symlinks.  ``keep(rel)`` filters entries; entries kept past ``max_files`` are not listed.
    ``counts``: ``symlinks`` (skipped, files and directories), ``special`` (non-regular files
    listed), ``overflow`` (kept entries past ``max_files``), ``too_deep`` (directories below
    ``max_depth``, not entered) and ``unreadable_dirs``.  A symlinked or missing ``root`` is
    refused (Refused / NotFound).
    """
    try:
        mode = os.lstat(root).st_mode
    except FileNotFoundError:
        raise NotFound(f"{_shown(root)}: no such directory") from None
    except OSError as exc:
        raise Refused(f"cannot read {_shown(root)}: {exc.strerror or exc}", code="io_error") from None
    if stat.S_ISLNK(mode):
        raise Refused(f"{_shown(root)} is a symlink; symlinks are never followed", code="symlink")
    if not stat.S_ISDIR(mode):
        raise Refused(f"{_shown(root)} is a {kind_of(mode)}, not a directory", code="not_regular")
    found, counts = [], {"symlinks": 0, "special": 0, "overflow": 0, "too_deep": 0, "unreadable_dirs": 0}
    stack = [(root, "", 0)]
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            counts["unreadable_dirs"] += 1
            continue
        subdirs = []
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_symlink():
                    counts["symlinks"] += 1
                    continue
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append(entry)
                    if not dirs:
                        continue
                    regular = True
                elif dirs:
                    continue
                else:
                    regular = entry.is_file(follow_symlinks=False)
            except OSError:
                counts["unreadable_dirs"] += 1
                continue
            if keep is not None and not keep(rel):
                continue
            if max_files is not None and len(found) >= max_files:
                counts["overflow"] += 1
                continue
            if not regular:
                counts["special"] += 1
            found.append((rel, entry.path))
        for entry in reversed(subdirs):  # the stack pops them back in name order
            if depth + 1 > max_depth:
                counts["too_deep"] += 1
                continue
            stack.append((entry.path, prefix + entry.name + "/", depth + 1))
    return found, counts


def entries(directory):
    """``[(name, lstat result or None)]`` for the entries of one directory, by name, never
    following a link (a symlink is listed with its own lstat); an entry that cannot be
    stat'ed gets None; an unreadable or missing directory lists nothing."""
    listed = []
    try:
        with os.scandir(directory) as listing:
            for entry in sorted(listing, key=lambda item: item.name):
                try:
                    listed.append((entry.name, entry.stat(follow_symlinks=False)))
                except OSError:
                    listed.append((entry.name, None))
    except OSError:
        pass
    return listed


def walk_root(root, *, flag="--root"):
    """The user-named directory ``root`` a scan starts from, made absolute: InvalidInput when it
    is not a path, Refused when it is a symlink (never followed), NotFound when it is not a
    directory; the messages name ``flag``."""
    if not isinstance(root, str) or not root:
        raise InvalidInput(f"invalid {flag}: expected a directory path")
    root = os.path.abspath(root)
    if os.path.islink(root):
        raise Refused(f"{flag} {root} is a symlink; symlinks are never followed")
    if not os.path.isdir(root):
        raise NotFound(f"{flag} {root} is not a directory")
    return root


def _absolute(path, message):
    """``path`` made absolute; Refused (``protected``, ``message``) unless it is a non-empty
    string without NUL."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise Refused(message, code="protected")
    return os.path.abspath(path)


def _mode(path, failure, code, wanted, wrong):
    """The ``lstat`` mode of ``path``, None when it does not exist.  Refused as ``failure:
    <why>`` with ``code`` when it cannot be read, and as ``wrong(kind)`` (``protected``) when
    it is not what ``wanted(mode)`` accepts (a symlink never is)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused(f"{failure}: {exc.strerror or exc}", code=code) from None
    if not wanted(mode):
        raise Refused(wrong(kind_of(mode)), code="protected")
    return mode


def _is_sqlite(path):
    """True when ``path`` is a regular file that starts with the SQLite header."""
    try:
        fd, _ = open_regular(path)
    except (Refused, NotFound):
        return False
    try:
        return os.read(fd, len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False
    finally:
        os.close(fd)


def check_out(path, *, force=False):
    """Refuse an ``--out`` path that must not be written; return it made absolute.

    Refused always: a symlink, anything but a regular file, an SQLite database, or a side
    file (``-wal``, ``-shm``, ``-journal``, ``.lock``) of one.  Refused without ``force``: any
    existing path.
    """
    path = _absolute(path, "refusing to write: the output path is empty or not a valid path")
    for suffix in SIDE_SUFFIXES:
        if path.endswith(suffix) and _is_sqlite(path[:-len(suffix)]):
            raise Refused(f"refusing to write {_shown(path)}: it is the {suffix.lstrip('-.')} file of the SQLite"
                          " database beside it (never overwritten, even with --force)", code="protected")
    if _mode(path, f"cannot write {_shown(path)}", "io_error", stat.S_ISREG,
             lambda kind: f"refusing to write {_shown(path)}: it is a {kind} (never replaced, even with --force)") is None:
        return path
    if _is_sqlite(path):
        raise Refused(f"refusing to write {_shown(path)}: it is an SQLite database (never overwritten, even with"
                      " --force)", code="protected")
    if not force:
        raise Refused(f"refusing to write {_shown(path)}: it already exists; pass --force to replace it",
                      code="exists")
    return path


def write_new(path, data, *, force=False, mode=0o600):
    """Write ``data`` to the ``--out`` path ``path`` atomically (0600); return its SHA-256.

    :func:`check_out` first; stale temporary files in the directory are swept
    (:func:`sweep_stale_temps`).  Without ``force`` the file is linked into place and a path
    that appeared meanwhile is refused, never replaced.
    """
    from mindos.core.atomic import atomic_write  # lazy: writers only

    path = check_out(path, force=force)
    sweep_stale_temps(os.path.dirname(path))
    try:
        return atomic_write(path, data, mode, exclusive=not force)
    except FileExistsError:
        raise Refused(f"refusing to write {_shown(path)}: it already exists; pass --force to replace it",
                      code="exists") from None


def _pid_alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except PermissionError:  # another user's process: running
        return True
    except (ProcessLookupError, OverflowError, ValueError):  # no such process (or no such pid at all)
        return False
    return True


def stale_temps(directory, *, min_age=STALE_TEMP_SECONDS, pattern=r"\..+\.([0-9]{1,10})\.[0-9a-f]{8}\.tmp",
                directories=False):
    """Names of the stale temporary files in ``directory`` (see :func:`sweep_stale_temps`):
    names matching ``pattern`` (a regular expression whose first group is the writer's pid;
    the default is what :func:`atomic_write` names its temporary files), at least ``min_age``
    seconds old, whose writer is gone.  ``directories=True`` looks for scratch directories
    instead of files (never through a symlink either way)."""
    import re  # lazy: only sweeps parse temp names

    from mindos.core import clock  # lazy: as above

    pattern = re.compile(pattern)
    now, stale = clock.now().timestamp(), []
    try:
        listing = os.scandir(directory)
    except OSError:
        return stale
    with listing:
        for entry in listing:
            match = pattern.fullmatch(entry.name)
            if not match:
                continue
            try:
                wanted = entry.is_dir(follow_symlinks=False) if directories else entry.is_file(follow_symlinks=False)
                if not wanted:
                    continue
                age = now - entry.stat(follow_symlinks=False).st_mtime
            except OSError:
                continue
            if age >= min_age and not _pid_alive(int(match.group(1))):
                stale.append(entry.name)
    return sorted(stale)


def sweep_stale_temps(directory, *, min_age=STALE_TEMP_SECONDS):
    """Remove the temporary files killed writers left in ``directory``; return their names.

    A ``.<name>.<pid>.<8 hex>.tmp`` regular file is removed only when no process with its
    pid is running here and it is at least ``min_age`` seconds old (by the package clock):
    a live writer's file always has a running pid, and a recycled pid only delays removal.
    """
    removed = []
    for name in stale_temps(directory, min_age=min_age):
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            continue
        removed.append(name)
    return removed


def _inside(path, tree):
    return path == tree or path.startswith(tree.rstrip("/") + "/")


def check_new_tree(target, *, what="--target", allow=None):
    """Refuse a tree-writing target that is a system directory or an existing non-empty
    directory; return the absolute target.

    ``allow(names)`` (optional) may accept an existing non-empty directory from its entry
    names (a re-run of the same import, for one).  The check runs on the path as given and
    as it resolves through symlinks.
    """
    target = _absolute(target, f"invalid {what}: expected a directory path")
    homes = {os.path.abspath(os.path.expanduser("~"))}
    if os.environ.get("HOME"):
        homes.add(os.path.abspath(os.environ["HOME"]))
    for candidate in {target, os.path.realpath(target)}:
        if candidate in SYSTEM_DIRS or candidate in homes or any(_inside(candidate, tree) for tree in SYSTEM_TREES):
            raise Refused(f"refusing {what} {_shown(target)}: it is a system directory or your home directory;"
                          " name a new, empty directory", code="system_directory")
    if _mode(target, f"refusing {what} {_shown(target)}", "protected", stat.S_ISDIR,
             lambda kind: f"refusing {what} {_shown(target)}: it is a {kind}, not a directory") is None:
        return target
    names = os.listdir(target)
    if names and not (allow is not None and allow(names)):
        raise Refused(f"refusing {what} {_shown(target)}: it exists and is not empty; name a new, empty directory",
                      code="not_empty")
    return target
