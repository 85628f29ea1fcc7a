"""When to wake an agent: the decision rules, as pure functions over one tick's snapshot.

Nothing here reads the database or the clock: :mod:`mindos.comms.tick` gathers a snapshot
(every Mood at once) and passes plain values in, so every rule can be tested with made-up
posts and times, and ``explain`` shows exactly what the tick would do.

One decision per agent per Mood per tick, first match wins:

  1. mention   unanswered ``@name`` (or alias) posts -- answered only by the agent's own
               later post or a person's explicit reply to it, never by small talk; grace (default 600 s) unless the mention
               has no session behind it (web, handoff); ``max_wakes_per_hour`` not spent.
               Listening ``off`` holds instead: the hold is said in the Mood once per newer
               mention (renewed), never a silent wait.
  2. consider  listening ``on``: a burst of people's posts after the last mention of the
               agent and after what it has already seen, once the Mood has been quiet for
               ``consider_after`` and nobody is typing or at work; one look per burst.
  3. quiet     listening ``on``: the last post is a person's, still unanswered, and nothing
               has been said for ``idle_after``, doubled after each silent quiet look, given
               up after 12 hours of total silence (the rest).
  4. arrival   listening ``on``: someone signed in since the agent's last arrival look.
Unasked looks (2-4) are capped per Mood per hour and by the shared daily budget (checked by
the tick with the composed wake's real cost); consider and quiet go through the screen unless
discretion is ``chatty``.
"""

from mindos.core import clock

IDLE_REST_SECONDS = 12 * 3600
ARRIVAL_FRESH_SECONDS = 3600
UNASKED = ("consider", "quiet", "arrival")
# kinds counted against the per-Mood-per-hour consideration cap
CONSIDERATIONS = ("consider", "quiet", "arrival")


def trusted(post, full_tools_for, agent):
    """True when ``post`` may wake ``agent`` with full tools: typed by a person signed in with
    an SSH key or named in ``full_tools_for``, or ``agent``'s own post itself sent with full
    tools as a handoff.  Anything else is look-only -- above all another agent's post,
    whatever tools its turn had: a full-tools grant never passes from agent to agent."""
    if not post["is_agent"]:
        return post["via"] == "ssh" or post["author"] in full_tools_for
    return post["author"] == agent and bool(post["full_tools"]) and post["via"] == "handoff"


def tools_for(posts, full_tools_for, agent):
    """``"full"`` only when every post that woke ``agent`` is trusted, else ``"look-only"``."""
    return "full" if posts and all(trusted(p, full_tools_for, agent) for p in posts) else "look-only"


def has_session(post):
    """A mention posted from the web or by a handoff has no session behind it (no grace)."""
    return post["via"] not in ("web", "handoff")


def addressed(post, agent):
    """True when ``post`` asks ``agent``: it mentions it (by name or alias), by another author,
    or it is a handoff addressed to it (its own handoff from another Mood included)."""
    if post.get("to_agent") == agent:
        return True
    return post["author"] != agent and agent in post["mentions"]


def answers(post, mention, agent):
    """True when ``post`` answers ``mention`` for ``agent``: the agent's own later post, or a
    person's explicit reply to it (``reply_to``) by someone other than its author.  Small talk,
    another agent's post and the author's own follow-ups answer nothing."""
    if post["id"] <= mention["id"]:
        return False
    if post["author"] == agent and post.get("to_agent") != agent:
        return True
    return not post["is_agent"] and post.get("reply_to") == mention["id"] and post["author"] != mention["author"]


def pending_mentions(posts, agent, mention_id):
    """Unanswered posts after ``mention_id`` that ask ``agent`` (oldest first).

    One backward pass (what :func:`answers` decides per pair, in linear time): a long backlog
    full of mentions must not make a tick quadratic.
    """
    pending, agent_spoke, replied = [], False, {}
    for post in reversed([p for p in posts if p["kind"] == "post"]):
        if post["id"] > mention_id and addressed(post, agent) and not agent_spoke \
                and not (replied.get(post["id"], set()) - {post["author"]}):
            pending.append(post)
        if post["author"] == agent and post.get("to_agent") != agent:
            agent_spoke = True
        elif not post["is_agent"] and post.get("reply_to"):
            authors = replied.setdefault(post["reply_to"], set())
            if len(authors) < 2:  # two distinct people are enough to answer anyone's mention
                authors.add(post["author"])
    pending.reverse()
    return pending


def quiet_due(last_post_at, quiet_last_at, looks, idle_after):
    """When the next quiet look is due: ``idle_after`` after the last post, then doubling
    after each silent look (measured from the last look)."""
    base = quiet_last_at if looks and quiet_last_at else last_post_at
    return clock.shift(base, idle_after * (2 ** min(looks, 30)))


