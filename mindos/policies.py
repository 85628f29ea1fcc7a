"""Project policies: ``<home>/policies/<project>.yaml``, parsed fail-closed.

A policy is a handful of flat switches, so the file format is a strict, documented subset
of YAML (see ``policies/README.md`` in the repository) parsed here without any YAML
library: one ``key: value`` per line, values ``true``/``false``, decimal integers, bare or
quoted strings, ``#`` comments and blank lines.  Anything else -- nesting, lists, flow
collections, anchors, tags, block scalars, document markers, duplicate or unknown keys,
wrong value types, tabs, ambiguous bare words such as ``yes`` -- is refused with the file
and line named.  A policy that cannot be read exactly never silently means "no policy".

The only whitespace is the ASCII space.  Every other control character (C0, DEL, C1) and
every other Unicode whitespace character (NBSP, ideographic and em spaces, line separators,
...) is refused with its code point and column, wherever it appears -- even in a comment:
``str.strip`` would quietly eat ``true\\x0c`` or ``\\u2003true`` into ``true``, so a file whose
bytes differ from what a reviewer sees would still parse as the policy they approved.

Keys:
  merge_requires_user   (bool)  ``update --status ready_to_merge`` needs ``--approved-by``
  deploy_requires_user  (bool)  ``update --status ready_to_deploy`` needs ``--approved-by``
  dispatch_requires_tag (tag)   only tasks carrying this tag are dispatchable / claimable
  max_wip_per_owner     (int)   live leases one owner may hold within the project

Parsed files are cached per process, keyed by path and (mtime, ctime, size, inode), so an edited
or deleted file takes effect on the next call.
"""

import os
import re

from mindos import validate
from mindos.errors import InvalidInput, Refused

MAX_POLICY_BYTES = 65536
KEYS = {
    "merge_requires_user": bool,
    "deploy_requires_user": bool,
    "dispatch_requires_tag": str,
    "max_wip_per_owner": int,
}
READINESS_KEYS = {"ready_to_merge": "merge_requires_user", "ready_to_deploy": "deploy_requires_user"}
ACTIONS = {"merge": "merge_requires_user", "deploy": "deploy_requires_user", "dispatch": None}
ACTION_ALIASES = {"ready_to_merge": "merge", "ready_to_deploy": "deploy"}

_cache = {}
_patterns = None  # compiled on first parse: most calls find no policy file and never need them
_BARE_START_FORBIDDEN = set("[]{}&*!|>'\"%@`,?:-#")


def _compiled():
    """(line, non-printable, integer, ambiguous) regexes, compiled once per process on first use."""
    global _patterns
    if _patterns is None:
        _patterns = (
            re.compile(r"([a-z_][a-z0-9_]*):(?:[ ]+(.*))?\Z"),
            # anything but printable ASCII: a candidate for the invisible-character check
            re.compile(r"[^ -~]"),
            re.compile(r"-?(?:0|[1-9][0-9]*)\Z"),
            # bare words YAML 1.1/1.2 would read as booleans, nulls or numbers: ambiguous, so refused
            re.compile(
                r"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False|FALSE|null|Null"
                r"|NULL|~|[-+]?(?:\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN|[-+]?[0-9][0-9_.eExXoObB:+-]*)\Z"
            ),
        )
    return _patterns


def policy_dir(home):
    """The directory holding ``<project>.yaml`` policy files."""
    return os.path.join(home, "policies")


def policy_path(home, project):
    """The policy file of ``project`` (the id charset keeps it inside the policy directory)."""
    return os.path.join(policy_dir(home), validate.identifier(project, "project") + ".yaml")


class _Problem(Exception):
    pass


def _invisible(line):
    """Raise _Problem for the first control character or non-space whitespace in ``line``."""
    for match in _compiled()[1].finditer(line):
        char = match.group()
        code = ord(char)
        where = f"U+{code:04X} at column {match.start() + 1}"
        if code < 0x20 or 0x7F <= code <= 0x9F:
            raise _Problem(f"control characters are not allowed ({where})")
        if char.isspace():
            raise _Problem(f"non-ASCII whitespace is not allowed ({where}); use plain spaces")


