"""``setup claude`` / ``setup codex`` / ``setup hermes``: wire MindOS into a harness's own config files.

Design decisions
  * **Merge, never clobber.**  Only entries MindOS owns are added, updated or removed; every
    other key, hook, table and paragraph of the file stays as it was.  Ownership is
    recognizable without extra keys the harness might reject: a Claude Code hook is ours
    when its command carries ``MINDOS_HOOK=``; a Claude Code MCP entry when its ``env``
    carries ``MINDOS_SETUP``; a Codex TOML block and a Markdown section sit between
    ``mindos`` marker lines.  A file MindOS cannot read safely (invalid JSON or TOML, a
    ``mindos`` server someone else wrote) is refused, untouched.
  * **The home is pinned.**  Setup resolves the MindOS home now (``--home``, else the CLI's
    rules) and writes it into every command and server entry (``HERMES_AUTOPILOT_HOME``):
    a harness that passes only a few environment variables to its children (Codex) or
    starts from another shell still reaches the same ledger.  The report says which home
    and whether it has a database yet.
  * **Nothing machine-specific in files meant to be committed.**  ``setup claude`` puts
    the hooks (interpreter and checkout paths, the home) in ``.claude/settings.local.json``
    (Claude Code's personal, git-ignored settings) and the MCP server in ``~/.claude.json``
    under this project's path (Claude Code's "local" scope); the shared ``CLAUDE.md`` gets
    only the loop.  ``--user``: ``~/.claude/settings.json``, the user-scope ``mcpServers``
    of ``~/.claude.json`` and ``~/.claude/CLAUDE.md``.
  * **Idempotent and reversible.**  Running setup twice changes nothing the second time;
    ``--remove`` takes out exactly what setup put in: containers it had to create are
    pruned again, a file it created and that holds nothing else is deleted, and a file
    written in the usual layout (indentation, final newline) comes back byte for byte.
  * **Symlinks are followed.**  A config file that is a symbolic link (dotfiles managers,
    ``CLAUDE.md`` -> ``AGENTS.md``) has its target rewritten; the link stays a link.
  * **Says exactly what changed.**  The result lists every change (``add`` / ``update`` /
    ``remove``) and a unified diff per file; ``--dry-run`` computes the same report and
    writes nothing.  Atomic writes keep an existing file's permissions (new files: 0644,
    ``~/.claude.json`` 0600).

Claude Code: ``SessionStart`` command hooks for the sources ``startup``, ``resume``,
``clear`` and ``compact`` running ``session-start --hook claude`` (``prime`` for the session;
on exit 0 Claude Code adds the
hook's stdout to the context; the hook reads the session and working directory from its
stdin), with ``--stop-gate`` a ``Stop`` hook running ``stop-gate --hook claude``.  Codex:
``[mcp_servers.mindos]`` in ``.codex/config.toml`` (``--user``: ``$CODEX_HOME/config.toml``,
default ``~/.codex``) and a section of ``AGENTS.md`` with the loop.  Hermes: the gateway hook
at ``$HERMES_HOME/mindos/mindos_gateway_hook.py`` (a small shim running
:mod:`mindos.harness.hermes` with this interpreter and the pinned home) and a ``mindos_bridge`` +
``hooks.pre_llm_call`` block at the end of ``$HERMES_HOME/config.yaml``; a config that already
has a top-level ``hooks:`` or ``mindos_bridge:`` is refused (YAML is not merged by guesswork).
The profile's agent name is the hook's business (``hermes``/``hermes-<profile>``), so
``--agent`` does not apply to Hermes.

``setup check`` reads back what setup wrote and runs it: the home each harness resolves,
the interpreter and MindOS version, the hook with a sample event within its timeout, and
an MCP ``initialize`` handshake with the registered server.
"""

import difflib
import json
import os
import shlex
import shutil
import sys

from mindos.core import validate
from mindos.core.atomic import atomic_write
from mindos.errors import InvalidInput, Refused

