"""The pack builder: one character budget, a registry of sections, a digest over the result.

Every pack MindOS hands an agent (``context`` today; recall, prime and the session-start
hooks as they arrive) is built here the same way:

  * **Sections are registered, not hard-wired.**  A :class:`Registry` holds sections in
    pack order; each declares its name, the builder that selects and orders its items, and
    the option that switches it on (``None``: always present).  A new section (related
    handoffs, dependency context, facts, memories, sessions) is one ``register`` call; a
    pack built without its option is byte-identical to one built before it existed.
  * **One budget, first fit, in pack order.**  Every packed item costs
    ``len(canonical_json(item))`` characters (:func:`cost`); :class:`Budget` charges items
    as sections offer them, drops one that does not fit (``truncated``) and lets a later,
    smaller item still fit.  ``used`` never exceeds the limit.
  * **Compact entries.**  A packed entry carries only the keys that say something
    (:func:`compact`): a key whose value is null, false, an empty string, list or object
    is left out, and so is a key the pack already implies (a task's own notes do not
    repeat its id).  Absence means exactly that value; the README documents the packed
    entry schema.  ``PACK_FORMAT`` names this shape in every pack (``pack_format``).
  * **A lean envelope.**  The keys a section adds beside its entries (counters, the
    ``handoff`` slot, flags) go into a pack only when they say something (:func:`lean`): a
    zero counter, an empty list, a null or false value is left out.  The pack's own keys
    (``task_id``, ``budget``, ``used_chars``, ``truncated``, ``sections``, ``pack_format``,
    digests) are always there.
  * **Entry lists are tables** (pack format 4).  A section that packs a list of entries
    (notes, dependencies, related rows, receipts, leases, ...) prints it as a table
    (:func:`encode`): its first row names the columns, once, and every other row is one
    entry's values in that order, ``null`` where the entry has no such key, trailing nulls
    left out.  Each kind of list has one documented column order (:data:`TABLES`), so a row
    costs the same whatever else is packed: the budget charges a list entry the characters of
    its row (:meth:`Table.cost`), the header row costs nothing (like the envelope's keys).
    In a row a note's or memory's ``created_at`` is the date (``YYYY-MM-DD``: the second
    says nothing to a reader of the pack) and a memory's ``engine`` is left out when it is
    the one engine MindOS ships (:data:`MEMORY_ENGINE`).  :func:`decode` turns a table back
    into the entries; a pack is built, sealed and audited as entries and encoded once, as it
    leaves the package (``context``, ``recall``, ``resume``, ``next --recall``, ``prime
    --format json``).
  * **What the pack shows is not repeated** (pack format 5).  A column whose value is the
    same in every row of a table is printed once, in the header, as ``{column: value}``
    (:func:`_hoist`; rows are still charged whole).  The printed envelope leaves out the
    default ``sections`` and ``budget``, the counters that are a table's row count, a
    recall bundle's never-leased ``lease`` and the bundle's own ``agent`` (:func:`_trim`); :func:`decode` reads them back (all but the
    agent, which the caller named).
  * **The digest is over the canonical form.**  :func:`digest` hashes the ordered
    ``(name, keys)`` list as canonical JSON (entry lists as the tables they print as),
    optionally leaving sections out (a recall's ``core_digest`` leaves out the live
    handoff), so identical state gives an identical digest in any process.
"""

from mindos.context.params import DEFAULT_BUDGET
from mindos.core.canonical import canonical_json, sha256_hex

# The shape of packed entries.  1: every entry carried all of its row's keys; 2: compact
# entries (see :func:`compact`); 3: a lean envelope as well (see :func:`lean`: a section's
# zero counters, empty lists and null or false keys are left out, and so are a recall's lease
# fields that are null or false); 4: entry lists as tables (see :func:`encode`), the task
# header without the id the pack names; 5: a column constant over a table hoisted into its
# header (see :func:`_hoist`), an envelope that does not repeat what the pack shows (see
# :func:`_trim`), a task's status ``queued`` left out.  Bumped whenever the bytes of a pack
# change shape.
PACK_FORMAT = 5
# keys whose false or null value says something of its own (a receipt's ``hash_ok``: false
# is a broken seal, null no seal at all): never left out
_KEPT = frozenset({"hash_ok"})


