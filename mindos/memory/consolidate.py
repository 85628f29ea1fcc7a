"""Memory consolidation: fold near-identical live notes into one canonical note per cluster.

The note command's near-duplicate guard only flags rephrasings; this pass merges them.
Live notes of each task are clustered by the same token-Jaccard measure
(:func:`mindos.core.text.jaccard`) and every non-canonical member is superseded into its
cluster's canonical note.

Design decisions
  * Deterministic greedy clustering: notes are visited oldest -> newest (by id); each joins
    the first cluster whose *current* canonical it matches at or above the threshold, else
    founds a cluster.  The same rows always give the same plan.
  * Canonical choice: a pinned note beats an unpinned one regardless of age; among equals
    the newest wins, so the latest phrasing survives and critical constraints never dissolve
    into a paraphrase.
  * History-preserving: losers get ``superseded_by`` = canonical (never deleted), audited
    ``note_consolidated`` with the kept note id and similarity; note-history still walks them.
  * Retirees (expired unpinned notes) are not candidates, so consolidation never
    resurrects them.  Consolidated notes leave the live set, so a second pass is a no-op.
  * One write transaction for the whole pass; each UPDATE is guarded by
    ``superseded_by IS NULL`` so a concurrent supersede can never be overwritten.
"""

from mindos.core import clock, validate
from mindos.memory import note_live, notes
from mindos.store import db, ledger
from mindos.work import rows


def _cluster(rows, threshold):
    """Greedy clusters over ``[(id, pinned, token_set)]`` sorted by id; return lists of members."""
    clusters = []  # each: {"canonical": member, "members": [member, ...]}
    for member in rows:
        for cluster in clusters:
            if notes.jaccard(member[2], cluster["canonical"][2]) >= threshold:
                cluster["members"].append(member)
                canonical = cluster["canonical"]
                # pinned beats unpinned; among equals the newer (this one) wins
                if member[1] >= canonical[1]:
                    cluster["canonical"] = member
                break
        else:
            clusters.append({"canonical": member, "members": [member]})
    return clusters


def consolidate(conn, *, task_id=None, threshold=None, dry_run=False):
    """Plan (``dry_run``) or apply the merge; return the plan with what was done.

    Returns ``{"dry_run", "threshold", "tasks_scanned", "clusters": [{"task_id",
    "kept_note_id", "pinned", "merged": [{"note_id", "similarity"}]}], "clusters_total",
    "notes_consolidated"}``.  ``notes_consolidated`` counts supersedes that landed (0 on a
    dry run).
    """
    threshold = notes.near_dup_threshold(threshold)
    if task_id is not None:
        task_id = validate.identifier(task_id, "--task")
    with db.write(conn) if not dry_run else _ReadOnly():
        if task_id is not None:
            rows.require_task(conn, task_id)
        now = clock.now_iso()
        live = note_live("n")
        scope = "n.task_id = ?" if task_id is not None else (
            f"n.task_id IN (SELECT n.task_id FROM notes n WHERE {live} GROUP BY n.task_id HAVING count(*) > 1)")
        found = conn.execute(
            f"SELECT n.id, n.task_id, n.pinned, n.content FROM notes n WHERE {live} AND {scope}"
            " ORDER BY n.task_id, n.id",
            (now, task_id if task_id is not None else now),
        )
        by_task = {}
        for nid, owner, pinned, content in found:
            by_task.setdefault(owner, []).append((nid, int(pinned), notes.tokens(content)))
        plan, landed = [], 0
        for owner in sorted(by_task):
            for cluster in _cluster(by_task[owner], threshold):
                if len(cluster["members"]) < 2:
                    continue
                canonical = cluster["canonical"]
                merged = [{"note_id": member[0], "similarity": round(notes.jaccard(member[2], canonical[2]), 4)}
                          for member in cluster["members"] if member is not canonical]
                plan.append({"task_id": owner, "kept_note_id": canonical[0], "pinned": bool(canonical[1]),
                             "merged": merged})
                if dry_run:
                    continue
                for item in merged:
                    # guarded: a note superseded concurrently keeps its own successor
                    changed = conn.execute(
                        "UPDATE notes SET superseded_by = ?, superseded_at = ? WHERE id = ? AND superseded_by IS NULL",
                        (canonical[0], now, item["note_id"]),
                    ).rowcount
                    if changed:
                        landed += 1
                        ledger.append_event(conn, "note", owner, "note_consolidated",
                                        {"note_id": item["note_id"], "kept_note_id": canonical[0],
                                         "similarity": item["similarity"]})
    return {
        "dry_run": bool(dry_run),
        "threshold": threshold,
        "tasks_scanned": len(by_task),
        "clusters": plan,
        "clusters_total": len(plan),
        "notes_consolidated": landed,
    }


class _ReadOnly:
    """A no-op context so the dry run shares the code path without taking the write lock."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return False
