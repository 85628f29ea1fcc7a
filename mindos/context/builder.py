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
  * **The digest is over the canonical form.**  :func:`digest` hashes the ordered
    ``(name, keys)`` list as canonical JSON, optionally leaving sections out (a recall's
    ``core_digest`` leaves out the live handoff), so identical state gives an identical
    digest in any process.
"""

from mindos.core.canonical import canonical_json, sha256_hex

# The shape of packed entries.  1: every entry carried all of its row's keys; 2: compact
# entries (see :func:`compact`); 3: a lean envelope as well (see :func:`lean`: a section's
# zero counters, empty lists and null or false keys are left out, and so are a recall's lease
# fields that are null or false).  Bumped whenever the bytes of a pack change shape.
PACK_FORMAT = 3
# keys whose false or null value says something of its own (a receipt's ``hash_ok``: false
# is a broken seal, null no seal at all): never left out
_KEPT = frozenset({"hash_ok"})


# The default values a packed entry leaves out (absence means the default): a note's and a
# memory's kind and source (mindos.memory.notes / memories DEFAULT_KIND, DEFAULT_SOURCE) and
# a task's priority (mindos.work.tasks.create's default).
NOTE_DEFAULTS = {"kind": "fact", "source": "operator"}
MEMORY_DEFAULTS = {"kind": "fact", "source": "operator"}
TASK_DEFAULTS = {"priority": "P2"}
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
    defaults = defaults or {}
    return {key: value for key, value in entry.items()
            if key not in implied and (key in _KEPT or not _is_empty(value))
            and (key not in defaults or value != defaults[key])}


def _is_empty(value):
    # ``0`` and ``0.0`` say something (an epoch, a score); only false itself is empty
    return value is None or value is False or (not value and isinstance(value, (str, list, tuple, dict)))


def lean(keys):
    """A section's keys (what :func:`flatten` merges into a pack) without those that say
    nothing: a zero counter, an empty list, a null or false value (absence means exactly that:
    ``notes_dropped`` absent is 0, ``handoff`` absent is no live handoff packed).  Counts that
    are not zero, and every entry list that packed something, stay."""
    return {key: value for key, value in keys.items() if not (_is_empty(value) or (value == 0 and type(value) is int))}


def cost(item):
    """The characters one packed item charges against the budget."""
    return len(canonical_json(item))


class Budget:
    """First-fit accounting of packed characters."""

    def __init__(self, limit):
        self.limit = limit
        self.used = 0
        self.truncated = False

    def left(self):
        """Characters still free."""
        return self.limit - self.used

    def take(self, item, size=None):
        """Charge ``item`` if it fits; return whether it was packed.  ``size``: its
        :func:`cost`, when the caller already knows it."""
        size = cost(item) if size is None else size
        if size <= self.left():
            self.used += size
            return True
        self.truncated = True
        return False

    def take_all(self, items, sizes=None):
        """Offer ``items`` in order; return the ones that were packed.  ``sizes``: their
        costs, aligned with ``items``, when the caller already knows them."""
        if sizes is None:
            return [item for item in items if self.take(item)]
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


def digest(sections, exclude=()):
    """SHA-256 over the canonical JSON of the ``(name, keys)`` list, leaving out ``exclude``."""
    kept = [[name, keys] for name, keys in sections if name not in exclude]
    return sha256_hex(canonical_json(kept))
