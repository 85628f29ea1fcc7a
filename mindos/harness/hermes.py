"""The Hermes gateway hook: one bounded MindOS pack on the first turn of a new session.

Hermes runs ``mindos_gateway_hook.py`` as a ``pre_llm_call`` shell hook: the event arrives
as JSON on stdin (``hook_event_name``, ``session_id``, ``extra`` ...) and a JSON object on
stdout may carry ``context``, which Hermes adds to the turn (never to the system prompt).

Design decisions
  * **First turn of a new session only.**  Context is supplied when the payload says the
    turn is the first (``is_first_turn``, at the top level or under ``extra``; or an empty
    ``conversation_history``) *and* this session id was never served before (a small
    bounded record in the MindOS home).  Continuation turns, repeated first-turn events and
    payloads that prove nothing get ``{}``.
  * **What the pack holds.**  ``prime``'s sections (the agent's leases, handoffs handed to
    it, pinned constraints, the next task, the held task with its live handoff and notes)
    plus the first-turn sections (:mod:`mindos.context.first_turn`): the latest receipts,
    currently-valid temporal facts, semantic memory and session history, each with its
    provenance and relevant to the task the agent holds (else would get next).
  * **Bounded.**  The pack is ``prime`` in text form for the profile's agent, within
    ``context_pack_max_bytes`` UTF-8 bytes and ``--seconds`` (default 60 % of
    ``context_pack_seconds``), even while another process holds the write lock (the audit
    event is then deferred to the next write); both settings are read from the
    ``mindos_bridge:`` block of ``$HERMES_HOME/config.yaml``; ``context_pack: false`` turns
    it off).  prime redacts, so no secret leaves; its agent scope keeps profiles apart.
  * **Opt-out end to end:** ``HERMES_MINDOS_CONTEXT=off`` (or ``0``/``false``/``no``) makes
    the hook answer ``{}`` before it opens anything.
  * **Never breaks the agent, never makes a home.**  Any failure (a home without a
    database included: the CLI's ``no_database`` words) is one line on stderr and ``{}``
    on stdout, exit 0; no file or directory is created.
  * **``sentinel``** proves the whole path in a disposable home (a temporary MindOS home,
    Hermes home and HOME, deleted afterwards; the live homes are never opened): the first
    turn gets a pack within the byte budget with no secret, carrying the seeded receipt,
    fact, memory and session snippet; a continuation turn, a repeated first turn, the
    opt-out and another profile get nothing of it.  ``mindos_context_pack.py sentinel
    --json`` and ``mindos_gateway_hook.py sentinel --json`` both run it.
"""

import json
import os
import sys

DEFAULTS = {"context_pack": True, "context_pack_max_bytes": 4096, "context_pack_seconds": 15.0}
OFF_WORDS = ("off", "0", "false", "no", "disabled")
SEEN_FILE = "hermes_sessions.json"
SEEN_MAX = 2000
MIN_BYTES = 400
SENTINEL_BYTES = 4096
SENTINEL_CHECKS = ("first_turn_gets_a_pack", "pack_within_max_bytes", "no_secret_in_pack", "pack_carries_receipts",
                   "pack_carries_facts", "pack_carries_semantic_memory", "pack_carries_session_history",
                   "continuation_turn_gets_nothing", "repeated_first_turn_gets_nothing", "opt_out_gets_nothing",
                   "other_profile_sees_nothing_of_it")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def opted_out(env):
    return (env.get("HERMES_MINDOS_CONTEXT") or "").strip().lower() in OFF_WORDS


def hermes_home(env):
    return env.get("HERMES_HOME") or os.path.join(os.path.expanduser("~"), ".hermes")


def bridge_settings(env):
    """The ``mindos_bridge:`` settings of Hermes's config.yaml (defaults for anything missing).

    Only the flat ``key: scalar`` lines of that one top-level block are read, so the rest
    of the YAML (whatever features it uses) never matters.
    """
    from mindos.core import validate  # lazy: numbers are read in ASCII digits only

    found = dict(DEFAULTS)
    from mindos.core import files  # lazy: only the Hermes hook reads its config
    from mindos.errors import MindosError

    try:  # a linked dotfile is fine; a FIFO or device is refused, never read
        lines = files.read_bytes(os.path.join(hermes_home(env), "config.yaml"), max_bytes=1 << 20,
                                 follow_symlinks=True).decode("utf-8").splitlines()
    except (MindosError, OSError, UnicodeDecodeError):
        return found
    inside = False
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            inside = line.split("#", 1)[0].strip() == "mindos_bridge:"
            continue
        if not inside or ":" not in line:
            continue
        key, value = (part.strip() for part in line.split("#", 1)[0].split(":", 1))
        if key == "context_pack":
            found[key] = value.lower() not in ("false", "no", "off", "0")
        elif key in ("context_pack_max_bytes", "context_pack_seconds"):
            if key.endswith("bytes") and validate.ascii_integer(value):
                found[key] = int(value)
            elif not key.endswith("bytes") and validate.ascii_number(value):
                found[key] = float(value)
    return found