HARNESSES = ("claude", "codex", "hermes")
HOOK_MARK = "MINDOS_HOOK="
SETUP_MARK = "MINDOS_SETUP"
SESSION_SOURCES = ("startup", "resume", "clear", "compact")
CLAUDE_EVENTS = ("SessionStart", "PreCompact", "Stop")  # every event a MindOS hook may sit on (PreCompact: legacy)
HOOK_TIMEOUT = 15  # seconds Claude Code waits for the hook
HOOK_SECONDS = 8  # prime's own bound, well under the timeout (process start and output included)
STOP_SECONDS = 5
HOOK_BUDGET = 4000
TOML_BEGIN = "# >>> mindos: managed by `setup codex` (remove with `setup codex --remove`)"
TOML_END = "# <<< mindos"
MD_BEGIN = "<!-- mindos:begin (managed by `setup codex`; remove with `setup codex --remove`) -->"
MD_END = "<!-- mindos:end -->"
CLAUDE_MD_BEGIN = "<!-- mindos:begin (managed by `setup claude`; remove with `setup claude --remove`) -->"
CLAUDE_MD_END = "<!-- mindos:end (setup claude) -->"
YAML_BEGIN = "# >>> mindos: managed by `setup hermes` (remove with `setup hermes --remove`)"
YAML_END = "# <<< mindos"
SHIM_MARK = "# managed by `setup hermes` (remove with `setup hermes --remove`)"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

AGENTS_SECTION = """## MindOS: shared tasks and memory (MCP server `mindos`)

This machine's agents share one MindOS ledger. Work in this loop, through the `mindos` MCP tools:

1. **Recall** before acting: `prime` with your agent name (your leases, handoffs to you, pinned
   constraints, the next task and the pack of the task you hold); `context` for one task.
2. **Claim** before you touch a task: `next` with `claim: true`, or `claim`; `heartbeat` (with
   `action` and a `progress_state` that changes as you advance) or `renew` while you work;
   `release` if you stop early.
3. **Act**, then record what you learned with `note` (constraints and decisions pinned) and your
   evidence with `receipt` (test output, commit, CI link).
4. **Finish**: `complete` (or `fail` with the reason), then `handoff` with objective, evidence,
   next actions and `recall_digest` set to the digest `prime` gave you.

Never put credentials, tokens or personal data into notes, receipts or handoffs.
"""

CLAUDE_SECTION = """## MindOS: shared tasks and memory (MCP server `mindos`)

Each session starts with a MindOS pack whose first line reads `# MindOS prime for <agent> ...`:
use that agent name in every MindOS call. Work in this loop, through the `mindos` MCP tools:

recall -> claim -> act -> note -> receipt -> complete -> handoff

1. **Recall**: read the pack; `recall` the task before you act on it and keep its digest.
2. **Claim**: `next` with `claim: true`, or `claim`; `heartbeat` while you work.
3. **Act** on the task.
4. **Note** what you learned (`note`: constraints and decisions, pinned when they bind).
5. **Receipt** your evidence (`receipt`: test output, commit, CI link).
6. **Complete** (`complete`, or `fail` with the reason).
7. **Handoff**: `handoff` with objective, evidence, next actions and the recall digest, so the
   next session (yours or another agent's) resumes where you stopped.

Never put credentials, tokens or personal data into notes, receipts or handoffs.
"""


# ---------------------------------------------------------------------------------------
# The home every harness is pinned to


def pinned_home(home=None):
    """``(path, rule)``: ``home`` (made absolute) when given, else the CLI's resolution."""
    if home is not None:
        if not isinstance(home, str) or not home.strip() or "\x00" in home:
            raise InvalidInput(f"invalid --home: {validate.shown(home)}")
        return os.path.abspath(os.path.expanduser(home)), "--home"
    from mindos.core.home import resolve  # lazy: setup only

    return resolve()


