"""Composing the wake and the bundle.

The wake is the one message an agent is handed; every part of it is composed here, in the
spec's order, inside ``<mood-wake reason="...">``:

  why -> after-loop (the last turn was ended by the tool-loop guard) -> reorient (first wake)
  -> fresh-failed (the read-only repository copies are stale) -> the post(s) that woke it ->
  who else was asked (at work or not; taken / take-offer / took) -> who is typing -> the
  /announce posts of other Moods -> reactions to its posts -> its near-miss replies ->
  /incorporate and /handoff asks -> context handed over from another Mood -> the recent turns
  (word for word up to ``catch_up_tokens``, older ones summarized) -> settings changed -> the
  verbosity line (only when not normal) -> the ask (a consider wake's discretion sentence as
  the closing question; quiet, arrival, crosstalk asks) -> the tools line -> the
  block-and-bundle line.  The optional lines keep the order of the spec's words page.

Every fixed line comes from :class:`mindos.comms.words.Words`.  People's words appear only in
the recent turns, with ``& < >`` escaped so no post can close the ``<mood-wake>`` tag or
forge a control tag.  The summary of older turns is deterministic (counts, times, authors),
so the same Mood state always composes the same wake.

The bundle is the turn's instructions, rendered in the spec's layer order: greeting, agent
page, roster, standing orders (``GeneralOrders``), the agent's own instructions, the every-Mood
layer (``Moods/Instructions``), this Mood's instructions.  A layer that cannot be read is
noted and left out.  A bundle's id is the digest of its layers, so an unchanged bundle keeps
its id from turn to turn.
"""

import functools

from mindos.comms import budget
from mindos.comms.pages import DIALS, GENERAL_ORDERS, INSTRUCTIONS, WAKE_TEXTS
from mindos.core import canonical
from mindos.store import db

RECENT_WINDOW = 400
TURN_OVERHEAD = 6  # tokens of a turn's '#id HH:MMZ author:' prefix
MAX_SUMMARY_AUTHORS = 8
TURN_COLUMNS = "id, author, body, created_at"  # what a turn's line shows (each column read costs)


def escape(text):
    """A person's words, safe inside the wake frame."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def short_time(stamp):
    """``HH:MMZ`` of a stored timestamp."""
    return stamp[11:16] + "Z"


def turn_line(post, marked=False):
    """One recent turn: ``[* ]#id HH:MMZ author: words``."""
    return f"{'* ' if marked else ''}#{post['id']} {short_time(post['created_at'])} {post['author']}: " \
           f"{escape(post['body'])}"


def turn_lines(turns, waking_ids):
    """The recent turns' lines, oldest first, a waking post's marked (:func:`turn_line`)."""
    waking = set(waking_ids)
    return [turn_line(p, p["id"] in waking) for p in turns]


def recent(conn, mood_id, upto_id, catch_up_tokens, waking_ids, *, memo=None):
    """``(turns, summary, lines)``: :func:`recent_turns` and their :func:`turn_lines`.  With
    ``memo`` the lines are rendered once per question -- the same posts up to the same id,
    the same budget and the same waking posts, so the same marks -- and shared, never changed:
    a Mood's members woken on the same posts get the same lines without rendering them again."""
    turns, summary = recent_turns(conn, mood_id, upto_id, catch_up_tokens, waking_ids, memo=memo)
    if memo is None:
        return turns, summary, turn_lines(turns, waking_ids)
    key = ("lines", _memo_key(mood_id, upto_id, catch_up_tokens, waking_ids))
    if key not in memo:
        memo[key] = turn_lines(turns, waking_ids)
    return turns, summary, memo[key]


def _memo_key(mood_id, upto_id, catch_up_tokens, waking_ids):
    return mood_id, upto_id, catch_up_tokens, tuple(sorted(set(waking_ids)))


