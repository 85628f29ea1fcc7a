"""Moods: the chat rooms people and agents share, their aliases and members.

A Mood is addressed by its slug.  A rename keeps the old slug as an alias for good, so a
command, a bookmark or a post that names the old slug still finds the Mood.  Members are the
agents the poller considers for the Mood's wakes.
"""

from mindos.core import clock, validate
from mindos.errors import Conflict, InvalidInput, NotFound
from mindos.store import db, guard, ledger

MAX_DESCRIPTION = 4000


def slug(value, flag="mood"):
    """A Mood slug: 1-64 of [A-Za-z0-9._-], starting alphanumeric."""
    return validate.identifier(value, flag)


def resolve(conn, name, flag="mood"):
    """The Mood row named by slug or by an alias it once had; raises NotFound."""
    name = slug(name, flag)
    row = conn.execute("SELECT * FROM moods WHERE slug = ?", (name,)).fetchone()
    if row is None:
        row = conn.execute("SELECT m.* FROM mood_aliases a JOIN moods m ON m.id = a.mood_id WHERE a.alias = ?",
                           (name,)).fetchone()
    if row is None:
        raise NotFound(f"no Mood named {name!r}")
    return row


def _taken(conn, name):
    return conn.execute("SELECT 1 FROM moods WHERE slug = ? UNION ALL SELECT 1 FROM mood_aliases WHERE alias = ?",
                        (name, name)).fetchone() is not None


def create(conn, name, *, title, description="", instructions_page=""):
    """Create a Mood; return it."""
    name = slug(name)
    title = validate.title(title)
    description = validate.text(description, "--description", max_len=MAX_DESCRIPTION)
    if instructions_page:
        from mindos.comms import pages  # lazy: only when a page is named

        pages.page_name(instructions_page, "--instructions-page")
    now = clock.now_iso()
    with db.write(conn):
        guard.check(conn, "mood", name, {"title": title, "description": description,
                                         "instructions_page": instructions_page})
        if _taken(conn, name):
            raise Conflict(f"a Mood named {name!r} already exists (or had that name)")
        mood_id = conn.execute(
            "INSERT INTO moods(slug, title, description, instructions_page, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?)", (name, title, description, instructions_page, now, now)).lastrowid
        ledger.append_event(conn, "mood", name, "mood_created", {"id": mood_id, "title": title})
    return show(conn, name)


def update(conn, name, *, title=None, description=None, instructions_page=None, new_slug=None):
    """Change a Mood's title, description, instructions page or slug (the old slug stays an alias)."""
    row = resolve(conn, name)
    changes = {}
    if title is not None:
        changes["title"] = validate.title(title)
    if description is not None:
        changes["description"] = validate.text(description, "--description", max_len=MAX_DESCRIPTION)
    if instructions_page is not None:
        if instructions_page:
            from mindos.comms import pages  # lazy: only when a page is named

            pages.page_name(instructions_page, "--instructions-page")
        changes["instructions_page"] = instructions_page
    if new_slug is not None:
        new_slug = slug(new_slug, "--rename")
        if new_slug != row["slug"]:
            changes["slug"] = new_slug
    if not changes:
        raise InvalidInput("nothing to change: pass --title, --description, --instructions-page or --rename")
    now = clock.now_iso()
    with db.write(conn):
        guard.check(conn, "mood", row["slug"], {key: changes[key] for key in ("title", "description",
                                                                              "instructions_page") if key in changes})
        if "slug" in changes:
            owner = conn.execute("SELECT mood_id FROM mood_aliases WHERE alias = ?", (changes["slug"],)).fetchone()
            if conn.execute("SELECT 1 FROM moods WHERE slug = ?", (changes["slug"],)).fetchone() or \
                    (owner and owner[0] != row["id"]):
                raise Conflict(f"a Mood named {changes['slug']!r} already exists (or had that name)")
            conn.execute("DELETE FROM mood_aliases WHERE alias = ?", (changes["slug"],))
            conn.execute("INSERT INTO mood_aliases(alias, mood_id, created_at) VALUES (?, ?, ?)",
                         (row["slug"], row["id"], now))
        sets = ", ".join(f"{column} = ?" for column in changes)
        conn.execute(f"UPDATE moods SET {sets}, updated_at = ? WHERE id = ?", (*changes.values(), now, row["id"]))
        ledger.append_event(conn, "mood", changes.get("slug", row["slug"]), "mood_updated",
                            {"changed": sorted(changes), "was": row["slug"]})
    return show(conn, changes.get("slug", row["slug"]))


def join(conn, name, agent_name):
    """Make an agent a member of a Mood; return the membership."""
    from mindos.comms import agents  # lazy: name resolution only; the join path is the only user

    row = resolve(conn, name)
    agent = agents.resolve(conn, agent_name)["name"]
    with db.write(conn):
        cursor = conn.execute("INSERT OR IGNORE INTO mood_members(mood_id, agent, joined_at) VALUES (?, ?, ?)",
                              (row["id"], agent, clock.now_iso()))
        if cursor.rowcount:
            # an agent that joins starts from now: the Mood's history is context, not a backlog
            conn.execute(
                "INSERT INTO mood_agent_state(mood_id, agent, seen_id, mention_id, considered_id, arrival_id)"
                " VALUES (?, ?, ?, ?, ?, (SELECT coalesce(max(id), 0) FROM mood_arrivals WHERE mood_id = ?))"
                " ON CONFLICT(mood_id, agent) DO NOTHING",
                (row["id"], agent, row["last_post_id"], row["last_post_id"], row["last_post_id"], row["id"]))
            ledger.append_event(conn, "mood", row["slug"], "mood_joined", {"agent": agent})
    return {"mood": row["slug"], "agent": agent, "member": True}


def leave(conn, name, agent_name):
    """Remove an agent from a Mood; return the membership."""
    from mindos.comms import agents  # lazy: see join

    row = resolve(conn, name)
    agent = agents.resolve(conn, agent_name)["name"]
    with db.write(conn):
        cursor = conn.execute("DELETE FROM mood_members WHERE mood_id = ? AND agent = ?", (row["id"], agent))
        if not cursor.rowcount:
            raise NotFound(f"{agent} is not a member of {row['slug']}")
        ledger.append_event(conn, "mood", row["slug"], "mood_left", {"agent": agent})
    return {"mood": row["slug"], "agent": agent, "member": False}


def show(conn, name):
    """A Mood with its aliases, members and post count."""
    row = resolve(conn, name)
    aliases = [r[0] for r in conn.execute("SELECT alias FROM mood_aliases WHERE mood_id = ? ORDER BY alias",
                                          (row["id"],))]
    members = [r[0] for r in conn.execute("SELECT agent FROM mood_members WHERE mood_id = ? ORDER BY agent",
                                          (row["id"],))]
    posts = conn.execute("SELECT count(*) FROM mood_posts WHERE mood_id = ? AND kind = 'post'",
                         (row["id"],)).fetchone()[0]
    return {"mood": row["slug"], "title": row["title"], "description": row["description"],
            "instructions_page": row["instructions_page"], "aliases": aliases, "members": members,
            "posts": posts, "last_post_at": row["last_post_at"], "created_at": row["created_at"]}


def listing(conn):
    """Every Mood, by slug, with member and post counts."""
    return [{"mood": r[0], "title": r[1], "members": r[2], "last_post_at": r[3]} for r in conn.execute(
        "SELECT m.slug, m.title, (SELECT count(*) FROM mood_members b WHERE b.mood_id = m.id), m.last_post_at"
        " FROM moods m ORDER BY m.slug")]
