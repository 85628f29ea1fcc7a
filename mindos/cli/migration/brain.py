"""Brain commands: brain-inventory, brain-inventory-check, brain-import."""

from mindos.migration import brain_import, brain_inventory
from mindos.cli import flags, make_parser


def add_brain_inventory(sub):
    p = make_parser(sub, "brain-inventory", "ops.py brain-inventory --out brain.json")
    p.add_argument("--out", required=True, help="where to write the sealed mindos-brain-inventory-v1 (0600, atomic)")
    p.add_argument("--home", help="the Autopilot home (default: the home in force)")
    p.add_argument("--hermes-home", help="the Hermes home (default: ~/.hermes)")
    p.add_argument("--claude-home", help="the Claude home (default: ~/.claude)")
    flags.force_out(p)
    p.set_defaults(handler=cmd_brain_inventory, needs_db=False)


def cmd_brain_inventory(conn, args):
    summary = brain_inventory.inventory(args.out, home=args.home, hermes=args.hermes_home, claude=args.claude_home,
                                        force=args.force)
    return summary, (1 if summary["fail_closed"] else 0)


def add_brain_inventory_check(sub):
    p = make_parser(sub, "brain-inventory-check", "ops.py brain-inventory-check brain.json")
    p.add_argument("inventory", help="a sealed mindos-brain-inventory-v1 document")
    p.set_defaults(handler=cmd_brain_inventory_check, needs_db=False)


def cmd_brain_inventory_check(conn, args):
    return brain_inventory.check(args.inventory)


def add_brain_import(sub):
    p = make_parser(sub, "brain-import",
                    "ops.py brain-import --inventory brain.json --target /absolute/new/mindos --apply --redact")
    p.add_argument("--inventory", required=True, help="the sealed brain inventory")
    p.add_argument("--target", required=True,
                   help="the new home: an explicit absolute path, absent or empty, never a system directory")
    p.add_argument("--apply", action="store_true", help="copy (default: the no-write plan)")
    flags.redact(p, "copy a [REDACTED:<kind>] derivative of credential-shaped text instead of quarantining it")
    p.add_argument("--out", help="where to seal the mindos-brain-import-v1 report (default: <target>/migrations/)")
    flags.force_out(p)
    p.set_defaults(handler=cmd_brain_import, needs_db=False)


def cmd_brain_import(conn, args):
    return brain_import.brain_import(args.inventory, args.target, apply=args.apply, redact=args.redact, out=args.out,
                                     force=args.force)


COMMANDS = {
    "brain-inventory": add_brain_inventory,
    "brain-inventory-check": add_brain_inventory_check,
    "brain-import": add_brain_import,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "brain-inventory": "{blocked content_digest digest fail_closed file_sha256 format homes out sources}",
    "brain-inventory-check": "{blocked content_digest created_at digest fail_closed format homes ok sources}",
    "brain-import": "{applied external import_count imports inventory inventory_digest quarantine quarantine_count"
                    " target}",
}