# The default values a packed entry leaves out (absence means the default): a note's and a
# memory's kind and source (mindos.memory.notes / memories DEFAULT_KIND, DEFAULT_SOURCE) and
# a task's priority and status (mindos.work.tasks.create's: a new task is queued, at P2; the
# status since pack format 5).
NOTE_DEFAULTS = {"kind": "fact", "source": "operator"}
MEMORY_DEFAULTS = {"kind": "fact", "source": "operator"}
TASK_DEFAULTS = {"priority": "P2", "status": "queued"}
# What a packed handoff of a task leaves out: the task (the pack or entry names it), ``live``
# (a pack carries only live handoffs) and ``payload_hash`` (the dedupe key of its payload,
# bookkeeping no agent acts on).
HANDOFF_IMPLIED = ("task_id", "live", "payload_hash")


def compact(entry, implied=(), defaults=None):
    """``entry`` (a dict) without the keys that say nothing: those whose value is null,
    false, or an empty string, list or object (absence means that value), those equal to
    their entry kind's default in ``defaults`` (absence means the default), and the keys
    named in ``implied`` (what the pack already says: the task of its own notes).  A new
    dict, keys in their original order; values are not walked (a receipt's payload is the
    agent's own data).  ``hash_ok`` always stays: its false and null differ."""
    defaults = defaults or _NO_DEFAULTS
    # :func:`_is_empty` written out (a call per key is most of what compacting costs): a
    # true value says something, and so does a false one that is neither null, false nor
    # an empty text or container (``0``, ``0.0``)
    return {key: value for key, value in entry.items()
            if (value or (value is not None and value is not False and not isinstance(value, _CONTAINERS))
                or key in _KEPT)
            and key not in implied and (key not in defaults or value != defaults[key])}


_NO_DEFAULTS = {}
_CONTAINERS = (str, list, tuple, dict)


def _is_empty(value):
    # ``0`` and ``0.0`` say something (an epoch, a score); only false itself is empty
    return value is None or value is False or (not value and isinstance(value, _CONTAINERS))


def lean(keys):
    """A section's keys (what :func:`flatten` merges into a pack) without those that say
    nothing: a zero counter, an empty list, a null or false value (absence means exactly that:
    ``notes_dropped`` absent is 0, ``handoff`` absent is no live handoff packed).  Counts that
    are not zero, and every entry list that packed something, stay."""
    return {key: value for key, value in keys.items() if not (_is_empty(value) or (value == 0 and type(value) is int))}


def cost(item):
    """The characters one packed item charges against the budget."""
    return len(canonical_json(item))


# The memory engine MindOS ships (mindos.memory.memories.ENGINE): a packed memory row leaves
# its engine tag out when it is this one (absent means memory-fts-v1).
MEMORY_ENGINE = "memory-fts-v1"


_NO_EXTRAS = {}  # what Table._values returns for an entry without keys outside its columns


