"""Posts, and the signals around them: typing, at work, sign-ins.

A post records how it was sent, because ``trusted()`` and the grace rule read it:

  ``ssh``       typed by someone signed in with an SSH key (a session; trusted)
  ``terminal``  a terminal session (a session; look-only)
  ``web``       the web (no session behind it: no grace; look-only)
  ``handoff``   a handoff (no session behind it: no grace; trusted only for the agent that
                sent it, with full tools, to itself)
  ``agent``     an agent's own reply (a session; look-only for any agent it mentions, whatever
                tools its turn had: a full-tools grant never passes from agent to agent)

Posts of kind ``post`` are what people and agents said.  The poller adds two marks of its
own, never counted as anyone speaking: ``hold`` (a held mention said in the Mood) and
``quiet`` (the screen's dashed dot, ``about_agent`` naming who was passed over).

A post may say which post it answers (``reply_to``): a person's explicit reply is the only
post besides the agent's own that answers a mention, so small talk never swallows one.  A
handoff post may be addressed to one agent (``to_agent``), which it then asks as a mention
does, even when that agent wrote it (its own context, carried from another Mood).

Three slash commands are recorded beside their post (``mood_commands``) and read by the wakes:

  ``/announce <words>``                   shown in the agents' next wakes in every other Mood
  ``/incorporate <thread> @agent ...``    a thread (a Mood) closed, to be folded back in here
  ``/handoff <mood> @agent <about>``      the agent takes what is here to another Mood: its
                                          reply is carried there as a handoff addressed to it

Reactions to posts (``react``) are shown to the post's agent in its next wake.
"""

import re

from mindos.core import clock, validate
from mindos.errors import InvalidInput
from mindos.store import guard
from mindos.store import db, ledger

VIA = ("ssh", "web", "terminal", "handoff", "agent")
NO_SESSION = ("web", "handoff")
MAX_POST = 32768
SIGNAL_KINDS = ("typing", "at-work")
SIGNAL_SECONDS = {"typing": 30, "at-work": 900}

# '@' not preceded by a word character (so mail addresses are not mentions)
_MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9][A-Za-z0-9._-]{0,63})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f<>&]")


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


COMMANDS = ("announce", "incorporate", "handoff")
MAX_ABOUT = 300
MAX_REACTION = 32


def slash_command(conn, mood_row, body, directory):
    """``{"kind", "target", "about"}`` for a post that is a slash command, None for any other
    post; raises InvalidInput for a command that cannot be carried out (nothing is posted)."""
    from mindos.comms import moods  # lazy: only a slash command resolves a Mood

    first, _, rest = body.strip().partition(" ")
    kind = first[1:].lower() if first.startswith("/") else ""
    if kind not in COMMANDS:
        return None
    rest = rest.strip()
    if kind == "announce":
        if not rest:
            raise InvalidInput("invalid /announce: say what to announce")
        return {"kind": kind, "target": "", "about": rest[:MAX_ABOUT]}
    target, _, about = rest.partition(" ")
    if not target or target.startswith("@"):
        raise InvalidInput(f"invalid /{kind}: name the {'thread' if kind == 'incorporate' else 'Mood'} first "
                           f"(/{kind} <{'thread' if kind == 'incorporate' else 'mood'}> @agent ...)")
    other = moods.resolve(conn, target, f"/{kind}")
    if other["id"] == mood_row["id"]:
        raise InvalidInput(f"invalid /{kind}: {other['slug']} is this Mood")
    asked = mentioned(about, directory)
    if not asked:
        raise InvalidInput(f"invalid /{kind}: name the agent(s) to ask with @name")
    about = " ".join(_MENTION.sub("", about).split())
    if kind == "handoff":
        if not about:
            raise InvalidInput("invalid /handoff: say what it is about")
        for name in asked:
            if conn.execute("SELECT 1 FROM mood_members WHERE mood_id = ? AND agent = ?",
                            (other["id"], name)).fetchone() is None:
                raise InvalidInput(f"invalid /handoff: {name} is not a member of {other['slug']}")
    return {"kind": kind, "target": other["slug"], "about": about[:MAX_ABOUT]}


