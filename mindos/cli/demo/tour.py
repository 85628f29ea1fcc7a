"""The guided tour: demo."""

from mindos.demo import tour
from mindos.cli import make_parser


def add_demo(sub):
    p = make_parser(sub, "demo",
                    "autopilot.py demo --json")
    p.add_argument("--json", action="store_true", help="print the structured steps instead of the narrative")
    p.add_argument("--keep", action="store_true", help="keep the throwaway home and print where it is")
    p.set_defaults(handler=cmd_demo, needs_db=False)


def cmd_demo(conn, args):
    result = tour.run(keep=args.keep)
    if args.json:
        result.pop("narrative")
        return result
    return result["narrative"]


COMMANDS = {
    "demo": add_demo,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "demo": "text | --json {home kept steps}",
}
