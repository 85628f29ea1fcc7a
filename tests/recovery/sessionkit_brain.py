"""A whole installation for the brain inventory: Autopilot home (+ temporal.db), Hermes home
(sync file, sessions, profiles, skills, cron) and a Claude home with memory archives."""

import json
import os
import sqlite3

import migratekit


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def installation(tmp_path, *, temporal=True, sync=True):
    home = str(tmp_path / "autopilot")
    migratekit.autopilot_home(home)
    if temporal:
        raw = sqlite3.connect(os.path.join(home, "temporal.db"))
        raw.executescript("CREATE TABLE entities(id); CREATE TABLE relations(id); CREATE TABLE events(id);"
                          "INSERT INTO entities VALUES (1), (2); INSERT INTO relations VALUES (1);")
        raw.close()
    hermes = str(tmp_path / "hermes")
    if sync:
        _write(os.path.join(hermes, "claude-memory-sync.json"), json.dumps({"entries": [{"a": 1}, {"b": 2}]}))
    _write(os.path.join(hermes, "sessions", "2026", "s1.jsonl"), '{"role": "user", "content": "hi"}\n')
    _write(os.path.join(hermes, "sessions", "index.sqlite-cache"), "derived")
    _write(os.path.join(hermes, "sessions", "2026", "s2.jsonl"), '{"role": "assistant", "content": "ok"}\n')
    _write(os.path.join(hermes, "profiles", "default", "config.yaml"), "model: opus\n")
    _write(os.path.join(hermes, "profiles", "default", "state.json"), '{"pid": 1}')
    _write(os.path.join(hermes, "skills", "deploy", "SKILL.md"), f"# deploy\nkey {migratekit.AWS}\n")
    _write(os.path.join(hermes, "skills", "deploy", "cache", "x.bin"), "cache")
    _write(os.path.join(hermes, "skills", "review", "SKILL.md"), "# review\n")
    _write(os.path.join(hermes, "cron", "jobs.json"), json.dumps({"jobs": [{"id": "nightly"}]}))
    _write(os.path.join(hermes, "cron", "last-run.log"), "ran")
    claude = str(tmp_path / "claude")
    _write(os.path.join(claude, "projects", "-home-me-a", "memory", "MEMORY.md"), "remember the cookie fix\n")
    _write(os.path.join(claude, "projects", "-home-me-b", "memory", "notes.md"), "b notes\n")
    _write(os.path.join(claude, "projects", "-home-me-b", "s.jsonl"), "{}\n")
    return {"home": home, "hermes": hermes, "claude": claude}
