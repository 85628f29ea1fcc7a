"""One poll cycle ("the pulse"): read every Mood at once, decide, compose, deliver, record.

Design decisions
  * The snapshot is a fixed number of queries whatever the number of Moods and posts (the
    Moods' pulse is denormalized onto ``moods`` by a trigger); posts are read only for Moods
    where some agent has something unread, one query per such Mood.  A tick with nothing to
    do reads the database eight times and writes nothing.
  * **One transaction per tick.**  Everything a tick records (wake rows, bundles, budget
    lines, cursors, holds, screens, outcomes, their audit events) goes into one transaction
    (a store batch, opened at the first write: an idle tick takes no write lock), committed
    once at the end: a 400-wake tick is one commit, not 800, and a tick that fails half way
    leaves nothing of itself behind; the next tick does it all again.  Each wake's record is
    under a savepoint of its own, so a wake another tick got to first (Conflict) is dropped
    alone.
  * **No lock while another process runs.**  Before an external command (an agent's
    delivery command, the screen command, the fresh command) what the tick holds is
    committed, and the command runs with no transaction open (it may write to this home
    itself); the records after it start a new transaction.  A wake is recorded *before*
    its delivery and its outcome after, so a delivered wake is counted against the caps
    even when delivery fails, and is never retried in a loop: its cursors have moved on.
  * Delivery is pluggable (``deliver=``) so scenario tests can stand in for an agent and
    land posts or takes while a wake "runs" (the accepted race), without subprocesses.
  * The tick is bounded in time: once ``seconds`` have passed no new wake starts, and the
    rest are left for the next tick (reported as ``deferred``).
"""

import json
import time

from mindos.comms import budget, decide, dials, posts
from mindos.comms.words import Words
from mindos.core import clock
from mindos.errors import Conflict
from mindos.store import guard
from mindos.store import db, ledger, sql

POST_WINDOW = 2000
DUPLICATE_SECONDS = 120
POLLER = "mood-poller"
SCREEN_AUTHOR = "screen"
TICK_SECONDS = 50.0
FRESH_TIMEOUT = 120

UNITS_SQL = """
SELECT m.id AS mood_id, m.slug, m.title, m.instructions_page, m.last_post_id, m.last_post_at,
       m.last_post_author, m.last_post_person, b.agent, b.joined_at,
       coalesce(s.seen_id, 0) AS seen_id, coalesce(s.mention_id, 0) AS mention_id,
       coalesce(s.considered_id, 0) AS considered_id, coalesce(s.held_id, 0) AS held_id,
       coalesce(s.arrival_id, 0) AS arrival_id, coalesce(s.quiet_post_id, 0) AS quiet_post_id,
       coalesce(s.quiet_looks, 0) AS quiet_looks, s.quiet_last_at, s.spoke_at, s.last_wake_at,
       (SELECT max(a.id) FROM mood_arrivals a WHERE a.mood_id = m.id) AS arrival_max,
       s.agent IS NOT NULL AS has_state
FROM mood_members b JOIN moods m ON m.id = b.mood_id
LEFT JOIN mood_agent_state s ON s.mood_id = b.mood_id AND s.agent = b.agent
ORDER BY m.id, b.agent
"""


POST_COLUMNS = "id, kind, author, is_agent, via, full_tools, body, created_at, reply_to, to_agent"


def asked(post, directory):
    """The agents a post asks: those it mentions, and the agent a handoff is addressed to."""
    names = posts.mentioned(post["body"], directory)
    if post.get("to_agent") and post["to_agent"] not in names:
        names.append(post["to_agent"])
    return names


class Snapshot:
    """Everything one tick decides from, read in a fixed number of queries."""

    def __init__(self, conn, now):
        self.now = now
        self.units = [dict(r) for r in conn.execute(UNITS_SQL)]
        self.dials = dials.Table(dials.load(conn))
        self.signals = {}
        for mood_id, who, kind in conn.execute("SELECT mood_id, who, kind FROM mood_signals WHERE until > ?", (now,)):
            self.signals.setdefault(mood_id, []).append((who, kind))
        self.wakes_hour, self.considers_hour = {}, {}
        for mood_id, agent, kind, count in conn.execute(
                "SELECT mood_id, agent, kind, count(*) FROM mood_wakes WHERE created_at > ?"
                " GROUP BY mood_id, agent, kind", (clock.shift(now, -3600),)):
            self.wakes_hour[(mood_id, agent)] = self.wakes_hour.get((mood_id, agent), 0) + count
            if kind in decide.CONSIDERATIONS:
                self.considers_hour[mood_id] = self.considers_hour.get(mood_id, 0) + count
        self.running = {(r[0], r[1]) for r in conn.execute(
            "SELECT mood_id, agent FROM mood_wakes WHERE outcome = 'running'")}
        self.spent = budget.spent_today(conn, now)
        from mindos.comms import agents  # lazy: the directory query lives with the agents

        self.directory = agents.directory(conn)
        self.agents = {r["name"]: dict(r) for r in conn.execute(
            "SELECT name, page, instructions, command FROM mood_agents")}
        self.roster = {}
        for unit in self.units:
            self.roster.setdefault(unit["mood_id"], []).append(unit["agent"])
        self._posts = {}
        self.turns = {}  # compose.recent's memo for this tick (turns and their lines)

    def unit_dials(self, unit):
        return {name: self.dials.get(name, unit["mood_id"], unit["agent"]) for name in dials.DIALS}

    def posts(self, conn, mood_id, after, *, fresh=False):
        """The Mood's posts after ``after`` (at most POST_WINDOW, newest kept), with mentions;
        ``fresh`` re-reads (posts may have landed while a wake ran)."""
        cached = self._posts.get(mood_id)
        if fresh or cached is None or cached[0] > after:
            rows = conn.execute(
                f"SELECT {POST_COLUMNS} FROM mood_posts"
                " WHERE mood_id = ? AND id > ? AND kind = 'post' ORDER BY id DESC LIMIT ?",
                (mood_id, after, POST_WINDOW)).fetchall()
            found = [dict(r) for r in reversed(rows)]
            for post in found:
                post["mentions"] = asked(post, self.directory)
            cached = (after, found)
            self._posts[mood_id] = cached
        return [p for p in cached[1] if p["id"] > after]

    def busy(self, mood_id, agent=None):
        """Who is typing or at work in the Mood (names), agents with a running wake included."""
        names = {who for who, _ in self.signals.get(mood_id, [])}
        names |= {a for (m, a) in self.running if m == mood_id}
        names.discard(agent)
        return sorted(names)

    def typing(self, mood_id, agent):
        return sorted(who for who, kind in self.signals.get(mood_id, []) if kind == "typing" and who != agent)

    def at_work(self, mood_id, agent):
        return (mood_id, agent) in self.running or any(
            who == agent and kind == "at-work" for who, kind in self.signals.get(mood_id, []))


