"""Harness setup: setup claude | codex | hermes."""

from mindos.cli import flags, make_parser
from mindos.mcp import setup


def add_setup(sub):
    p = make_parser(sub, "setup", "autopilot.py setup claude --project-dir . --dry-run")
    p.add_argument("harness", choices=setup.HARNESSES,
                   help="claude: SessionStart/PreCompact hooks running prime; codex: [mcp_servers.mindos] + AGENTS.md;"
                        " hermes: the pre_llm_call gateway hook + mindos_bridge settings in $HERMES_HOME")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--project-dir", help="the project whose config to change (default: the current directory)")
    where.add_argument("--user", action="store_true", help="change the user-wide config (~/.claude, ~/.codex) instead")
    p.add_argument("--agent", help="the agent name prime is run for (default claude-code / codex)")
    flags.dry_run(p, "report the exact changes (and diffs) without writing anything")
    p.add_argument("--remove", action="store_true", help="take out exactly what setup added")
    p.set_defaults(handler=cmd_setup, needs_db=False)


def cmd_setup(conn, args):
    return setup.setup(args.harness, project_dir=args.project_dir, user=args.user, agent=args.agent,
                       dry_run=args.dry_run, remove=args.remove)


COMMANDS = {
    "setup": add_setup,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "setup": "{agent changed dry_run files harness remove}",
}
