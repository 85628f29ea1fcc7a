"""Mood poller test kit: a Mood with two agents, a stand-in agent for delivery, helpers.

Imported by the test modules (fixtures included) rather than a conftest.py, so that
``from conftest import ...`` elsewhere keeps meaning tests/conftest.py."""

import pytest

from mindos.comms import agents, moods, posts, tick
from mindos.comms.words import Words
from mindos.core import clock


class Agent:
    """A scripted stand-in for agents' delivery commands: records every wake it is handed
    and answers from ``replies[name]`` (a list consumed in order; default ``<silent>``).
    ``during[name]`` is called while the wake "runs" (to land posts or takes mid-turn)."""

    def __init__(self):
        self.seen = []
        self.replies = {}
        self.during = {}

    def __call__(self, agent, text, env, timeout):
        self.seen.append({"agent": agent["name"], "text": text, "env": env})
        hook = self.during.pop(agent["name"], None)
        if hook:
            hook()
        queue = self.replies.get(agent["name"]) or []
        reply = queue.pop(0) if queue else "<silent>nothing for me</silent>"
        if isinstance(reply, dict):
            return reply
        from mindos.comms import delivery

        result = delivery.parse_reply(delivery.clean(reply))
        result["seconds"] = 0.0
        return result

    def kinds(self, name=None):
        return [(s["agent"], s["env"]["MOOD_WAKE_REASON"]) for s in self.seen if name in (None, s["agent"])]


@pytest.fixture
def agent():
    return Agent()


@pytest.fixture
def room(conn):
    """Mood 'infra' with members re and magent (alias mag)."""
    moods.create(conn, "infra", title="Infra room")
    agents.create(conn, "re", command="cat")
    agents.create(conn, "magent", aliases=["mag"])
    moods.join(conn, "infra", "re")
    moods.join(conn, "infra", "magent")
    return conn


@pytest.fixture
def run_tick(conn, agent):
    """``run_tick(**kw)``: one tick with the stand-in agent and fresh words."""

    def run(**kw):
        kw.setdefault("deliver", agent)
        kw.setdefault("words", Words())
        return tick.run(conn, **kw)

    return run


def say(conn, text, *, author="justin", via="ssh", mood="infra", **kw):
    """Post and return the post id."""
    return posts.add(conn, mood, author, text, via=via, **kw)["id"]


def later(seconds=0, **kw):
    clock.advance(seconds, **kw)
