"""The dashboard command: dashboard."""

from mindos.views import dashboard
from mindos.cli import make_parser


def add_dashboard(sub):
    p = make_parser(sub, "dashboard",
                    "autopilot.py dashboard")
    p.set_defaults(handler=cmd_dashboard)


def cmd_dashboard(conn, args):
    return dashboard.render(conn)


COMMANDS = {
    "dashboard": add_dashboard,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "dashboard": "text",
}