def home_report(home, rule):
    from mindos.store import db  # lazy: the file name only; nothing is opened

    has_db = os.path.isfile(db.database_path(home))
    report = {"path": home, "rule": rule, "database": has_db}
    if not has_db:
        report["warning"] = (f"no MindOS database in home {home} yet; run 'init' there (or pass --home) before a"
                             " session starts, or every hook and MCP call will refuse with no_database")
    return report


# ---------------------------------------------------------------------------------------
# Commands MindOS writes into harness configs


def _python():
    return shlex.quote(sys.executable)


def autopilot_command():
    """How a harness runs the autopilot door: this checkout's script, else the console script."""
    script = os.path.join(ROOT, "autopilot.py")
    if os.path.exists(script):
        return f"{_python()} {shlex.quote(script)}"
    return shlex.quote(shutil.which("mindos-autopilot") or "mindos-autopilot")  # hooks may run with a thin PATH


def hook_command(agent, event, home, budget=HOOK_BUDGET):
    """The shell command of a Claude Code hook on ``event`` (SessionStart: ``prime``; Stop:
    ``stop-gate``), pinned to ``home``; ``agent`` None lets the hook name the session."""
    who = f" --agent {shlex.quote(agent)}" if agent else ""
    prefix = f"{HOOK_MARK}{event} HERMES_AUTOPILOT_HOME={shlex.quote(home)} {autopilot_command()}"
    if event == "Stop":
        return f"{prefix} stop-gate --hook claude{who} --seconds {STOP_SECONDS}"
    return f"{prefix} session-start --hook claude{who} --budget {budget} --seconds {HOOK_SECONDS}"


def mcp_server_entry(home):
    """``(command, args, env)`` that starts the MCP server from this installation on ``home``."""
    env = {"HERMES_AUTOPILOT_HOME": home}
    if os.path.exists(os.path.join(ROOT, "autopilot.py")):
        return sys.executable, ["-m", "mindos.mcp"], {"PYTHONPATH": ROOT, **env}
    return shutil.which("mindos-mcp") or "mindos-mcp", [], env


# ---------------------------------------------------------------------------------------
# Where


def _user_home():
    home = os.path.expanduser("~")
    if home == "~":
        raise Refused("cannot resolve the user's home directory (set HOME)")
    return home


def claude_config_dir():
    """Claude Code's user directory: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(_user_home(), ".claude")


def claude_json_path():
    """Claude Code's global config (MCP servers of the user and local scopes)."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or _user_home()
    return os.path.join(base, ".claude.json")


def targets(harness, *, project_dir=None, user=False):
    """``{role: path}`` of the files ``harness`` setup manages."""
    if harness not in HARNESSES:
        raise InvalidInput(f"unknown harness {validate.shown(harness, 20)} (choose from {', '.join(HARNESSES)})")
    if user and project_dir is not None:
        raise InvalidInput("--user and --project-dir are exclusive")
    if harness == "claude":
        if user:
            base = claude_config_dir()
            return {"settings": os.path.join(base, "settings.json"), "claude_json": claude_json_path(),
                    "memory": os.path.join(base, "CLAUDE.md")}
        root = project_dir or os.getcwd()
        return {"settings": os.path.join(root, ".claude", "settings.local.json"),
                "shared": os.path.join(root, ".claude", "settings.json"), "claude_json": claude_json_path(),
                "memory": os.path.join(root, "CLAUDE.md")}
    if harness == "hermes":
        if project_dir is not None:
            raise InvalidInput("setup hermes works on the Hermes home ($HERMES_HOME or ~/.hermes); --project-dir does not apply")
        base = os.environ.get("HERMES_HOME") or os.path.join(_user_home(), ".hermes")
        return {"hook": os.path.join(base, "mindos", "mindos_gateway_hook.py"), "config": os.path.join(base, "config.yaml")}
    if user:
        base = os.environ.get("CODEX_HOME") or os.path.join(_user_home(), ".codex")
        return {"config": os.path.join(base, "config.toml"), "agents": os.path.join(base, "AGENTS.md")}
    root = project_dir or os.getcwd()
    return {"config": os.path.join(root, ".codex", "config.toml"), "agents": os.path.join(root, "AGENTS.md")}


