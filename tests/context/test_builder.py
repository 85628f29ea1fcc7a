"""The pack builder: registered sections, one first-fit budget, digests over the canonical form."""

import pytest

from mindos.context import builder
from mindos.core.canonical import canonical_json


def _registry():
    registry = builder.Registry()
    registry.register("a", lambda state, budget: {"a": budget.take_all(state["a"])})
    registry.register("c", lambda state, budget: {"c": budget.take_all(state["c"])}, option="with_c")
    registry.register("b", lambda state, budget: {"b": budget.take_all(state["b"])}, before="c")
    return registry


def test_sections_run_in_registered_order_and_options_switch_them_on():
    registry = _registry()
    assert registry.names() == ["a", "b", "c"]
    state = {"a": ["x"], "b": ["y"], "c": ["z"]}
    without = registry.assemble(state, {"with_c": None}, 100)
    assert [name for name, _ in without["sections"]] == ["a", "b"]
    with_c = registry.assemble(state, {"with_c": 1}, 100)
    assert [name for name, _ in with_c["sections"]] == ["a", "b", "c"]
    # turning an option on adds its section and leaves the others byte-identical
    assert canonical_json(with_c["sections"][:2]) == canonical_json(without["sections"])


def test_a_section_name_is_registered_once():
    registry = _registry()
    with pytest.raises(ValueError):
        registry.register("a", lambda state, budget: {})


def test_budget_is_first_fit_and_never_exceeded():
    budget = builder.Budget(10)
    assert builder.cost("abcdef") == 8  # the canonical JSON text, quotes included
    assert budget.take("abcdef") is True and budget.used == 8
    assert budget.take("abc") is False and budget.truncated is True  # 5 > 2 left
    assert budget.take(1) is True and budget.used == 9
    assert budget.left() == 1


def test_digest_is_deterministic_and_can_leave_sections_out():
    sections = [("task", {"task": {"id": "t1"}}), ("handoff", {"handoff": {"id": 3}})]
    same = [("task", {"task": {"id": "t1"}}), ("handoff", {"handoff": {"id": 3}})]
    assert builder.digest(sections) == builder.digest(same)
    assert builder.digest(sections) != builder.digest([("task", {"task": {"id": "t2"}}), sections[1]])
    core = builder.digest(sections, exclude=("handoff",))
    assert core == builder.digest([sections[0]])
    assert core == builder.digest([sections[0], ("handoff", {"handoff": {"id": 4}})], exclude=("handoff",))


def test_flatten_names_sections_in_order():
    flat = builder.flatten([("x", {"x": 1, "x_total": 2}), ("y", {"y": []})])
    assert flat == {"sections": ["x", "y"], "x": 1, "x_total": 2}  # lean: the empty "y" is left out
