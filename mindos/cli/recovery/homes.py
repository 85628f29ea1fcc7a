"""Home selection: home-doctor, home-show, home-select, home-deselect."""

from mindos.cli import make_parser
from mindos.recovery import homes


def add_home_doctor(sub):
    p = make_parser(sub, "home-doctor", "ops.py home-doctor --home ~/.hermes/mindos")
    p.add_argument("--home", required=True, help="the home to sweep (read-only)")
    p.set_defaults(handler=cmd_home_doctor, needs_db=False)


def cmd_home_doctor(conn, args):
    report = homes.doctor_home(args.home)
    return report, (0 if report["ok"] else 1)


def add_home_show(sub):
    p = make_parser(sub, "home-show", "ops.py home-show")
    p.set_defaults(handler=cmd_home_show, needs_db=False)


def cmd_home_show(conn, args):
    return homes.show()


def add_home_select(sub):
    p = make_parser(sub, "home-select", "ops.py home-select --home ~/.hermes/mindos")
    p.add_argument("--home", required=True, help="the home to select (must pass the doctor)")
    _selector_flag(p)
    p.set_defaults(handler=cmd_home_select, needs_db=False)


def _selector_flag(p):
    p.add_argument("--selector", metavar="PATH",
                   help="the selector file to act on (default: AUTOPILOT_HOME_SELECTOR, else"
                        " ~/.hermes/autopilot-home-selector.json); never a symlink or a file that is not a selector")


def cmd_home_select(conn, args):
    return homes.select(args.home, selector=args.selector)


def add_home_deselect(sub):
    p = make_parser(sub, "home-deselect", "ops.py home-deselect --apply")
    p.add_argument("--apply", action="store_true", help="remove the selector (default: show the plan only)")
    _selector_flag(p)
    p.set_defaults(handler=cmd_home_deselect, needs_db=False)


def cmd_home_deselect(conn, args):
    return homes.deselect(apply=args.apply, selector=args.selector)


COMMANDS = {
    "home-doctor": add_home_doctor,
    "home-show": add_home_show,
    "home-select": add_home_select,
    "home-deselect": add_home_deselect,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "home-doctor": "{checks counts home notes ok problems problems_by_kind}",
    "home-show": "{home overridden_by rollback_default selector selector_path source}",
    "home-select": "{active_home active_source doctor previous selected selector_path}",
    "home-deselect": "{active_home active_source apply falls_back_to present removed selected_home selector_path}",
}
