"""``ops.py processes``: which agents hold work, and which OS processes look like them.

Two sources, both read-only.  The lease table is the truth about ownership: every held
lease with its owner, task, epoch, expiry, liveness and last heartbeat.  The OS process
list, where it can be read (``/proc`` on Linux), adds the processes whose command line
names a lease owner or a known agent harness -- a hint for an operator, never a rule:
nothing here kills, signals or changes anything.  Command lines pass through the secret
redactor and are clipped, because agents are often started with tokens on their argv.
"""

import os

from mindos.core import clock, secrets
from mindos.store import sql

HARNESSES = ("hermes", "codex", "claude", "claude-code", "opencode", "aider", "gemini", "dsh")
COMMAND_WIDTH = 200
MAX_PROCESSES = 200


def leases(conn):
    """Every held lease on an open task, live ones first then stale, soonest expiry first."""
    now = clock.now_iso()
    rows = conn.execute(
        "SELECT t.id, t.project, t.status, t.lease_owner, t.lease_epoch, t.lease_expires_at, h.at AS heartbeat_at,"
        " h.note AS heartbeat_note FROM tasks t LEFT JOIN heartbeats h ON h.task_id = t.id"
        f" WHERE t.lease_owner <> '' AND {sql.open_condition('t')} ORDER BY t.lease_expires_at, t.id")
    found = []
    for row in rows:
        entry = dict(row)
        entry["task_id"] = entry.pop("id")
        entry["owner"] = entry.pop("lease_owner")
        entry["live"] = bool(entry["lease_expires_at"] and entry["lease_expires_at"] > now)
        found.append(entry)
    found.sort(key=lambda entry: (not entry["live"], entry["lease_expires_at"] or "", entry["task_id"]))
    return found


def _words(text):
    return {word for word in text.replace("/", " ").replace("=", " ").replace(":", " ").lower().split() if word}


def os_processes(owners, proc_root="/proc"):
    """Processes whose command line names an owner or a known harness (read-only).

    ``{"available", "reason", "matched", "scanned"}``; ``available`` is false where the
    process list cannot be read (no ``/proc``).
    """
    if not os.path.isdir(proc_root):
        return {"available": False, "reason": "no readable process list on this system", "matched": [], "scanned": 0}
    wanted = {owner.lower() for owner in owners} | set(HARNESSES)
    matched, scanned, own = [], 0, os.getpid()
    try:
        entries = sorted((name for name in os.listdir(proc_root) if name.isdigit()), key=int)
    except OSError as exc:
        return {"available": False, "reason": f"cannot list {proc_root}: {exc.strerror}", "matched": [], "scanned": 0}
    for name in entries:
        pid = int(name)
        if pid == own:
            continue
        try:
            with open(os.path.join(proc_root, name, "cmdline"), "rb") as handle:
                raw = handle.read(4096)
        except OSError:
            continue  # gone, or not ours to read
        scanned += 1
        command = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()
        if not command:
            continue
        hits = sorted(wanted & _words(command))
        if not hits:
            continue
        shown = command[:COMMAND_WIDTH]
        if secrets.scan(shown):
            shown = secrets.redact(shown)[0]
        matched.append({"pid": pid, "command": shown, "matches": hits,
                        "owners": sorted(hit for hit in hits if hit in {owner.lower() for owner in owners})})
        if len(matched) >= MAX_PROCESSES:
            break
    return {"available": True, "reason": None, "matched": matched, "scanned": scanned}


def report(conn, *, with_os=True):
    """``ops.py processes``: ``{"leases", "owners", "os_processes"}``; reads only."""
    held = leases(conn)
    owners = {}
    for entry in held:
        summary = owners.setdefault(entry["owner"], {"owner": entry["owner"], "live": 0, "stale": 0, "tasks": []})
        summary["live" if entry["live"] else "stale"] += 1
        summary["tasks"].append(entry["task_id"])
    result = {"leases": held, "owners": [owners[name] for name in sorted(owners)], "now": clock.now_iso()}
    if with_os:
        result["os_processes"] = os_processes(list(owners))
    return result
