"""Continuation grants: declare, grant-check."""

from mindos.autonomy import grants
from mindos.cli import flags, make_parser


def add_declare(sub):
    p = make_parser(sub, "declare",
                    "autopilot.py declare t-1a2b3c4d --model opencode/x-preview-f-free --autonomy-level L1"
                    " --granted-by leo --grant-hours 24")
    p.add_argument("task_id", help="task id")
    p.add_argument("--model", required=True, help="the exact model/provider the grant binds (no other is authorized)")
    p.add_argument("--autonomy-level", required=True, choices=list(grants.LEVELS), help="autonomy level, L0..L3")
    p.add_argument("--granted-by", required=True, help="the human granting it")
    p.add_argument("--grant-hours", required=True, type=flags.integer,
                   help=f"hours until the grant expires (1..{grants.MAX_GRANT_HOURS})")
    p.set_defaults(handler=cmd_declare)


def cmd_declare(conn, args):
    return grants.declare(conn, args.task_id, model_name=args.model, autonomy_level=args.autonomy_level,
                          granted_by=args.granted_by, grant_hours=args.grant_hours)


def add_grant_check(sub):
    p = make_parser(sub, "grant-check",
                    "autopilot.py grant-check t-1a2b3c4d --model opencode/x-preview-f-free --level L1")
    p.add_argument("task_id", help="task id")
    p.add_argument("--model", required=True, help="the model asking to continue")
    p.add_argument("--level", default="L0", choices=list(grants.LEVELS), help="the level needed (default L0)")
    p.set_defaults(handler=cmd_grant_check)


def cmd_grant_check(conn, args):
    return grants.authorize(conn, args.task_id, args.model, args.level)


COMMANDS = {
    "declare": add_declare,
    "grant-check": add_grant_check,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "declare": "{active autonomy_level expired expires_at granted_at granted_by id model superseded_at superseded_by"
               " task_id}",
    "grant-check": "{authorized grant level model reason task_id}",
}
