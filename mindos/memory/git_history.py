"""Git history as memory: ``memory-ingest-git`` turns commit messages into project memories.

A commit message is often the one place a decision was written down ("switch sessions to
30-day expiry: the 7-day window logged people out mid-checkout").  This module reads a
repository's log and retains each commit's subject and body as a memory of kind
``commit`` in one project, through the same content-addressed insert as ``memory-retain``.

Design decisions
  * **Keyed by commit hash.**  Each memory is tagged ``commit:<hash>`` (and ``git``), and a
    commit whose tag the project already holds is never retained again -- live or
    forgotten -- so a re-run, or a run over an overlapping range, adds nothing.  The stored
    text starts with the full hash (so two commits with one message are two memories), its
    ``created_at`` is the commit's committer date, and it is audited
    ``memory_git_ingested`` with the commit hash.
  * **A dry run unless --apply**, like every import: the plan reports what would land.
  * **Bounded.**  At most ``--max-commits`` commits (merges left out), at most
    :data:`MAX_LOG_BYTES` of log read (git is stopped past it and the partial commit
    dropped), each message cut to :data:`MAX_MESSAGE_CHARS`, and a wall-clock timeout on
    every git call.
  * **Guarded.**  A message the secret detector flags is skipped whole and reported by
    commit and kind; its text is never stored, printed or audited.
  * **git as a hostile-input reader.**  git runs as an argument list (no shell), with
    stdin closed, every ``GIT_*`` variable of the caller's environment removed (so
    ``GIT_DIR``, ``GIT_CONFIG_*``, ``GIT_EXEC_PATH`` ... cannot redirect it), the system
    and global configuration ignored, no pager, no hooks, no fsmonitor, no signature
    checks, no textconv, and ``GIT_CEILING_DIRECTORIES`` set to the repository's parent
    so a plain directory inside some other checkout is reported as "not a git repository"
    instead of reading the outer one.  ``--repo`` must be a real directory, not a
    symlink, and its ``.git`` must not be a symlink either.
"""

import os

from mindos.core import clock, validate
from mindos.errors import InvalidInput, MindosError, NotFound, Refused
from mindos.memory import memories
from mindos.store import db

KIND = "commit"
SOURCE = "git"
ACTION = "memory_git_ingested"
DEFAULT_MAX_COMMITS = 500
MAX_COMMITS = 10000
MAX_MESSAGE_CHARS = 8000
MAX_LOG_BYTES = 16 * 1024 * 1024
TIMEOUT_SECONDS = 60
_FIELD, _RECORD = "\x1f", "\x00"
# hash, committer date (strict ISO), author name, raw message; records end with NUL (-z)
_FORMAT = "%H%x1f%cI%x1f%an%x1f%B"
# configuration that could make git run something or talk to a terminal, pinned off
_SAFE_CONFIG = ("core.pager=cat", "core.hooksPath=/dev/null", "core.fsmonitor=false", "core.untrackedCache=false",
                "log.showSignature=false", "i18n.logOutputEncoding=UTF-8", "color.ui=false", "diff.external=",
                "core.quotePath=true")


def _git_binary():
    """The git executable on PATH, or a clear refusal."""
    import shutil  # lazy: only this command looks for git

    found = shutil.which("git")
    if not found:
        raise MindosError("git is not installed (no git executable on PATH); memory-ingest-git needs it", code="no_git")
    return found


def _environment(repo):
    """The caller's environment without any GIT_* variable, plus the pins of this module."""
    env = {name: value for name, value in os.environ.items() if not name.upper().startswith("GIT_")}
    env.update({
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_CEILING_DIRECTORIES": os.path.dirname(repo),
        "LC_ALL": "C",
    })
    env.pop("PAGER", None)
    return env


def _argv(git, repo, *args):
    argv = [git, "--no-pager"]
    for setting in _SAFE_CONFIG:
        argv += ["-c", setting]
    return argv + ["-C", repo, *args]


