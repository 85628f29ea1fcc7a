"""Agents the poller can wake: name, aliases, agent page, own instructions, delivery command.

The delivery command is stored as an argv list (JSON) and run without a shell, so nothing a
Mood says can become part of a command line.  A rename keeps the old name as an alias: a
mention of the name an agent once had still wakes it.
"""

import json
import shlex

from mindos.core import clock, validate
from mindos.errors import Conflict, InvalidInput, NotFound
from mindos.store import db, guard, ledger

MAX_INSTRUCTIONS = 65536
MAX_ALIASES = 32


def name(value, flag="agent"):
    """An agent name: 1-64 of [A-Za-z0-9._-], starting alphanumeric (what ``@name`` can spell)."""
    return validate.identifier(value, flag)


COMMAND_FORMAT = ('a JSON array of strings, e.g. ["python3", "/opt/screen.py"], or a command line split as a'
                  ' shell would split it; either way it runs without a shell')


def command_argv(value, flag="--command"):
    """Parse a command into an argv list ('' clears it): a JSON array of strings (the argv
    as is), or a command line split the way a shell splits words (no shell ever runs it).
    Text that starts with ``[`` or ``{`` is read as JSON only; what cannot be parsed is refused."""
    if value is None:
        return None
    # one line: shlex would split a newline into two arguments of the command run
    validate.line(value, flag, max_len=4096)
    if not value.strip():
        return []
    if value.lstrip().startswith(("[", "{")):
        try:
            argv = json.loads(value)
        except ValueError as exc:
            raise InvalidInput(f"invalid {flag}: not a JSON array ({exc.msg} at character {exc.pos});"
                               f" expected {COMMAND_FORMAT}") from None
        if not isinstance(argv, list):
            raise InvalidInput(f"invalid {flag}: JSON given, but not an array; expected {COMMAND_FORMAT}")
        if not argv or not all(isinstance(a, str) and a for a in argv):
            raise InvalidInput(f"invalid {flag}: the JSON array must hold one or more non-empty strings")
        if any("\x00" in a for a in argv):
            raise InvalidInput(f"invalid {flag}: an argument holds a NUL character")
        return argv
    try:
        argv = shlex.split(value)
    except ValueError as exc:
        raise InvalidInput(f"invalid {flag}: {exc}; expected {COMMAND_FORMAT}") from None
    return argv


def resolve(conn, who, flag="agent"):
    """The agent row named by name or alias; raises NotFound."""
    who = name(who, flag)
    row = conn.execute("SELECT * FROM mood_agents WHERE name = ?", (who,)).fetchone()
    if row is None:
        row = conn.execute("SELECT g.* FROM mood_agent_aliases a JOIN mood_agents g ON g.name = a.agent"
                           " WHERE a.alias = ?", (who,)).fetchone()
    if row is None:
        raise NotFound(f"no agent named {who!r}")
    return row


def _claimed(conn, who):
    row = conn.execute("SELECT name FROM mood_agents WHERE name = ? UNION ALL"
                       " SELECT agent FROM mood_agent_aliases WHERE alias = ?", (who, who)).fetchone()
    return row[0] if row else None


def create(conn, who, *, page="", instructions="", command="", aliases=()):
    """Register an agent; return it."""
    who = name(who)
    argv = command_argv(command) or []
    instructions = validate.text(instructions, "--instructions", max_len=MAX_INSTRUCTIONS)
    page = _page(page)
    aliases = sorted({name(a, "--alias") for a in aliases or ()} - {who})
    if len(aliases) > MAX_ALIASES:
        raise InvalidInput(f"invalid --alias: {len(aliases)} aliases is over the limit of {MAX_ALIASES}")
    now = clock.now_iso()
    with db.write(conn):
        guard.check(conn, "mood_agent", who, {"instructions": instructions, "page": page, "command": command or ""})
        for candidate in (who, *aliases):
            if _claimed(conn, candidate):
                raise Conflict(f"the agent name {candidate!r} is already taken")
        conn.execute("INSERT INTO mood_agents(name, page, instructions, command, created_at, updated_at)"
                     " VALUES (?, ?, ?, ?, ?, ?)", (who, page, instructions, json.dumps(argv), now, now))
        for alias in aliases:
            conn.execute("INSERT INTO mood_agent_aliases(alias, agent, created_at) VALUES (?, ?, ?)", (alias, who, now))
        ledger.append_event(conn, "mood_agent", who, "mood_agent_created",
                            {"aliases": aliases, "has_command": bool(argv)})
    return show(conn, who)