class Table:
    """How one kind of entry list prints: ``columns`` in their documented order, the columns
    shown as a date (``dates``: the first 10 characters of a timestamp), the values a row
    leaves out (``implied``: column -> the value a null or missing one stands for: a memory's
    engine) and the columns whose absence reads as null rather than as absent (``kept``: a
    receipt's ``hash_ok``)."""

    __slots__ = ("columns", "index", "dates", "implied", "kept", "_special", "_width")

    def __init__(self, columns, dates=(), implied=None, kept=()):
        self.columns = tuple(columns)
        self.index = {name: position for position, name in enumerate(self.columns)}
        self.dates = frozenset(dates)
        self.implied = implied or {}
        self.kept = frozenset(kept)
        self._special = self.dates | frozenset(self.implied)  # the columns a value is changed in
        self._width = len(self.columns)

    def _values(self, entry):
        """``(values in column order, {extra key: value})`` of ``entry`` (the extras dict is
        shared and empty when there are none: read it, never change it)."""
        values = [None] * self._width
        extras = _NO_EXTRAS
        index, special = self.index, self._special
        for key, value in entry.items():
            position = index.get(key)
            if position is None:
                if extras is _NO_EXTRAS:
                    extras = {}
                extras[key] = value
            elif key not in special:
                values[position] = value
            elif key in self.dates:
                values[position] = value[:10] if type(value) is str else value
            elif value != self.implied[key]:
                values[position] = value
        return values, extras

    def row(self, entry):
        """``entry`` (a packed entry dict) as a row: its values in column order, null where it
        has none, trailing nulls left out.  Keys outside the documented columns (none today)
        follow them, sorted, so nothing an entry carries is lost."""
        values, extras = self._values(entry)
        if extras:
            return values + [extras[key] for key in sorted(extras)]
        while values and values[-1] is None:
            values.pop()
        return values

    def cost(self, entry):
        """The characters ``entry``'s row charges against the budget."""
        return len(canonical_json(self.row(entry)))

    def encode(self, entries):
        """``entries`` as a table: ``[header, row, ...]``; the header names the columns up to
        the longest row (then any extra keys, sorted, after every documented column).  A
        column whose value is the same in every row is hoisted (pack format 5): the header
        holds ``{column: value}`` in its place and the rows leave that position out, when
        that prints fewer characters (see :func:`_hoist`)."""
        extras = sorted({key for entry in entries for key in entry if key not in self.index})
        if extras:
            rows = []
            for entry in entries:
                values, own = self._values(entry)
                rows.append(values + [own.get(key) for key in extras])
            return _hoist(list(self.columns) + extras, rows)
        rows = [self.row(entry) for entry in entries]
        return _hoist(list(self.columns[:max(len(row) for row in rows)]), rows)

    def decode(self, table):
        """The entries of a table :meth:`encode` printed: the entries themselves, but for a
        date column, which stays a date (an implied value comes back, and so does a hoisted
        column's value on every row)."""
        header = table[0]
        names, hoisted = [], {}
        for column in header:
            if type(column) is dict:
                hoisted.update(column)
            else:
                names.append(column)
        entries = []
        for row in table[1:]:
            entry = {name: value for name, value in zip(names, row) if value is not None}
            entry.update(hoisted)
            for name in self.kept:
                entry.setdefault(name, None)
            for name, value in self.implied.items():
                entry.setdefault(name, value)
            entries.append(entry)
        return entries


def _hoist(header, rows):
    """``[header, *rows]`` with every column whose value is the same (and not null) in every
    row hoisted into the header as ``{column: value}``, when that is shorter: ``n`` rows of a
    value ``L`` characters long print ``n * (L + 1)`` characters for it, the hoisted form
    ``L + 3`` more in the header (``L`` counted without a string's escapes).  A row then leaves out the hoisted positions (and its
    trailing nulls).  Rows are still charged as if nothing were hoisted (:meth:`Table.cost`:
    a row costs the same whatever else is packed), so a printed pack is never longer than
    ``used_chars`` says of its entries."""
    count = len(rows)
    if count < 2:
        return [header, *rows]
    first, others, hoisted = rows[0], rows[1:], {}
    for position in range(min(map(len, rows))):
        value = first[position]
        kind = type(value)
        if value is None or kind is list or kind is dict:
            continue
        for row in others:  # most columns differ by the second row: a plain loop stops there
            other = row[position]
            if other != value or type(other) is not kind:
                break
        else:
            # its printed size, never more (a string's escapes would only lengthen it, which
            # makes hoisting it pay off all the more): no JSON encoder built per column
            size = len(value) + 2 if kind is str else (4 if value else 5) if kind is bool else len(repr(value))
            if count * (size + 1) > size + 3:
                hoisted[position] = value
    if not hoisted:
        return [header, *rows]
    printed = []
    for row in rows:
        kept = [value for position, value in enumerate(row) if position not in hoisted]
        while kept and kept[-1] is None:
            kept.pop()
        printed.append(kept)
    return [[{name: hoisted[position]} if position in hoisted else name for position, name in enumerate(header)],
            *printed]


