"""The onboarding command: onboard."""

import os
import sys

from mindos.migration import onboard
from mindos.cli import flags, make_parser


def add_onboard(sub):
    p = make_parser(sub, "onboard", "ops.py onboard --inventory inventory.json --apply --probe --out report.json")
    p.add_argument("--inventory", required=True, help="the sealed stage-one inventory")
    p.add_argument("--apply", action="store_true",
                   help="import (the control plane, then the plan's memory-import, hermes-register and archive-copy "
                        "steps) before the doctor (default: plan + doctor, nothing imported)")
    p.add_argument("--probe", action="store_true",
                   help="after --apply, prove the cross-agent protocol through the real CLI (hermes hands off; "
                        "codex recalls, acks, resumes, posts a receipt and completes)")
    p.add_argument("--out", help="write the sealed autopilot-onboarding-v1 report")
    flags.force_out(p)
    p.add_argument("--source-id", help="the autopilot_sqlite source (needed when the inventory holds several)")
    flags.secret(p, "notes, handoffs, receipts and copied files")
    p.add_argument("--relink-audit", action="store_true", help="forwarded to the import unchanged")
    p.set_defaults(handler=cmd_onboard, creates_home=True)  # init_control_plane: a bare directory is enough


def cmd_onboard(conn, args):
    report = onboard.onboard(conn, args.inventory, apply=args.apply, probe_flag=args.probe, out=args.out,
                             source_id=args.source_id, redact=args.redact, allow_secret=args.allow_secret,
                             relink_audit=args.relink_audit, force=args.force, front_door=front_door())
    return report, (0 if report["ok"] else 1)


def front_door():
    """The argv that runs the autopilot door, for the probe to drive the way an agent does."""
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))),
                          "autopilot.py")
    return [sys.executable, script] if os.path.isfile(script) else [sys.executable, "-m", "mindos.cli.autopilot"]


COMMANDS = {
    "onboard": add_onboard,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "onboard": "{applied failed_stage inventory inventory_digest ok probe source_id stages}",
}