def _scalar(raw):
    """Parse one value (comment already allowed after it); return a Python value."""
    text = raw.strip(" ")
    if not text:
        raise _Problem("missing value (nested mappings are not supported)")
    if text[0] in "\"'":
        quote = text[0]
        if quote == '"':
            end = text.find('"', 1)
            if end < 0:
                raise _Problem("unterminated double-quoted string")
            value = text[1:end]
            if "\\" in value:
                raise _Problem("backslash escapes are not supported in quoted strings")
        else:
            value, pos = [], 1
            while True:
                end = text.find("'", pos)
                if end < 0:
                    raise _Problem("unterminated single-quoted string")
                value.append(text[pos:end])
                if text[end + 1:end + 2] == "'":  # '' is an escaped quote
                    value.append("'")
                    pos = end + 2
                    continue
                break
            value = "".join(value)
        rest = text[end + 1:]
        if rest.strip() and not re.match(r"[ ]+#", rest):
            raise _Problem("unexpected text after quoted string")
        return value
    # bare value: a comment needs whitespace before '#'
    match = re.search(r"[ ]+#", text)
    if match:
        text = text[: match.start()]
    text = text.rstrip(" ")
    if text == "true":
        return True
    if text == "false":
        return False
    _line, _unprintable, integer, ambiguous = _compiled()
    if integer.match(text):
        return int(text)
    if text[0] in _BARE_START_FORBIDDEN:
        raise _Problem(f"unsupported YAML syntax {text[:20]!r} (lists, flow collections, anchors, aliases, tags"
                       " and block scalars are not part of the policy subset)")
    if ": " in text or text.endswith(":"):
        raise _Problem("nested mappings are not supported")
    if ambiguous.match(text):
        raise _Problem(f"ambiguous bare value {text[:20]!r}; quote it or use true/false or a plain integer")
    return text


def _check_type(key, value):
    expected = KEYS[key]
    if expected is bool:
        if not isinstance(value, bool):
            raise _Problem(f"{key} must be true or false")
        return value
    if expected is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Problem(f"{key} must be an integer")
        if not 1 <= value <= 100000:
            raise _Problem(f"{key} must be from 1 to 100000")
        return value
    if not isinstance(value, str):
        raise _Problem(f"{key} must be a string (quote it)")
    try:
        return validate.tag(value, key)
    except InvalidInput as exc:
        raise _Problem(str(exc)) from None


def parse(text, source="<policy>"):
    """Parse policy text in the strict subset; return the dict of keys present.

    Raises Refused ``invalid policy <source>:<line>: <problem>``.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    policy, seen = {}, {}
    for number, line in enumerate(text.split("\n"), start=1):
        line = line[:-1] if line.endswith("\r") else line
        try:
            if "\t" in line:
                raise _Problem("tab characters are not allowed")
            _invisible(line)
            stripped = line.strip(" ")
            if not stripped or stripped.startswith("#"):
                continue
            if line[0] == " ":
                raise _Problem("indented line: nesting is not supported (flat 'key: value' lines only)")
            if stripped in ("---", "...") or stripped.startswith(("--- ", "%")):
                raise _Problem("document markers and directives are not supported")
            if stripped.startswith("- ") or stripped == "-":
                raise _Problem("lists are not supported")
            match = _compiled()[0].match(line.rstrip(" "))
            if not match:
                raise _Problem("expected 'key: value' (lowercase key, a colon, a space, a value)")
            key, raw = match.group(1), match.group(2) or ""
            if key not in KEYS:
                raise _Problem(f"unknown key {key!r} (known: {', '.join(sorted(KEYS))})")
            if key in seen:
                raise _Problem(f"duplicate key {key!r} (first set on line {seen[key]})")
            seen[key] = number
            policy[key] = _check_type(key, _scalar(raw))
        except _Problem as problem:
            raise Refused(f"invalid policy {source}:{number}: {problem}") from None
    return policy


def load(home, project):
    """The parsed policy of ``project`` ({} when the project has no policy file).

    Cached per process by path + (mtime, ctime, size, inode); a malformed, oversized, unreadable or
    non-UTF-8 file raises Refused naming the file (fail closed).
    """
    path = policy_path(home, project)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        _cache.pop(path, None)
        return {}
    except OSError as exc:
        raise Refused(f"invalid policy {path}: cannot read ({exc.strerror})") from None
    stamp = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
    cached = _cache.get(path)
    if cached and cached[0] == stamp:
        return dict(cached[1])
    if not os.path.isfile(path):
        raise Refused(f"invalid policy {path}: not a regular file")
    if info.st_size > MAX_POLICY_BYTES:
        raise Refused(f"invalid policy {path}: {info.st_size} bytes is over the limit of {MAX_POLICY_BYTES}")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_POLICY_BYTES + 1)
    except OSError as exc:
        raise Refused(f"invalid policy {path}: cannot read ({exc.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise Refused(f"invalid policy {path}:{line}: not valid UTF-8") from None
    policy = parse(text, path)
    _cache[path] = (stamp, policy)
    return dict(policy)


# ---------------------------------------------------------------------------------------
# Gates


def readiness_gate(conn, project, new_status, approved_by):
    """Gate ``update --status ready_to_merge|ready_to_deploy``.

    Returns the keys to merge into the audited ``updated`` payload ({"approved_by", "gate"}
    when a policy requires approval, {"approved_by"} when one was volunteered) or None.
    Raises Refused when the policy requires approval and ``approved_by`` is missing.
    """
    if approved_by not in (None, ""):
        approved_by = validate.agent(approved_by, "--approved-by")
    key = READINESS_KEYS.get(new_status)
    if key is None:
        return {"approved_by": approved_by} if approved_by else None
    policy = load(conn.home, project)
    if policy.get(key):
        if not approved_by:
            action = ACTION_ALIASES[new_status]
            raise Refused(
                f"policy for project '{project}' requires user approval to {action} ({key}):"
                f" pass --approved-by <name> naming who accepted it"
            )
        return {"approved_by": approved_by, "gate": key}
    return {"approved_by": approved_by} if approved_by else None


def wip_held(conn, project, owner, exclude=None):
    """Ids of the live leases ``owner`` holds within ``project`` (excluding ``exclude``)."""
    from mindos import clock

    rows = conn.execute(
        "SELECT id FROM tasks WHERE lease_owner = ? AND lease_expires_at > ? AND project = ?"
        " AND status NOT IN ('completed', 'failed', 'cancelled') AND id <> ? ORDER BY id",
        (owner, clock.now_iso(), project, exclude or ""),
    )
    return [row[0] for row in rows]


def wip_cap(conn, project):
    """The project's ``max_wip_per_owner`` (None when unset); a malformed policy raises Refused."""
    return load(conn.home, project).get("max_wip_per_owner")


