"""The metrics command: metrics."""

from mindos.views import metrics
from mindos.cli import make_parser


def add_metrics(sub):
    p = make_parser(sub, "metrics", "autopilot.py metrics")
    p.set_defaults(handler=cmd_metrics)


def cmd_metrics(conn, args):
    return metrics.collect(conn)


COMMANDS = {
    "metrics": add_metrics,
}