_NOTE_TAIL = ("kind", "source", "created_at", "content", "pinned", "expired", "expires_at", "supersedes",
              "superseded_by", "superseded_at")
_FACT = ("id", "subject", "predicate", "object", "source", "task_id", "valid_from", "valid_until")
_MEMORY = ("id", "created_at", "content", "project", "kind", "source", "tags", "engine")
_SNIPPET = ("message_id", "source", "session_id", "seq", "role", "at", "snippet", "project", "profile",
            "snippet_truncated", "score")
_RECEIPT = ("receipt_id", "task_id", "kind", "created_at", "hash_ok", "file_hash", "payload")
# Every entry list a pack prints, by its key (the same key is the same kind of entry in every
# pack: recall's receipts and the first-turn ones, prime's facts and recall's related facts).
TABLES = {
    "notes": Table(("id",) + _NOTE_TAIL + ("task_id",), dates=("created_at",)),
    "related_notes": Table(("id", "task_id", "via_task_title") + _NOTE_TAIL[:4] + ("score", "rank_score")
                           + _NOTE_TAIL[4:], dates=("created_at",)),
    "dependencies": Table(("id", "status", "title")),
    "related_handoffs": Table(("id", "task_id", "via_task_title", "from_agent", "to_agent", "status", "objective",
                               "commit_ref")),
    "dep_context": Table(("id", "title", "recap", "handoff", "receipt")),
    "related_sessions": Table(_SNIPPET),
    "sessions": Table(_SNIPPET),
    "related_facts": Table(_FACT),
    "facts": Table(_FACT),
    "related_semantic": Table(_MEMORY, dates=("created_at",), implied={"engine": MEMORY_ENGINE}),
    "semantic": Table(_MEMORY, dates=("created_at",), implied={"engine": MEMORY_ENGINE}),
    "receipts": Table(_RECEIPT, kept=("hash_ok",)),
    "leases": Table(("task_id", "project", "title", "status", "lease_expires_at", "lease_epoch", "priority")),
    "inbox": Table(("task_id", "project", "title", "from_agent", "handoff_status", "objective", "created_at")),
    "constraints": Table(("note_id", "task_id", "project", "source", "created_at", "content"), dates=("created_at",)),
}
# the keys whose value is a nested pack (prime's held task, a resume's or next's recall)
_NESTED = ("held", "recall")
# The sections of a pack built without any opt-in section (mindos.context.pack.SECTIONS): a
# printed pack leaves its ``sections`` out when it is exactly this list.
DEFAULT_SECTIONS = ("task", "handoff", "dependencies", "notes")
# ... and those of ``prime --format json`` without first-turn sections (mindos.context.prime.SECTIONS):
# a prime pack (the one pack without a ``task_id``) leaves its ``sections`` out when it is this list.
PRIME_SECTIONS = ("leases", "inbox", "constraints", "next", "held")
# The counters a printed pack leaves out when they repeat its table's row count (none of
# them named by the spec: the related sections' ``*_packed`` stay): counter -> its table.
_ROW_COUNTS = {"notes_packed": "notes", "dependencies_packed": "dependencies", "dependencies_total": "dependencies",
               "leases_total": "leases", "constraints_total": "constraints", "inbox_total": "inbox"}
# a recall bundle's lease of a task never leased: what an absent ``lease`` stands for
_NO_LEASE = {"epoch": 0}


