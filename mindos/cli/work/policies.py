"""Project policy checks: policy."""


from mindos.cli import make_parser
from mindos.core import home
from mindos.work import policies


def add_policy(sub):
    p = make_parser(sub, "policy",
                    "ops.py policy Trove merge")
    p.add_argument("project", help="project name (reads <home>/policies/<project>.yaml)")
    p.add_argument("action", help="merge, deploy or dispatch (other actions require a user)")
    p.set_defaults(handler=cmd_policy, needs_db=False)


def cmd_policy(conn, args):
    return policies.check(home.home_dir(), args.project, args.action)


COMMANDS = {
    "policy": add_policy,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "policy": "{action decision policy policy_file policy_found project requires_user ?dispatch_requires_tag"
              " ?max_wip_per_owner ?rule}",
}