def _first_turn(payload):
    extra = payload.get("extra") if isinstance(payload.get("extra"), dict) else {}
    for source in (payload, extra):
        if isinstance(source.get("is_first_turn"), bool):
            return source["is_first_turn"]
    for source in (payload, extra):
        if isinstance(source.get("conversation_history"), list):
            return not source["conversation_history"]
    return False


def agent_for(payload, env):
    """The MindOS agent a Hermes profile speaks as: MINDOS_AGENT, else hermes[-<profile>]."""
    if env.get("MINDOS_AGENT"):
        return env["MINDOS_AGENT"]
    extra = payload.get("extra") if isinstance(payload.get("extra"), dict) else {}
    profile = payload.get("profile") or extra.get("profile") or env.get("HERMES_PROFILE") or ""
    return "hermes" if profile in ("", "default") else f"hermes-{profile}"


def _seen(home):
    try:
        with open(os.path.join(home, SEEN_FILE), encoding="utf-8") as handle:
            seen = json.load(handle)
        return seen if isinstance(seen, list) else []
    except (OSError, ValueError):
        return []


def _remember(home, seen, session):
    from mindos.core.atomic import atomic_write  # lazy: only a served session pays for the write

    seen = [s for s in seen if s != session][-(SEEN_MAX - 1):] + [session]
    atomic_write(os.path.join(home, SEEN_FILE), json.dumps(seen).encode("utf-8"))


def respond(payload, env=None, seconds=None):
    """The hook's answer to one event: ``{"context": text}`` or ``{}``; records a served session.

    The home is resolved by the CLI's rules and a home without a database is refused the
    same way (NotFound ``no_database``; nothing created).  ``seconds`` (default: 60 % of
    ``context_pack_seconds``) bounds the whole pack, its audit write included.
    """
    env = os.environ if env is None else env
    if opted_out(env) or not isinstance(payload, dict):
        return {}
    if payload.get("hook_event_name", "pre_llm_call") != "pre_llm_call" or not _first_turn(payload):
        return {}
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        return {}
    settings = bridge_settings(env)
    if not settings["context_pack"] or settings["context_pack_max_bytes"] < MIN_BYTES:
        return {}
    from mindos.context import first_turn, prime  # lazy: an ignored event never opens the store
    from mindos.store import db

    conn = db.connect(create=False)
    try:
        seen = _seen(conn.home)
        if session in seen:
            return {}
        if seconds is None:
            seconds = float(settings["context_pack_seconds"]) * 0.6
        seconds = max(0.5, min(float(seconds), prime.MAX_SECONDS))
        text = prime.prime(conn, agent_for(payload, env), project=env.get("MINDOS_PROJECT") or None,
                           budget=min(settings["context_pack_max_bytes"], 10_000_000), seconds=seconds,
                           extras=first_turn.DEFAULTS)
        _remember(conn.home, seen, session)
    finally:
        conn.close()
    from mindos.core.text import inert  # lazy: see above (prime renders inert text; the hook says so itself)

    return {"context": inert(text, multiline=True)}


# ---------------------------------------------------------------------------------------
# sentinel: the disposable proof path


def _hook_argv():
    script = os.path.join(ROOT, "mindos_gateway_hook.py")
    return [sys.executable, script] if os.path.exists(script) else [sys.executable, "-m", "mindos.cli.hermes_hook"]