def decide(unit, posts, *, dials, now, signals=(), wakes_last_hour=0, considers_last_hour=0, arrival=None):
    """The decision for one agent in one Mood.

    ``unit``: the Mood's pulse and the agent's cursors (see ``tick.snapshot``).  ``posts``: the
    Mood's posts after the agent's lowest cursor, oldest first, each with ``mentions``.
    ``dials``: resolved values for this Mood and agent.  ``signals``: who is typing or at work
    in the Mood.  Returns ``{"action", "why", ...}``; actions ``mention``, ``hold``, ``consider``,
    ``quiet``, ``arrival``, ``wait`` (something is pending but a rule holds it) or ``none``.
    ``cursors`` names state the tick may advance even when nothing fires.
    """
    agent = unit["agent"]
    listening = dials["listening"]
    said = [p for p in posts if p["kind"] == "post"]
    last_id = unit["last_post_id"]
    cursors = {}

    # 1. mentions
    pending = pending_mentions(said, agent, unit["mention_id"])
    if not pending:
        cursors["mention_id"] = last_id
    else:
        cursors["mention_id"] = pending[0]["id"] - 1
    if pending and listening == "off":
        if pending[-1]["id"] > unit["held_id"]:
            return {"action": "hold", "why": "listening is off: the mention is held and said in the Mood",
                    "posts": pending, "cursors": cursors}
        return {"action": "wait", "why": "listening is off: the mention is held (already said)",
                "posts": pending, "cursors": cursors}
    if pending:
        ready = [p for p in pending
                 if not has_session(p) or clock.seconds_between(p["created_at"], now) >= dials["grace"]]
        if not ready:
            due = min(clock.shift(p["created_at"], dials["grace"]) for p in pending)
            return {"action": "wait", "why": f"grace: nobody has answered yet; the mention wakes at {due}",
                    "due": due, "posts": pending, "cursors": cursors}
        if wakes_last_hour >= dials["max_wakes_per_hour"]:
            return {"action": "wait", "why": f"max_wakes_per_hour ({dials['max_wakes_per_hour']}) is spent",
                    "posts": pending, "cursors": cursors}
        no_session = [p["id"] for p in ready if not has_session(p)]
        why = ("a mention with no session behind it wakes at once" if no_session
               else f"nobody answered the mention for grace ({dials['grace']}s)")
        return {"action": "mention", "why": why, "posts": pending,
                "tools": tools_for(pending, dials["full_tools_for"], agent), "cursors": cursors}

    if listening != "on":
        cursors["considered_id"] = last_id
        return {"action": "none", "why": f"listening is {listening}: no unasked looks", "cursors": cursors}

    # 2. the consider loop: a burst after the last mention of this agent
    last_mention = max((p["id"] for p in said if addressed(p, agent)), default=0)
    start = max(unit["considered_id"], unit["seen_id"], last_mention)
    burst = [p for p in said if p["id"] > start and not p["is_agent"] and p["author"] != agent]
    if burst:
        quiet_for = clock.seconds_between(unit["last_post_at"], now)
        busy = sorted(signals)
        if busy:
            return {"action": "wait", "why": f"a burst waits: {', '.join(busy)} typing or at work",
                    "posts": burst, "cursors": cursors}
        if quiet_for < dials["consider_after"]:
            return {"action": "wait",
                    "why": f"a burst waits until the Mood has been quiet for consider_after ({dials['consider_after']}s)",
                    "due": clock.shift(unit["last_post_at"], dials["consider_after"]), "posts": burst,
                    "cursors": cursors}
        return _unasked("consider", "a burst of posts, and the Mood has gone quiet", burst, dials,
                        considers_last_hour, cursors, agent)
    cursors["considered_id"] = last_id  # nothing after ``start`` is a burst for this agent

    # 3. the long quiet
    if unit["last_post_person"] and unit["last_post_author"] != agent and unit["last_post_at"]:
        silence = clock.seconds_between(unit["last_post_at"], now)
        looks = unit["quiet_looks"] if unit["quiet_post_id"] == last_id else 0
        if silence >= IDLE_REST_SECONDS:
            result = {"action": "none", "why": "12 hours of total silence: quiet looks rest"}
        else:
            due = quiet_due(unit["last_post_at"], unit["quiet_last_at"] if looks else None, looks,
                            dials["idle_after"])
            if now >= due:
                last = [p for p in said if p["id"] == last_id]
                return _unasked("quiet", f"a person's post is unanswered and nothing was said for "
                                f"{silence}s (quiet look {looks + 1})", last, dials, considers_last_hour,
                                cursors, agent, looks=looks)
            result = {"action": "none", "why": f"quiet: the next look is due at {due}", "due": due}
        if arrival is None:
            result["cursors"] = cursors
            return result

    # 4. someone signed in
    if arrival is not None:
        if clock.seconds_between(arrival["created_at"], now) > ARRIVAL_FRESH_SECONDS:
            cursors["arrival_id"] = arrival["id"]
            return {"action": "none", "why": "a sign-in too old to greet", "cursors": cursors}
        return _unasked("arrival", f"{arrival['who']} signed in", [], dials, considers_last_hour, cursors, agent,
                        arrival=arrival)
    return {"action": "none", "why": "nothing new", "cursors": cursors}


def _unasked(kind, why, posts, dials, considers_last_hour, cursors, agent, **extra):
    if considers_last_hour >= dials["max_considers_per_hour"]:
        return {"action": "wait", "why": f"max_considers_per_hour ({dials['max_considers_per_hour']}) is spent "
                f"in this Mood", "posts": posts, "cursors": cursors}
    screen = kind in ("consider", "quiet") and dials["discretion"] != "chatty"
    return {"action": kind, "why": why, "posts": posts, "tools": tools_for(posts, dials["full_tools_for"], agent),
            "screen": screen, "cursors": cursors, **extra}