# ---------------------------------------------------------------------------------------
# Claude Code settings (hooks), ~/.claude.json (MCP server) and CLAUDE.md


def _is_ours(hook):
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and HOOK_MARK in hook["command"]


def claude_hooks(agent, home, *, stop_gate=False):
    """``[(event, matcher, hook)]`` setup claude installs (matcher None: the event has none)."""
    wanted = [("SessionStart", source, {"type": "command", "command": hook_command(agent, "SessionStart", home),
                                        "timeout": HOOK_TIMEOUT}) for source in SESSION_SOURCES]
    if stop_gate:
        wanted.append(("Stop", None, {"type": "command", "command": hook_command(agent, "Stop", home),
                                      "timeout": HOOK_TIMEOUT}))
    return wanted


def merge_claude(settings, wanted):
    """Return ``(new settings, changes)`` with MindOS's hooks exactly ``wanted`` (a list of
    ``(event, matcher, hook)``; empty: remove them all); ``settings`` is not modified."""
    settings = json.loads(json.dumps(settings))  # a private deep copy
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise Refused("settings 'hooks' is not an object; fix it by hand first (left untouched)")
    changes = []
    for event in CLAUDE_EVENTS:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise Refused(f"settings 'hooks.{event}' is not a list; fix it by hand first (left untouched)")
        todo = {matcher or "": hook for e, matcher, hook in wanted if e == event}
        matchers = {matcher or "": matcher for e, matcher, _ in wanted if e == event}
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                continue
            key = group.get("matcher") or ""
            for hook in list(inner):
                if not _is_ours(hook):
                    continue
                want = todo.pop(key, None)
                if want is None:
                    inner.remove(hook)
                    changes.append({"action": "remove", "event": event, "matcher": key, "command": hook["command"]})
                elif hook != want:
                    inner[inner.index(hook)] = want
                    changes.append({"action": "update", "event": event, "matcher": key, "command": want["command"],
                                    "was": hook.get("command")})
        # a group emptied by removing our hook goes too (it held only ours)
        groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
        for key, hook in todo.items():
            group = {"hooks": [hook]} if matchers[key] is None else {"matcher": key, "hooks": [hook]}
            groups.append(group)
            changes.append({"action": "add", "event": event, "matcher": key, "command": hook["command"]})
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if hooks:
        settings["hooks"] = hooks
    else:
        settings.pop("hooks", None)
    return settings, changes


def _indent_of(text):
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and len(line) > len(stripped):
            return len(line) - len(stripped)
    return 2


def _dump_like(before, doc):
    """``doc`` as JSON in ``before``'s layout: its indentation, its final newline (new: 2, with one)."""
    if before is not None and before.strip() and "\n" not in before.strip():
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    else:
        text = json.dumps(doc, indent=_indent_of(before or ""), ensure_ascii=False)
    return text + ("\n" if before is None or before.endswith("\n") or not before.strip() else "")


def _load_json(path, before):
    if before is None or not before.strip():
        return {}
    try:
        doc = json.loads(before)
    except (ValueError, RecursionError):
        raise Refused(f"{path} is not valid JSON; fix or move it first (left untouched)") from None
    if not isinstance(doc, dict):
        raise Refused(f"{path} does not hold a JSON object; fix or move it first (left untouched)")
    return doc


def _plan_settings(path, wanted, *, only_if_ours=False):
    before = _read(path)
    if before is None and only_if_ours:
        return None
    settings = _load_json(path, before)
    merged, changes = merge_claude(settings, wanted)
    if not changes:
        return (path, before, before, [])
    # a file left holding nothing (it held only MindOS's hooks) is deleted; a symlink stays, emptied
    after = None if not merged and not os.path.islink(path) else _dump_like(before, merged)
    return (path, before, after, changes)