def decide_unit(conn, snap, unit):
    """The decision for one unit (agent in Mood), reading its posts only when it has unread ones."""
    after = min(unit["mention_id"], unit["considered_id"], unit["seen_id"])
    said = snap.posts(conn, unit["mood_id"], after) if unit["last_post_id"] > after else []
    arrival = None
    if unit["arrival_max"] and unit["arrival_max"] > unit["arrival_id"]:
        row = conn.execute("SELECT id, who, via, created_at FROM mood_arrivals WHERE id = ?",
                           (unit["arrival_max"],)).fetchone()
        arrival = dict(row)
    values = snap.unit_dials(unit)
    result = decide.decide(unit, said, dials=values, now=snap.now, signals=snap.busy(unit["mood_id"], unit["agent"]),
                           wakes_last_hour=snap.wakes_hour.get((unit["mood_id"], unit["agent"]), 0),
                           considers_last_hour=snap.considers_hour.get(unit["mood_id"], 0), arrival=arrival)
    if result["action"] == "quiet" and not result["posts"]:
        row = conn.execute(f"SELECT {POST_COLUMNS} FROM mood_posts WHERE id = ?", (unit["last_post_id"],)).fetchone()
        if row is not None:
            post = dict(row)
            post["mentions"] = asked(post, snap.directory)
            result["posts"] = [post]
            result["tools"] = decide.tools_for([post], values["full_tools_for"], unit["agent"])
    result["dials"] = values
    return result


MAX_LISTED = 10


def announced(conn, mood_id, since):
    """The /announce posts made in other Moods after ``since`` (oldest first, at most MAX_LISTED)."""
    rows = conn.execute(
        "SELECT p.id, p.author, p.body, p.created_at, m.slug FROM mood_commands c"
        " JOIN mood_posts p ON p.id = c.post_id JOIN moods m ON m.id = c.mood_id"
        " WHERE c.kind = 'announce' AND c.created_at > ? AND c.mood_id <> ? ORDER BY c.created_at DESC, c.post_id DESC"
        " LIMIT ?", (since or "", mood_id, MAX_LISTED)).fetchall()
    return [dict(r) for r in reversed(rows)]


def reacted(conn, unit, since):
    """Reactions to the agent's posts in the Mood after ``since``: ``[(post id, [(reaction, who)])]``."""
    found = {}
    for post_id, reaction, who in conn.execute(
            "SELECT r.post_id, r.reaction, r.who FROM mood_reactions r JOIN mood_posts p ON p.id = r.post_id"
            " WHERE r.mood_id = ? AND r.created_at > ? AND p.author = ? ORDER BY r.post_id, r.id LIMIT ?",
            (unit["mood_id"], since or "", unit["agent"], MAX_LISTED * 5)):
        found.setdefault(post_id, []).append((reaction, who))
    return sorted(found.items())


def commands(conn, waking, agent):
    """The slash commands among the waking posts that ask ``agent``: ``{"incorporate": [...],
    "handoff": [...], "handed": [...]}`` (a handed entry is a handoff post with its source)."""
    out = {"incorporate": [], "handoff": [], "handed": []}
    if not waking:
        return out
    by_id = {p["id"]: p for p in waking}
    marks = ",".join("?" * len(by_id))
    recorded = {r["post_id"]: dict(r) for r in conn.execute(
        f"SELECT post_id, kind, target, about, source_post_id FROM mood_commands WHERE post_id IN ({marks})",
        list(by_id))}
    for post_id, post in by_id.items():
        command = recorded.get(post_id)
        if command and command["kind"] in ("incorporate", "handoff") and agent in post.get("mentions", []):
            out[command["kind"]].append(command)
        elif post["via"] == "handoff" and post["is_agent"] and decide.addressed(post, agent):
            out["handed"].append({"post": post, "from": command["target"] if command else ""})
    return out


