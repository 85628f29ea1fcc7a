"""``ops.py github`` and ``ops.py sentry``: what the registry knows, plus read-only tool status.

Each report has two halves.  ``registry`` is what MindOS itself holds: tasks with PR URLs
or branches (github), tasks tagged ``sentry`` / ``sentry:<issue>`` or carrying a receipt
whose kind starts with ``sentry`` (sentry), with their states.  ``tool`` is what the
external CLI says, asked only through read-only subcommands (``gh auth status``, ``gh pr
view --json``; ``sentry-cli info``, ``sentry-cli issues list``), each with a timeout and
no shell.  Without the tool, or with it unauthenticated, ``tool.configured`` is false with
a clear reason: "not configured" is a report, never an error.  Tool output is clipped and
passed through the secret redactor before it is shown.
"""

import json
import os
import shutil
import subprocess

from mindos.core import secrets, validate

TOOL_TIMEOUT = 15      # seconds per tool call
MAX_TOOL_CALLS = 20    # PRs asked about per report
MAX_LINES = 50


def _run(argv, timeout=TOOL_TIMEOUT):
    """``(returncode, stdout, stderr)`` of a read-only tool call, or None when it could not run."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                              errors="replace")
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.returncode, proc.stdout, proc.stderr


def _clip(text, lines=MAX_LINES):
    kept = [line[:300] for line in (text or "").splitlines()[:lines]]
    out = "\n".join(kept)
    return secrets.redact(out)[0] if secrets.scan(out) else out


def _tool(name, check_argv, hint):
    """``(path, status)``: the tool's path and a status dict saying whether it is usable."""
    path = shutil.which(name)
    if path is None:
        return None, {"name": name, "installed": False, "configured": False,
                      "reason": f"not configured: {name} is not installed"}
    result = _run([path, *check_argv])
    if result is None:
        return None, {"name": name, "installed": True, "configured": False,
                      "reason": f"not configured: {name} did not answer"}
    if result[0] != 0:
        return None, {"name": name, "installed": True, "configured": False,
                      "reason": f"not configured: {name} {' '.join(check_argv)} failed ({hint})",
                      "output": _clip(result[2] or result[1], 5)}
    return path, {"name": name, "installed": True, "configured": True, "reason": None}


def _listing(conn, where, params, limit):
    total = conn.execute(f"SELECT count(*) FROM tasks t WHERE {where}", params).fetchone()[0]
    rows = conn.execute(
        "SELECT t.id, t.project, t.title, t.status, t.priority, t.branch, t.worktree, t.pr_url, t.updated_at"
        f" FROM tasks t WHERE {where} ORDER BY t.updated_at DESC, t.id LIMIT ?", (*params, limit)).fetchall()
    by_status = {row[0]: row[1] for row in conn.execute(
        f"SELECT t.status, count(*) FROM tasks t WHERE {where} GROUP BY t.status", params)}
    return {"total": total, "by_status": by_status, "tasks": [dict(row) for row in rows],
            "truncated": total > len(rows)}


def github(conn, *, limit=50, use_tool=True):
    """``ops.py github``: ``{"registry", "tool"}``; reads only."""
    limit = validate.positive_int(limit, "--limit", maximum=10000)
    registry = _listing(conn, "(t.pr_url <> '' OR t.branch <> '')", (), limit)
    if not use_tool:
        return {"registry": registry, "tool": {"name": "gh", "configured": False, "reason": "not asked (--no-tool)"}}
    path, tool = _tool("gh", ["auth", "status"], "run gh auth login")
    if path is not None:
        prs = []
        for task in registry["tasks"]:
            url = task["pr_url"]
            if not url.startswith("https://") or len(prs) >= MAX_TOOL_CALLS:
                continue
            result = _run([path, "pr", "view", url, "--json", "number,state,isDraft,mergeable,reviewDecision,url"])
            entry = {"task_id": task["id"], "pr_url": url}
            if result is None or result[0] != 0:
                entry["error"] = _clip(result[2] if result else "gh did not answer", 3) or "gh pr view failed"
            else:
                try:
                    entry["pr"] = json.loads(result[1])
                except ValueError:
                    entry["error"] = "gh pr view returned no JSON"
            prs.append(entry)
        tool["pull_requests"] = prs
    return {"registry": registry, "tool": tool}


def sentry(conn, *, limit=50, use_tool=True):
    """``ops.py sentry``: ``{"registry", "tool"}``; reads only."""
    limit = validate.positive_int(limit, "--limit", maximum=10000)
    where = ("(EXISTS (SELECT 1 FROM task_tags g WHERE g.task_id = t.id AND (g.tag = 'sentry'"
             " OR g.tag LIKE 'sentry:%')) OR EXISTS (SELECT 1 FROM receipts r WHERE r.task_id = t.id"
             " AND r.kind LIKE 'sentry%'))")
    registry = _listing(conn, where, (), limit)
    for task in registry["tasks"]:
        task["sentry_tags"] = [row[0] for row in conn.execute(
            "SELECT tag FROM task_tags WHERE task_id = ? AND (tag = 'sentry' OR tag LIKE 'sentry:%') ORDER BY tag",
            (task["id"],))]
    if not use_tool:
        return {"registry": registry,
                "tool": {"name": "sentry-cli", "configured": False, "reason": "not asked (--no-tool)"}}
    path, tool = _tool("sentry-cli", ["info"], "set SENTRY_AUTH_TOKEN or run sentry-cli login")
    if path is not None:
        argv = [path, "issues", "list"]
        if os.environ.get("SENTRY_PROJECT"):
            argv += ["--project", os.environ["SENTRY_PROJECT"]]
        result = _run(argv)
        if result is None or result[0] != 0:
            tool["issues_error"] = _clip(result[2] if result else "sentry-cli did not answer", 5) or "issues list failed"
        else:
            tool["issues"] = _clip(result[1])
    return {"registry": registry, "tool": tool}