def _mcp_container(doc, keys, create):
    """Walk ``doc`` down ``keys``; return ``(container, created)`` (container None when absent
    and not ``create``); ``created`` counts the levels that had to be made, innermost last."""
    node, created = doc, 0
    for key in keys:
        if not isinstance(node, dict):
            raise Refused(f"~/.claude.json: {'.'.join(keys)} is not an object path; fix it by hand first (left untouched)")
        if key not in node:
            if not create:
                return None, 0
            node[key] = {}
            created += 1
        node = node[key]
    if not isinstance(node, dict):
        raise Refused(f"~/.claude.json: {'.'.join(keys)} is not an object; fix it by hand first (left untouched)")
    return node, created


def _created_levels(entry):
    mark = ((entry.get("env") or {}) if isinstance(entry, dict) else {}).get(SETUP_MARK, "")
    try:
        return int(mark.split("created=", 1)[1]) if "created=" in mark else 0
    except ValueError:
        return 0


def _ours_mcp(entry):
    env = entry.get("env") if isinstance(entry, dict) else None
    return isinstance(env, dict) and str(env.get(SETUP_MARK, "")).startswith("claude")


def merge_claude_mcp(doc, keys, entry, *, where):
    """Return ``(new doc, changes)`` with the ``mindos`` MCP server at ``doc[keys...]`` set to
    ``entry`` (None: removed, with the containers setup created for it)."""
    doc = json.loads(json.dumps(doc))
    servers, _ = _mcp_container(doc, keys, create=False)
    current = servers.get("mindos") if servers is not None else None
    if current is not None and not _ours_mcp(current):
        if entry is None:
            return doc, []
        raise Refused(f"{where} already has an MCP server named 'mindos' that setup did not write (left untouched)")
    if entry is None:
        if current is None:
            return doc, []
        del servers["mindos"]
        levels = _created_levels(current)
        for depth in range(len(keys), len(keys) - levels, -1):  # prune what setup created, innermost first
            parent, _ = _mcp_container(doc, keys[:depth - 1], create=False)
            if parent is not None and parent.get(keys[depth - 1]) == {}:
                del parent[keys[depth - 1]]
        return doc, [{"action": "remove", "entry": f"mcpServers.mindos ({where})"}]
    servers, created = _mcp_container(doc, keys, create=True)
    levels = _created_levels(current) if current is not None else created
    entry = json.loads(json.dumps(entry))
    entry["env"][SETUP_MARK] = "claude" + (f" created={levels}" if levels else "")
    if current == entry:
        return doc, []
    servers["mindos"] = entry
    return doc, [{"action": "update" if current is not None else "add", "entry": f"mcpServers.mindos ({where})"}]


def claude_mcp_keys(project_dir, user):
    """Where in ~/.claude.json the server goes: user scope, or this project's local scope."""
    if user:
        return ["mcpServers"], "user scope"
    return ["projects", os.path.realpath(project_dir or os.getcwd()), "mcpServers"], "local scope of this project"


def _plan_claude(paths, agent, remove, *, home, stop_gate=False, project_dir=None, user=False):
    wanted = [] if remove else claude_hooks(agent, home, stop_gate=stop_gate)
    plans = [_plan_settings(paths["settings"], wanted)]
    if "shared" in paths:  # an earlier setup put machine paths into the shared settings: take them out
        legacy = _plan_settings(paths["shared"], [], only_if_ours=True)
        if legacy is not None and legacy[3]:
            plans.append(legacy)
    path = paths["claude_json"]
    before = _read(path)
    doc = _load_json(path, before)
    keys, where = claude_mcp_keys(project_dir, user)
    command, args, env = mcp_server_entry(home)
    entry = None if remove else {"type": "stdio", "command": command, "args": args, "env": dict(env)}
    merged, changes = merge_claude_mcp(doc, keys, entry, where=where)
    after = before
    if changes:
        after = None if remove and not merged and not os.path.islink(path) else _dump_like(before, merged)
    plans.append((path, before, after, changes))
    plans.append(_plan_section(paths["memory"], CLAUDE_SECTION, CLAUDE_MD_BEGIN, CLAUDE_MD_END, remove,
                               "CLAUDE.md section 'MindOS: shared tasks and memory'"))
    return plans