def plan(conn, snap, unit, result, words, *, kind=None, posts_=None, took=None, tools=None, fresh_failed=False):
    """Compose a wake (nothing written): ``{"text", "bundle", "tokens", "usd", ...}``."""
    from mindos.comms import compose  # lazy: an idle tick composes nothing
    kind = kind or result["action"]
    waking = posts_ if posts_ is not None else result.get("posts", [])
    agent = snap.agents[unit["agent"]]
    mood = {"id": unit["mood_id"], "slug": unit["slug"], "title": unit["title"],
            "instructions_page": unit["instructions_page"], "last_post_author": unit["last_post_author"]}
    upto = conn.execute("SELECT last_post_id FROM moods WHERE id = ?", (unit["mood_id"],)).fetchone()[0]
    values = result["dials"]
    bundle = compose.build_bundle(conn, words, mood, agent, snap.roster.get(unit["mood_id"], []))
    turns, summary, lines = compose.recent(conn, unit["mood_id"], upto, values["catch_up_tokens"],
                                           [p["id"] for p in waking], memo=snap.turns)
    others = []
    for post in waking:
        for name in post.get("mentions", []):
            if name != agent["name"] and name not in [o[0] for o in others]:
                others.append((name, snap.at_work(unit["mood_id"], name)))
    taken = []
    if waking:
        marks = ",".join("?" * len(waking))
        taken = [(r[0], r[1]) for r in conn.execute(
            f"SELECT agent, words FROM mood_takes WHERE post_id IN ({marks}) AND agent <> ? ORDER BY created_at",
            (*[p["id"] for p in waking], agent["name"]))]
    last = conn.execute(
        "SELECT w.detail, p.id, p.author, p.body, p.created_at, w.loop_guard FROM mood_wakes w"
        " LEFT JOIN mood_posts p ON p.id = w.reply_post_id WHERE w.mood_id = ? AND w.agent = ?"
        " ORDER BY w.id DESC LIMIT 1", (unit["mood_id"], agent["name"])).fetchone()
    nearmiss = [dict(id=last[1], author=last[2], body=last[3], created_at=last[4])] \
        if last is not None and last[0] == "nearmiss" and last[1] is not None else []
    since = unit["last_wake_at"] or unit["joined_at"]
    w = {"mood": mood, "agent": agent, "kind": kind, "posts": waking, "nearmiss": nearmiss, "tools": tools or result.get("tools"),
         "first": not unit["last_wake_at"], "others": others, "taken": list(dict.fromkeys(taken)), "took": took,
         "typing": snap.typing(unit["mood_id"], agent["name"]), "turns": turns, "turn_lines": lines,
         "summary": summary,
         "settings_changed": snap.dials.changed_since(unit["mood_id"], agent["name"], unit["spoke_at"]),
         "dials": values, "arrival": result.get("arrival"), "block": ledger.height(conn), "bundle_id": bundle["id"],
         "after_loop": last[5] if last is not None and last[5] else None, "fresh_failed": fresh_failed,
         "announced": announced(conn, unit["mood_id"], since), "reacted": reacted(conn, unit, since)}
    w.update(commands(conn, waking, agent["name"]))
    text = compose.wake(conn, words, w)
    token_count = budget.tokens(text) + budget.tokens(bundle["body"])
    warm = budget.is_warm(unit["last_wake_at"], snap.now)
    return {"kind": kind, "text": text, "bundle": bundle, "tokens": token_count, "warm": warm,
            "usd": budget.estimate(token_count, warm), "upto": upto, "posts": waking, "tools": w["tools"],
            "block": w["block"], "why": result["why"], "handoffs": w["handoff"], "fresh_failed": fresh_failed}


def _assignments(values):
    """``(sets, params)`` for cursor values; ``max_`` prefixed names only ever move forward."""
    sets, params = [], []
    for name, value in values.items():
        if name.startswith("max_"):
            column = name[4:]
            sets.append(f"{column} = max({column}, ?)")
        else:
            sets.append(f"{name} = ?")
        params.append(value)
    return sets, params


def _ensure_state(conn, unit):
    conn.execute("INSERT INTO mood_agent_state(mood_id, agent) VALUES (?, ?) ON CONFLICT(mood_id, agent) DO NOTHING",
                 (unit["mood_id"], unit["agent"]))


def _set_state(conn, unit, **values):
    """Move the unit's cursors (inside the caller's write)."""
    _ensure_state(conn, unit)
    sets, params = _assignments(values)
    conn.execute(f"UPDATE mood_agent_state SET {', '.join(sets)} WHERE mood_id = ? AND agent = ?",
                 (*params, unit["mood_id"], unit["agent"]))


GUARDED = ("seen_id", "mention_id", "considered_id", "held_id", "arrival_id", "quiet_looks", "quiet_last_at")