def sentinel():
    """Exercise the hook end to end in a throwaway home; return ``{"ok", "checks": [...]}``."""
    import shutil
    import subprocess
    import tempfile

    from mindos.memory import facts, memories, notes, sessions  # lazy: only the sentinel seeds a throwaway home
    from mindos.store import db  # lazy: as above
    from mindos.work import leases, receipts, tasks  # lazy: as above

    base = tempfile.mkdtemp(prefix="mindos-sentinel-")
    checks = []
    secret = "ghp_" + "S3nt1nelT0kenV4lue9Q8r7S6t5U4v3W2x1Y0z"
    try:
        home, hermes = os.path.join(base, "autopilot"), os.path.join(base, "hermes")
        os.makedirs(hermes)
        with open(os.path.join(hermes, "config.yaml"), "w", encoding="utf-8") as handle:
            handle.write(f"mindos_bridge:\n  context_pack: true\n  context_pack_max_bytes: {SENTINEL_BYTES}\n"
                         "  context_pack_seconds: 15\n")
        transcripts = os.path.join(base, "transcripts")
        os.makedirs(transcripts)
        with open(os.path.join(transcripts, "sentinel-session.jsonl"), "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"role": "user", "content": "sentinel proof: keep the path disposable",
                                     "timestamp": "2026-01-01T00:00:00Z"}) + "\n")
        conn = db.connect(home)
        try:
            task = tasks.create(conn, project="Sentinel", title="sentinel proof task", next_action="prove the path")
            leases.claim(conn, task["id"], "hermes-sentinel")
            notes.add(conn, task["id"], content=f"credential {secret}", allow_secret=True, source="sentinel")
            receipt = receipts.add(conn, task["id"], "verification", {"sentinel": "receipt"})
            fact = facts.assert_fact(conn, subject="sentinel-proof", predicate="uses", obj="disposable-home",
                                     source="sentinel", task=task["id"])
            memory = memories.retain(conn, "sentinel proof memory: the first turn carries semantic memory",
                                     project="Sentinel", source="sentinel")
            sessions.ingest(conn, "hermes", transcripts, project="Sentinel", profile="sentinel", apply=True)
        finally:
            conn.close()
        env = {key: value for key, value in os.environ.items()
               if key not in ("HERMES_MINDOS_CONTEXT", "MINDOS_AGENT", "MINDOS_PROJECT", "MINDOS_HOME")}
        env.update(HERMES_AUTOPILOT_HOME=home, HERMES_HOME=hermes, HOME=base, HERMES_PROFILE="sentinel",
                   AUTOPILOT_HOME_SELECTOR=os.path.join(base, "no-selector.json"))

        def run(payload, **extra_env):
            done = subprocess.run(_hook_argv(), input=json.dumps(payload), capture_output=True, text=True,
                                  env={**env, **extra_env}, timeout=60)
            try:
                return done.returncode, json.loads(done.stdout or "null"), done.stderr
            except ValueError:
                return done.returncode, None, done.stderr

        def check(name, ok, detail=""):
            checks.append({"name": name, "ok": bool(ok), **({"detail": detail} if detail and not ok else {})})

        first = {"hook_event_name": "pre_llm_call", "session_id": "s-1", "extra": {"is_first_turn": True}}
        rc, out, err = run(first)
        context = (out or {}).get("context", "")
        check("first_turn_gets_a_pack", rc == 0 and task["id"] in context, err.strip()[:200])
        check("pack_within_max_bytes", 0 < len(context.encode("utf-8")) <= SENTINEL_BYTES)
        check("no_secret_in_pack", secret not in context and "ghp_" not in context)
        check("pack_carries_receipts", receipt["receipt_id"] in context)
        check("pack_carries_facts", "sentinel-proof uses disposable-home" in context)
        check("pack_carries_semantic_memory", memory["id"] in context)
        check("pack_carries_session_history", "hermes/" in context and "keep the path disposable" in context)
        rc, out, err = run({**first, "extra": {"is_first_turn": False}})
        check("continuation_turn_gets_nothing", rc == 0 and out == {}, err.strip()[:200])
        rc, out, err = run(first)
        check("repeated_first_turn_gets_nothing", rc == 0 and out == {}, err.strip()[:200])
        rc, out, err = run({**first, "session_id": "s-2"}, HERMES_MINDOS_CONTEXT="off")
        check("opt_out_gets_nothing", rc == 0 and out == {}, err.strip()[:200])
        rc, out, err = run({**first, "session_id": "s-3"}, HERMES_PROFILE="other")
        check("other_profile_sees_nothing_of_it",
              rc == 0 and task["id"] not in (out or {}).get("context", "") and "sentinel proof" not in json.dumps(out),
              err.strip()[:200])
    finally:
        shutil.rmtree(base, ignore_errors=True)
    check_names = [c["name"] for c in checks]
    return {"ok": all(c["ok"] for c in checks) and check_names == list(SENTINEL_CHECKS), "checks": checks,
            "home": "disposable (deleted)"}
