"""``mood_poller.py``: the Moods, the dials and the poll cycle that wakes agents in them."""

from mindos.cli import run

DESCRIPTION = ("MindOS mood poller: decides when an agent in a Mood should be woken, composes the wake, "
               "delivers it and posts the reply.")

COMMANDS = {
    "tick": "comms.tick", "explain": "comms.tick",
    "post": "comms.posts", "posts": "comms.posts", "typing": "comms.posts", "arrive": "comms.posts",
    "mood": "comms.moods", "agent": "comms.agents", "set": "comms.dials", "page": "comms.pages",
    "wakes": "comms.wakes", "show-wake": "comms.wakes", "bundle": "comms.wakes", "budget": "comms.wakes",
}


def main(argv=None):
    """Run one mood poller command; return its exit code."""
    return run("mood_poller.py", DESCRIPTION, COMMANDS, argv)
