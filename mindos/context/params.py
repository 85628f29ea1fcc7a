"""The parameters of a context pack and a recall bundle: their bounds, their names, and the
one function that validates them.

A light module on purpose: commands that take these flags but may never build a bundle
(``next`` without ``--recall``, ``context`` without an opt-in section) validate them here
without loading the pack sections and the retrieval engine behind them.
"""

from mindos.core import validate
from mindos.errors import InvalidInput

DEFAULT_BUDGET = 4000
MAX_BUDGET = 10_000_000
MAX_RELATED = 100
RELATED_SCOPES = ("project", "global")
# the opt-in sections' count options, in pack order (:mod:`mindos.context.sections`)
SECTION_OPTIONS = ("related_handoffs", "dep_context", "related_sessions", "related_facts", "related_semantic")
PARAM_KEYS = ("budget", "related", "related_scope", "related_handoffs", "dep_context", "related_facts",
              "related_semantic", "rerank", "recency_half_life_hours", "pinned_boost", "related_sessions")
COUNT_FLAGS = {name: "--" + name.replace("_", "-") for name in ("related", *SECTION_OPTIONS)}


def checked_budget(value):
    """``--budget``: a character budget within (0, MAX_BUDGET]."""
    return validate.positive_int(value, "--budget", maximum=MAX_BUDGET)


def checked_count(key, value):
    """A related-item count (``related`` or a section option): None (off) or 0..MAX_RELATED."""
    return None if value is None else validate.positive_int(value, COUNT_FLAGS[key], minimum=0, maximum=MAX_RELATED)


def checked_scope(value):
    """``--related-scope``: one of RELATED_SCOPES."""
    if value not in RELATED_SCOPES:
        raise InvalidInput(f"invalid --related-scope: {validate.shown(value, 40)} (choose from project, global)")
    return value


def make_params(*, budget=None, related=None, related_scope=None, related_handoffs=None, dep_context=None,
                related_facts=None, related_semantic=None, rerank=False, recency_half_life_hours=None,
                pinned_boost=None, related_sessions=None):
    """The validated bundle parameters (every key of PARAM_KEYS; None = section off)."""
    params = {"budget": checked_budget(DEFAULT_BUDGET if budget is None else budget),
              "related_scope": checked_scope("project" if related_scope is None else related_scope)}
    counts = {"related": related, "related_handoffs": related_handoffs, "dep_context": dep_context,
              "related_facts": related_facts, "related_semantic": related_semantic,
              "related_sessions": related_sessions}
    for key, value in counts.items():
        params[key] = checked_count(key, value)
    if not isinstance(rerank, bool):
        raise InvalidInput("invalid --rerank: expected a flag")
    params["rerank"] = rerank
    if rerank or recency_half_life_hours is not None or pinned_boost is not None:
        from mindos.memory import rerank as hybrid  # lazy: the rerank bounds, only when a rerank option is given

        params["recency_half_life_hours"], params["pinned_boost"] = hybrid.options(
            recency_half_life_hours, pinned_boost, rerank=rerank)
    else:  # what the rerank's options give without one
        params["recency_half_life_hours"] = params["pinned_boost"] = None
    return params


def uses_extra_sections(params):
    """True when the pack needs more than the legacy ``context`` pack."""
    return params["rerank"] or any(params[option] is not None for option in SECTION_OPTIONS)
