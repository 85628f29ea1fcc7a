"""Migration inventory commands: migrate-inventory, migrate-inventory-check."""

from mindos.migration import inventory
from mindos.cli import flags, make_parser


def add_migrate_inventory(sub):
    p = make_parser(sub, "migrate-inventory", "ops.py migrate-inventory --root /Volumes/old-machine --out inventory.json")
    p.add_argument("--root", required=True, help="tree to discover (read-only; symlinks never followed)")
    p.add_argument("--out", required=True, help="where to write the sealed inventory (0600, atomic)")
    flags.force_out(p)
    p.set_defaults(handler=cmd_migrate_inventory)


def cmd_migrate_inventory(conn, args):
    summary = inventory.inventory(conn, args.root, args.out, force=args.force)
    return summary, (1 if summary["fail_closed"] else 0)  # still sealed: the operator's record


def add_migrate_inventory_check(sub):
    p = make_parser(sub, "migrate-inventory-check", "ops.py migrate-inventory-check inventory.json")
    p.add_argument("inventory", help="a sealed autopilot-migration-inventory-v1 document")
    p.set_defaults(handler=cmd_migrate_inventory_check, needs_db=False)


def cmd_migrate_inventory_check(conn, args):
    return inventory.check(args.inventory)


COMMANDS = {
    "migrate-inventory": add_migrate_inventory,
    "migrate-inventory-check": add_migrate_inventory_check,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "migrate-inventory": "{blocked by_kind caps content_digest digest fail_closed file_sha256 format out plan root"
                         " sources sources_total}",
    "migrate-inventory-check": "{blocked content_digest created_at digest fail_closed format ok plan root"
                               " sources_total}",
}