def encode(pack, known=None):
    """``pack`` (a flattened pack or bundle, or a command result holding one under ``recall``)
    as it is printed: every entry list of :data:`TABLES` as a table, nested packs too, and
    the envelope without the keys that repeat what the pack already shows (:func:`_trim`).
    A new dict; the entries are not changed.

    ``known`` (a dict, optional) keeps each top-level table as laid out, by key, with the
    very list it was laid out from: a later encode of a pack holding the same list object
    under that key reuses the table instead of laying it out again (a recall prints the
    tables its digest was taken over).  Only the list's identity is checked, so its entries
    must not change between the two encodes (a pack's never do once built)."""
    return _tables(pack, dict, "encode", known=known)


def decode(pack):
    """The inverse of :func:`encode`: ``pack`` with every table back as a list of entry dicts
    (a row's date stays a date; an implied engine tag and a hoisted column come back on
    every entry) and the envelope keys :func:`_trim` left out back at their values."""
    return _tables(pack, list, "decode")


def _tables(pack, row_type, way, nested=False, known=None):
    """``pack`` with each entry list whose rows are ``row_type`` turned by its table's
    ``way`` (``encode`` or ``decode``), nested packs too, and its envelope trimmed or
    restored (``known``: see :func:`encode`)."""
    turned = {}
    for key, value in pack.items():
        table = TABLES.get(key)
        if table is not None and type(value) is list and value and type(value[0]) is row_type:
            if known is None:
                turned[key] = getattr(table, way)(value)
                continue
            laid = known.get(key)
            if laid is None or laid[0] is not value:
                laid = known[key] = (value, getattr(table, way)(value))
            turned[key] = laid[1]
        elif key in _NESTED and type(value) is dict:
            turned[key] = _tables(value, row_type, way, True)
        else:
            turned[key] = value
    if way == "encode":
        return _trim(pack, turned)
    return _restore(turned, nested)


def _trim(pack, printed):
    """``printed`` (``pack`` with its tables) without the envelope keys that repeat what the
    pack shows (pack format 5): ``sections`` when it is :data:`DEFAULT_SECTIONS` (or, for a
    prime pack, :data:`PRIME_SECTIONS`); ``budget``
    when it is the default one; a counter of :data:`_ROW_COUNTS` equal to its table's row
    count, and ``notes_total_live`` when it is the packed, dropped and expired-excluded notes
    added up; a bundle's ``lease`` of a task never leased (``digest`` and ``core_digest`` are always
    printed, even when equal: the spec names both).  :func:`_restore` puts each back.  A printed recall bundle
    (one with ``recalled_at``) leaves out ``agent`` as well, the caller's own ``--agent``: it
    stays sealed (the digest is taken over the form without ``recalled_at``, which keeps it),
    but :func:`_restore` cannot name it."""
    sections = pack.get("sections")
    if sections is not None and tuple(sections) in (DEFAULT_SECTIONS, PRIME_SECTIONS):
        del printed["sections"]
    if "pack_format" in pack and pack.get("budget") == DEFAULT_BUDGET:
        del printed["budget"]
    for counter, table in _ROW_COUNTS.items():
        if pack.get(counter) and pack[counter] == len(pack.get(table) or ()):
            del printed[counter]
    if pack.get("notes_total_live") and pack["notes_total_live"] == (
            len(pack.get("notes") or ()) + pack.get("notes_dropped", 0) + pack.get("notes_expired_excluded", 0)):
        del printed["notes_total_live"]
    if pack.get("lease") == _NO_LEASE:
        del printed["lease"]
    if "recalled_at" in pack and "agent" in pack:  # a printed bundle: the agent is the caller's own --agent
        del printed["agent"]
    return printed