def _claim_state(conn, unit, **values):
    """Move the unit's cursors only if no other tick moved them since the snapshot (the shared
    guarded write); raises Conflict otherwise, so overlapping ticks (cron running long, a loop
    beside cron) never deliver the same wake or say the same hold twice.

    The state row is made sure of first (its insert a no-op when it is there) -- except for a
    unit whose row the snapshot read: its guarded write goes first, and only if it misses is
    the row made sure of and the write tried again, so a row gone since the snapshot is
    treated exactly as before (one statement a wake less, the same outcome every time)."""
    read = unit.get("has_state")
    if not read:
        _ensure_state(conn, unit)
    sets, params = _assignments(values)
    match = {"mood_id": unit["mood_id"], "agent": unit["agent"], **{column: unit[column] for column in GUARDED}}
    if sql.compare_and_set(conn, "mood_agent_state", sets, params, match):
        return
    if read:
        _ensure_state(conn, unit)
        if sql.compare_and_set(conn, "mood_agent_state", sets, params, match):
            return
    raise Conflict(f"another tick acted for {unit['agent']} in {unit['slug']} first")


def record_wake(conn, unit, planned, *, cursors, also=None):
    """Record a wake about to be delivered (one transaction, with ``also(conn)`` if given: the
    screen call that let it through); return its id.  Raises Conflict when another tick got
    there first."""
    now = clock.now_iso()
    with db.write(conn):
        _claim_state(conn, unit, max_seen_id=planned["upto"], last_wake_at=now, **cursors)
        if also is not None:
            also(conn)
        bundle = planned["bundle"]
        conn.execute("INSERT OR IGNORE INTO mood_bundles(id, agent, mood_id, layers, body, created_at)"
                     " VALUES (?, ?, ?, ?, ?, ?)", (bundle["id"], unit["agent"], unit["mood_id"],
                                                    json.dumps(bundle["layers"], sort_keys=True), bundle["body"], now))
        post_ids = [p["id"] for p in planned["posts"]]
        wake_id = conn.execute(
            "INSERT INTO mood_wakes(mood_id, agent, kind, tools, why, post_ids, last_post_id, block, bundle_id, body,"
            " tokens, cost_usd, warm, outcome, created_at, fresh_failed)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
            (unit["mood_id"], unit["agent"], planned["kind"], planned["tools"], planned["why"], json.dumps(post_ids),
             planned["upto"], planned["block"], bundle["id"], planned["text"], planned["tokens"], planned["usd"],
             int(planned["warm"]), now, int(planned.get("fresh_failed", False)))).lastrowid
        budget.record(conn, planned["kind"], unit["mood_id"], unit["agent"], planned["usd"],
                      token_count=planned["tokens"], warm=planned["warm"], wake_id=wake_id)
        ledger.append_event(conn, "mood_wake", str(wake_id), "mood_wake",
                            {"mood": unit["slug"], "agent": unit["agent"], "kind": planned["kind"],
                             "tools": planned["tools"], "posts": post_ids, "bundle": bundle["id"],
                             "block": planned["block"], "tokens": planned["tokens"], "usd": planned["usd"],
                             "warm": planned["warm"], **({"fresh_failed": True} if planned.get("fresh_failed") else {})})
    return wake_id


def carry_handoff(conn, unit, wake_id, command, body, tools):
    """Carry a /handoff's answer into the Mood it names, inside the caller's write: a handoff
    post by the agent, addressed to itself there (no session: it wakes at once), sent with the
    tools of the turn that wrote it, recorded as ``handed`` with the Mood it came from."""
    from mindos.comms import moods  # lazy: handoffs only
    from mindos.errors import InvalidInput, NotFound  # lazy: handoffs only

    # by slug, or by the alias a rename left (the Mood may have been renamed since the /handoff)
    try:
        target = moods.resolve(conn, command["target"])
    except (NotFound, InvalidInput):
        return None
    post = posts.insert(conn, target["id"], unit["agent"], body, via="handoff", full_tools=tools == "full",
                        is_agent=True, wake_id=wake_id, to_agent=unit["agent"])
    posts.record_command(conn, target["id"], post, "handed", target=unit["slug"], about=command["about"],
                         source_post_id=command["post_id"])
    ledger.append_event(conn, "mood", command["target"], "mood_handoff",
                        {"from": unit["slug"], "agent": unit["agent"], "post": post["id"], "wake": wake_id,
                         "source_post": command["post_id"], "full_tools": tools == "full"})
    return post["id"]


