"""Harness setup: setup claude | codex | hermes, and setup check [harness]."""

from mindos.cli import flags, make_parser
from mindos.harness import setup


def add_setup(sub):
    p = make_parser(sub, "setup", "autopilot.py setup claude --project-dir . --stop-gate --dry-run")
    p.add_argument("harness", choices=(*setup.HARNESSES, "check"),
                   help="claude: SessionStart hooks (startup, resume, clear, compact) running prime, the MCP server"
                        " in ~/.claude.json and the loop in CLAUDE.md; codex: [mcp_servers.mindos] + AGENTS.md;"
                        " hermes: the pre_llm_call gateway hook + mindos_bridge settings in $HERMES_HOME;"
                        " check: run what setup wrote (home, interpreter, version, hook, MCP handshake)")
    p.add_argument("target", nargs="?", choices=setup.HARNESSES,
                   help="with check: the harness to check (default: every harness MindOS is set up in)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--project-dir", help="the project whose config to change (default: the current directory)")
    where.add_argument("--user", action="store_true", help="change the user-wide config (~/.claude, ~/.codex) instead")
    p.add_argument("--agent", help="the agent name the hooks speak as (default: claude-code-<session> for Claude Code,"
                                   " from each session's id; codex for Codex)")
    p.add_argument("--home", help="the MindOS home to pin in what setup writes (default: the one the CLI resolves"
                                  " now: HERMES_AUTOPILOT_HOME, MINDOS_HOME, the selector file, ~/.hermes/autopilot)")
    p.add_argument("--stop-gate", action="store_true",
                   help="setup claude: also a Stop hook that blocks a stop once while the session holds a lease"
                        " with no handoff or receipt since its claim")
    flags.dry_run(p, "report the exact changes (and diffs) without writing anything")
    p.add_argument("--remove", action="store_true", help="take out exactly what setup added")
    p.set_defaults(handler=cmd_setup, needs_db=False)


def cmd_setup(conn, args):
    if args.harness == "check":
        from mindos.harness import check  # lazy: only setup check spawns the harness commands

        extra = [flag for flag, value in (("--agent", args.agent), ("--home", args.home), ("--stop-gate", args.stop_gate),
                                          ("--dry-run", args.dry_run), ("--remove", args.remove)) if value]
        if extra:
            from mindos.errors import InvalidInput  # lazy: the usage error only

            raise InvalidInput(f"setup check takes no {extra[0]}: it reads what setup wrote (--project-dir or --user)")

        report = check.check(args.target, project_dir=args.project_dir, user=args.user)
        return report, 0 if report["ok"] else 1
    if args.target is not None:
        from mindos.errors import InvalidInput  # lazy: the usage error only

        raise InvalidInput(f"setup {args.harness} takes no second harness (did you mean: setup check {args.target}?)")
    return setup.setup(args.harness, project_dir=args.project_dir, user=args.user, agent=args.agent,
                       dry_run=args.dry_run, remove=args.remove, home=args.home, stop_gate=args.stop_gate)


COMMANDS = {
    "setup": add_setup,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    # setup HARNESS reports what it wrote; setup check reports {harnesses ok}
    "setup": "{?agent ?changed ?dry_run ?files ?harness ?harnesses ?home ?ok ?remove}",
}