def _run(git, repo, args, *, limit=None):
    """``(returncode, stdout bytes (at most limit, default MAX_LOG_BYTES), stderr text,
    cut)`` of one git call, killed after TIMEOUT_SECONDS; ``cut`` is True when git was
    stopped because its output passed ``limit``."""
    import subprocess  # lazy: only this command runs a subprocess
    import threading

    limit, timeout = limit or MAX_LOG_BYTES, TIMEOUT_SECONDS

    try:
        proc = subprocess.Popen(_argv(git, repo, *args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=_environment(repo), close_fds=True, shell=False)
    except OSError as exc:
        raise MindosError(f"cannot run git: {exc.strerror or exc}", code="no_git") from None
    timed_out = []

    def kill():
        timed_out.append(True)
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    errors = []
    reader = threading.Thread(target=lambda: errors.append(proc.stderr.read(65536)), daemon=True)
    reader.start()
    try:
        chunks, size, cut = [], 0, False
        while True:
            chunk = proc.stdout.read(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                cut = True
                proc.kill()
                break
        proc.wait()
        reader.join(timeout=5)
    finally:
        timer.cancel()
        for stream in (proc.stdout, proc.stderr):
            stream.close()
    if timed_out:
        raise Refused(f"git did not answer within {timeout}s; nothing was read")
    data = b"".join(chunks)[:limit]
    stderr = (errors[0] if errors else b"").decode("utf-8", "replace")
    return (0 if cut else proc.returncode), data, stderr, cut


def check_repo(repo):
    """The absolute path of ``--repo``: a real directory (never a symlink, nor its .git)."""
    if not isinstance(repo, str) or not repo.strip() or "\x00" in repo:
        raise InvalidInput("invalid --repo: a directory path is required")
    path = os.path.abspath(os.path.expanduser(repo))
    if os.path.islink(path):
        raise Refused(f"refused --repo {validate.shown(path)}: it is a symlink (symlinks are never followed)")
    if not os.path.isdir(path):
        raise NotFound(f"no such directory: {validate.shown(path)} (--repo)")
    if os.path.islink(os.path.join(path, ".git")):
        raise Refused(f"refused --repo {validate.shown(path)}: its .git is a symlink (symlinks are never followed)")
    return path


def _since(value):
    """``--since``: an ISO 8601 date or instant, in the storage format."""
    try:
        return clock.normalize(value, "--since")
    except InvalidInput:
        raise InvalidInput(f"invalid --since: {validate.shown(value, 40)} (expected an ISO 8601 date such as"
                           " 2026-08-01 or an instant such as 2026-08-01T09:00:00Z)") from None


def _parse(data, cut):
    """``[(hash, committed_at, author, message)]`` from ``git log -z`` output; a partial last
    record (the log was cut) is dropped."""
    text = data.decode("utf-8", "replace")
    records = text.split(_RECORD)
    if cut or (records and records[-1] and not text.endswith(_RECORD)):
        records = records[:-1]
    commits = []
    for record in records:
        record = record.lstrip("\n")
        if not record:
            continue
        parts = record.split(_FIELD, 3)
        if len(parts) != 4 or not validate.within(parts[0], validate.HEX_DIGITS, shortest=40, longest=64):
            continue
        commits.append(tuple(parts))
    return commits


def content(commit_hash, author, message):
    """The memory text of one commit: its hash and author, then subject and body."""
    message = message.strip().replace("\r\n", "\n")
    cut = len(message) > MAX_MESSAGE_CHARS
    if cut:
        message = message[:MAX_MESSAGE_CHARS].rstrip() + "\n[message truncated]"
    return f"git commit {commit_hash} by {author.strip() or 'unknown'}\n\n{message}", cut


def ingest(conn, repo, project, *, since=None, max_commits=DEFAULT_MAX_COMMITS, apply=False):
    """``memory-ingest-git``: retain ``repo``'s commit messages as ``project`` memories.

    A dry run unless ``apply``.  Returns ``{"repo", "project", "applied", "since",
    "max_commits", "commits_read", "more_commits", "log_truncated", "messages_truncated",
    "empty", "secret_skipped": [{"commit", "kinds"}], "already_present", "would_ingest" |
    "ingested", "ids"}``.  With ``apply`` every new memory and its ``memory_git_ingested``
    event commit in one transaction; a re-run ingests nothing.
    """
    from mindos.core import secrets  # lazy: only ingestion pays for the detector

    path = check_repo(repo)
    project = validate.identifier(project, "--project")
    since = _since(since) if since is not None else None
    max_commits = validate.positive_int(max_commits, "--max-commits", maximum=MAX_COMMITS)
    git = _git_binary()
    code, top, stderr, _ = _run(git, path, ["rev-parse", "--show-toplevel"], limit=65536)
    if code != 0:
        reason = " ".join(stderr.split())[:200]
        if "not a git repository" in reason.lower() or "must be run in a work tree" in reason.lower():
            raise NotFound(f"not a git repository: {validate.shown(path)} (--repo)")
        raise Refused(f"git refused {validate.shown(path)}: {reason or 'exit ' + str(code)}")
    top = top.decode("utf-8", "replace").strip()
    if os.path.realpath(top) != os.path.realpath(path):
        raise Refused(f"refused --repo {validate.shown(path)}: not the top of its repository ({validate.shown(top)})")
    args = ["log", "-z", "--no-merges", "--no-color", "--no-textconv", "--no-show-signature",
            f"--format={_FORMAT}", f"--max-count={max_commits + 1}"]
    if since is not None:
        args.append(f"--since={since}")
    code, data, stderr, cut = _run(git, path, args)
    if code != 0:
        reason = " ".join(stderr.split())[:200]
        if "does not have any commits" in reason:
            data, cut = b"", False
        else:
            raise Refused(f"git log failed in {validate.shown(path)}: {reason or 'exit ' + str(code)}")
    commits = _parse(data, cut)
    more = len(commits) > max_commits
    commits = commits[:max_commits]
    entries, blocked, truncated, empty = {}, [], 0, 0
    for commit_hash, committed, author, message in commits:
        try:
            committed_at = clock.normalize(committed, "commit date")
        except InvalidInput:
            committed_at = clock.now_iso()
        if since is not None and committed_at < since:
            continue
        if not message.strip():
            empty += 1
            continue
        text, was_cut = content(commit_hash, author, message)
        kinds = secrets.scan(text)
        if kinds:
            blocked.append({"commit": commit_hash, "kinds": kinds})
            continue
        truncated += was_cut
        entries.setdefault(_tag(commit_hash), (commit_hash, text, committed_at))
    result = {"repo": path, "project": project, "applied": bool(apply), "since": since, "max_commits": max_commits,
              "commits_read": len(commits), "more_commits": more, "log_truncated": cut,
              "messages_truncated": truncated, "empty": empty, "secret_skipped": blocked}
    if not apply:
        present = ingested(conn, project) & set(entries)
        new = [tag for tag in entries if tag not in present]
    else:
        with db.write(conn):
            present = ingested(conn, project) & set(entries)
            new = [tag for tag in entries if tag not in present]
            for tag in new:
                commit_hash, text, committed_at = entries[tag]
                memories.insert(conn, text, KIND, project, validate.tags([tag, SOURCE]), SOURCE, committed_at, ACTION,
                                {"commit": commit_hash, "repo": path, "created_at": committed_at}, learn=False)
            from mindos.memory import learned  # lazy: the batch is learned once
            learned.after_write(conn, rows=len(new))
    result["already_present"] = len(present)
    result["ingested" if apply else "would_ingest"] = len(new)
    result["ids"] = [memories.memory_id(project, entries[tag][1]) for tag in new]
    return result


def _tag(commit_hash):
    """The tag that keys a commit's memory (at most 40 hex digits: a tag is 64 characters)."""
    return "commit:" + commit_hash[:40]


def ingested(conn, project):
    """The commit tags already retained in ``project`` (live or retracted: a forgotten
    commit memory is not brought back by a re-run)."""
    rows = conn.execute("SELECT j.value FROM memories m, json_each(m.tags) j WHERE m.project = ? AND m.kind = ?"
                        " AND j.value LIKE 'commit:%'", (project, KIND))
    return {row[0] for row in rows}
