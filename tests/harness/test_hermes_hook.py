"""The Hermes gateway hook: first turn only, bounded, opt-out, per-profile, sentinel."""

import json
import os
import subprocess
import sys

import pytest

from mindos.harness import hermes
from mindos.memory import notes
from mindos.work import leases
from tests.conftest import START, make_task

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def env(tmp_path, home):
    hermes_home = tmp_path / "hermes"
    hermes_home.mkdir()
    (hermes_home / "config.yaml").write_text(
        "model: x\nmindos_bridge:\n  context_pack: true   # on\n  context_pack_max_bytes: 800\n"
        "  context_pack_seconds: 15\nhooks:\n  pre_llm_call:\n    - command: x\n")
    return {"HERMES_HOME": str(hermes_home), "HERMES_AUTOPILOT_HOME": str(home)}


@pytest.fixture
def held(conn):
    make_task(conn, "t-held", title="the held task", next_action="do it")
    leases.claim(conn, "t-held", "hermes")
    notes.add(conn, "t-held", content=f"key {SECRET}", allow_secret=True, source="hermes")
    make_task(conn, "t-other", title="another profile's task", project="Elsewhere")
    leases.claim(conn, "t-other", "hermes-work")
    return conn


def first(session="s1", **extra):
    return {"hook_event_name": "pre_llm_call", "session_id": session, "extra": {"is_first_turn": True, **extra}}


def test_settings_are_read_from_the_bridge_block(env):
    assert hermes.bridge_settings(env) == {"context_pack": True, "context_pack_max_bytes": 800,
                                           "context_pack_seconds": 15.0}
    assert hermes.bridge_settings({"HERMES_HOME": "/nonexistent"}) == hermes.DEFAULTS


def test_first_turn_only_once_per_session(held, env):
    answer = hermes.respond(first(), env)
    assert "t-held" in answer["context"] and len(answer["context"].encode()) <= 800
    assert SECRET not in answer["context"]
    assert hermes.respond({**first(), "extra": {"is_first_turn": False}}, env) == {}
    assert hermes.respond(first(), env) == {}  # a repeated first-turn event: no second injection
    assert "t-held" in hermes.respond(first("s2"), env)["context"]


@pytest.mark.parametrize("payload", [
    {"hook_event_name": "pre_llm_call", "session_id": "s", "extra": {}},
    {"hook_event_name": "pre_llm_call", "session_id": "s", "conversation_history": [{"role": "user"}]},
    {"hook_event_name": "pre_tool_call", "session_id": "s", "extra": {"is_first_turn": True}},
    {"hook_event_name": "pre_llm_call", "extra": {"is_first_turn": True}},
    "not an object",
])
def test_continuations_and_unprovable_events_get_nothing(held, env, payload):
    assert hermes.respond(payload, env) == {}


def test_empty_history_counts_as_a_first_turn(held, env):
    payload = {"hook_event_name": "pre_llm_call", "session_id": "h", "conversation_history": []}
    assert "context" in hermes.respond(payload, env)


def test_opt_out_and_disabled_pack(held, env, tmp_path):
    for word in ("off", "OFF", "0", "false", "no"):
        assert hermes.respond(first("o-" + word), {**env, "HERMES_MINDOS_CONTEXT": word}) == {}
    (tmp_path / "hermes" / "config.yaml").write_text("mindos_bridge:\n  context_pack: false\n")
    assert hermes.respond(first("d"), env) == {}


def test_profiles_do_not_leak(held, env):
    mine = hermes.respond(first("p1"), env)["context"]
    work = hermes.respond(first("p2", profile="work"), env)["context"]
    assert "t-held" in mine and "t-other" not in mine
    assert "t-other" in work and "t-held" not in work


def test_deterministic_for_identical_state(held, env):
    assert hermes.respond(first("a"), env) == hermes.respond(first("b"), env)