def _plan_section(path, body, begin, end, remove, label):
    before = _read(path)
    after, action = merge_block(before, f"{begin}\n{body}{end}\n", begin, end, path, remove=remove)
    if action and remove and not after.strip():
        after = None
    return (path, before, after if action else before, [{"action": action, "entry": label}] if action else [])


# ---------------------------------------------------------------------------------------
# Codex config.toml and AGENTS.md (marker blocks)


def _toml_string(value):
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def toml_block(home):
    command, args, env = mcp_server_entry(home)
    lines = [TOML_BEGIN, "[mcp_servers.mindos]", f"command = {_toml_string(command)}",
             "args = [" + ", ".join(_toml_string(a) for a in args) + "]"]
    if env:
        lines.append("env = { " + ", ".join(f"{k} = {_toml_string(v)}" for k, v in env.items()) + " }")
    lines.append(TOML_END)
    return "\n".join(lines) + "\n"


def _split_block(text, begin, end, path):
    """``(head, block, tail)`` around the managed block of ``text`` (block None when absent)."""
    start = text.find(begin)
    if start < 0:
        return text, None, ""
    stop = text.find(end, start)
    if stop < 0:
        raise Refused(f"{path}: the mindos block has no end marker; fix it by hand first (left untouched)")
    stop += len(end)
    if text[stop:stop + 1] == "\n":
        stop += 1
    if text.find(begin, stop) >= 0:
        raise Refused(f"{path}: more than one mindos block; fix it by hand first (left untouched)")
    return text[:start], text[start:stop], text[stop:]


def merge_block(text, block, begin, end, path, *, remove=False):
    """Return ``(new text, action)`` with the managed block added/updated/removed (action None: no change)."""
    head, current, tail = _split_block(text or "", begin, end, path)
    if remove:
        if current is None:
            return text, None
        if head.endswith("\n\n") and not tail.strip():
            head = head[:-1]  # the blank line setup put before its block
        return head + tail, "remove"
    if current == block:
        return text, None
    if current is not None:
        return head + block + tail, "update"
    if head and not head.endswith("\n"):
        head += "\n"
    return head + ("\n" if head.strip() else "") + block, "add"


def _check_toml(path, text):
    import tomllib  # lazy: only setup codex reads TOML

    try:
        doc = tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as exc:
        raise Refused(f"{path} is not valid TOML ({exc}); fix or move it first (left untouched)") from None
    return doc


def _plan_codex(paths, agent, remove, *, home, **_):
    plans = []
    path = paths["config"]
    before = _read(path)
    _check_toml(path, before)
    head, current, tail = _split_block(before or "", TOML_BEGIN, TOML_END, path)
    if current is None and not remove:
        outside = _check_toml(path, head + tail)
        if "mindos" in (outside.get("mcp_servers") or {}):
            raise Refused(f"{path} already has an [mcp_servers.mindos] that setup did not write (left untouched)")
    after, action = merge_block(before, toml_block(home), TOML_BEGIN, TOML_END, path, remove=remove)
    if action:
        doc = _check_toml(path, after)
        if not remove and (doc.get("mcp_servers") or {}).get("mindos", {}).get("command") != mcp_server_entry(home)[0]:
            raise Refused(f"{path}: merging would not yield a valid [mcp_servers.mindos] (left untouched)")
        if remove and not after.strip():
            after = None
    plans.append((path, before, after if action else before,
                  [{"action": action, "entry": "[mcp_servers.mindos]"}] if action else []))
    plans.append(_plan_section(paths["agents"], AGENTS_SECTION, MD_BEGIN, MD_END, remove,
                               "AGENTS.md section 'MindOS: shared tasks and memory'"))
    return plans


