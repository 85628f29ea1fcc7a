"""The dials: per-Mood and per-agent settings, with the spec's precedence.

A dial's value is looked up Mood+agent, then Mood, then agent, then global, then the
default below; the first scope that sets it wins.  ``daily_budget_usd`` is one shared budget,
so it is set globally only; ``max_considers_per_hour``, ``screen_command`` and
``fresh_command`` belong to a Mood (or every Mood), never to one agent.  A command dial is a
JSON array of strings (the argv as is) or a command line split as a shell would split it;
neither is ever run through a shell.  ``fresh_command`` brings the read-only copies of the
repositories up to date before a tick's first wake; when it fails, the wakes say so.

The tick reads every setting in one query (:func:`load`) and resolves in memory
(:class:`Table`), so the number of dials never multiplies the queries.
"""

from mindos.core import clock, validate
from mindos.errors import InvalidInput
from mindos.store import db, guard, ledger


def _choice(*options):
    def parse(text):
        if text not in options:
            raise InvalidInput(f"expected one of {', '.join(options)}")
        return text
    parse.options = options
    return parse


def _integer(low, high):
    def parse(text):
        if not validate.ascii_integer(text):  # int() would also take "٣", "+3", " 3" and "1_0"
            raise InvalidInput(f"expected an integer from {low} to {high} in ASCII digits")
        value = int(text)
        if not low <= value <= high:
            raise InvalidInput(f"expected an integer from {low} to {high}")
        return value
    return parse


def _dollars(text):
    if not validate.ascii_number(text):  # float() would also take "٣", "1e3", "nan" and "inf"
        raise InvalidInput("expected a dollar amount such as 2.50")
    value = float(text)
    if not 0 <= value <= 100000 or value != value:
        raise InvalidInput("expected a dollar amount from 0 to 100000")
    return round(value, 4)


def _names(text):
    names = [part.strip() for part in text.split(",") if part.strip()]
    for name in names:
        validate.agent(name, "full_tools_for")
    return tuple(sorted(set(names)))


def _command(text):
    from mindos.comms import agents  # lazy: the argv parser lives with the delivery commands

    try:
        return tuple(agents.command_argv(text, "command"))
    except InvalidInput as exc:
        raise InvalidInput(str(exc).removeprefix("invalid command: ")) from None


# name -> (parser, default text, scopes allowed: "mood+agent", "mood", "agent", "global")
ALL_SCOPES = ("mood+agent", "mood", "agent", "global")
DIALS = {
    "listening": (_choice("on", "mentions", "off"), "on", ALL_SCOPES),
    "discretion": (_choice("reserved", "normal", "chatty"), "normal", ALL_SCOPES),
    "verbosity": (_choice("terse", "normal", "verbose"), "normal", ALL_SCOPES),
    "grace": (_integer(0, 86400), "600", ALL_SCOPES),
    "max_wakes_per_hour": (_integer(0, 1000), "6", ALL_SCOPES),
    "consider_after": (_integer(0, 86400), "120", ALL_SCOPES),
    "idle_after": (_integer(60, 86400), "3600", ALL_SCOPES),
    "catch_up_tokens": (_integer(50, 200000), "2000", ALL_SCOPES),
    "full_tools_for": (_names, "", ALL_SCOPES),
    "wake_timeout": (_integer(1, 3600), "600", ALL_SCOPES),
    "max_considers_per_hour": (_integer(0, 1000), "4", ("mood", "global")),
    "screen_command": (_command, "", ("mood", "global")),
    "fresh_command": (_command, "", ("mood", "global")),
    "daily_budget_usd": (_dollars, "2.00", ("global",)),
}


def parse(name, text):
    """The typed value of dial ``name`` from its text; raises InvalidInput naming the dial."""
    if name not in DIALS:
        raise InvalidInput(f"unknown dial {validate.shown(name, 40)} (choose from {', '.join(sorted(DIALS))})")
    try:
        return DIALS[name][0](text)
    except InvalidInput as exc:
        raise InvalidInput(f"invalid value for {name}: {validate.shown(text, 60)} ({exc})") from None


