"""``mindos_gateway_hook.py``: the Hermes ``pre_llm_call`` hook's front door.

Reads the event from stdin and prints the answer (:func:`mindos.harness.hermes.respond`), or
with ``sentinel [--json]`` prints the proof of the whole path
(:func:`mindos.harness.hermes.sentinel`).  The hook never breaks the agent: any failure is one
line on stderr and ``{}`` on stdout, exit 0.
"""

import json
import os
import sys

from mindos.harness import hermes


def sentinel(argv, prog):
    """``<prog> sentinel [--json]``: run :func:`mindos.harness.hermes.sentinel` and print it (the
    JSON report, or one ``ok``/``FAIL`` line per check); exit 0 only when every check held."""
    unknown = [a for a in argv if a != "--json"]
    if unknown:
        print(f"{prog}: error: unknown argument {unknown[0]!r}", file=sys.stderr)
        return 2
    try:
        report = hermes.sentinel()
    except Exception as exc:  # the proof itself broke: a failed sentinel, one line
        print(f"{prog}: sentinel failed: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 1
    if "--json" in argv:
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        for item in report["checks"]:
            sys.stdout.write(f"{'ok  ' if item['ok'] else 'FAIL'} {item['name']}\n")
        sys.stdout.write("sentinel: " + ("ok" if report["ok"] else "FAILED") + "\n")
    return 0 if report["ok"] else 1


def main(argv=None):
    """``mindos_gateway_hook.py [--seconds N]`` (hook: stdin event -> stdout JSON) or ``... sentinel [--json]``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "sentinel":
        return sentinel(argv[1:], "mindos_gateway_hook.py")
    if argv == ["--version"]:
        from mindos import __version__  # lazy: --version only

        sys.stdout.write(f"mindos_gateway_hook.py {__version__}\n")
        return 0
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(hermes.__doc__)
        return 0
    seconds = None
    if len(argv) == 2 and argv[0] == "--seconds":
        from mindos.core import validate  # lazy: only a hook given --seconds

        seconds = float(argv[1]) if validate.ascii_number(argv[1]) else -1.0  # ASCII digits only, as every flag
        if not 0 < seconds <= 600:
            print(f"mindos_gateway_hook.py: error: invalid --seconds: {argv[1]!r} (a number above 0, at most 600)",
                  file=sys.stderr)
            return 2
        argv = []
    if argv:
        print(f"mindos_gateway_hook.py: error: unknown command {argv[0]!r} (hook: no arguments or --seconds N;"
              " or sentinel)", file=sys.stderr)
        return 2
    try:
        if hermes.opted_out(os.environ):
            answer = {}
        else:
            raw = sys.stdin.read(1 << 22)
            answer = hermes.respond(json.loads(raw) if raw.strip() else {}, seconds=seconds)
    except Exception as exc:  # never break the agent: say why on stderr, answer nothing
        from mindos.cli import safe_line  # lazy: the shared one-line redaction

        print(f"mindos_gateway_hook.py: {safe_line(exc.__class__.__name__ + ': ' + str(exc))}", file=sys.stderr)
        answer = {}
    sys.stdout.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