def record_outcome(conn, unit, wake_id, result, tools, post_ids, *, state=None, handoffs=()):
    """Record what came back from a wake, and ``state`` cursor moves (one transaction);
    a reply to a /handoff is carried to the Mood it names in the same transaction.  Return
    the outcome summary."""
    now = clock.now_iso()
    outcome = result["outcome"]
    summary = {"outcome": outcome}
    payload = {"mood": unit["slug"], "agent": unit["agent"], "outcome": outcome,
               "seconds": result.get("seconds", 0)}
    detail = result.get("detail") or result.get("why") or result.get("to") or \
        ("nearmiss" if result.get("nearmiss") else "")
    with db.write(conn):
        reply_id = None
        if outcome == "replied":
            # an agent's stdout may echo a credential: posted redacted (the shared guard audits it)
            fields, guarded = guard.guard(conn, "mood_wake", str(wake_id), {"reply": result["text"]}, redact=True)
            body = fields["reply"]
            if guarded:
                payload["redacted"] = guarded["secret_kinds"]
            reply = posts.insert(conn, unit["mood_id"], unit["agent"], body, via="agent", full_tools=tools == "full",
                                 is_agent=True, wake_id=wake_id)
            reply_id = reply["id"]
            payload["post"] = reply_id
            if result.get("nearmiss"):
                payload["nearmiss"] = True
            _set_state(conn, unit, spoke_at=now, max_seen_id=reply_id)
            handed = [carry_handoff(conn, unit, wake_id, command, body, tools) for command in handoffs]
            if any(handed):
                payload["handed"] = [post_id for post_id in handed if post_id]
        if result.get("loop_guard"):
            payload["loop_guard"] = result["loop_guard"]
        if outcome == "took":
            for post_id in post_ids:
                conn.execute("INSERT OR IGNORE INTO mood_takes(post_id, agent, words, wake_id, created_at)"
                             " VALUES (?, ?, ?, ?, ?)", (post_id, unit["agent"], result["to"], wake_id, now))
            ledger.append_event(conn, "mood_wake", str(wake_id), "mood_take",
                                {"mood": unit["slug"], "agent": unit["agent"], "posts": post_ids, "to": result["to"]})
        if outcome in ("replied", "took") and post_ids:
            # the accepted race: a take by another agent that landed after this wake started
            started = conn.execute("SELECT created_at FROM mood_wakes WHERE id = ?", (wake_id,)).fetchone()[0]
            marks = ",".join("?" * len(post_ids))
            late = conn.execute(
                f"SELECT post_id, agent, created_at FROM mood_takes WHERE post_id IN ({marks}) AND agent <> ?"
                " AND created_at >= ? ORDER BY created_at", (*post_ids, unit["agent"], started)).fetchall()
            if late:
                payload["after_take"] = [{"post": r[0], "taker": r[1]} for r in late]
                payload["duplicate"] = any(clock.seconds_between(r[2], now) <= DUPLICATE_SECONDS for r in late)
        if state:
            _set_state(conn, unit, **state)
        conn.execute("UPDATE mood_wakes SET outcome = ?, detail = ?, reply_post_id = ?, finished_at = ?, loop_guard = ?"
                     " WHERE id = ?", (outcome, detail[:500], reply_id, now, result.get("loop_guard") or "", wake_id))
        ledger.append_event(conn, "mood_wake", str(wake_id), "mood_reply", payload)
    summary.update({k: payload[k] for k in ("post", "after_take", "duplicate", "nearmiss", "handed", "loop_guard")
                    if k in payload})
    if detail:
        summary["detail"] = detail[:200]
    return summary


def default_deliver(agent, text, env, timeout):
    """Run the agent's configured command (``undeliverable`` when it has none)."""
    from mindos.comms import delivery  # lazy: an idle tick runs no command
    argv = json.loads(agent["command"] or "[]")
    if not argv:
        return {"outcome": "undeliverable", "detail": "no delivery command configured", "seconds": 0.0}
    return delivery.run(argv, text, env=env, timeout=timeout)


