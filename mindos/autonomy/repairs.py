"""Repair policies as data, and the fixed registry of commands a repair may run.

A repair policy is one file ``<name>.yaml`` in the strict policy subset
(:mod:`mindos.core.policyfile`, the parser project policies use)::

    finding: stale_lease     # the finding kind (from ``sense``) this repair answers
    tier: 0                  # 0 runs unattended in the nanny; 1..3 only when an operator asks
    command: recover         # a command of COMMANDS below -- never anything else
    max_subjects: 500        # more matching findings than this: escalate instead of repairing
    max_per_day: 96          # runs allowed in any 24 hours (counted from the audit ledger)

Policies ship in the repository's ``policies/repairs/`` (a wheel carries a copy); a file of
the same name in ``<home>/policies/repairs/`` replaces the shipped one (raise a tier to take
a repair out of the nanny, tighten a cap), and a new name there may add a policy -- but
only for a registered command.  A malformed file is never guessed at: it is listed as
ineligible with the parser's message, and nothing runs from it (fail closed).

Every real run is audited ``repair_applied`` (or ``repair_failed``) on entity
``repair/<name>`` with the trigger, the findings it answered and the command's result
summary; the command itself audits its own changes as it always does.  ``dry_run`` runs
the command's own dry run and writes nothing.
"""

import os

from mindos.core import clock, policyfile, validate
from mindos.errors import InvalidInput, MindosError, NotFound, Refused
from mindos.store import db, ledger
from mindos.autonomy import sense

KEYS = {"finding": str, "tier": range(0, 4), "command": str, "max_subjects": int, "max_per_day": int}
REQUIRED = ("finding", "tier", "command")
DEFAULTS = {"max_subjects": 100, "max_per_day": 24}
UNATTENDED_TIER = 0
FINDING_LOOKUP_LIMIT = 100000  # findings sense lists per kind when one is named by --finding-hash

_HERE = os.path.dirname(os.path.abspath(__file__))
# the wheel's copy first (setup.py puts it there), then the checkout's policies/repairs/
SHIPPED_CANDIDATES = (os.path.join(_HERE, "policies"),
                      os.path.join(os.path.dirname(os.path.dirname(_HERE)), "policies", "repairs"))


# ---------------------------------------------------------------------------------------
# The command registry: what a repair may run.  Each takes (conn, dry_run) and returns a
# dict with "changed" (bool) plus the command's own report; ``subjects`` (the subjects of one
# finding, for ``repair --finding-hash``) narrows the command to exactly those.


def _recover(conn, dry_run, subjects=None):
    from mindos.work import sweeps  # lazy: only a repair run loads the sweep

    report = sweeps.recover(conn, dry_run=dry_run, task_ids=subjects)
    changed = bool(report["recovered"] or report["failed"])
    return {"changed": changed, "report": report}


def _fts_rebuild(conn, dry_run, subjects=None):
    from mindos.recovery import reindex  # lazy: only a repair run loads it

    report = reindex.rebuild(conn, dry_run=dry_run, only=subjects)
    return {"changed": any(entry["rebuilt"] for entry in report["indexes"]), "report": report}


def _receipts_sweep(conn, dry_run, subjects=None):
    from mindos.recovery import receipt_sweep  # lazy: only a repair run loads it

    report = receipt_sweep.sweep(conn, apply=not dry_run, only=subjects)
    return {"changed": bool(report["adopted"] or report["quarantined"]), "report": report}


def _escalate_stalled(conn, dry_run):
    from mindos.work import progress  # lazy: only a repair run loads it

    report = progress.escalate(conn, dry_run=dry_run)
    return {"changed": bool(report["escalated"]), "report": report}


# command -> function (None would mark a command this build does not have: command_unavailable)
COMMANDS = {
    "recover": _recover,                  # ops.py recover
    "fts-rebuild": _fts_rebuild,          # ops.py fts-rebuild
    "receipts-sweep": _receipts_sweep,    # ops.py receipts-sweep --apply
    "escalate-stalled": _escalate_stalled,  # ops.py escalate-stalled
}
# the commands that take ``subjects``: they can repair one finding (``--finding-hash``)
NARROWS = frozenset({"recover", "fts-rebuild", "receipts-sweep"})