def _restore(pack, nested):
    """The inverse of :func:`_trim` on a decoded pack: the counters wherever their table is
    (a pack, or one section's keys); ``sections`` on a pack (top level: one that names its
    ``pack_format``; nested: prime's held task, a resume's or next's recall), ``budget`` on
    one that names its format, ``lease`` on a recall bundle."""
    if nested or "task_id" in pack and "pack_format" in pack:
        pack.setdefault("sections", list(DEFAULT_SECTIONS))
    elif "pack_format" in pack:  # a prime pack
        pack.setdefault("sections", list(PRIME_SECTIONS))
    if "pack_format" in pack:
        pack.setdefault("budget", DEFAULT_BUDGET)
    for counter, table in _ROW_COUNTS.items():
        if counter not in pack and pack.get(table):
            pack[counter] = len(pack[table])
    if "notes_total_live" not in pack:
        total = len(pack.get("notes") or ()) + pack.get("notes_dropped", 0) + pack.get("notes_expired_excluded", 0)
        if total:
            pack["notes_total_live"] = total
    if "recalled_at" in pack:
        pack.setdefault("lease", dict(_NO_LEASE))
    return pack


class Budget:
    """First-fit accounting of packed characters."""

    def __init__(self, limit):
        self.limit = limit
        self.used = 0
        self.truncated = False

    def left(self):
        """Characters still free."""
        return self.limit - self.used

    def take(self, item, size=None, table=None):
        """Charge ``item`` if it fits; return whether it was packed.  ``size``: its cost, when
        the caller already knows it; else :func:`cost`, or its row's (:meth:`Table.cost`) when
        it is an entry of ``table``."""
        if size is None:
            size = cost(item) if table is None else table.cost(item)
        if size <= self.left():
            self.used += size
            return True
        self.truncated = True
        return False

    def take_all(self, items, sizes=None, table=None):
        """Offer ``items`` in order; return the ones that were packed.  ``sizes``: their
        costs, aligned with ``items``, when the caller already knows them; ``table``: the
        list they are rows of (see :meth:`take`)."""
        if sizes is None:
            return [item for item in items if self.take(item, table=table)]
        return [item for item, size in zip(items, sizes) if self.take(item, size)]


class Section:
    """A registered section.  build(state, budget) -> dict of the keys the section adds to
    the pack; option: the option that switches the section on (None: always present).  (A
    plain class: a namedtuple is costly to create on every call.)"""

    __slots__ = ("name", "build", "option")

    def __init__(self, name, build, option):
        self.name, self.build, self.option = name, build, option


class Registry:
    """The sections of one kind of pack, in pack order."""

    def __init__(self):
        self._sections = []

    def register(self, name, build, *, option=None, before=None):
        """Add a section (at the end, or just before the section named ``before``); return ``build``."""
        if any(section.name == name for section in self._sections):
            raise ValueError(f"pack section {name!r} is registered twice")
        section = Section(name, build, option)
        if before is None:
            self._sections.append(section)
        else:
            index = [s.name for s in self._sections].index(before)
            self._sections.insert(index, section)
        return build

    def names(self):
        """Registered section names in pack order."""
        return [section.name for section in self._sections]

    def active(self, options):
        """The sections switched on by ``options`` (a dict; an option is on when not None)."""
        return [s for s in self._sections if s.option is None or options.get(s.option) is not None]

    def assemble(self, state, options, limit):
        """Run every active section against one budget of ``limit`` characters.

        Returns ``{"used_chars", "truncated", "sections": [(name, keys)]}`` in pack order.
        """
        meter = Budget(limit)
        sections = [(section.name, section.build(state, meter)) for section in self.active(options)]
        return {"used_chars": meter.used, "truncated": meter.truncated, "sections": sections}


def flatten(sections):
    """Merge the ``(name, keys)`` list into one dict plus ``sections``: the names in order.
    Each section's keys go in lean (:func:`lean`)."""
    flat = {"sections": [name for name, _ in sections]}
    for _, keys in sections:
        flat.update(lean(keys))
    return flat


def digest(sections, exclude=(), known=None):
    """SHA-256 over the canonical JSON of the ``(name, keys)`` list as printed (each section's
    keys through :func:`encode`), leaving out ``exclude``.  ``known``: see :func:`encode` (a
    pack printed after its digest reuses the tables laid out here)."""
    kept = [[name, encode(keys, known)] for name, keys in sections if name not in exclude]
    return sha256_hex(canonical_json(kept))
