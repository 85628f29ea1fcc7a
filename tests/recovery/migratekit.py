"""Migration fixtures: an old machine's tree with every source kind the inventory knows."""

import hashlib
import json
import os
import sqlite3

from mindos.memory import handoffs, notes
from mindos.store import db
from mindos.work import graph, receipts, tasks

AWS = "AKIA" + "Z7QW3RTY6UIO2PAS"


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def autopilot_home(path, tasks_count=5):
    """An Autopilot home with tasks, a dependency, notes, a handoff, a receipt and a claimed task."""
    conn = db.connect(str(path))
    try:
        for i in range(tasks_count):
            tasks.create(conn, project="Trove", title=f"task {i} redirect cookie", task_id=f"t{i}")
        graph.add_dependency(conn, "t1", "t0")
        notes.add(conn, "t0", content="the rate limit is 60/min", kind="fact", source="hermes")
        handoffs.record(conn, "t1", from_agent="hermes", to_agent="codex", status="in progress",
                        objective="finish the cookie fix")
        receipts.add(conn, "t0", "verification", {"tests": "pass"})
        conn.execute("UPDATE tasks SET status='claimed', lease_owner='codex', lease_expires_at='2026-08-21T10:00:00Z'"
                     " WHERE id='t2'")
    finally:
        conn.close()
    return path


def machine(root, *, with_secret=False):
    """The old machine: an Autopilot home, a Hermes home (with a Hindsight bank), an Obsidian
    vault and some clutter.  Returns the root."""
    autopilot_home(os.path.join(root, "autopilot"))
    hermes = os.path.join(root, "hermes")
    _write(os.path.join(hermes, "profiles", "default", "config.yaml"), "model: opus\n")
    _write(os.path.join(hermes, "skills", "deploy", "SKILL.md"), "# deploy\nrun the deploy\n")
    _write(os.path.join(hermes, "cron", "jobs.json"), json.dumps({"jobs": [{"id": "j1"}, {"id": "j2"}]}))
    _write(os.path.join(hermes, "hindsight", "bank.jsonl"),
           json.dumps({"content": "auth sessions expire after 30 days"}) + "\nnot json\n")
    vault = os.path.join(root, "vault")
    os.makedirs(os.path.join(vault, ".obsidian"), exist_ok=True)
    _write(os.path.join(vault, ".obsidian", "app.json"), "{}")
    _write(os.path.join(vault, "daily", "2026-08-20.md"),
           "worked on the cookie bug\n" + (f"aws key {AWS}\n" if with_secret else ""))
    _write(os.path.join(root, "clutter", "readme.txt"), "hello")
    return root


def tree_state(root):
    """{relative path: sha256} of every file (symlinks as their target text) under root."""
    found = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                found[rel] = "link:" + os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    found[rel] = hashlib.sha256(handle.read()).hexdigest()
            else:
                found[rel] = "dir:" + oct(os.stat(path).st_mode)
    return found


def plain_sqlite(path, tables=("things",)):
    conn = sqlite3.connect(path)
    for table in tables:
        conn.execute(f"CREATE TABLE {table}(x)")
    conn.commit()
    conn.close()
