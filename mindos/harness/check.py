"""``setup check``: read back what ``setup`` wrote for each harness and run it.

Design decisions
  * **What the harness will do, not what this shell would do.**  The home, interpreter and
    server are taken from the files setup wrote (the hook command's pinned
    ``HERMES_AUTOPILOT_HOME``, the MCP entry's ``env``, the Hermes shim), never from this
    process's environment, and each is run the way the harness runs it: the Claude Code hook
    through a shell with a sample SessionStart event on stdin, the Hermes shim with a sample
    first-turn event, the MCP server spawned with its registered command, args and env and
    sent ``initialize``.
  * **Per harness, per part.**  Each harness reports ``installed``, ``home`` (and whether it
    has a database), ``interpreter``, ``version``, ``hook`` (``ok``, ``seconds``,
    ``timeout``) and ``mcp`` (``ok``, the server's name and protocol); a part the harness
    does not have is ``null``.  ``ok`` is false on any failure, and the command exits 1.
  * **Leaves a trace like a session would.**  The sample hook runs are real session starts:
    they audit ``context_primed`` for the sample session's agent (Claude Code:
    ``claude-code-setupche``), and Hermes records the sample session as served.
"""

import json
import os
import shlex
import subprocess
import sys
import time

from mindos.errors import InvalidInput, MindosError
from mindos.harness import setup

CHECK_SESSION = "setup-check"
MCP_TIMEOUT = 20
VERSION_TIMEOUT = 20


def _run(argv, *, input_text="", env=None, timeout, shell=False, cwd=None):
    """``(returncode, stdout, stderr, seconds)``; a timeout gives returncode None."""
    started = time.monotonic()
    try:
        done = subprocess.run(argv, input=input_text, capture_output=True, text=True, env=env, timeout=timeout,
                              shell=shell, cwd=cwd)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return None, out, "timed out", time.monotonic() - started
    except OSError as exc:
        return 127, "", f"cannot run: {exc.strerror or exc}", time.monotonic() - started
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def _last_line(text):
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def version_of(interpreter, root=None, env=None):
    """The MindOS version ``interpreter`` imports (from ``root`` when given), or None."""
    code = "import sys\n" + (f"sys.path.insert(0, {root!r})\n" if root else "") + \
        "import mindos\nprint(mindos.__version__)"
    rc, out, _, _ = _run([interpreter, "-c", code], env=env, timeout=VERSION_TIMEOUT)
    return out.strip() if rc == 0 and out.strip() else None


def split_command(command):
    """``(env assignments, argv)`` of a hook command line."""
    words = shlex.split(command)
    assigned = {}
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        key, value = words.pop(0).split("=", 1)
        assigned[key] = value
    return assigned, words


def handshake(command, args, env):
    """Spawn an MCP stdio server and send ``initialize``; return ``{"ok", "server", "protocol", "detail"}``.

    Not spawned when the pinned home has no database: an older server would create one.
    """
    home = (env or {}).get("HERMES_AUTOPILOT_HOME")
    if home and not _home_part(home)["database"]:
        return {"ok": False, "server": None, "protocol": None, "seconds": 0.0,
                "detail": f"not started: no MindOS database in its home {home}"}
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "mindos-setup-check", "version": "1"}}}
    full_env = {**os.environ, **{k: str(v) for k, v in (env or {}).items()}}
    rc, out, err, seconds = _run([command, *args], input_text=json.dumps(request) + "\n", env=full_env,
                                 timeout=MCP_TIMEOUT)
    for line in (out or "").splitlines():
        try:
            reply = json.loads(line)
        except ValueError:
            continue
        if isinstance(reply, dict) and reply.get("id") == 1:
            result = reply.get("result") or {}
            ok = isinstance(result, dict) and "protocolVersion" in result
            return {"ok": ok, "server": (result.get("serverInfo") or {}).get("name") if ok else None,
                    "protocol": result.get("protocolVersion") if ok else None, "seconds": round(seconds, 3),
                    "detail": None if ok else json.dumps(reply.get("error"))[:300]}
    return {"ok": False, "server": None, "protocol": None, "seconds": round(seconds, 3),
            "detail": f"no initialize reply (exit {rc}): {_last_line(err)}"}