def _page(value):
    if not value:
        return ""
    from mindos.comms import pages  # lazy: validation of a page name only

    return pages.page_name(value, "--page")


def update(conn, who, *, page=None, instructions=None, command=None, add_aliases=(), new_name=None):
    """Change an agent; a rename keeps the old name as an alias.  Returns the agent."""
    row = resolve(conn, who)
    current = row["name"]
    changes = {}
    if page is not None:
        changes["page"] = _page(page)
    if instructions is not None:
        changes["instructions"] = validate.text(instructions, "--instructions", max_len=MAX_INSTRUCTIONS)
    if command is not None:
        changes["command"] = json.dumps(command_argv(command))
    add_aliases = sorted({name(a, "--alias") for a in add_aliases or ()})
    if new_name is not None:
        new_name = name(new_name, "--rename")
    if not changes and not add_aliases and (new_name is None or new_name == current):
        raise InvalidInput("nothing to change: pass --page, --instructions, --command, --alias or --rename")
    now = clock.now_iso()
    with db.write(conn):
        guard.check(conn, "mood_agent", current, {"instructions": changes.get("instructions", ""),
                                                  "page": changes.get("page", ""), "command": command or ""})
        for alias in add_aliases:
            owner = _claimed(conn, alias)
            if owner and owner != current:
                raise Conflict(f"the agent name {alias!r} is already taken")
            if alias != current:
                conn.execute("INSERT OR IGNORE INTO mood_agent_aliases(alias, agent, created_at) VALUES (?, ?, ?)",
                             (alias, current, now))
        if changes:
            sets = ", ".join(f"{column} = ?" for column in changes)
            conn.execute(f"UPDATE mood_agents SET {sets}, updated_at = ? WHERE name = ?",
                         (*changes.values(), now, current))
        if new_name is not None and new_name != current:
            owner = _claimed(conn, new_name)
            if owner and owner != current:
                raise Conflict(f"the agent name {new_name!r} is already taken")
            conn.execute("DELETE FROM mood_agent_aliases WHERE alias = ?", (new_name,))
            # ON UPDATE CASCADE carries members and aliases; the poller's own tables follow here
            conn.execute("UPDATE mood_agents SET name = ?, updated_at = ? WHERE name = ?", (new_name, now, current))
            conn.execute("INSERT INTO mood_agent_aliases(alias, agent, created_at) VALUES (?, ?, ?)",
                         (current, new_name, now))
            for table in ("mood_agent_state", "mood_wakes", "mood_settings", "mood_bundles"):
                conn.execute(f"UPDATE {table} SET agent = ? WHERE agent = ?", (new_name, current))
        ledger.append_event(conn, "mood_agent", new_name or current, "mood_agent_updated",
                            {"changed": sorted(changes), "aliases_added": add_aliases, "was": current})
    return show(conn, new_name or current)


def show(conn, who):
    """An agent with its aliases, Moods and command."""
    row = resolve(conn, who)
    aliases = [r[0] for r in conn.execute("SELECT alias FROM mood_agent_aliases WHERE agent = ? ORDER BY alias",
                                          (row["name"],))]
    moods = [r[0] for r in conn.execute("SELECT m.slug FROM mood_members b JOIN moods m ON m.id = b.mood_id"
                                        " WHERE b.agent = ? ORDER BY m.slug", (row["name"],))]
    return {"agent": row["name"], "aliases": aliases, "moods": moods, "page": row["page"],
            "instructions": row["instructions"], "command": json.loads(row["command"]),
            "created_at": row["created_at"], "updated_at": row["updated_at"]}


def listing(conn):
    """Every agent with its aliases and Moods (two queries)."""
    aliases = {}
    for alias, agent in conn.execute("SELECT alias, agent FROM mood_agent_aliases ORDER BY alias"):
        aliases.setdefault(agent, []).append(alias)
    return [{"agent": r[0], "aliases": aliases.get(r[0], []), "has_command": r[1] != "[]"}
            for r in conn.execute("SELECT name, command FROM mood_agents ORDER BY name")]


def directory(conn):
    """``{lowercase name or alias: agent name}`` for mention matching (one query)."""
    found = {}
    for row in conn.execute("SELECT name, name FROM mood_agents UNION ALL SELECT alias, agent FROM mood_agent_aliases"):
        found[row[0].lower()] = row[1]
    return found