def recent_turns(conn, mood_id, upto_id, catch_up_tokens, waking_ids, *, memo=None):
    """``(turns oldest first, summary or None)``: posts up to ``upto_id`` kept word for word
    while they fit ``catch_up_tokens`` (the newest always does), plus any waking post, and a
    deterministic summary of the older ones (three queries at most).  A turn is the post's
    ``id``, ``author``, ``body`` and ``created_at``: what its line shows.  ``memo`` (a dict one
    tick keeps) answers a repeat of the same question -- the members of a Mood woken on the
    same posts -- without asking SQLite again; the turns are shared, never changed."""
    if memo is not None:
        key = _memo_key(mood_id, upto_id, catch_up_tokens, waking_ids)
        if key not in memo:
            memo[key] = recent_turns(conn, mood_id, upto_id, catch_up_tokens, waking_ids)
        turns, summary = memo[key]
        return list(turns), summary
    # newest first through the index, read lazily: the running token count (budget.tokens()
    # of each body plus the turn's prefix) only grows, so the turns that fit are a prefix and
    # the read stops at the first one that does not (the newest is always kept); plain tuples,
    # each kept one made a dict once
    rows, used, ended = [], 0, True
    cursor = db.tuples(conn).execute(
        f"SELECT {TURN_COLUMNS} FROM mood_posts WHERE mood_id = ? AND kind = 'post' AND id <= ?"
        " ORDER BY id DESC LIMIT ?", (mood_id, upto_id, RECENT_WINDOW))
    try:
        for row in cursor:
            used += budget.tokens(row[2]) + TURN_OVERHEAD
            if rows and used > catch_up_tokens:
                ended = False
                break
            rows.append(row)
    finally:
        cursor.close()
    rows.reverse()  # oldest first
    kept = [{"id": r[0], "author": r[1], "body": r[2], "created_at": r[3]} for r in rows]
    oldest = kept[0]["id"] if kept else upto_id + 1
    missing = sorted(set(waking_ids) - {p["id"] for p in kept})
    if missing:
        marks = ",".join("?" * len(missing))
        kept += [dict(r) for r in conn.execute(f"SELECT {TURN_COLUMNS} FROM mood_posts WHERE id IN ({marks})",
                                               missing)]
        kept.sort(key=lambda p: p["id"])
    summary = None
    if ended and len(rows) < RECENT_WINDOW:
        counts = []  # the read ran out of posts before the window did: there is nothing older
    elif missing:
        counts = conn.execute(
            "SELECT author, count(*), min(created_at), max(created_at) FROM mood_posts"
            " WHERE mood_id = ? AND kind = 'post' AND id < ? AND id NOT IN (SELECT value FROM json_each(?))"
            " GROUP BY author", (mood_id, oldest, canonical.canonical_json(missing))).fetchall()
    else:
        counts = conn.execute(
            "SELECT author, count(*), min(created_at), max(created_at) FROM mood_posts"
            " WHERE mood_id = ? AND kind = 'post' AND id < ? GROUP BY author", (mood_id, oldest)).fetchall()
    if counts:
        total = sum(r[1] for r in counts)
        ranked = sorted(counts, key=lambda r: (-r[1], r[0]))[:MAX_SUMMARY_AUTHORS]
        summary = {"count": total, "first": min(r[2] for r in counts), "last": max(r[3] for r in counts),
                   "who": ", ".join(f"{r[0]} ({r[1]})" for r in ranked)}
    return kept, summary


def build_bundle(conn, words, mood, agent, roster):
    """``{"id", "layers", "body"}``: the turn's instruction layers in the spec's order."""
    slug = mood["slug"]
    fill = {"agent": agent["name"], "mood": slug, "title": mood["title"]}
    layers = [("greeting", words.text(conn, WAKE_TEXTS, "greeting", **fill), "Moods/Wake texts")]

    def page_layer(label, page):
        found = words.layer(conn, page) if page else None
        if found is None:
            layers.append((label, words.text(conn, WAKE_TEXTS, "layer-missing", layer=page or label), None))
        else:
            layers.append((label, found[1], f"{page}@{found[0]}"))

    page_layer("agent page", agent["page"] or f"Agents/{agent['name']}")
    others = [name for name in roster if name != agent["name"]]
    layers.append(("roster", words.text(conn, WAKE_TEXTS, "roster", names=", ".join(others)) if others
                   else words.text(conn, WAKE_TEXTS, "roster-alone"), "members"))
    page_layer("standing orders", GENERAL_ORDERS)
    if agent["instructions"].strip():
        layers.append(("own instructions", agent["instructions"], "agent"))
    else:
        layers.append(("own instructions",
                       words.text(conn, WAKE_TEXTS, "layer-missing", layer=f"{agent['name']}'s own instructions"),
                       None))
    page_layer("moods layer", INSTRUCTIONS)
    page_layer("mood instructions", mood["instructions_page"] or f"Moods/{slug}")
    record = [{"layer": label, "source": source, "present": source is not None} for label, _, source in layers]
    body = "\n\n".join(text for _, text, _ in layers)
    bundle_id = "b" + canonical.digest({"layers": record, "body": body})[:16]
    return {"id": bundle_id, "layers": record, "body": body}


