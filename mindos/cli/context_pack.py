"""``mindos_context_pack.py``: the Hermes session-start context pack's own front door.

``mindos_context_pack.py sentinel [--json]`` exercises the disposable proof path of the
first-turn pack (:func:`mindos.harness.hermes.sentinel`) without touching live homes: a
throwaway MindOS home, Hermes home and HOME are seeded, the real gateway hook is run against
them, and they are deleted.  ``--json`` prints ``{"ok", "checks": [{"name", "ok"[,
"detail"]}], "home"}``; without it, one ``ok``/``FAIL`` line per check.  Exit 0 when every
check held, 1 when one failed, 2 for a usage error.
"""

import sys

USAGE = "usage: mindos_context_pack.py sentinel [--json]\n"


def main(argv=None):
    """``mindos_context_pack.py sentinel [--json]`` (or ``-h``/``--help``)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + "\n" + __doc__)
        return 0
    if not argv or argv[0] != "sentinel":
        shown = repr(argv[0]) if argv else "none"
        print(f"mindos_context_pack.py: error: unknown command {shown} (expected: sentinel [--json])", file=sys.stderr)
        return 2
    from mindos.cli import hermes_hook  # lazy: help and usage errors never load the hook

    return hermes_hook.sentinel(argv[1:], "mindos_context_pack.py")


if __name__ == "__main__":
    sys.exit(main())