def wip_gate(conn, task, owner):
    """The WIP-cap half of :func:`dispatch_gate`: the ``policy_wip_cap`` result, or None."""
    cap = wip_cap(conn, task["project"])
    if cap:
        held = wip_held(conn, task["project"], owner, exclude=task["id"])
        if len(held) >= cap:
            return {"reason": "policy_wip_cap", "held": held, "max_wip_per_owner": cap}
    return None


def dispatch_gate(conn, task, owner):
    """Check the project's dispatch policy for ``owner`` taking ``task``.

    Returns None when allowed, else ``{"reason": "policy_missing_tag", "required_tag": t}``
    or ``{"reason": "policy_wip_cap", "held": [ids], "max_wip_per_owner": n}``.  A
    malformed policy file raises Refused (fail closed) -- even under ``--force``.
    """
    policy = load(conn.home, task["project"])
    if not policy:
        return None
    required = policy.get("dispatch_requires_tag")
    if required and required not in (task.get("tags") or []):
        return {"reason": "policy_missing_tag", "required_tag": required}
    return wip_gate(conn, task, owner)


def gate_message(task, owner, gate, verb="claim"):
    """The one-line refusal of ``verb`` (claim, transfer) for a dispatch gate result."""
    project = task["project"]
    if gate["reason"] == "policy_missing_tag":
        return (f"policy refused {verb}: project '{project}' requires tag '{gate['required_tag']}'"
                f" (dispatch_requires_tag); tag task '{task['id']}' first or pass --force")
    held = ", ".join(gate["held"])
    return (f"policy refused {verb}: owner '{owner}' holds {len(gate['held'])}/{gate['max_wip_per_owner']} live"
            f" leases in project '{project}' (max_wip_per_owner; held: {held}); finish one first or pass --force")


def check(home, project, action):
    """Report what the project's policy decides for ``action`` (merge, deploy, dispatch).

    Read-only.  Other action names are side effects this policy format cannot grant, so they
    report ``requires_user: true`` (fail closed).
    """
    project = validate.identifier(project, "project")
    action = validate.tag(action, "action")
    action = ACTION_ALIASES.get(action, action)
    path = policy_path(home, project)
    policy = load(home, project)
    report = {"project": project, "action": action, "policy_file": path, "policy_found": os.path.exists(path),
              "policy": policy}
    if action == "dispatch":
        gated = bool(policy.get("dispatch_requires_tag") or policy.get("max_wip_per_owner"))
        report.update({
            "requires_user": False,
            "decision": "gated" if gated else "allowed",
            "dispatch_requires_tag": policy.get("dispatch_requires_tag"),
            "max_wip_per_owner": policy.get("max_wip_per_owner"),
        })
    elif action in ACTIONS:
        key = ACTIONS[action]
        required = bool(policy.get(key))
        report.update({"requires_user": required, "rule": key,
                       "decision": "requires_user" if required else "allowed"})
    else:
        report.update({"requires_user": True, "rule": "unlisted_action_requires_user",
                       "decision": "requires_user"})
    return report


def metrics(conn):
    """Policy counters: claims refused by a project dispatch policy."""
    from mindos import audit

    return {"claims_refused_by_policy": audit.count_action(conn, "claim_refused_policy")}