class Tick:
    """One cycle.  ``run()`` returns the report; nothing here prints."""

    def __init__(self, conn, *, dry_run=False, deliver=None, words=None, seconds=TICK_SECONDS, only=None):
        self.conn = conn
        self.dry_run = dry_run
        self.deliver = deliver or default_deliver
        self.words = words or Words()
        self.seconds = seconds
        self.only = only
        self._screen_record = None
        self._fresh_runs = {}
        self._group = None  # the tick's open transaction (a store batch), if any
        self.commits = 0
        self.report = {"dry_run": dry_run, "wakes": [], "holds": [], "screens": [], "waiting": [], "raced": [],
                       "deferred": 0}

    def run(self):
        """Run the tick: everything it records between external commands is one transaction
        (opened at the first write); an error rolls back what that transaction held."""
        try:
            report = self._run()
            self._commit()
        except BaseException as exc:
            group, self._group = self._group, None
            if group is not None:
                group.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return report

    def _txn(self):
        """The tick's transaction, opened on first use (an idle tick takes no write lock)."""
        if self._group is None:
            group = db.batch(self.conn)
            group.__enter__()
            self._group = group
        return self._group

    def _commit(self):
        group, self._group = self._group, None
        if group is not None:
            group.__exit__(None, None, None)
            self.commits += 1

    def _outside(self, fn, *args, **kw):
        """Run an external command (an agent's, the screen's, the refresh): what the tick
        recorded so far commits first, so no write lock is held while another process runs
        (it may write to this home itself)."""
        self._commit()
        return fn(*args, **kw)

    def _external_delivery(self, agent):
        """Whether delivering to ``agent`` runs a command of its own (the default delivery
        with a command configured, or a stand-in that says so with ``external = True``)."""
        if self.deliver is default_deliver:
            return bool(json.loads(agent["command"] or "[]"))
        return bool(getattr(self.deliver, "external", False))

    def _run(self):
        started = time.monotonic()
        now = clock.now_iso()
        self.report["now"] = now
        self._abandon_stale(now)
        snap = Snapshot(self.conn, now)
        self.snap = snap
        self.report["moods"] = len({u["mood_id"] for u in snap.units})
        self.report["agents_in_moods"] = len(snap.units)
        advance = []
        for unit in snap.units:
            if self.only and (unit["slug"], unit["agent"]) != self.only:
                continue
            result = decide_unit(self.conn, snap, unit)
            action = result["action"]
            if action in ("none", "wait"):
                if action == "wait":
                    self.report["waiting"].append({"mood": unit["slug"], "agent": unit["agent"], "why": result["why"]})
                moved = {k: v for k, v in result.get("cursors", {}).items() if v > unit[k]}
                if moved:
                    advance.append((unit, moved))
                continue
            if time.monotonic() - started > self.seconds:
                self.report["deferred"] += 1
                continue
            self._act(unit, result)
        if advance and not self.dry_run:
            with db.write(self._txn().conn):
                for unit, moved in advance:
                    _set_state(self.conn, unit, **{f"max_{k}": v for k, v in moved.items()})
        self.report["budget"] = budget.summary(self.conn, now) if not self.dry_run else {
            "day": budget.day(now), "spent_usd": round(snap.spent, 6)}
        return self.report

    def _abandon_stale(self, now):
        """Wakes left ``running`` by a killed tick are closed as ``abandoned`` (never redelivered)."""
        if self.dry_run:
            return
        cutoff = clock.shift(now, -(3600 + 60))
        stale = [r[0] for r in self.conn.execute(
            "SELECT id FROM mood_wakes WHERE outcome = 'running' AND created_at < ?", (cutoff,))]
        if stale:
            with db.write(self._txn().conn):
                for wake_id in stale:
                    self.conn.execute("UPDATE mood_wakes SET outcome = 'abandoned', finished_at = ? WHERE id = ?",
                                      (now, wake_id))
                    ledger.append_event(self.conn, "mood_wake", str(wake_id), "mood_reply", {"outcome": "abandoned"})

    # --- actions ---------------------------------------------------------------------

    def _act(self, unit, result):
        action = result["action"]
        if action == "hold":
            self._hold(unit, result)
            return
        # composed first (nothing written) so the budget check knows the look's real cost and
        # no screen is paid for a look the budget could not afford anyway
        planned = plan(self.conn, self.snap, unit, result, self.words)
        if action in decide.UNASKED:
            screen_cost = budget.SCREEN_USD if result.get("screen") and self._screen_argv(unit) else 0.0
            if self.snap.spent + screen_cost + planned["usd"] > result["dials"]["daily_budget_usd"]:
                self.report["waiting"].append({"mood": unit["slug"], "agent": unit["agent"],
                                               "why": f"the daily budget (${result['dials']['daily_budget_usd']}) "
                                                      f"cannot cover this {action} look (${planned['usd']})"})
                return
        if result.get("screen") and not self._screen(unit, result):
            return
        # the read-only copies are brought up to date only for a wake that will happen (a look
        # the budget or the screen refused costs no refresh); a failed one is said in the wake
        stale = self._refresh(unit)
        if stale:
            planned = plan(self.conn, self.snap, unit, result, self.words, fresh_failed=True)
        cursors = self._cursors(unit, result, planned)
        wake = self._deliver(unit, planned, cursors)
        if wake is None or action != "mention":
            return
        if wake["outcome"] == "took":
            # the taker is woken again, at once, to answer what it took
            fresh = self._fresh(unit)
            follow = plan(self.conn, self.snap, fresh, result, self.words, took=wake["to"], fresh_failed=stale)
            wake = self._deliver(fresh, follow, {}) or wake
        if wake["outcome"] == "replied":  # crosstalk asks whether what landed bears on what it said
            self._crosstalk(unit, planned, result, stale)

    def _refresh(self, unit):
        """Run the Mood's ``fresh_command`` (once per tick per command, before the first wake
        that needs it, after its budget and screen checks); True when the read-only copies could not all be brought up to date."""
        argv = self.snap.dials.get("fresh_command", unit["mood_id"], unit["agent"])
        if not argv or self.dry_run:
            return False
        if argv not in self._fresh_runs:
            from mindos.comms import delivery  # lazy: an idle tick runs no command

            ran = self._outside(delivery.run, list(argv), "", timeout=FRESH_TIMEOUT)
            failed = ran["outcome"] in ("failed", "timeout")
            self._fresh_runs[argv] = failed
            entry = {"command": list(argv), "ok": not failed}
            if failed:
                entry["detail"] = ran.get("detail", "")
            self.report.setdefault("fresh", []).append(entry)
        return self._fresh_runs[argv]

    def _cursors(self, unit, result, planned):
        action = result["action"]
        ids = [p["id"] for p in planned["posts"]]
        if action == "mention":
            return {"max_mention_id": max(ids), "max_considered_id": max(ids)}
        if action == "consider":
            return {"max_considered_id": planned["upto"]}
        if action == "quiet":
            return {"quiet_post_id": unit["last_post_id"], "max_considered_id": unit["last_post_id"]}
        if action == "arrival":
            return {"max_arrival_id": result["arrival"]["id"]}
        return {}

    def _fresh(self, unit):
        row = self.conn.execute(UNITS_SQL.replace("ORDER BY m.id, b.agent",
                                                  "WHERE b.mood_id = ? AND b.agent = ?"),
                                (unit["mood_id"], unit["agent"])).fetchone()
        return dict(row)

    def _deliver(self, unit, planned, cursors):
        entry = {"mood": unit["slug"], "agent": unit["agent"], "kind": planned["kind"], "tools": planned["tools"],
                 "why": planned["why"], "posts": [p["id"] for p in planned["posts"]], "bundle": planned["bundle"]["id"],
                 "block": planned["block"], "tokens": planned["tokens"], "usd": planned["usd"]}
        if self.dry_run:
            entry["outcome"] = "composed"
            entry["text"] = planned["text"]
            self.report["wakes"].append(entry)
            return None
        if planned["kind"] in decide.UNASKED:
            self.snap.spent += planned["usd"]
            self.snap.considers_hour[unit["mood_id"]] = self.snap.considers_hour.get(unit["mood_id"], 0) + 1
        also, self._screen_record = self._screen_record, None
        try:
            # under a savepoint: a wake another tick got to first leaves the rest of the tick be
            wake_id = self._txn().run(lambda: record_wake(self.conn, unit, planned, cursors=cursors, also=also))
        except Conflict as exc:
            self._screen_record = also
            self._flush_screen()
            self.report["raced"].append({"mood": unit["slug"], "agent": unit["agent"], "why": str(exc)})
            return None
        key = (unit["mood_id"], unit["agent"])
        self.snap.wakes_hour[key] = self.snap.wakes_hour.get(key, 0) + 1
        self.snap.running.add(key)
        agent = self.snap.agents[unit["agent"]]
        env = {"MOOD_WAKE_TOOLS": planned["tools"], "MOOD_WAKE_ID": str(wake_id), "MOOD_WAKE_REASON": planned["kind"],
               "MOOD_SLUG": unit["slug"], "MOOD_AGENT": unit["agent"], "MOOD_BUNDLE": planned["bundle"]["id"]}
        timeout = self.snap.dials.get("wake_timeout", unit["mood_id"], unit["agent"])
        try:
            if self._external_delivery(agent):
                result = self._outside(self.deliver, agent, planned["text"], env, timeout)
            else:
                result = self.deliver(agent, planned["text"], env, timeout)
        except Exception as exc:  # a delivery hook that raises is a failed delivery, not a stopped tick
            result = {"outcome": "failed", "detail": f"delivery raised {exc.__class__.__name__}: {exc}"[:300]}
        self.snap.running.discard(key)
        state = {}
        if planned["kind"] == "quiet" and result["outcome"] != "replied":
            # a quiet look that came back silent (or failed): the next wait doubles
            state = {"quiet_looks": self._quiet_looks(unit) + 1, "quiet_last_at": clock.now_iso()}
        self._txn()
        summary = record_outcome(self.conn, unit, wake_id, result, planned["tools"], entry["posts"], state=state,
                                 handoffs=planned.get("handoffs", ()))
        if planned.get("fresh_failed"):
            entry["fresh_failed"] = True
        entry.update(summary)
        entry["id"] = wake_id
        self.report["wakes"].append(entry)
        return {"id": wake_id, "outcome": result["outcome"], "to": result.get("to")}

    def _quiet_looks(self, unit):
        return unit["quiet_looks"] if unit["quiet_post_id"] == unit["last_post_id"] else 0

    def _hold(self, unit, result):
        pending = result["posts"]
        entry = {"mood": unit["slug"], "agent": unit["agent"], "mentions": [p["id"] for p in pending]}
        if self.dry_run:
            entry["outcome"] = "would hold"
            self.report["holds"].append(entry)
            return
        text = self.words.text(self.conn, "Moods/Wake texts", "held", agent=unit["agent"], count=len(pending))
        with db.write(self._txn().conn):
            try:
                _claim_state(self.conn, unit, max_held_id=pending[-1]["id"])
            except Conflict as exc:
                self.report["raced"].append({"mood": unit["slug"], "agent": unit["agent"], "why": str(exc)})
                return
            post = posts.insert(self.conn, unit["mood_id"], POLLER, text, via="poller", kind="hold",
                                about_agent=unit["agent"])
            renewed = unit["held_id"] > 0
            ledger.append_event(self.conn, "mood", unit["slug"], "mood_hold",
                                {"agent": unit["agent"], "mentions": entry["mentions"], "post": post["id"],
                                 "renewed": renewed})
        entry.update({"post": post["id"], "renewed": renewed})
        self.report["holds"].append(entry)

    def _screen_argv(self, unit):
        return self.snap.dials.get("screen_command", unit["mood_id"], unit["agent"])

    def _screen(self, unit, result):
        """Run the screen before an unasked look; True when it passes."""
        from mindos.comms import screen  # lazy: an idle tick screens nothing
        argv = self._screen_argv(unit)
        cost = budget.SCREEN_USD if argv else 0.0
        entry = {"mood": unit["slug"], "agent": unit["agent"], "kind": result["action"]}
        if self.dry_run:
            verdict = screen.builtin(result["posts"]) if not argv else {"verdict": "pass", "by": "command (not run)"}
            entry.update(verdict)
            self.report["screens"].append(entry)
            return verdict["verdict"] == "pass"
        if self.snap.spent + cost > result["dials"]["daily_budget_usd"]:
            self.report["waiting"].append({"mood": unit["slug"], "agent": unit["agent"],
                                           "why": "the daily budget cannot cover the screen"})
            return False
        if argv:
            request = {"mood": unit["slug"], "agent": unit["agent"], "kind": result["action"],
                       "posts": [{"author": p["author"], "body": p["body"]} for p in result["posts"]]}
            verdict = self._outside(screen.run, argv, request)
        else:
            verdict = screen.builtin(result["posts"])
        self.snap.spent += cost
        entry.update(verdict)
        self.report["screens"].append(entry)
        payload = {"agent": unit["agent"], "kind": result["action"], "verdict": verdict["verdict"],
                   "by": verdict["by"], "usd": cost, "posts": [p["id"] for p in result["posts"]]}

        def record(conn):
            budget.record(conn, "screen", unit["mood_id"], unit["agent"], cost)
            ledger.append_event(conn, "mood", unit["slug"], "mood_screen", payload)

        if verdict["verdict"] == "pass":
            # recorded in the same transaction as the wake it lets through (one commit, not two)
            self._screen_record = record
            return True
        with db.write(self._txn().conn):
            text = self.words.text(self.conn, "Moods/Wake texts", "screened", agent=unit["agent"],
                                   kind=result["action"])
            mark = posts.insert(self.conn, unit["mood_id"], SCREEN_AUTHOR, text, via="poller", kind="quiet",
                                about_agent=unit["agent"])
            payload["mark"] = mark["id"]
            entry["mark"] = mark["id"]
            last = max([p["id"] for p in result["posts"]] or [unit["last_post_id"]])
            if result["action"] == "quiet":
                # a dismissed quiet look counts as a silent one: the wait still doubles
                _set_state(self.conn, unit, quiet_post_id=unit["last_post_id"],
                           quiet_looks=self._quiet_looks(unit) + 1, quiet_last_at=clock.now_iso())
            else:
                _set_state(self.conn, unit, max_considered_id=last)
            record(self.conn)
        return False

    def _flush_screen(self):
        """Record a passed screen call whose wake did not happen (the call was still made)."""
        record, self._screen_record = self._screen_record, None
        if record is not None:
            with db.write(self._txn().conn):
                record(self.conn)

    def _crosstalk(self, unit, planned, result, stale=False):
        """One follow-up look if anything landed while a mention's turn ran; never sets up another."""
        fresh = self._fresh(unit)
        landed = [p for p in self.snap.posts(self.conn, unit["mood_id"], planned["upto"], fresh=True)
                  if p["author"] != unit["agent"] and not decide.addressed(p, unit["agent"])]
        if not landed:
            return
        look = dict(result)
        look["why"] = "others spoke while the mention's turn ran (crosstalk, once)"
        tools = decide.tools_for(landed, result["dials"]["full_tools_for"], unit["agent"])
        follow = plan(self.conn, self.snap, fresh, look, self.words, kind="crosstalk", posts_=landed, tools=tools,
                      fresh_failed=stale)
        self._deliver(fresh, follow, {"max_considered_id": follow["upto"]})