def wake(conn, words, w):
    """The full wake text for a decided wake ``w`` (a dict the tick fills; see ``tick``)."""
    mood, agent, kind = w["mood"], w["agent"], w["kind"]
    slug = mood["slug"]

    text = functools.partial(words.text, conn, WAKE_TEXTS)  # text(key, **fields): a wake text, filled

    posts = w["posts"]
    authors = ", ".join(dict.fromkeys(p["author"] for p in posts))
    lines = []
    if kind == "mention" and posts and len(w.get("handed") or []) == len(posts):
        lines.append(text("why-handed", who=authors, mood=slug))
    elif kind == "mention":
        lines.append(text("why-mention", who=authors, mood=slug))
    elif kind == "consider":
        lines.append(text("why-consider", mood=slug))
    elif kind == "quiet":
        lines.append(text("why-quiet", mood=slug, who=authors or mood["last_post_author"]))
    elif kind == "arrival":
        lines.append(text("why-arrival", mood=slug, who=w["arrival"]["who"]))
    else:
        lines.append(text("why-crosstalk", mood=slug))
    if w.get("after_loop"):
        lines.append(text("after-loop", why=escape(w["after_loop"])))
    if w.get("first"):
        lines.append(text("reorient", mood=slug, bundle=w["bundle_id"]))
    if w.get("fresh_failed"):
        lines.append(text("fresh-failed"))
    if posts:
        refs = ", ".join(f"#{p['id']} ({p['author']}, {short_time(p['created_at'])})" for p in posts)
        lines.append(text("woke", posts=refs))
    if w.get("took") is not None:
        lines.append(text("took", to=w["took"]))
    others = w.get("others") or []
    if others:
        said = ", ".join(text("asked-at-work" if busy else "asked-idle", agent=name) for name, busy in others)
        also = text("wait-all", all=", ".join(name for name, _ in others)) if len(others) > 1 else ""
        wait = text("wait-offer", first=others[0][0], agent=agent["name"], also=also)
        lines.append(text("others-asked", said=said, wait=wait))
        taken = w.get("taken") or []
        if taken:
            for who, words_to in taken:
                lines.append(text("taken", who=who, to=words_to))
        elif w.get("took") is None:
            lines.append(text("take-offer"))
    typing = w.get("typing") or []
    if typing:
        lines.append(text("typing", said=", ".join(typing), first=typing[0]))
    if w.get("announced"):
        lines.append(text("announced"))
        lines += [f"[{p['slug']}] {turn_line(p)}" for p in w["announced"]]
    if w.get("reacted"):
        lines.append(text("reacted"))
        lines += [f"#{post_id}: " + ", ".join(f"{escape(reaction)} {who}" for reaction, who in found)
                  for post_id, found in w["reacted"]]
    if w.get("nearmiss"):
        lines.append(text("nearmiss"))
        lines += [turn_line(p) for p in w["nearmiss"]]
    for command in w.get("incorporate") or []:
        lines.append(text("incorporate", thread=command["target"]))
    for command in w.get("handoff") or []:
        lines.append(text("handoff", to=command["target"], about=escape(command["about"])))
    if w.get("handed"):
        lines.append(text("handed"))
        lines += [(f"[{item['from']}] " if item["from"] else "") + turn_line(item["post"]) for item in w["handed"]]
    lines.append("")
    lines.append(text("recent", mood=slug))
    if w.get("summary"):
        lines.append(text("earlier", **w["summary"]))
    # the tick hands over the lines it rendered once for every member woken on the same posts
    found = w.get("turn_lines")
    lines += found if found is not None else turn_lines(w["turns"], [p["id"] for p in posts])
    lines.append("")
    for name, value, by, note in w.get("settings_changed") or []:
        lines.append(text("settings-changed", said=f"{name}={value}", who=f" by {by}" if by else "", why=note))
    dials = w["dials"]
    if dials["verbosity"] != "normal":
        lines.append(words.text(conn, DIALS, f"verbosity-{dials['verbosity']}"))
    if kind == "consider":
        lines.append(words.text(conn, DIALS, f"discretion-{dials['discretion']}"))
    elif kind in ("quiet", "crosstalk"):
        lines.append(text(kind))
    elif kind == "arrival":
        lines.append(text("arrival", who=w["arrival"]["who"]))
    if w["tools"] == "full":
        lines.append(text("full-tools") + " " + text("full-tools-offer"))
    else:
        lines.append(text("look-only") + " " + text("tools-offer"))
    lines.append(text("block-bundle", block=w["block"], bundle=w["bundle_id"]))
    body = "\n".join(lines).strip("\n")
    from mindos.core.text import inert  # lazy: composing a wake only

    # what posts hold reaches the agent (and the wake's record) as visible escapes (inert maps
    # character by character and keeps newlines, so the body is made inert whole)
    body = inert(body, multiline=True)
    return f'<mood-wake reason="{kind}">\n{body}\n</mood-wake>\n'