# ---------------------------------------------------------------------------------------
# Policies


def shipped_dir():
    """The directory of the policies this build ships (None when neither copy exists)."""
    for candidate in SHIPPED_CANDIDATES:
        if os.path.isdir(candidate):
            return candidate
    return None


def home_dir(home):
    """Where a home keeps its own repair policies (overrides and additions)."""
    return os.path.join(home, "policies", "repairs")


def _names(directory):
    try:
        return sorted(name[:-5] for name in os.listdir(directory) if name.endswith(".yaml"))
    except OSError:
        return []


def _policy(name, path, origin):
    """One policy as listed: the parsed keys with defaults, or the parser's refusal."""
    entry = {"name": name, "file": path, "origin": origin}
    try:
        validate.identifier(name, "repair name")
        parsed = policyfile.load(path, KEYS)
        missing = [key for key in REQUIRED if key not in parsed]
        if missing:
            raise Refused(f"invalid policy {path}: missing {', '.join(missing)}")
    except MindosError as exc:
        entry.update(valid=False, error=str(exc), eligible=False, reason="invalid_policy")
        return entry
    entry.update({**DEFAULTS, **parsed, "valid": True})
    if entry["command"] not in COMMANDS:
        entry.update(eligible=False, reason="unknown_command")
    elif COMMANDS[entry["command"]] is None:
        entry.update(eligible=False, reason="command_unavailable")
    elif entry["tier"] != UNATTENDED_TIER:
        entry.update(eligible=False, reason="tier_requires_operator")
    else:
        entry.update(eligible=True, reason=None)
    return entry


def policies(home):
    """Every repair policy in force for ``home``, by name (home files replace shipped ones)."""
    found = {}
    shipped = shipped_dir()
    if shipped:
        for name in _names(shipped):
            found[name] = (os.path.join(shipped, f"{name}.yaml"), "shipped")
    local = home_dir(home)
    for name in _names(local):
        found[name] = (os.path.join(local, f"{name}.yaml"), "home")
    return [_policy(name, path, origin) for name, (path, origin) in sorted(found.items())]


def runs_today(conn, name):
    """Real runs of repair ``name`` audited in the last 24 hours."""
    since = clock.shift(clock.now_iso(), -86400)
    return conn.execute(
        "SELECT count(*) FROM audit_events WHERE entity_id = ? AND action IN ('repair_applied', 'repair_failed')"
        " AND created_at > ?", (f"repair/{name}", since)).fetchone()[0]


def listing(conn):
    """``repair-list``: ``{"eligible": [...], "ineligible": [...], "shipped_dir", "home_dir"}``;
    eligible entries carry ``runs_today``.  Reads only."""
    eligible, ineligible = [], []
    for entry in policies(conn.home):
        if entry["eligible"]:
            entry["runs_today"] = runs_today(conn, entry["name"])
            eligible.append(entry)
        else:
            ineligible.append(entry)
    return {"eligible": eligible, "ineligible": ineligible, "shipped_dir": shipped_dir(),
            "home_dir": home_dir(conn.home)}


def find(conn, name):
    """The policy called ``name`` (NotFound when there is none)."""
    name = validate.identifier(name, "repair name")
    for entry in policies(conn.home):
        if entry["name"] == name:
            return entry
    raise NotFound(f"unknown repair '{name}' (see ops.py repair-list)")


def gate(conn, entry, count):
    """Why ``entry`` may not run now against ``count`` matching findings (None when it may)."""
    if not entry["valid"]:
        return "invalid_policy"
    if entry["command"] not in COMMANDS:
        return "unknown_command"
    if COMMANDS[entry["command"]] is None:
        return "command_unavailable"
    if count > entry["max_subjects"]:
        return "over_subject_cap"
    if runs_today(conn, entry["name"]) >= entry["max_per_day"]:
        return "max_per_day"
    return None


