"""Full-text index repair: fts-rebuild."""

from mindos.cli import flags, make_parser
from mindos.recovery import reindex


def add_fts_rebuild(sub):
    p = make_parser(sub, "fts-rebuild", "ops.py fts-rebuild --dry-run")
    flags.dry_run(p, "report the drift found per index; rebuild nothing")
    p.set_defaults(handler=cmd_fts_rebuild)


def cmd_fts_rebuild(conn, args):
    return reindex.rebuild(conn, dry_run=args.dry_run, relearn=True)


COMMANDS = {
    "fts-rebuild": add_fts_rebuild,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "fts-rebuild": "{drift_found dry_run fixed indexes would_fix ?learned}",
}