def _hook(argv, payload, env):
    return subprocess.run([sys.executable, os.path.join(ROOT, "mindos_gateway_hook.py"), *argv],
                          input=payload, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MINDOS_NOW": START, **env})


def test_the_script_answers_json_and_never_breaks_the_agent(held, env):
    done = _hook([], json.dumps(first("x")), env)
    assert done.returncode == 0 and "t-held" in json.loads(done.stdout)["context"]
    broken = _hook([], "{not json", env)
    assert broken.returncode == 0 and json.loads(broken.stdout) == {} and broken.stderr.count("\n") == 1
    off = _hook([], "{not json", {**env, "HERMES_MINDOS_CONTEXT": "off"})
    assert off.returncode == 0 and json.loads(off.stdout) == {} and off.stderr == ""
    usage = _hook(["bogus"], "", env)
    assert usage.returncode == 2 and usage.stdout == ""


def test_sentinel_proves_the_path_in_a_disposable_home(home):
    done = _hook(["sentinel", "--json"], "", {"HERMES_AUTOPILOT_HOME": str(home)})
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["ok"] is True, report
    assert [c["name"] for c in report["checks"]] == list(hermes.SENTINEL_CHECKS)
    assert not os.path.exists(os.path.join(str(home), "autopilot.db"))  # the live home was never touched


def test_the_first_turn_carries_receipts_facts_semantic_memory_and_sessions(held, env, tmp_path):
    from mindos.memory import facts, memories, sessions
    from mindos.work import receipts

    receipt = receipts.add(held, "t-held", "verification", {"tests": "pass"})
    facts.assert_fact(held, subject="held-task", predicate="uses", obj="postgres-14", source="codex", task="t-held")
    memory = memories.retain(held, "the held task needs the staging database", project="Trove")
    root = tmp_path / "transcripts"
    root.mkdir()
    (root / "s.jsonl").write_text(json.dumps({"role": "assistant", "content": "the held task: do it after lunch",
                                              "timestamp": "2026-08-20T10:00:00Z"}) + "\n")
    sessions.ingest(held, "claude-code", str(root), project="Trove", apply=True)
    env = dict(env)
    (tmp_path / "hermes" / "config.yaml").write_text("mindos_bridge:\n  context_pack_max_bytes: 4096\n")
    context = hermes.respond(first("f1"), env)["context"]
    assert receipt["receipt_id"] in context and "held-task uses postgres-14 (source codex" in context
    assert memory["id"] in context and "claude-code/" in context and "after lunch" in context
    assert SECRET not in context and len(context.encode("utf-8")) <= 4096
    other = hermes.respond(first("f2", profile="work"), env)["context"]
    assert receipt["receipt_id"] not in other and memory["id"] not in other and "after lunch" not in other


def _tree(path):
    found = {}
    for directory, _dirs, files in os.walk(path):
        for name in files:
            with open(os.path.join(directory, name), "rb") as handle:
                found[os.path.relpath(os.path.join(directory, name), path)] = handle.read()
    return found


def test_mindos_context_pack_sentinel_json_touches_no_live_home(held, env, tmp_path):
    fake_home = tmp_path / "user-home"
    fake_home.mkdir()
    live = os.path.dirname(held.path)
    held.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before, hermes_before = _tree(live), _tree(env["HERMES_HOME"])
    script = os.path.join(ROOT, "mindos_context_pack.py")
    done = subprocess.run([sys.executable, script, "sentinel", "--json"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env, "HOME": str(fake_home)})
    report = json.loads(done.stdout)
    assert done.returncode == 0 and done.stderr == "" and report["ok"] is True, report
    assert [c["name"] for c in report["checks"]] == list(hermes.SENTINEL_CHECKS)
    assert report["home"] == "disposable (deleted)"
    assert _tree(live) == before and _tree(env["HERMES_HOME"]) == hermes_before and os.listdir(fake_home) == []
    plain = subprocess.run([sys.executable, script, "sentinel"], capture_output=True, text=True, timeout=120,
                           env={**os.environ, **env, "HOME": str(fake_home)})
    assert plain.returncode == 0 and plain.stdout.splitlines()[-1] == "sentinel: ok"
    for argv, code in ((["bogus"], 2), ([], 2), (["sentinel", "--yaml"], 2), (["--help"], 0)):
        done = subprocess.run([sys.executable, script, *argv], capture_output=True, text=True, timeout=60,
                              env={**os.environ, **env})
        assert done.returncode == code
        assert (done.stdout == "" and done.stderr.count("\n") == 1) if code else done.stdout.startswith("usage: mindos_context_pack.py sentinel")


@pytest.mark.bare_home
def test_a_home_without_a_database_is_refused_and_never_created(env, home):
    from mindos.errors import NotFound

    with pytest.raises(NotFound, match="no MindOS database in home") as caught:
        hermes.respond(first("n1"), env)
    assert caught.value.code == "no_database" and not os.path.exists(str(home))
    done = _hook([], json.dumps(first("n2")), env)
    assert done.returncode == 0 and json.loads(done.stdout) == {} and done.stderr.count("\n") == 1
    assert "no MindOS database" in done.stderr and not os.path.exists(str(home))


def test_the_gateway_hook_takes_its_time_bound(held, env):
    done = _hook(["--seconds", "4"], json.dumps(first("sec")), env)
    assert done.returncode == 0 and "t-held" in json.loads(done.stdout)["context"]
    for bad in (["--seconds", "0"], ["--seconds", "soon"], ["--seconds", "601"]):
        done = _hook(bad, json.dumps(first("bad")), env)
        assert done.returncode == 2 and done.stdout == "" and "invalid --seconds" in done.stderr