def set_dial(conn, name, value, *, mood=None, agent=None, by="", note=""):
    """Set (``value`` None: clear) a dial at the scope given by ``mood`` / ``agent``; return it."""
    from mindos.comms import agents, moods  # lazy: name resolution only

    parse(name, value if value is not None else DIALS.get(name, (None, ""))[1])
    scope = "mood+agent" if mood and agent else "mood" if mood else "agent" if agent else "global"
    if scope not in DIALS[name][2]:
        raise InvalidInput(f"{name} cannot be set per {scope.replace('+', ' and ')} "
                           f"(it is set {' or '.join(DIALS[name][2])})")
    mood_row = moods.resolve(conn, mood) if mood else None
    agent_name = agents.resolve(conn, agent)["name"] if agent else ""
    by = validate.agent(by, "--by") if by else ""
    note = validate.line(note, "--note", max_len=500)
    mood_id = mood_row["id"] if mood_row else 0
    now = clock.now_iso()
    with db.write(conn):
        guard.check(conn, "mood_dial", name, {"note": note, "value": value or ""})
        if value is None:
            conn.execute("DELETE FROM mood_settings WHERE mood_id = ? AND agent = ? AND name = ?",
                         (mood_id, agent_name, name))
        else:
            conn.execute(
                "INSERT INTO mood_settings(mood_id, agent, name, value, set_by, note, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(mood_id, agent, name) DO UPDATE SET"
                " value = excluded.value, set_by = excluded.set_by, note = excluded.note,"
                " updated_at = excluded.updated_at",
                (mood_id, agent_name, name, value, by, note, now))
        ledger.append_event(conn, "mood_dial", name, "mood_dial_set" if value is not None else "mood_dial_cleared",
                            {"mood": mood_row["slug"] if mood_row else "", "agent": agent_name, "value": value,
                             "by": by})
    table = Table(load(conn))
    return {"dial": name, "scope": scope, "mood": mood_row["slug"] if mood_row else None,
            "agent": agent_name or None, "value": value,
            "effective": _shown(table.get(name, mood_id, agent_name))}


def _shown(value):
    return list(value) if isinstance(value, tuple) else value


def load(conn):
    """Every stored setting: ``{(mood_id, agent, name): row}`` (one query)."""
    return {(r["mood_id"], r["agent"], r["name"]): r for r in conn.execute(
        "SELECT mood_id, agent, name, value, set_by, note, updated_at FROM mood_settings")}


class Table:
    """Resolved dials over a loaded settings map (no queries)."""

    def __init__(self, rows):
        self.rows = rows
        self._parsed = {}  # (mood_id, agent, name) of the row that set it, or (None, None, name) -> value
        self._resolved = {}  # (name, mood_id, agent) asked -> value (a tick asks every dial of every unit)
        self._named = {key[2] for key in rows}  # the dials set at some scope (the rest: their defaults)

    def _row(self, name, mood_id, agent):
        for key in ((mood_id, agent, name), (mood_id, "", name), (0, agent, name), (0, "", name)):
            row = self.rows.get(key)
            if row is not None:
                return row, key
        return None, None

    def get(self, name, mood_id, agent=""):
        """The dial's typed value for this Mood and agent (stored values that no longer parse
        fall back to the default rather than stopping a tick).  The rows never change under a
        table, so each answer is worked out once and each stored value or default parsed once."""
        asked = (name, mood_id, agent)
        if asked in self._resolved:
            return self._resolved[asked]
        row, key = self._row(name, mood_id, agent) if name in self._named else (None, None)
        if key is None:
            key = (None, None, name)  # the default: no stored row has a None Mood id
        if key not in self._parsed:
            value = None
            if row is not None:
                try:
                    value = DIALS[name][0](row["value"])
                except (InvalidInput, KeyError):
                    value = None
            if value is None:
                value = DIALS[name][0](DIALS[name][1])
            self._parsed[key] = value
        value = self._parsed[key]
        self._resolved[asked] = value
        return value

    def source(self, name, mood_id, agent=""):
        """Which scope set the dial: ``mood+agent``, ``mood``, ``agent``, ``global`` or ``default``."""
        _, key = self._row(name, mood_id, agent)
        if key is None:
            return "default"
        return {(True, True): "mood+agent", (True, False): "mood", (False, True): "agent",
                (False, False): "global"}[(bool(key[0]), bool(key[1]))]

    def changed_since(self, mood_id, agent, moment):
        """Settings for this agent here changed after ``moment`` (None: it never spoke, nothing to
        report): ``[(name, value, by, note)]``."""
        found = []
        for (m, a, name), row in sorted(self.rows.items()):
            if m in (mood_id, 0) and a == agent and a and moment is not None and row["updated_at"] > moment:
                found.append((name, row["value"], row["set_by"], row["note"]))
        return found

    def resolved(self, mood_id, agent=""):
        """Every dial's value and source for a Mood and agent (``explain``)."""
        return {name: {"value": _shown(self.get(name, mood_id, agent)), "from": self.source(name, mood_id, agent)}
                for name in sorted(DIALS)}