# ---------------------------------------------------------------------------------------
# Hermes: the gateway hook shim and the config.yaml block


def hook_shim(home):
    """The hook file setup hermes writes: runs mindos.harness.hermes with this interpreter, pinned to ``home``."""
    lines = [f"#!{sys.executable}", SHIM_MARK, '"""MindOS gateway hook for Hermes (pre_llm_call); see mindos/harness/hermes.py."""',
             "import os", "import sys", "", f"os.environ[\"HERMES_AUTOPILOT_HOME\"] = {home!r}  # the pinned MindOS home"]
    if os.path.exists(os.path.join(ROOT, "mindos_gateway_hook.py")):
        lines.append(f"sys.path.insert(0, {ROOT!r})  # the MindOS checkout")
    lines += ["from mindos.cli.hermes_hook import main  # noqa: E402", "", "sys.exit(main())", ""]
    return "\n".join(lines)


def yaml_block(hook_path):
    return "\n".join([
        YAML_BEGIN, "mindos_bridge:", "  context_pack: true", "  context_pack_max_bytes: 4096",
        "  context_pack_seconds: 15", "hooks:", "  pre_llm_call:", f"    - command: {hook_path}",
        "      timeout: 15", YAML_END]) + "\n"


def _top_level_keys(text):
    return {line.split(":", 1)[0].strip() for line in text.splitlines()
            if line and not line[0].isspace() and not line.startswith("#") and ":" in line}


def _plan_hermes(paths, agent, remove, *, home, **_):
    plans = []
    path = paths["hook"]
    before = _read(path)
    if before is not None and SHIM_MARK not in before:
        raise Refused(f"{path} exists and was not written by setup hermes (left untouched)")
    after = None if remove else hook_shim(home)
    if before == after:
        plans.append((path, before, before, []))
    else:
        action = "remove" if remove else ("update" if before is not None else "add")
        plans.append((path, before, after, [{"action": action, "entry": "gateway hook (pre_llm_call)"}]))
    path = paths["config"]
    before = _read(path)
    head, current, tail = _split_block(before or "", YAML_BEGIN, YAML_END, path)
    if current is None and not remove:
        clash = sorted(_top_level_keys(head + tail) & {"hooks", "mindos_bridge"})
        if clash:
            raise Refused(f"{path} already has a top-level '{clash[0]}:' key; add the pre_llm_call hook"
                          f" ({paths['hook']}) and the mindos_bridge settings there by hand (left untouched)")
    after, action = merge_block(before, yaml_block(paths["hook"]), YAML_BEGIN, YAML_END, path, remove=remove)
    if action and remove and not after.strip():
        after = None
    plans.append((path, before, after if action else before,
                  [{"action": action, "entry": "mindos_bridge + hooks.pre_llm_call"}] if action else []))
    return plans


# ---------------------------------------------------------------------------------------


MAX_CONFIG_BYTES = 16 * 1024 * 1024  # an agent's configuration file


def _read(path):
    from mindos.core import files  # lazy: only setup reads agent configuration
    from mindos.errors import NotFound

    try:  # a linked dotfile is followed; a FIFO or device is refused, never read
        return files.read_bytes(path, max_bytes=MAX_CONFIG_BYTES, follow_symlinks=True).decode("utf-8")
    except NotFound:
        return None
    except UnicodeDecodeError as exc:
        raise Refused(f"cannot read {path}: {exc}") from None
    except Refused as exc:
        raise Refused(f"cannot read {path}: {exc}") from None


def _diff(path, before, after):
    return "".join(difflib.unified_diff((before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True),
                                        fromfile=f"a/{os.path.basename(path)}" if before is not None else "/dev/null",
                                        tofile=f"b/{os.path.basename(path)}" if after is not None else "/dev/null"))


