"""Posts, and the signals around them: typing, at work, sign-ins.

A post records how it was sent, because ``trusted()`` and the grace rule read it:

  ``ssh``       typed by someone signed in with an SSH key (a session; trusted)
  ``terminal``  a terminal session (a session; look-only)
  ``web``       the web (no session behind it: no grace; look-only)
  ``handoff``   a handoff (no session behind it: no grace; trusted only when an agent sent it
                with full tools)
  ``agent``     an agent's own reply (a session; trusted only when sent with full tools)

Posts of kind ``post`` are what people and agents said.  The poller adds two marks of its
own, never counted as anyone speaking: ``hold`` (a held mention said in the Mood) and
``quiet`` (the screen's dashed dot, ``about_agent`` naming who was passed over).
"""

import re

from mindos.core import clock, validate
from mindos.errors import InvalidInput
from mindos.memory import guard
from mindos.store import db, ledger

VIA = ("ssh", "web", "terminal", "handoff", "agent")
NO_SESSION = ("web", "handoff")
MAX_POST = 32768
SIGNAL_KINDS = ("typing", "at-work")
SIGNAL_SECONDS = {"typing": 30, "at-work": 900}

# '@' not preceded by a word character (so mail addresses are not mentions)
_MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9][A-Za-z0-9._-]{0,63})")


def mentioned(text, directory):
    """The agent names ``text`` mentions, in order of first mention (``directory`` maps
    lowercase names and aliases to agent names)."""
    found = []
    for match in _MENTION.finditer(text or ""):
        token = match.group(1).rstrip(".-").lower()
        agent = directory.get(token)
        if agent and agent not in found:
            found.append(agent)
    return found


def add(conn, mood, author, body, *, via, full_tools=False, redact=False, allow_secret=False):
    """Post ``body`` to a Mood as ``author``; return the post.

    Credential-shaped text is refused by the shared secret guard (``redact`` stores a redacted
    copy, ``allow_secret`` the text as is, both audited), because everything in a Mood is sent
    to agents word for word.
    """
    from mindos.comms import moods  # lazy: keeps this module importable on its own

    row = moods.resolve(conn, mood)
    author = validate.agent(author, "--author")
    if via not in VIA:
        raise InvalidInput(f"invalid --via: {validate.shown(via, 40)} (choose from {', '.join(VIA)})")
    body = validate.text(body, "post text", required=True, max_len=MAX_POST)
    is_agent = conn.execute("SELECT 1 FROM mood_agents WHERE name = ?", (author,)).fetchone() is not None
    if via == "agent" and not is_agent:
        raise InvalidInput(f"invalid --via: agent, but {author!r} is not a registered agent")
    if full_tools and not is_agent:
        raise InvalidInput("invalid --full-tools: only an agent's own post is sent with full tools")
    with db.write(conn):
        # the shared secret guard: refused (and the refusal audited) unless --redact / --allow-secret
        fields, outcome = guard.guard(conn, "mood", row["slug"], {"post": body}, redact=redact,
                                      allow_secret=allow_secret)
        body = fields["post"]
        post = insert(conn, row["id"], author, body, via=via, full_tools=full_tools, is_agent=is_agent)
        ledger.append_event(conn, "mood", row["slug"], "mood_posted",
                            {"post": post["id"], "author": author, "via": via, "full_tools": bool(full_tools),
                             "chars": len(body), **(outcome or {})})
    post["mood"] = row["slug"]
    return post


def insert(conn, mood_id, author, body, *, via, kind="post", full_tools=False, is_agent=False, about_agent="",
           wake_id=None):
    """Insert one post row inside the caller's write; return it (no audit: the caller's event covers it)."""
    now = clock.now_iso()
    post_id = conn.execute(
        "INSERT INTO mood_posts(mood_id, kind, author, is_agent, via, full_tools, body, about_agent, wake_id,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (mood_id, kind, author, int(is_agent), via, int(bool(full_tools)), body, about_agent, wake_id, now),
    ).lastrowid
    if is_agent and kind == "post":  # "since it last spoke": the settings-changed line reads this
        conn.execute("UPDATE mood_agent_state SET spoke_at = ? WHERE mood_id = ? AND agent = ?", (now, mood_id, author))
    return {"id": post_id, "kind": kind, "author": author, "via": via, "full_tools": bool(full_tools),
            "body": body, "created_at": now}


def signal(conn, mood, who, *, kind="typing", seconds=None, stop=False):
    """Record (or clear) a typing / at-work signal; return it.  Signals expire on their own."""
    from mindos.comms import moods  # lazy: see add

    row = moods.resolve(conn, mood)
    who = validate.agent(who, "who")
    if kind not in SIGNAL_KINDS:
        raise InvalidInput(f"invalid signal: {validate.shown(kind, 40)} (choose from {', '.join(SIGNAL_KINDS)})")
    seconds = SIGNAL_SECONDS[kind] if seconds is None else validate.positive_int(seconds, "--seconds",
                                                                                 maximum=86400)
    with db.write(conn):
        if stop:
            conn.execute("DELETE FROM mood_signals WHERE mood_id = ? AND who = ? AND kind = ?", (row["id"], who, kind))
            return {"mood": row["slug"], "who": who, "kind": kind, "until": None}
        until = clock.shift(clock.now_iso(), seconds)
        conn.execute("INSERT INTO mood_signals(mood_id, who, kind, until) VALUES (?, ?, ?, ?)"
                     " ON CONFLICT(mood_id, who, kind) DO UPDATE SET until = excluded.until",
                     (row["id"], who, kind, until))
    return {"mood": row["slug"], "who": who, "kind": kind, "until": until}


def arrive(conn, mood, who, *, via="ssh"):
    """Record that someone signed in to a Mood; return the sign-in."""
    from mindos.comms import moods  # lazy: see add

    row = moods.resolve(conn, mood)
    who = validate.agent(who, "who")
    if via not in VIA:
        raise InvalidInput(f"invalid --via: {validate.shown(via, 40)} (choose from {', '.join(VIA)})")
    now = clock.now_iso()
    with db.write(conn):
        arrival = conn.execute("INSERT INTO mood_arrivals(mood_id, who, via, created_at) VALUES (?, ?, ?, ?)",
                               (row["id"], who, via, now)).lastrowid
        ledger.append_event(conn, "mood", row["slug"], "mood_arrived", {"arrival": arrival, "who": who, "via": via})
    return {"mood": row["slug"], "arrival": arrival, "who": who, "via": via, "created_at": now}


def recent(conn, mood, *, limit=50):
    """The Mood's newest posts (all kinds), oldest first."""
    from mindos.comms import moods  # lazy: see add

    row = moods.resolve(conn, mood)
    limit = validate.positive_int(limit, "--limit", maximum=10000)
    rows = conn.execute("SELECT * FROM mood_posts WHERE mood_id = ? ORDER BY id DESC LIMIT ?",
                        (row["id"], limit)).fetchall()
    return [as_dict(r) for r in reversed(rows)]


def as_dict(row):
    """A post row as plain data."""
    return {"id": row["id"], "kind": row["kind"], "author": row["author"], "is_agent": bool(row["is_agent"]),
            "via": row["via"], "full_tools": bool(row["full_tools"]), "body": row["body"],
            "about_agent": row["about_agent"], "created_at": row["created_at"]}