def execute(conn, entry, matching, *, dry_run=False, trigger="manual", scoped=False):
    """Run one repair's command against its findings; return the run record.

    ``scoped``: run the command on the subjects of ``matching`` alone (one finding, from
    ``repair --finding-hash``) instead of the whole sweep.

    ``{"repair", "command", "tier", "dry_run", "ok", "changed", "findings", "result",
    "error"}``.  A command that raises is caught here (``ok: false``, the message kept)
    and audited ``repair_failed``; success is audited ``repair_applied``.  Dry runs are
    not audited.
    """
    digests = [item["digest"] for item in matching]
    record = {"repair": entry["name"], "command": entry["command"], "tier": entry["tier"], "dry_run": bool(dry_run),
              "findings": digests, "ok": True, "changed": False, "result": None, "error": None,
              "skipped": None}
    try:
        command = COMMANDS[entry["command"]]
        if scoped:
            outcome = command(conn, dry_run, subjects=[subject for item in matching for subject in item["subjects"]])
        else:
            outcome = command(conn, dry_run)
        record.update(changed=outcome["changed"], result=outcome["report"])
    except MindosError as exc:
        record.update(ok=False, error=str(exc))
    if not dry_run:
        action = "repair_applied" if record["ok"] else "repair_failed"
        with db.write(conn):
            ledger.append_event(conn, "repair", f"repair/{entry['name']}", action, {
                "command": entry["command"], "tier": entry["tier"], "trigger": trigger, "findings": digests,
                "changed": record["changed"], "error": record["error"]})
    return record


def run(conn, name, *, dry_run=False, finding_hash=None):
    """``ops.py repair <name>``: run one repair by hand against the current findings.

    Refused when the policy is invalid, its command unavailable or a cap is reached.  With
    no finding for it to answer nothing runs (``skipped: "no_findings"``).  Operators may
    run any tier by hand; only tier 0 runs unattended.  ``finding_hash`` (a finding's
    ``digest`` from ``sense``) repairs that one finding alone: NotFound when no current
    finding of the policy's kind has it (already repaired, or never there).
    """
    if finding_hash is not None:
        finding_hash = _finding_hash(finding_hash)
    entry = find(conn, name)
    if not entry["valid"]:
        raise Refused(entry["error"])
    # one named finding may sit past the listing's per-kind limit: look through all of them
    found = sense.sense(conn, only=sense.sources_for([entry["finding"]]),
                        limit=FINDING_LOOKUP_LIMIT if finding_hash is not None else sense.LIMIT)
    matching = [item for item in found["findings"] if item["kind"] == entry["finding"]]
    count = found["by_kind"].get(entry["finding"], 0)
    if finding_hash is not None:
        matching = [item for item in matching if item["digest"] == finding_hash]
        if not matching:
            raise NotFound(f"no current {entry['finding']} finding with hash {finding_hash}"
                           f" (already repaired, or not this repair's; see ops.py sense)")
        count = 1
        if entry["command"] not in NARROWS:
            raise Refused(f"repair '{entry['name']}' cannot be narrowed to one finding: its command"
                          f" '{entry['command']}' always sweeps every finding (run it without --finding-hash)")
    reason = gate(conn, entry, count)
    if reason is not None:
        raise Refused(f"repair '{entry['name']}' refused: {reason}")
    if not matching:
        return {"repair": entry["name"], "command": entry["command"], "tier": entry["tier"],
                "dry_run": bool(dry_run), "findings": [], "ok": True, "changed": False, "result": None,
                "error": None, "skipped": "no_findings"}
    return execute(conn, entry, matching, dry_run=dry_run, trigger="manual", scoped=finding_hash is not None)


def _finding_hash(value):
    """A finding digest: 64 lowercase hex digits."""
    if not validate.within(value, validate.HEX_DIGITS, shortest=64, longest=64):
        raise InvalidInput(f"invalid --finding-hash: {validate.shown(value, 80)} (expected the 64 hex digits of a"
                           " finding's digest, as ops.py sense prints it)")
    return value
