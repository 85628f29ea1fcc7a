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
  * **The digest is over the canonical form.**  :func:`digest` hashes the ordered
    ``(name, keys)`` list as canonical JSON, optionally leaving sections out (a recall's
    ``core_digest`` leaves out the live handoff), so identical state gives an identical
    digest in any process.
"""

from mindos.core.canonical import canonical_json, sha256_hex


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
    plain class: a namedtuple costs every call about 0.5M instructions to create.)"""

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
    """Merge the ``(name, keys)`` list into one dict plus ``sections``: the names in order."""
    flat = {"sections": [name for name, _ in sections]}
    for _, keys in sections:
        flat.update(keys)
    return flat


def digest(sections, exclude=()):
    """SHA-256 over the canonical JSON of the ``(name, keys)`` list, leaving out ``exclude``."""
    kept = [[name, keys] for name, keys in sections if name not in exclude]
    return sha256_hex(canonical_json(kept))