def _home_part(home):
    if not home:
        return {"home": None, "database": False}
    from mindos.store import db  # lazy: the file name only

    return {"home": home, "database": os.path.isfile(db.database_path(home))}


def _read_text(path):
    """What setup reads at ``path`` (through the one file-safety reader: a FIFO or device is
    refused, never waited on), or '' when it is absent or unreadable."""
    try:
        return setup._read(path) or ""
    except MindosError:
        return ""


def _read_json(path):
    try:
        return setup._load_json(path, _read_text(path))
    except MindosError:
        return {}


def check_claude(project_dir=None, user=False):
    paths = setup.targets("claude", project_dir=project_dir, user=user)
    settings = _read_json(paths["settings"])
    command = None
    for group in ((settings.get("hooks") or {}).get("SessionStart") or []):
        for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
            if setup._is_ours(hook):
                command, timeout = hook["command"], hook.get("timeout") or 60
                break
        if command:
            break
    keys, _ = setup.claude_mcp_keys(project_dir, user)
    node = _read_json(paths["claude_json"])
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    entry = node.get("mindos") if isinstance(node, dict) else None
    report = {"harness": "claude", "installed": bool(command or entry), "files": [paths["settings"], paths["claude_json"]]}
    if not report["installed"]:
        return {**report, **_home_part(None), "interpreter": None, "version": None, "hook": None, "mcp": None,
                "ok": False, "detail": f"no MindOS hook in {paths['settings']}; run setup claude"}
    problems = []
    home, hook = None, None
    interpreter = root = None
    if command:
        assigned, argv = split_command(command)
        home = assigned.get("HERMES_AUTOPILOT_HOME")
        interpreter = argv[0] if argv else None
        if len(argv) > 1 and argv[1].endswith(".py"):
            root = os.path.dirname(argv[1])
        cwd = project_dir or (os.getcwd() if not user else os.path.expanduser("~"))
        sample = {"session_id": CHECK_SESSION, "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup",
                  "transcript_path": ""}
        rc, out, err, seconds = _run(command, input_text=json.dumps(sample), timeout=timeout, shell=True, cwd=cwd)
        ok = rc == 0 and out.startswith("# MindOS prime for ") and seconds < timeout
        hook = {"ok": ok, "seconds": round(seconds, 3), "timeout": timeout,
                "detail": None if ok else (f"exit {rc}: " + _last_line(err) if rc is not None else "timed out")}
        if not ok:
            problems.append("hook")
    else:
        problems.append("no SessionStart hook")
    mcp = None
    if isinstance(entry, dict) and entry.get("command"):
        env = entry.get("env") or {}
        mcp = handshake(entry["command"], list(entry.get("args") or []), env)
        if home and env.get("HERMES_AUTOPILOT_HOME") != home:
            problems.append("the hook and the MCP server are pinned to different homes")
            mcp["detail"] = f"MCP server home {env.get('HERMES_AUTOPILOT_HOME')} differs from the hook's {home}"
        home = home or env.get("HERMES_AUTOPILOT_HOME")
        interpreter = interpreter or entry["command"]
        root = root or env.get("PYTHONPATH")
        if not mcp["ok"]:
            problems.append("mcp")
    else:
        problems.append("no MCP server entry")
    return _finish(report, home, interpreter, root, hook, mcp, problems)


def check_codex(project_dir=None, user=False):
    import tomllib  # lazy: only the codex check reads TOML

    paths = setup.targets("codex", project_dir=project_dir, user=user)
    try:
        entry = (tomllib.loads(_read_text(paths["config"])).get("mcp_servers") or {}).get("mindos")
    except tomllib.TOMLDecodeError:
        entry = None
    report = {"harness": "codex", "installed": isinstance(entry, dict), "files": [paths["config"]]}
    if not report["installed"]:
        return {**report, **_home_part(None), "interpreter": None, "version": None, "hook": None, "mcp": None,
                "ok": False, "detail": f"no [mcp_servers.mindos] in {paths['config']}; run setup codex"}
    env = entry.get("env") or {}
    home = env.get("HERMES_AUTOPILOT_HOME")
    problems = [] if home else ["the MCP entry pins no home (env HERMES_AUTOPILOT_HOME); run setup codex again"]
    mcp = handshake(entry.get("command", ""), list(entry.get("args") or []), env)
    if not mcp["ok"]:
        problems.append("mcp")
    return _finish(report, home, entry.get("command"), env.get("PYTHONPATH"), None, mcp, problems)


