"""``receipts-sweep``: settle the receipt files a killed writer left behind.

A receipt file is written before its row commits, so a process killed in between leaves a
complete, sealed file that no row indexes (and an interrupted atomic write can leave a
``.<name>.tmp``).  The sweep is a dry run by default; with ``apply`` it adopts each
complete orphan whose task exists (indexes it with the hash of its exact bytes, audited
``receipt_adopted``) and moves everything else under ``<home>/quarantine/`` (audited
``receipt_quarantined`` with the reason).  Nothing is ever deleted.
"""

import os

from mindos.core import canonical, files, seal
from mindos.errors import IntegrityError, NotFound, Refused
from mindos.recovery import doctor
from mindos.store import db, ledger
from mindos.work.receipts import MAX_FILE_BYTES as MAX_RECEIPT_BYTES

RECEIPT_FORMAT = "mindos-receipt-v1"


def quarantine_dir(home):
    """Where unadoptable files are moved: ``<home>/quarantine/``."""
    return os.path.join(home, "quarantine")


def _classify(conn, receipts_dir, receipt_id):
    """``(action, reason, document)`` for one orphan ``<receipt_id>.json``."""
    path = os.path.join(receipts_dir, f"{receipt_id}.json")
    try:  # no symlink, no FIFO: a planted special file is quarantined, never read
        data = files.read_bytes(path, max_bytes=MAX_RECEIPT_BYTES)
        doc = seal.loads(data, RECEIPT_FORMAT)
    except IntegrityError as exc:
        return "quarantine", f"not a complete sealed receipt ({exc})", None
    except (Refused, NotFound) as exc:
        return "quarantine", f"unreadable ({exc})", None
    except OSError as exc:
        return "quarantine", f"unreadable ({exc.strerror})", None
    if doc.get("receipt_id") != receipt_id:
        return "quarantine", "file name does not match its receipt_id", None
    task = doc.get("task_id")
    if not isinstance(task, str) or conn.execute("SELECT 1 FROM tasks WHERE id = ?", (task,)).fetchone() is None:
        return "quarantine", "its task does not exist in this home", None
    if not isinstance(doc.get("kind"), str) or not isinstance(doc.get("created_at"), str):
        return "quarantine", "missing kind or created_at", None
    return "adopt", None, {"doc": doc, "file_hash": canonical.sha256_hex(data)}


def _quarantine_target(home, name):
    target = os.path.join(quarantine_dir(home), name.lstrip("."))
    base, n = target, 1
    while os.path.exists(target):
        n += 1
        target = f"{base}.{n}"
    return target


def sweep(conn, *, apply=False, only=None):
    """Plan (and with ``apply`` carry out) adoption or quarantine of orphan receipt files
    (``only``: just these receipt ids or leftover file names).

    Returns ``{"apply", "adopt": [{"receipt_id", "task_id"}], "quarantine": [{"file",
    "reason"}], "adopted": [...], "quarantined": [...]}``.
    """
    home = conn.home
    receipts_dir = db.receipts_dir(home)
    indexed = {row[0] for row in conn.execute("SELECT id FROM receipts")}
    orphans, temp = doctor.orphan_files(home, indexed)
    if only is not None:
        orphans, temp = [rid for rid in orphans if rid in only], [name for name in temp if name in only]
    plan_adopt, plan_quarantine = [], []
    for receipt_id in orphans:
        action, reason, found = _classify(conn, receipts_dir, receipt_id)
        if action == "adopt":
            plan_adopt.append((receipt_id, found))
        else:
            plan_quarantine.append((f"{receipt_id}.json", reason))
    plan_quarantine += [(name, "leftover temp file of an interrupted write") for name in temp]
    report = {"apply": bool(apply),
              "adopt": [{"receipt_id": rid, "task_id": f["doc"]["task_id"]} for rid, f in plan_adopt],
              "quarantine": [{"file": name, "reason": reason} for name, reason in plan_quarantine],
              "adopted": [], "quarantined": []}
    if not apply or not (plan_adopt or plan_quarantine):
        return report
    with db.write(conn):
        for receipt_id, found in plan_adopt:
            doc = found["doc"]
            if conn.execute("SELECT 1 FROM receipts WHERE id = ?", (receipt_id,)).fetchone():
                continue
            if conn.execute("SELECT 1 FROM tasks WHERE id = ?", (doc["task_id"],)).fetchone() is None:
                continue
            conn.execute("INSERT INTO receipts(id, task_id, kind, path, file_hash, created_at)"
                         " VALUES (?, ?, ?, ?, ?, ?)",
                         (receipt_id, doc["task_id"], doc["kind"], f"receipts/{receipt_id}.json",
                          found["file_hash"], doc["created_at"]))
            ledger.append_event(conn, "task", doc["task_id"], "receipt_adopted",
                                {"receipt_id": receipt_id, "kind": doc["kind"], "file_hash": found["file_hash"]})
            report["adopted"].append({"receipt_id": receipt_id, "task_id": doc["task_id"]})
        moves = []
        for name, reason in plan_quarantine:
            target = _quarantine_target(home, name)
            moves.append((os.path.join(receipts_dir, name), target))
            ledger.append_event(conn, "receipt", name, "receipt_quarantined",
                                {"file": name, "reason": reason, "moved_to": os.path.relpath(target, home)})
            report["quarantined"].append({"file": name, "reason": reason,
                                          "moved_to": os.path.relpath(target, home)})
        # moved inside the transaction: a failed move rolls the audit back with it
        os.makedirs(quarantine_dir(home), mode=0o700, exist_ok=True)
        for source, target in moves:
            os.replace(source, target)
    return report
