"""Task tags: the capability/scope vocabulary that dispatch filters on.

Tags live on the task row as a sorted canonical JSON array.  Tag and untag are
compare-and-swap: the UPDATE only lands while the column still holds the value this call
read, and a mismatch re-reads and retries, so two writers can never drop each other's
tags even if a future caller reaches the row outside a ``BEGIN IMMEDIATE`` transaction.
Tagging a tag that is already present changes nothing and records nothing; removing a tag
the task does not carry fails.
"""

import json

from mindos.core import clock, validate
from mindos.store import db, ledger, sql
from mindos.errors import Conflict, InvalidInput, NotFound
from mindos.work import rows

_ATTEMPTS = 5


def _swap(conn, task_id, change):
    """Apply ``change(current_tags) -> (new_tags, report)`` with compare-and-swap; return report.

    ``new_tags`` of None means nothing changes (no write, no event).
    """
    for _ in range(_ATTEMPTS):
        row = rows.require_task(conn, task_id, "tags")
        current_text = row[0]
        new_tags, report = change(json.loads(current_text))
        if new_tags is None:
            return report, None
        new_text = json.dumps(new_tags)
        # guarded: lands only if the tags are still exactly what we read
        if sql.compare_and_set(conn, "tasks", ["tags = ?", "updated_at = ?"], (new_text, clock.now_iso()),
                               {"id": task_id, "tags": current_text}):
            return report, new_tags
    raise Conflict(f"tags of task '{task_id}' kept changing; retry")


def _named(task_id, tags, hint):
    """The validated task id and tags of a tag command (at least one tag: ``hint`` says so)."""
    task_id = validate.identifier(task_id, "task id")
    wanted = validate.tags(tags)
    if not wanted:
        raise InvalidInput(f"invalid --tag: {hint}")
    return task_id, wanted


def add(conn, task_id, tags):
    """Attach ``tags`` to a task; return ``{"task_id", "tags", "added", "already_present"}``.

    Audited as ``task_tagged`` when at least one tag was new.
    """
    task_id, wanted = _named(task_id, tags, "pass at least one tag")

    def change(current):
        added = [t for t in wanted if t not in current]
        report = {"task_id": task_id, "added": added, "already_present": [t for t in wanted if t in current]}
        if not added:
            report["tags"] = current
            return None, report
        merged = sorted(set(current) | set(added))
        if len(merged) > validate.MAX_TAGS:
            raise InvalidInput(f"invalid --tag: task '{task_id}' would carry {len(merged)} tags"
                               f" (limit {validate.MAX_TAGS})")
        report["tags"] = merged
        return merged, report

    with db.write(conn):
        report, new_tags = _swap(conn, task_id, change)
        if new_tags is not None:
            ledger.append_event(conn, "task", task_id, "task_tagged", {"added": report["added"], "tags": new_tags})
    return report


def remove(conn, task_id, tags):
    """Detach ``tags`` (each must be present); return ``{"task_id", "tags", "removed"}``.

    Audited as ``task_untagged``.  Fails with NotFound naming any tag the task lacks.
    """
    task_id, unwanted = _named(task_id, tags, "pass the tag to remove")

    def change(current):
        absent = [t for t in unwanted if t not in current]
        if absent:
            raise NotFound(f"task '{task_id}' has no tag {', '.join(repr(t) for t in absent)}")
        remaining = [t for t in current if t not in unwanted]
        return remaining, {"task_id": task_id, "removed": unwanted, "tags": remaining}

    with db.write(conn):
        report, new_tags = _swap(conn, task_id, change)
        ledger.append_event(conn, "task", task_id, "task_untagged", {"removed": report["removed"], "tags": new_tags})
    return report
