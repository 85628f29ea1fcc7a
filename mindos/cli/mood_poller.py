"""``mood_poller.py`` / ``mindos-mood-poller``: the Moods, the dials and the poll cycle that wakes agents in them."""

from mindos.cli import run


def main(argv=None):
    """Run one mood poller command; return its exit code."""
    return run("mood_poller", argv)