def _write(path, before, after, harness):
    """Apply one planned change: through a symlink to its target, never replacing the link."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    if after is None:
        os.unlink(target)
        parent = os.path.dirname(target)
        if harness == "hermes" and os.path.basename(parent) == "mindos" and not os.listdir(parent):
            os.rmdir(parent)  # the directory setup hermes made for its hook
        return
    if before is not None and os.path.exists(target):
        mode = os.stat(target).st_mode & 0o777
    elif target.endswith(".py"):
        mode = 0o755
    else:
        mode = 0o600 if os.path.basename(target) == ".claude.json" else 0o644
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        os.makedirs(parent, mode=0o755, exist_ok=True)
    atomic_write(target, after.encode("utf-8"), mode=mode)


def setup(harness, *, project_dir=None, user=False, agent=None, dry_run=False, remove=False, home=None,
          stop_gate=False):
    """Install (or with ``remove`` take out) MindOS in ``harness``'s config; return the report.

    Returns ``{"harness", "agent", "home": {"path", "rule", "database"[, "warning"]},
    "dry_run", "remove", "changed", "files": [{"path", "changes", "file"
    ('create'|'delete'|'update'|'unchanged'), "diff"}]}``.  ``agent`` None: Claude Code
    sessions are named by the hook (``claude-code-<session>``), Codex ``codex``.  Writes
    nothing with ``dry_run``.
    """
    if project_dir is not None:
        project_dir = os.path.abspath(os.path.expanduser(project_dir))
        if not os.path.isdir(project_dir):
            raise InvalidInput(f"--project-dir {validate.shown(project_dir)} is not a directory")
    if stop_gate and harness != "claude":
        raise InvalidInput("--stop-gate applies to setup claude only")
    if agent is not None:
        agent = validate.agent(agent, "--agent")
    elif harness == "codex":
        agent = "codex"
    elif harness == "hermes":
        agent = "hermes"
    home, rule = pinned_home(home)
    paths = targets(harness, project_dir=project_dir, user=user)
    plan = {"claude": _plan_claude, "codex": _plan_codex, "hermes": _plan_hermes}[harness]
    plans = plan(paths, agent, remove, home=home, stop_gate=stop_gate, project_dir=project_dir, user=user)
    files = []
    for path, before, after, changes in plans:
        if not changes:
            state = "unchanged"
        elif after is None:
            state = "delete"
        elif before is None:
            state = "create"
        else:
            state = "update"
        entry = {"path": path, "file": state, "changes": changes, "diff": _diff(path, before, after)}
        if os.path.islink(path):
            entry["symlink_to"] = os.path.realpath(path)
        files.append(entry)
        if not dry_run and changes:
            _write(path, before, after, harness)
    if harness == "claude" and not user and not remove:
        note = _git_ignore_note(paths["settings"])
        if note:
            files[0]["warning"] = note
    if harness == "codex" and not user and not remove:
        # Codex ignores a project's .codex/config.toml (MCP servers included) until the project
        # is trusted: said here, so a project-scope setup never leaves Codex silently without MindOS
        files[0]["warning"] = (f"Codex reads {paths['config']} only once you trust this project (answer its"
                               " trust prompt, or run `codex exec --trust` there); --user avoids that")
    return {"harness": harness, "agent": agent, "home": home_report(home, rule), "dry_run": dry_run,
            "remove": remove, "changed": any(f["changes"] for f in files), "files": files}


def _git_ignore_note(path):
    """A warning when ``path`` sits in a git work tree that does not ignore it (None otherwise)."""
    import subprocess  # lazy: only setup claude asks git

    git = shutil.which("git")
    if git is None:
        return None
    try:
        inside = subprocess.run([git, "-C", os.path.dirname(os.path.dirname(path)), "rev-parse", "--is-inside-work-tree"],
                                capture_output=True, text=True, timeout=10)
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return None
        ignored = subprocess.run([git, "-C", os.path.dirname(os.path.dirname(path)), "check-ignore", "-q", path],
                                 capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if ignored.returncode == 0:
        return None
    return (f"{path} holds machine paths and git does not ignore it: add '.claude/settings.local.json' to"
            " .gitignore (or your global excludes) so it is never committed")