def add(conn, mood, author, body, *, via, full_tools=False, redact=False, allow_secret=False, reply_to=None,
        to_agent=""):
    """Post ``body`` to a Mood as ``author``; return the post.

    Credential-shaped text is refused by the shared secret guard (``redact`` stores a redacted
    copy, ``allow_secret`` the text as is, both audited), because everything in a Mood is sent
    to agents word for word.  ``reply_to`` names the post (in this Mood) it answers;
    ``to_agent`` addresses a handoff post to one agent.  A slash command is checked and
    recorded with it (see the module docstring).
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
    if reply_to is not None:
        reply_to = validate.positive_int(reply_to, "--reply-to", maximum=2**62)
        if conn.execute("SELECT 1 FROM mood_posts WHERE id = ? AND mood_id = ? AND kind = 'post'",
                        (reply_to, row["id"])).fetchone() is None:
            raise InvalidInput(f"invalid --reply-to: {row['slug']} has no post {reply_to}")
    if to_agent:
        from mindos.comms import agents  # lazy: only a handoff names its agent

        if via != "handoff":
            raise InvalidInput("invalid --to: only a handoff (--via handoff) is addressed to an agent")
        to_agent = agents.resolve(conn, to_agent, "--to")["name"]
    command = None
    if body.lstrip().startswith("/"):
        from mindos.comms import agents  # lazy: only a slash command reads the directory

        command = slash_command(conn, row, body, agents.directory(conn))
    with db.write(conn):
        # the shared secret guard: refused (and the refusal audited) unless --redact / --allow-secret
        fields, outcome = guard.guard(conn, "mood", row["slug"], {"post": body}, redact=redact,
                                      allow_secret=allow_secret)
        body = fields["post"]
        post = insert(conn, row["id"], author, body, via=via, full_tools=full_tools, is_agent=is_agent,
                      reply_to=reply_to, to_agent=to_agent)
        extra = {key: value for key, value in (("reply_to", reply_to), ("to_agent", to_agent)) if value}
        if command is not None:
            record_command(conn, row["id"], post, command["kind"], target=command["target"], about=command["about"])
            extra["command"] = command["kind"]
            post["command"] = command
        ledger.append_event(conn, "mood", row["slug"], "mood_posted",
                            {"post": post["id"], "author": author, "via": via, "full_tools": bool(full_tools),
                             "chars": len(body), **extra, **(outcome or {})})
    post["mood"] = row["slug"]
    return post


def record_command(conn, mood_id, post, kind, *, target="", about="", source_post_id=None):
    """Record a slash command (or a carried handoff, ``handed``) beside its post, inside the
    caller's write."""
    conn.execute("INSERT INTO mood_commands(post_id, mood_id, kind, target, about, source_post_id, created_at)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?)", (post["id"], mood_id, kind, target, about, source_post_id,
                                                   post["created_at"]))


def react(conn, mood, post_id, who, reaction):
    """Record ``who``'s reaction to a post; return it (``changed`` False when it was there)."""
    from mindos.comms import moods  # lazy: see add

    row = moods.resolve(conn, mood)
    post_id = validate.positive_int(post_id, "post id", maximum=2**62)
    who = validate.agent(who, "--who")
    if not isinstance(reaction, str) or not 1 <= len(reaction) <= MAX_REACTION or reaction != "".join(reaction.split()) \
            or _CONTROL.search(reaction):
        raise InvalidInput(f"invalid reaction: {validate.shown(reaction, 40)} (one word or emoji, at most "
                           f"{MAX_REACTION} characters, no spaces)")
    if conn.execute("SELECT 1 FROM mood_posts WHERE id = ? AND mood_id = ? AND kind = 'post'",
                    (post_id, row["id"])).fetchone() is None:
        raise InvalidInput(f"invalid post id: {row['slug']} has no post {post_id}")
    now = clock.now_iso()
    with db.write(conn):
        guard.guard(conn, "mood", row["slug"], {"reaction": reaction})  # a credential is no reaction: refused, audited
        changed = conn.execute("INSERT OR IGNORE INTO mood_reactions(mood_id, post_id, who, reaction, created_at)"
                               " VALUES (?, ?, ?, ?, ?)", (row["id"], post_id, who, reaction, now)).rowcount == 1
        if changed:
            ledger.append_event(conn, "mood", row["slug"], "mood_reacted",
                                {"post": post_id, "who": who, "reaction": reaction})
    return {"mood": row["slug"], "post": post_id, "who": who, "reaction": reaction, "changed": changed,
            "created_at": now}


def insert(conn, mood_id, author, body, *, via, kind="post", full_tools=False, is_agent=False, about_agent="",
           wake_id=None, reply_to=None, to_agent=""):
    """Insert one post row inside the caller's write; return it (no audit: the caller's event covers it)."""
    now = clock.now_iso()
    post_id = conn.execute(
        "INSERT INTO mood_posts(mood_id, kind, author, is_agent, via, full_tools, body, about_agent, wake_id,"
        " created_at, reply_to, to_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (mood_id, kind, author, int(is_agent), via, int(bool(full_tools)), body, about_agent, wake_id, now,
         reply_to, to_agent),
    ).lastrowid
    if is_agent and kind == "post" and to_agent != author:
        # "since it last spoke": the settings-changed line reads this (its own handoff is not speaking here)
        conn.execute("UPDATE mood_agent_state SET spoke_at = ? WHERE mood_id = ? AND agent = ?", (now, mood_id, author))
    return {"id": post_id, "kind": kind, "author": author, "via": via, "full_tools": bool(full_tools),
            "body": body, "created_at": now, "reply_to": reply_to, "to_agent": to_agent}


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
            "about_agent": row["about_agent"], "reply_to": row["reply_to"], "to_agent": row["to_agent"],
            "created_at": row["created_at"]}
