"""Migration import and rollback commands: migrate-import, migrate-rollback."""

from mindos.migration import importer, rollback
from mindos.cli import flags, make_parser


def add_migrate_import(sub):
    p = make_parser(sub, "migrate-import",
                    "ops.py migrate-import --inventory inventory.json --source-id src-0123456789abcdef --apply"
                    " --out migration-result.json")
    p.add_argument("--inventory", required=True, help="the sealed stage-one inventory")
    p.add_argument("--source-id", required=True,
                   help="the source whose plan step runs (src-...): autopilot_sqlite imports execution truth; "
                        "hindsight_bank runs memory-import, hermes_home hermes-register (definitions into "
                        "<home>/hermes/registered/<id>/), obsidian_vault archive-copy (a read-only copy into "
                        "<home>/archive/obsidian/<id>/)")
    p.add_argument("--apply", action="store_true", help="do the step (default: the dry-run plan, nothing written)")
    p.add_argument("--out", help="write the sealed autopilot-migration-result-v1 document (the rollback journal)")
    flags.force_out(p)
    flags.secret(p, "notes, handoffs, receipts and copied files")
    p.add_argument("--relink-audit", action="store_true",
                   help="into a home with its own history: relink the foreign chain onto this ledger")
    p.set_defaults(handler=cmd_migrate_import)


def cmd_migrate_import(conn, args):
    result = importer.migrate_import(conn, args.inventory, args.source_id, apply=args.apply, out=args.out,
                                     redact=args.redact, allow_secret=args.allow_secret,
                                     relink_audit=args.relink_audit, force=args.force)
    return result, (0 if result.get("health", {"ok": True})["ok"] else 1)  # a dry run has no health


def add_migrate_rollback(sub):
    p = make_parser(sub, "migrate-rollback", "ops.py migrate-rollback migration-result.json --apply")
    p.add_argument("result", help="the sealed autopilot-migration-result-v1 document of an applied import")
    p.add_argument("--apply", action="store_true", help="undo the import (default: the dry-run plan)")
    p.add_argument("--force", action="store_true",
                   help="also remove drifted rows and local dependents of imported tasks (audited as forced)")
    p.set_defaults(handler=cmd_migrate_rollback)


def cmd_migrate_rollback(conn, args):
    return rollback.rollback(conn, args.result, apply=args.apply, force=args.force)


COMMANDS = {
    "migrate-import": add_migrate_import,
    "migrate-rollback": add_migrate_rollback,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "migrate-import": "{applied deduplicated inventory inventory_digest secret_kinds source_id source_path"
                      " source_root target_home ...}",
    "migrate-rollback": "{applied by_table deduplicated directories drifted drifted_total events_in_scope"
                        " events_journaled files forced local_dependents local_dependents_total needs_force result"
                        " result_digest rows_already_gone rows_to_remove source_id ?chain ?directories_removed"
                        " ?files_removed ?files_withheld ?step}",
}
