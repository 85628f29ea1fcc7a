"""``setup claude`` / ``setup codex`` / ``setup hermes``: wire MindOS into a harness's own config files.

Design decisions
  * **Merge, never clobber.**  Only entries MindOS owns are added, updated or removed; every
    other key, hook, table and paragraph of the file stays as it was.  Ownership is
    recognizable without extra keys the harness might reject: a Claude Code hook is ours
    when its command carries ``MINDOS_HOOK=``; a Codex TOML block and an AGENTS.md section
    sit between ``mindos`` marker lines.  A file MindOS cannot read safely (invalid JSON or
    TOML, a ``[mcp_servers.mindos]`` someone else wrote) is refused, untouched.
  * **Idempotent and reversible.**  Running setup twice changes nothing the second time;
    ``--remove`` takes out exactly what setup put in (a file setup created and that holds
    nothing else is deleted again).
  * **Says exactly what changed.**  The result lists every change (``add`` / ``update`` /
    ``remove`` / ``create-file`` / ``delete-file``) and a unified diff per file;
    ``--dry-run`` computes the same report and writes nothing.
  * **Atomic writes** keep an existing file's permissions (new files: 0644).

Claude Code: ``SessionStart`` and ``PreCompact`` command hooks in ``.claude/settings.json``
(``--user``: ``~/.claude/settings.json``) that run ``prime``; on exit 0 Claude Code adds a
SessionStart hook's stdout to the context.  Codex: ``[mcp_servers.mindos]`` in
``.codex/config.toml`` (``--user``: ``$CODEX_HOME/config.toml``, default ``~/.codex``) and a
section of ``AGENTS.md`` telling the agent the recall -> act -> receipt -> handoff loop.
Hermes: the gateway hook at ``$HERMES_HOME/mindos/mindos_gateway_hook.py`` (a small shim
running :mod:`mindos.mcp.hermes` with this interpreter) and a ``mindos_bridge`` +
``hooks.pre_llm_call`` block at the end of ``$HERMES_HOME/config.yaml``; a config that already
has a top-level ``hooks:`` or ``mindos_bridge:`` is refused (YAML is not merged by guesswork).
The profile's agent name is the hook's business (``hermes``/``hermes-<profile>``), so
``--agent`` does not apply to Hermes.
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
CLAUDE_EVENTS = ("SessionStart", "PreCompact")
HOOK_TIMEOUT = 15  # seconds Claude Code waits for the hook
HOOK_BUDGET = 4000
TOML_BEGIN = "# >>> mindos: managed by `setup codex` (remove with `setup codex --remove`)"
TOML_END = "# <<< mindos"
MD_BEGIN = "<!-- mindos:begin (managed by `setup codex`; remove with `setup codex --remove`) -->"
MD_END = "<!-- mindos:end -->"
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


def hook_command(agent, event, budget=HOOK_BUDGET):
    """The shell command of a Claude Code hook: ``prime`` for ``agent`` (text, within ``budget``)."""
    return (f"{HOOK_MARK}{event} {autopilot_command()} prime --agent {shlex.quote(agent)}"
            f" --budget {budget} --seconds {HOOK_TIMEOUT - 5}")


def mcp_server_entry():
    """``(command, args, env)`` that starts the MCP server from this installation."""
    if os.path.exists(os.path.join(ROOT, "autopilot.py")):
        return sys.executable, ["-m", "mindos.mcp"], {"PYTHONPATH": ROOT}
    return shutil.which("mindos-mcp") or "mindos-mcp", [], {}


# ---------------------------------------------------------------------------------------
# Where


def _user_home():
    home = os.path.expanduser("~")
    if home == "~":
        raise Refused("cannot resolve the user's home directory (set HOME)")
    return home


def targets(harness, *, project_dir=None, user=False):
    """``{role: path}`` of the files ``harness`` setup manages."""
    if harness not in HARNESSES:
        raise InvalidInput(f"unknown harness {validate.shown(harness, 20)} (choose from {', '.join(HARNESSES)})")
    if user and project_dir is not None:
        raise InvalidInput("--user and --project-dir are exclusive")
    if harness == "claude":
        base = os.path.join(_user_home(), ".claude") if user else os.path.join(project_dir or os.getcwd(), ".claude")
        return {"settings": os.path.join(base, "settings.json")}
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
# Claude Code settings.json


def _is_ours(hook):
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and HOOK_MARK in hook["command"]


def merge_claude(settings, agent, *, remove=False):
    """Return ``(new settings, changes)``; ``settings`` is not modified."""
    settings = json.loads(json.dumps(settings))  # a private deep copy
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise Refused("settings 'hooks' is not an object; fix it by hand first (left untouched)")
    changes = []
    for event in CLAUDE_EVENTS:
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise Refused(f"settings 'hooks.{event}' is not a list; fix it by hand first (left untouched)")
        wanted = None if remove else {"type": "command", "command": hook_command(agent, event),
                                      "timeout": HOOK_TIMEOUT}
        found = False
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                continue
            for hook in list(inner):
                if not _is_ours(hook):
                    continue
                if wanted is None or found:
                    inner.remove(hook)
                    changes.append({"action": "remove", "event": event, "command": hook["command"]})
                elif hook != wanted:
                    inner[inner.index(hook)] = wanted
                    changes.append({"action": "update", "event": event, "command": wanted["command"],
                                    "was": hook.get("command")})
                    found = True
                else:
                    found = True
        # a group emptied by removing our hook goes too (it held only ours)
        groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
        if wanted is not None and not found:
            groups.append({"matcher": "", "hooks": [wanted]})
            changes.append({"action": "add", "event": event, "command": wanted["command"]})
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


def _plan_claude(paths, agent, remove):
    path = paths["settings"]
    before = _read(path)
    if before is None:
        settings = {}
    else:
        try:
            settings = json.loads(before) if before.strip() else {}
        except ValueError:
            raise Refused(f"{path} is not valid JSON; fix or move it first (left untouched)") from None
        if not isinstance(settings, dict):
            raise Refused(f"{path} does not hold a JSON object; fix or move it first (left untouched)")
    merged, changes = merge_claude(settings, agent, remove=remove)
    if not changes:
        return [(path, before, before, [])]
    if not merged and remove:
        after = None
    else:
        after = json.dumps(merged, indent=_indent_of(before or ""), ensure_ascii=False) + "\n"
    return [(path, before, after, changes)]


# ---------------------------------------------------------------------------------------
# Codex config.toml and AGENTS.md (marker blocks)


def _toml_string(value):
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def toml_block():
    command, args, env = mcp_server_entry()
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


def _check_toml(path, text, remove):
    import tomllib  # lazy: only setup codex reads TOML

    try:
        doc = tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as exc:
        raise Refused(f"{path} is not valid TOML ({exc}); fix or move it first (left untouched)") from None
    return doc


def _plan_codex(paths, agent, remove):
    plans = []
    path = paths["config"]
    before = _read(path)
    _check_toml(path, before, remove)
    head, current, tail = _split_block(before or "", TOML_BEGIN, TOML_END, path)
    if current is None and not remove:
        outside = _check_toml(path, head + tail, remove)
        if "mindos" in (outside.get("mcp_servers") or {}):
            raise Refused(f"{path} already has an [mcp_servers.mindos] that setup did not write (left untouched)")
    after, action = merge_block(before, toml_block(), TOML_BEGIN, TOML_END, path, remove=remove)
    if action:
        doc = _check_toml(path, after, remove)
        if not remove and (doc.get("mcp_servers") or {}).get("mindos", {}).get("command") != mcp_server_entry()[0]:
            raise Refused(f"{path}: merging would not yield a valid [mcp_servers.mindos] (left untouched)")
        if remove and not after.strip():
            after = None
    plans.append((path, before, after if action else before,
                  [{"action": action, "entry": "[mcp_servers.mindos]"}] if action else []))
    path = paths["agents"]
    before = _read(path)
    section = f"{MD_BEGIN}\n{AGENTS_SECTION}{MD_END}\n"
    after, action = merge_block(before, section, MD_BEGIN, MD_END, path, remove=remove)
    if action and remove and not after.strip():
        after = None
    plans.append((path, before, after if action else before,
                  [{"action": action, "entry": "AGENTS.md section 'MindOS: shared tasks and memory'"}] if action else []))
    return plans


# ---------------------------------------------------------------------------------------
# Hermes: the gateway hook shim and the config.yaml block


def hook_shim():
    """The hook file setup hermes writes: runs mindos.mcp.hermes with this interpreter."""
    lines = [f"#!{sys.executable}", SHIM_MARK, '"""MindOS gateway hook for Hermes (pre_llm_call); see mindos/mcp/hermes.py."""',
             "import sys", ""]
    if os.path.exists(os.path.join(ROOT, "mindos_gateway_hook.py")):
        lines.insert(4, f"sys.path.insert(0, {ROOT!r})  # the MindOS checkout")
    lines += ["from mindos.cli.hermes_hook import main", "", "sys.exit(main())", ""]
    return "\n".join(lines)


def yaml_block(hook_path):
    return "\n".join([
        YAML_BEGIN, "mindos_bridge:", "  context_pack: true", "  context_pack_max_bytes: 4096",
        "  context_pack_seconds: 15", "hooks:", "  pre_llm_call:", f"    - command: {hook_path}",
        "      timeout: 15", YAML_END]) + "\n"


def _top_level_keys(text):
    return {line.split(":", 1)[0].strip() for line in text.splitlines()
            if line and not line[0].isspace() and not line.startswith("#") and ":" in line}


def _plan_hermes(paths, agent, remove):
    plans = []
    path = paths["hook"]
    before = _read(path)
    if before is not None and SHIM_MARK not in before:
        raise Refused(f"{path} exists and was not written by setup hermes (left untouched)")
    after = None if remove else hook_shim()
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


def setup(harness, *, project_dir=None, user=False, agent=None, dry_run=False, remove=False):
    """Install (or with ``remove`` take out) MindOS in ``harness``'s config; return the report.

    Returns ``{"harness", "agent", "dry_run", "remove", "changed", "files": [{"path",
    "changes", "file" ('create'|'delete'|'update'|'unchanged'), "diff"}]}``.  Writes nothing
    with ``dry_run``.
    """
    if project_dir is not None:
        project_dir = os.path.abspath(os.path.expanduser(project_dir))
        if not os.path.isdir(project_dir):
            raise InvalidInput(f"--project-dir {validate.shown(project_dir)} is not a directory")
    agent = validate.agent(agent or {"claude": "claude-code", "codex": "codex"}.get(harness, "hermes"), "--agent")
    paths = targets(harness, project_dir=project_dir, user=user)
    plans = {"claude": _plan_claude, "codex": _plan_codex, "hermes": _plan_hermes}[harness](paths, agent, remove)
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
        files.append({"path": path, "file": state, "changes": changes, "diff": _diff(path, before, after)})
        if dry_run or not changes:
            continue
        if after is None:
            os.unlink(path)
            parent = os.path.dirname(path)
            if harness == "hermes" and os.path.basename(parent) == "mindos" and not os.listdir(parent):
                os.rmdir(parent)  # the directory setup hermes made for its hook
        else:
            mode = os.stat(path).st_mode & 0o777 if before is not None else (0o755 if path.endswith(".py") else 0o644)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            atomic_write(path, after.encode("utf-8"), mode=mode)
    return {"harness": harness, "agent": agent, "dry_run": dry_run, "remove": remove,
            "changed": any(f["changes"] for f in files), "files": files}