def check_hermes():
    paths = setup.targets("hermes")
    shim = _read_text(paths["hook"])
    report = {"harness": "hermes", "installed": setup.SHIM_MARK in shim, "files": [paths["hook"], paths["config"]]}
    if not report["installed"]:
        return {**report, **_home_part(None), "interpreter": None, "version": None, "hook": None, "mcp": None,
                "ok": False, "detail": f"no MindOS gateway hook at {paths['hook']}; run setup hermes"}
    interpreter = shim.splitlines()[0][2:].strip() if shim.startswith("#!") else sys.executable
    home = root = None
    for line in shim.splitlines():
        if line.startswith('os.environ["HERMES_AUTOPILOT_HOME"] = '):
            home = _literal(line.split(" = ", 1)[1])
        elif line.startswith("sys.path.insert(0, "):
            root = _literal(line[len("sys.path.insert(0, "):].split(")", 1)[0])
    problems = [] if home else ["the hook pins no home; run setup hermes again"]
    timeout = 15
    sample = {"hook_event_name": "pre_llm_call", "session_id": f"mindos-setup-check-{os.urandom(4).hex()}",
              "extra": {"is_first_turn": True}}
    env = {k: v for k, v in os.environ.items() if k != "HERMES_MINDOS_CONTEXT"}
    rc, out, err, seconds = _run([paths["hook"]], input_text=json.dumps(sample), env=env, timeout=timeout)
    try:
        answer = json.loads(out or "null")
    except ValueError:
        answer = None
    ok = rc == 0 and isinstance(answer, dict) and str(answer.get("context", "")).startswith("# MindOS prime for ")
    hook = {"ok": ok, "seconds": round(seconds, 3), "timeout": timeout,
            "detail": None if ok else (f"exit {rc}: " + (_last_line(err) or "no context in the answer"))}
    if not ok:
        problems.append("hook")
    return _finish(report, home, interpreter, root, hook, None, problems)


def _literal(text):
    import ast  # lazy: only the hermes check reads the shim

    try:
        value = ast.literal_eval(text.split("  #", 1)[0].strip())
        return value if isinstance(value, str) else None
    except (ValueError, SyntaxError):
        return None


def _finish(report, home, interpreter, root, hook, mcp, problems):
    part = _home_part(home)
    if home and not part["database"]:
        problems.append(f"no MindOS database in home {home}")
    version = version_of(interpreter, root) if interpreter else None
    if interpreter and version is None:
        problems.append(f"{interpreter} cannot import mindos")
    return {**report, **part, "interpreter": interpreter, "version": version, "hook": hook, "mcp": mcp,
            "ok": not problems, "detail": "; ".join(problems) or None}


def check(harness=None, *, project_dir=None, user=False):
    """``{"ok", "harnesses": [per-harness report]}`` for ``harness`` (None: each one set up;
    none set up fails)."""
    if harness is not None and harness not in setup.HARNESSES:
        raise InvalidInput(f"unknown harness for setup check: {harness!r} (choose from {', '.join(setup.HARNESSES)})")
    if project_dir is not None:
        project_dir = os.path.abspath(os.path.expanduser(project_dir))
        if not os.path.isdir(project_dir):
            raise InvalidInput(f"--project-dir {project_dir!r} is not a directory")
    runs = {"claude": lambda: check_claude(project_dir, user), "codex": lambda: check_codex(project_dir, user),
            "hermes": check_hermes}
    if harness is not None:
        reports = [runs[harness]()]
    else:
        reports = [r for r in (run() for run in runs.values()) if r["installed"]]
        if not reports:
            return {"ok": False, "harnesses": [], "detail": "MindOS is set up in no harness here; run setup <harness>"}
    return {"ok": all(r["ok"] for r in reports), "harnesses": reports}