def run(conn, *, dry_run=False, deliver=None, words=None, seconds=TICK_SECONDS):
    """Run one tick; return its report."""
    return Tick(conn, dry_run=dry_run, deliver=deliver, words=words, seconds=seconds).run()


def explain(conn, mood, agent):
    """What the next tick would do for one agent in one Mood, and why; nothing is written."""
    from mindos.comms import agents, moods  # lazy: name resolution only

    row = moods.resolve(conn, mood)
    name = agents.resolve(conn, agent)["name"]
    now = clock.now_iso()
    snap = Snapshot(conn, now)
    unit = next((u for u in snap.units if u["mood_id"] == row["id"] and u["agent"] == name), None)
    if unit is None:
        from mindos.errors import NotFound  # lazy: the refusal path only

        raise NotFound(f"{name} is not a member of {row['slug']}")
    result = decide_unit(conn, snap, unit)
    out = {"mood": row["slug"], "agent": name, "now": now, "action": result["action"], "why": result["why"],
           "posts": [p["id"] for p in result.get("posts", [])],
           "dials": snap.dials.resolved(row["id"], name),
           "cursors": {k: unit[k] for k in ("seen_id", "mention_id", "considered_id", "held_id", "arrival_id",
                                            "quiet_looks")},
           "wakes_last_hour": snap.wakes_hour.get((row["id"], name), 0),
           "considers_last_hour_in_mood": snap.considers_hour.get(row["id"], 0),
           "budget": {"day": budget.day(now), "spent_usd": round(snap.spent, 6)}}
    for key in ("tools", "screen", "due"):
        if key in result:
            out[key] = result[key]
    if result["action"] in ("mention", "consider", "quiet", "arrival"):
        planned = plan(conn, snap, unit, result, Words())
        out["wake"] = {"kind": planned["kind"], "tokens": planned["tokens"], "usd": planned["usd"],
                       "warm": planned["warm"], "bundle": planned["bundle"]["id"], "text": planned["text"]}
        if result["action"] in decide.UNASKED and snap.spent + planned["usd"] > result["dials"]["daily_budget_usd"]:
            out["action"] = "wait"
            out["why"] = f"the daily budget (${result['dials']['daily_budget_usd']}) cannot cover this look"
        elif result.get("screen"):
            from mindos.comms import screen  # lazy: only a look that a screen would judge

            out["screen_verdict_builtin"] = screen.builtin(result["posts"])["verdict"]
    return out
