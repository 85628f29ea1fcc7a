"""Project policies: ``<home>/policies/<project>.yaml``, parsed fail-closed.

A policy is a handful of flat switches in the strict YAML subset of
:mod:`mindos.core.policyfile` (see ``policies/README.md`` in the repository); this module
knows the keys and applies them as gates.

Keys:
  merge_requires_user   (bool)  ``update --status ready_to_merge`` needs ``--approved-by``
  deploy_requires_user  (bool)  ``update --status ready_to_deploy`` needs ``--approved-by``
  dispatch_requires_tag (tag)   only tasks carrying this tag are dispatchable / claimable
  max_wip_per_owner     (int)   live leases one owner may hold within the project
"""

import os

from mindos.core import clock, policyfile, validate
from mindos.errors import Refused
from mindos.store import ledger, sql

KEYS = {
    "merge_requires_user": bool,
    "deploy_requires_user": bool,
    "dispatch_requires_tag": str,
    "max_wip_per_owner": int,
}
READINESS_KEYS = {"ready_to_merge": "merge_requires_user", "ready_to_deploy": "deploy_requires_user"}
ACTIONS = {"merge": "merge_requires_user", "deploy": "deploy_requires_user", "dispatch": None}
ACTION_ALIASES = {"ready_to_merge": "merge", "ready_to_deploy": "deploy"}
_UNSET = object()

def policy_dir(home):
    """The directory holding ``<project>.yaml`` policy files."""
    return os.path.join(home, "policies")


def policy_path(home, project):
    """The policy file of ``project`` (the id charset keeps it inside the policy directory).

    Found case-insensitively: ``policies/gated.yaml`` governs project ``Gated`` (an exact-case
    file wins when several spellings exist), so a gate never silently stops applying
    because of how a file or a project was capitalised.
    """
    name = validate.identifier(project, "project") + ".yaml"
    exact = os.path.join(policy_dir(home), name)
    if os.path.exists(exact):
        return exact
    try:
        entries = sorted(os.listdir(policy_dir(home)))
    except OSError:
        return exact
    folded = name.casefold()
    matches = [entry for entry in entries if entry.casefold() == folded]
    return os.path.join(policy_dir(home), matches[0]) if matches else exact


def parse(text, source="<policy>"):
    """Parse project-policy text; return the dict of keys present (Refused names file and line)."""
    return policyfile.parse(text, KEYS, source)


def load(home, project):
    """The parsed policy of ``project`` ({} when the project has no policy file); a malformed,
    oversized, unreadable or non-UTF-8 file raises Refused naming the file (fail closed), and
    so does a credential-shaped value (``secret_blocked``: policy values reach stdout)."""
    path = policy_path(home, project)
    policy = policyfile.load(path, KEYS)
    for key, value in policy.items():
        if isinstance(value, str) and value:
            from mindos.core import secrets  # lazy: only string-valued policies pay for the detector

            kinds = secrets.scan(value)
            if kinds:
                raise Refused(f"invalid policy {path}: {key} holds credential-shaped text ({', '.join(kinds)});"
                              " fix the file", code="secret_blocked")
    return policy


class Lookup:
    """The project policies of one call (a ``next`` walking many candidates): the policy
    directory is listed once, and a project whose name matches no file in it (whatever the
    case) has no policy without touching the disk again; a project that has one is loaded as
    :func:`load` does, once.  Answers are those of :func:`load`, including its refusals."""

    def __init__(self, home):
        self.home = home
        self._names = None  # casefolded entries of the policy directory (empty when it is missing)
        self._found = {}  # project -> its policy dict, or the Refused loading it raised

    def load(self, project):
        found = self._found.get(project)
        if found is None:
            name = validate.identifier(project, "project") + ".yaml"
            if self._names is None:
                try:
                    self._names = {entry.casefold() for entry in os.listdir(policy_dir(self.home))}
                except OSError:
                    self._names = frozenset()
            try:
                found = load(self.home, project) if name.casefold() in self._names else {}
            except Refused as exc:
                found = exc
            self._found[project] = found
        if isinstance(found, Refused):
            raise Refused(str(found), code=found.code)
        return dict(found)


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
    rows = conn.execute(
        "SELECT id FROM tasks WHERE lease_owner = ? AND lease_owner <> '' AND lease_expires_at > ? AND project = ?"
        f" AND {sql.open_condition()} AND id <> ? ORDER BY id",
        (owner, clock.now_iso(), project, exclude or ""),
    )
    return [row[0] for row in rows]


def wip_cap(conn, project):
    """The project's ``max_wip_per_owner`` (None when unset); a malformed policy raises Refused."""
    return load(conn.home, project).get("max_wip_per_owner")


def wip_gate(conn, task, owner, cap=_UNSET):
    """The WIP-cap half of :func:`dispatch_gate`: the ``policy_wip_cap`` result, or None
    (``cap``: the project's ``max_wip_per_owner`` when the caller has read it already)."""
    if cap is _UNSET:
        cap = wip_cap(conn, task["project"])
    if cap:
        held = wip_held(conn, task["project"], owner, exclude=task["id"])
        if len(held) >= cap:
            return {"reason": "policy_wip_cap", "held": held, "max_wip_per_owner": cap}
    return None


def dispatch_gate(conn, task, owner, lookup=None):
    """Check the project's dispatch policy for ``owner`` taking ``task``.

    Returns None when allowed, else ``{"reason": "policy_missing_tag", "required_tag": t}``
    or ``{"reason": "policy_wip_cap", "held": [ids], "max_wip_per_owner": n}``.  A
    malformed policy file raises Refused (fail closed) -- even under ``--force``.
    ``lookup`` (a :class:`Lookup`) reads the policies once for a caller checking many tasks.
    """
    policy = load(conn.home, task["project"]) if lookup is None else lookup.load(task["project"])
    if not policy:
        return None
    required = policy.get("dispatch_requires_tag")
    if required and required not in (task.get("tags") or []):
        return {"reason": "policy_missing_tag", "required_tag": required}
    return wip_gate(conn, task, owner, policy.get("max_wip_per_owner"))


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
    return {"claims_refused_by_policy": ledger.count_action(conn, "claim_refused_policy")}
