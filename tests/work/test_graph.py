"""The dependency graph: dep / dep-remove, blocked-by, impact, critical-path, plan, metrics."""

import json
import random

import pytest

from conftest import script
from mindos.core import clock
from mindos.store import db
from mindos.views import metrics
from mindos.work import graph, tasks
from mindos.errors import InvalidInput, NotFound, Refused

TERMINAL = ("completed", "cancelled", "failed")


# ---------------------------------------------------------------------------------------
# helpers


def mk(conn, task_id, *, deps=(), project="P", priority="P2", tags=(), due_at=None, status=None):
    task = tasks.create(conn, project=project, title=f"title {task_id}", task_id=task_id, depends_on=deps,
                        priority=priority, tags=tags, due_at=due_at)
    if status:
        tasks.update(conn, task_id, status=status)
    return task


def bulk(conn, rows, edges):
    """Insert tasks (id, project, status, priority, tags, due_at, created_at) and edges in one go."""
    with db.write(conn):
        conn.executemany(
            "INSERT INTO tasks(id, project, title, status, priority, tags, due_at, created_at, updated_at)"
            " VALUES (?, ?, 'title ' || ?, ?, ?, ?, ?, ?, ?)",
            [(i, p, i, s, pr, json.dumps(sorted(tg)), due, created, created) for i, p, s, pr, tg, due, created in rows],
        )
        conn.executemany("INSERT INTO dependencies(task_id, depends_on, created_at) VALUES (?, ?, ?)",
                         [(a, b, clock.now_iso()) for a, b in edges])


def chain_rows(n, status="queued", project="P"):
    now = clock.now_iso()
    return [(f"c{i:04d}", project, status, "P2", (), None, now) for i in range(n)]


def snapshot(conn):
    """Everything a refusal must leave alone."""
    return (
        [tuple(r) for r in conn.execute("SELECT task_id, depends_on, created_at FROM dependencies ORDER BY 1, 2")],
        [tuple(r) for r in conn.execute("SELECT id, action, hash FROM audit_events ORDER BY id")],
        [tuple(r) for r in conn.execute("SELECT id, status, updated_at FROM tasks ORDER BY id")],
    )


def events(conn, action):
    return [(r["entity_id"], json.loads(r["payload_json"]))
            for r in conn.execute("SELECT entity_id, payload_json FROM audit_events WHERE action = ? ORDER BY id",
                                  (action,))]


# ---------------------------------------------------------------------------------------
# dep / dep-remove


def test_dep_adds_edge_audits_and_reports_blockers(conn):
    mk(conn, "a")
    mk(conn, "b")
    result = graph.add_dependency(conn, "b", "a")
    assert result == {"task_id": "b", "depends_on": "a", "added": True, "already_present": False, "missing": [],
                      "missing_dependencies": [], "blockers": [{"id": "a", "status": "queued"}]}
    assert events(conn, "dependency_added") == [("b", {"depends_on": "a"})]
    assert graph.blockers(conn, "b") == [{"id": "a", "status": "queued"}]


def test_dep_readd_is_idempotent_and_says_so(conn):
    mk(conn, "a")
    mk(conn, "b", deps=["a"])
    before = snapshot(conn)
    result = graph.add_dependency(conn, "b", "a")
    assert result["added"] is False and result["already_present"] is True
    assert snapshot(conn) == before  # no second edge, no event
    assert events(conn, "dependency_added") == []


def test_dep_accepts_missing_prerequisite_and_reports_it(conn):
    mk(conn, "a")
    result = graph.add_dependency(conn, "a", "ghost")
    assert result["added"] is True and result["missing"] == ["ghost"]
    assert result["blockers"] == [{"id": "ghost", "status": "missing"}]
    assert events(conn, "dependency_added") == [("a", {"depends_on": "ghost", "missing": True})]
    # the prerequisite appearing later satisfies nothing until it completes
    mk(conn, "ghost")
    assert graph.blockers(conn, "a") == [{"id": "ghost", "status": "queued"}]


def test_dep_refuses_self_edge(conn):
    mk(conn, "a")
    before = snapshot(conn)
    with pytest.raises(Refused, match=r"^dependency cycle: a -> a "):
        graph.add_dependency(conn, "a", "a")
    assert snapshot(conn) == before


def test_dep_refuses_two_node_cycle_naming_it(conn):
    mk(conn, "a")
    mk(conn, "b", deps=["a"])
    before = snapshot(conn)
    with pytest.raises(Refused) as info:
        graph.add_dependency(conn, "a", "b")
    assert str(info.value) == "dependency cycle: a -> b -> a"
    assert snapshot(conn) == before


def test_dep_refuses_three_node_cycle_naming_it(conn):
    mk(conn, "a")
    mk(conn, "b", deps=["a"])
    mk(conn, "c", deps=["b"])
    before = snapshot(conn)
    with pytest.raises(Refused) as info:
        graph.add_dependency(conn, "a", "c")
    assert str(info.value) == "dependency cycle: a -> c -> b -> a"
    assert snapshot(conn) == before


def test_cycle_name_is_the_shortest_path_smallest_ids_first(conn):
    # d -> {c, b} -> a, and d -> x -> y -> a: adding a -> d names a -> d -> b -> a
    mk(conn, "a")
    mk(conn, "b", deps=["a"])
    mk(conn, "c", deps=["a"])
    mk(conn, "y", deps=["a"])
    mk(conn, "x", deps=["y"])
    mk(conn, "d", deps=["x", "c", "b"])
    with pytest.raises(Refused) as info:
        graph.add_dependency(conn, "a", "d")
    assert str(info.value) == "dependency cycle: a -> d -> b -> a"
    assert graph.find_path(conn, "d", "a") == ["d", "b", "a"]
    assert graph.find_path(conn, "a", "d") is None


def test_create_depends_on_refuses_cycle_through_a_formerly_missing_id(conn):
    mk(conn, "b", deps=["a"])  # 'a' does not exist yet
    before = snapshot(conn)
    with pytest.raises(Refused, match=r"^dependency cycle: a -> b -> a$"):
        mk(conn, "a", deps=["b"])
    assert snapshot(conn) == before  # the task itself was not created either


def test_dep_refuses_unknown_task(conn):
    mk(conn, "a")
    before = snapshot(conn)
    with pytest.raises(NotFound, match=r"^unknown task 'nope'$"):
        graph.add_dependency(conn, "nope", "a")
    assert snapshot(conn) == before


@pytest.mark.parametrize("bad", ["", " ", "x" * 65, "a'; DROP TABLE tasks;--", "../etc", "a b", "-flag", "é", "a\x00b"])
def test_dep_and_dep_remove_reject_malformed_ids(conn, bad):
    mk(conn, "a")
    before = snapshot(conn)
    for args in ((bad, "a"), ("a", bad)):
        with pytest.raises(InvalidInput, match=r"^invalid (task|prerequisite): "):
            graph.add_dependency(conn, *args)
        with pytest.raises(InvalidInput, match=r"^invalid (task|prerequisite): "):
            graph.remove_dependency(conn, *args)
    assert snapshot(conn) == before
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 1


def test_dep_remove_deletes_edge_audits_and_frees_the_task(conn):
    mk(conn, "a")
    mk(conn, "b", deps=["a", "ghost"])
    result = graph.remove_dependency(conn, "b", "a")
    assert result == {"task_id": "b", "depends_on": "a", "removed": True,
                      "blockers": [{"id": "ghost", "status": "missing"}]}
    assert events(conn, "dependency_removed") == [("b", {"depends_on": "a"})]
    graph.remove_dependency(conn, "b", "ghost")
    assert graph.blockers(conn, "b") == []
    assert graph.blocked_by(conn, "b")["blocked"] is False


def test_dep_remove_refuses_missing_edge_and_unknown_task(conn):
    mk(conn, "a")
    mk(conn, "b", deps=["a"])
    before = snapshot(conn)
    with pytest.raises(NotFound, match=r"^no dependency edge: task 'a' does not depend on 'b'$"):
        graph.remove_dependency(conn, "a", "b")
    with pytest.raises(NotFound, match=r"^unknown task 'zz'$"):
        graph.remove_dependency(conn, "zz", "a")
    assert snapshot(conn) == before


def test_add_edges_keeps_its_contract_for_create(conn):
    mk(conn, "a")
    mk(conn, "b")
    with db.write(conn):
        first = graph.add_edges(conn, "b", ["a", "ghost", "a"])
        second = graph.add_edges(conn, "b", ["a"])
    assert first == {"added": ["a", "ghost"], "existing": [], "missing": ["ghost"]}
    assert second == {"added": [], "existing": ["a"], "missing": []}


def test_reaches_escalates_past_wide_closures(conn):
    # goal g has 150 dependents, start s has 150 prerequisites: both first probes are cut off
    now = clock.now_iso()
    rows = [(i, "P", "queued", "P2", (), None, now) for i in ["g", "s", "m"] + [f"d{k:03d}" for k in range(150)]
            + [f"u{k:03d}" for k in range(150)]]
    edges = [(f"d{k:03d}", "g") for k in range(150)] + [("s", f"u{k:03d}") for k in range(150)]
    bulk(conn, rows, edges)
    assert graph.reaches(conn, "s", "g") is False
    with db.write(conn):  # now make one deep link: u149 -> m -> d042 -> g
        conn.execute("INSERT INTO dependencies VALUES ('u149', 'm', ?)", (now,))
        conn.execute("INSERT INTO dependencies VALUES ('m', 'd042', ?)", (now,))
    assert graph.reaches(conn, "s", "g") is True
    assert graph.find_path(conn, "s", "g") == ["s", "u149", "m", "d042", "g"]
    with pytest.raises(Refused) as info:
        graph.add_dependency(conn, "g", "s")
    assert str(info.value) == "dependency cycle: g -> s -> u149 -> m -> d042 -> g"


# ---------------------------------------------------------------------------------------
# blocked-by / impact


def test_blocked_by_reports_min_depth_once_status_and_satisfied(conn):
    mk(conn, "root")
    mk(conn, "mid", deps=["root"])
    mk(conn, "side", deps=["root"])
    mk(conn, "top", deps=["mid", "side", "root", "ghost"])
    tasks.update(conn, "side", status="completed")
    result = graph.blocked_by(conn, "top")
    assert result["task_id"] == "top" and result["status"] == "queued"
    assert result["blockers"] == [
        {"id": "ghost", "depth": 1, "status": "missing", "title": None, "satisfied": False},
        {"id": "mid", "depth": 1, "status": "queued", "title": "title mid", "satisfied": False},
        {"id": "root", "depth": 1, "status": "queued", "title": "title root", "satisfied": False},
        {"id": "side", "depth": 1, "status": "completed", "title": "title side", "satisfied": True},
    ]
    assert result["blocked"] is True and result["unsatisfied"] == 3


def test_blocked_by_walks_through_completed_prerequisites(conn):
    mk(conn, "a")
    mk(conn, "b", deps=["a"])
    mk(conn, "c", deps=["b"])
    mk(conn, "d", deps=["c"])
    for task_id in ("a", "b", "c"):
        tasks.update(conn, task_id, status="completed")
    result = graph.blocked_by(conn, "d")
    assert [(e["id"], e["depth"], e["satisfied"]) for e in result["blockers"]] == [
        ("c", 1, True), ("b", 2, True), ("a", 3, True)]
    assert result["blocked"] is False and result["unsatisfied"] == 0
    tasks.update(conn, "a", status="queued")  # reopened deep prerequisite: the chain is no longer clean
    assert graph.blocked_by(conn, "d")["blocked"] is True


def test_blocked_by_of_task_without_deps_and_unknown_task(conn):
    mk(conn, "solo")
    assert graph.blocked_by(conn, "solo") == {"task_id": "solo", "status": "queued", "blocked": False,
                                              "unsatisfied": 0, "blockers": []}
    with pytest.raises(NotFound, match=r"^unknown task 'ghost'$"):
        graph.blocked_by(conn, "ghost")


def test_impact_counts_transitive_dependents(conn):
    mk(conn, "hub")
    mk(conn, "q1", deps=["hub"])
    mk(conn, "q2", deps=["hub"])
    mk(conn, "r1", deps=["q1"], status="running")
    mk(conn, "done", deps=["q1"], status="completed")
    mk(conn, "gone", deps=["r1"], status="cancelled")
    mk(conn, "bad", deps=["q2", "q1"], status="failed")
    mk(conn, "deep", deps=["gone", "hub"])
    mk(conn, "unrelated")
    result = graph.impact(conn, "hub")
    assert result["task_id"] == "hub" and result["status"] == "queued"
    assert [(d["id"], d["depth"], d["status"], d["settled"]) for d in result["dependents"]] == [
        ("deep", 1, "queued", 0), ("q1", 1, "queued", 0), ("q2", 1, "queued", 0),
        ("bad", 2, "failed", 0), ("done", 2, "completed", 1), ("r1", 2, "running", 0),
        ("gone", 3, "cancelled", 1)]
    assert result["impacted"] == 7 and result["open"] == 5
    assert result["by_status"] == {"queued": 3, "failed": 1, "completed": 1, "running": 1, "cancelled": 1}
    assert result["dependents"][0]["title"] == "title deep"
    assert graph.impact(conn, "deep")["impacted"] == 0


def test_impact_of_missing_prerequisite_and_unknown_id(conn):
    mk(conn, "w", deps=["ghost"])
    mk(conn, "v", deps=["w"])
    result = graph.impact(conn, "ghost")
    assert result["status"] == "missing" and result["impacted"] == 2 and result["open"] == 2
    with pytest.raises(NotFound, match=r"^unknown task 'nothing'$"):
        graph.impact(conn, "nothing")
    with pytest.raises(InvalidInput):
        graph.impact(conn, "bad id")


# ---------------------------------------------------------------------------------------
# critical-path / plan


def test_critical_path_longest_open_chain_prerequisites_first(conn):
    mk(conn, "a", priority="P1")
    mk(conn, "b", deps=["a"])
    mk(conn, "c", deps=["b"], status="running")
    mk(conn, "x")
    mk(conn, "y", deps=["x"])
    mk(conn, "old", status="completed")
    mk(conn, "after-old", deps=["old"])  # completed prerequisite leaves the graph
    result = graph.critical_path(conn)
    assert result["length"] == 3
    assert result["path"] == [
        {"id": "a", "title": "title a", "status": "queued", "priority": "P1"},
        {"id": "b", "title": "title b", "status": "queued", "priority": "P2"},
        {"id": "c", "title": "title c", "status": "running", "priority": "P2"},
    ]
    assert result["open_tasks"] == 6
    assert result["by_status"] == {"queued": 5, "running": 1}
    tasks.update(conn, "a", status="completed")
    assert graph.critical_path(conn)["length"] == 2


@pytest.mark.parametrize("order", [["m", "k", "z", "n", "j", "l"], ["j", "k", "l", "m", "n", "z"]])
def test_critical_path_ties_break_to_smallest_id_at_every_step(conn, order):
    # six length-3 chains ({j, k} -> l -> {n, z} and k -> m -> {n, z}); creation order must not matter
    deps = {"j": [], "k": [], "l": ["j", "k"], "m": ["k"], "n": ["l", "m"], "z": ["l", "m"]}
    for task_id in order:
        mk(conn, task_id)
    for task_id in order:
        for prereq in deps[task_id]:
            graph.add_dependency(conn, task_id, prereq)
    result = graph.critical_path(conn)
    assert result["length"] == 3
    assert [p["id"] for p in result["path"]] == ["j", "l", "n"]


def test_critical_path_counts_missing_and_dead_prerequisites_as_nodes(conn):
    mk(conn, "w", deps=["ghost"])
    mk(conn, "v", deps=["w"])
    mk(conn, "f", status="failed")
    mk(conn, "after-f", deps=["f"])
    result = graph.critical_path(conn)
    assert result["length"] == 3
    assert result["path"] == [
        {"id": "ghost", "title": None, "status": "missing", "priority": None},
        {"id": "w", "title": "title w", "status": "queued", "priority": "P2"},
        {"id": "v", "title": "title v", "status": "queued", "priority": "P2"},
    ]
    # failed is terminal: not open work, but it holds its dependent forever
    assert result["open_tasks"] == 3 and result["by_status"] == {"queued": 3}
    plan = graph.plan(conn)
    assert plan["waves"] == [] and plan["scheduled_tasks"] == 0 and plan["open_tasks"] == 3
    assert [(u["id"], u["blocked_by"]) for u in plan["unschedulable"]] == [
        ("after-f", [{"id": "f", "status": "failed"}]),
        ("v", [{"id": "w", "status": "queued"}]),
        ("w", [{"id": "ghost", "status": "missing"}]),
    ]
    # the plan agrees with itself: no wave is scheduled, and what is blocked says why
    assert plan["waves_total"] == 0 and result["length"] == 3


def test_plan_agrees_with_itself_when_a_chain_hangs_off_a_missing_prerequisite(conn):
    mk(conn, "a", deps=["ghost"])
    mk(conn, "b", deps=["a"])
    mk(conn, "ready")
    mk(conn, "after-ready", deps=["ready"])
    plan = graph.plan(conn)
    assert [[t["id"] for t in w["tasks"]] for w in plan["waves"]] == [["ready"], ["after-ready"]]
    assert plan["waves_total"] == len(plan["waves"]) == 2
    assert plan["scheduled_tasks"] == sum(len(w["tasks"]) for w in plan["waves"]) == 2
    assert [(u["id"], u["blocked_by"]) for u in plan["unschedulable"]] == [
        ("a", [{"id": "ghost", "status": "missing"}]), ("b", [{"id": "a", "status": "queued"}])]
    assert plan["scheduled_tasks"] + len(plan["unschedulable"]) == plan["open_tasks"] == 4
    assert graph.critical_path(conn)["length"] == 3  # ghost -> a -> b: the missing node still counts there


def test_cancelled_prerequisite_blocks_forever(conn):
    mk(conn, "c", status="cancelled")
    mk(conn, "d", deps=["c"])
    plan = graph.plan(conn)
    assert plan["unschedulable"][0]["blocked_by"] == [{"id": "c", "status": "cancelled"}]
    assert graph.critical_path(conn)["path"][0] == {"id": "c", "title": "title c", "status": "cancelled",
                                                    "priority": "P2"}
    graph.remove_dependency(conn, "d", "c")
    assert [t["id"] for t in graph.plan(conn)["waves"][0]["tasks"]] == ["d"]


def test_empty_graph(conn):
    assert graph.critical_path(conn) == {"length": 0, "path": [], "open_tasks": 0, "by_status": {}}
    assert graph.plan(conn) == {"waves": [], "unschedulable": [], "waves_total": 0, "scheduled_tasks": 0,
                                "open_tasks": 0}


def test_plan_waves_in_dispatch_order(conn):
    mk(conn, "p3-old", priority="P3")
    clock.advance(minutes=1)
    mk(conn, "p1-undated", priority="P1")
    clock.advance(minutes=1)
    mk(conn, "p1-late", priority="P1", due_at="2026-09-01T00:00:00Z")
    clock.advance(minutes=1)
    mk(conn, "p1-soon", priority="P1", due_at="2026-08-25T00:00:00Z")
    clock.advance(minutes=1)
    mk(conn, "p1-b", priority="P1")  # same priority, undated, newer than p1-undated
    mk(conn, "p1-a", priority="P1")  # same created_at as p1-b: id breaks the tie
    mk(conn, "p0-running", priority="P0", status="running")
    mk(conn, "next", deps=["p3-old", "p0-running"], priority="P0")
    mk(conn, "last", deps=["next"])
    result = graph.plan(conn)
    assert [w["wave"] for w in result["waves"]] == [1, 2, 3]
    assert [t["id"] for t in result["waves"][0]["tasks"]] == [
        "p0-running", "p1-soon", "p1-late", "p1-undated", "p1-a", "p1-b", "p3-old"]
    assert result["waves"][0]["tasks"][0] == {"id": "p0-running", "title": "title p0-running",
                                              "status": "running", "priority": "P0"}
    assert [t["id"] for t in result["waves"][1]["tasks"]] == ["next"]
    assert [t["id"] for t in result["waves"][2]["tasks"]] == ["last"]
    assert result["waves_total"] == 3 == graph.critical_path(conn)["length"]
    assert result["scheduled_tasks"] == result["open_tasks"] == 9 and result["unschedulable"] == []
    assert graph.plan(conn) == result  # identical state, identical schedule


def test_plan_project_scope_treats_other_projects_as_blockers(conn):
    mk(conn, "ext", project="Other")
    mk(conn, "a", project="Trove")
    mk(conn, "b", project="Trove", deps=["a"])
    mk(conn, "c", project="Trove", deps=["ext"])
    mk(conn, "d", project="Trove", deps=["c", "b"])
    mk(conn, "e", project="Trove", deps=["ghost"])
    mk(conn, "fine", project="Trove", deps=["done-elsewhere"])
    mk(conn, "done-elsewhere", project="Other", status="completed")
    plan = graph.plan(conn, project="Trove")
    assert [[t["id"] for t in w["tasks"]] for w in plan["waves"]] == [["a", "fine"], ["b"]]
    assert [(u["id"], u["blocked_by"]) for u in plan["unschedulable"]] == [
        ("c", [{"id": "ext", "status": "queued"}]),
        ("d", [{"id": "c", "status": "queued"}]),
        ("e", [{"id": "ghost", "status": "missing"}]),
    ]
    assert plan["scheduled_tasks"] == 3 and plan["open_tasks"] == 6
    path = graph.critical_path(conn, project="Trove")
    assert path["length"] == 3 and plan["waves_total"] == 2  # d (wave 3 if c could start) is unschedulable
    assert [p["id"] for p in path["path"]] == ["a", "b", "d"]  # a < ext at the first step
    assert path["open_tasks"] == 6
    # fleet-wide, ext is a real open task and c is schedulable
    fleet = graph.plan(conn)
    assert [u["id"] for u in fleet["unschedulable"]] == ["e"]
    assert fleet["waves_total"] == 3 == len(fleet["waves"])
    assert graph.critical_path(conn)["length"] == 3


def test_plan_tag_scope(conn):
    mk(conn, "a", tags=["autopilot-safe"])
    mk(conn, "b", tags=["autopilot-safe", "infra"], deps=["a"])
    mk(conn, "manual", tags=["infra"])
    mk(conn, "c", tags=["autopilot-safe"], deps=["manual"])
    mk(conn, "autopilot-safer", tags=["autopilot-safer"])  # a longer tag must not match
    plan = graph.plan(conn, tag="autopilot-safe")
    assert [[t["id"] for t in w["tasks"]] for w in plan["waves"]] == [["a"], ["b"]]
    assert plan["unschedulable"][0]["id"] == "c"
    assert plan["unschedulable"][0]["blocked_by"] == [{"id": "manual", "status": "queued"}]
    assert plan["open_tasks"] == 3
    assert graph.critical_path(conn, tag="autopilot-safe")["length"] == 2 == plan["waves_total"]
    both = graph.plan(conn, project="P", tag="infra")
    assert [[t["id"] for t in w["tasks"]] for w in both["waves"]] == [["manual"]]
    assert both["unschedulable"][0]["blocked_by"] == [{"id": "a", "status": "queued"}]
    assert graph.plan(conn, project="Nope")["open_tasks"] == 0


@pytest.mark.parametrize("kwargs, flag", [({"project": "bad project"}, "--project"), ({"tag": "UPPER"}, "--tag"),
                                          ({"tag": '"x'}, "--tag"), ({"project": ""}, "--project")])
def test_scope_filters_are_validated(conn, kwargs, flag):
    for fn in (graph.plan, graph.critical_path):
        with pytest.raises(InvalidInput, match=f"^invalid {flag}: "):
            fn(conn, **kwargs)


def test_raw_cycle_does_not_hang_and_is_unschedulable(conn):
    now = clock.now_iso()
    bulk(conn, [(i, "P", "queued", "P2", (), None, now) for i in ("a", "b", "c", "free")],
         [("a", "b"), ("b", "a"), ("c", "a"), ("b", "0ghost")])  # written behind the cycle check's back
    plan = graph.plan(conn)
    assert [[t["id"] for t in w["tasks"]] for w in plan["waves"]] == [["free"]]
    assert [(u["id"], [b["id"] for b in u["blocked_by"]]) for u in plan["unschedulable"]] == [
        ("a", ["b"]), ("b", ["0ghost", "a"]), ("c", ["a"])]
    path = graph.critical_path(conn)
    assert path["length"] == plan["waves_total"] == 1
    assert [p["id"] for p in path["path"]] == ["free"]  # a blocker held only by the cycle is on no chain
    assert [e["id"] for e in graph.blocked_by(conn, "c")["blockers"]] == ["a", "b", "0ghost"]
    assert [e["id"] for e in graph.impact(conn, "a")["dependents"]] == ["b", "c"]


# ---------------------------------------------------------------------------------------
# randomized cross-check against brute force


def _brute(spec, edges, project=None, tag=None):
    def in_scope(i):
        s = spec[i]
        return (s["status"] not in TERMINAL and (project is None or s["project"] == project)
                and (tag is None or tag in s["tags"]))

    scope = {i for i in spec if in_scope(i)}

    def unsat(i):
        return sorted(p for p in edges.get(i, ()) if spec.get(p, {}).get("status") != "completed")

    placed, wave = {}, 0
    while True:
        ready = [i for i in scope if i not in placed and all(p in placed for p in unsat(i))]
        if not ready:
            break
        wave += 1
        placed.update(dict.fromkeys(ready, wave))

    def chains_to(i):  # every chain from a source to i, prerequisites first
        if i not in scope or not unsat(i):
            return [[i]]
        return [c + [i] for p in unsat(i) for c in chains_to(p)]

    chains = [c for i in scope for c in chains_to(i)]
    longest = max((len(c) for c in chains), default=0)
    path = min((c for c in chains if len(c) == longest), default=[])

    def status(i):
        return spec[i]["status"] if i in spec else "missing"

    def key(i):
        s = spec[i]
        return ("P0P1P2P3".index(s["priority"]) // 2, s["due_at"] is None, s["due_at"] or "", s["created"], i)

    waves = [[i for i in sorted(placed, key=key) if placed[i] == w] for w in range(1, wave + 1)]
    unschedulable = [(i, [(p, status(p)) for p in unsat(i) if p not in placed]) for i in sorted(scope - set(placed))]
    return {"length": longest, "path": path, "waves": waves, "unschedulable": unschedulable,
            "open": len(scope), "statuses": {i: status(i) for i in path}}


def _random_graph(rnd):
    n = rnd.randint(1, 13)
    names = rnd.sample([f"k{i:02d}" for i in range(40)], n)  # id order unrelated to creation order
    spec, edges, rows = {}, {}, []
    for index, task_id in enumerate(names):
        spec[task_id] = {
            "status": rnd.choice(["queued"] * 5 + ["running", "blocked", "waiting_for_user", "completed",
                                                   "completed", "cancelled", "failed"]),
            "project": rnd.choice(["A", "A", "B"]),
            "tags": sorted(rnd.sample(["safe", "infra"], rnd.randint(0, 2))),
            "priority": rnd.choice(["P0", "P1", "P2", "P3"]),
            "due_at": rnd.choice([None, None, "2026-08-22T00:00:00Z", "2026-08-23T00:00:00Z"]),
            "created": f"2026-08-21T09:{rnd.randint(0, 5):02d}:00Z",
        }
        earlier = names[:index]
        prereqs = rnd.sample(earlier, rnd.randint(0, min(3, len(earlier))))
        if rnd.random() < 0.15:
            prereqs.append(rnd.choice(["ghost1", "ghost2"]))
        if prereqs:
            edges[task_id] = prereqs
        s = spec[task_id]
        rows.append((task_id, s["project"], s["status"], s["priority"], s["tags"], s["due_at"], s["created"]))
    return spec, edges, rows


def test_randomized_plan_and_critical_path_match_brute_force(conn):
    rnd = random.Random(20260821)
    for round_number in range(60):
        with db.write(conn):
            conn.execute("DELETE FROM tasks")
        spec, edges, rows = _random_graph(rnd)
        bulk(conn, rows, [(a, b) for a, prereqs in edges.items() for b in prereqs])
        for scope in ({}, {"project": "A"}, {"tag": "safe"}, {"project": "B", "tag": "infra"}):
            expected = _brute(spec, edges, **scope)
            plan = graph.plan(conn, **scope)
            path = graph.critical_path(conn, **scope)
            context = (round_number, scope, edges, spec)
            assert path["length"] == expected["length"], context
            assert plan["waves_total"] == len(expected["waves"]) == len(plan["waves"]), context
            assert plan["scheduled_tasks"] == sum(len(w["tasks"]) for w in plan["waves"])
            if not plan["unschedulable"]:  # nothing blocked: the schedule is as long as the chain
                assert plan["waves_total"] == path["length"], context
            assert [p["id"] for p in path["path"]] == expected["path"], context
            assert [p["status"] for p in path["path"]] == [expected["statuses"][i] for i in expected["path"]]
            assert [[t["id"] for t in w["tasks"]] for w in plan["waves"]] == expected["waves"], context
            assert [w["wave"] for w in plan["waves"]] == list(range(1, len(expected["waves"]) + 1))
            assert [(u["id"], [(b["id"], b["status"]) for b in u["blocked_by"]]) for u in plan["unschedulable"]] \
                == expected["unschedulable"], context
            assert plan["open_tasks"] == path["open_tasks"] == expected["open"]
            assert plan["scheduled_tasks"] + len(plan["unschedulable"]) == plan["open_tasks"]
            assert sum(path["by_status"].values()) == path["open_tasks"]


def test_randomized_dep_cycle_refusal_and_depths_match_brute_force(conn):
    rnd = random.Random(7)
    for _ in range(25):
        with db.write(conn):
            conn.execute("DELETE FROM tasks")
        spec, edges, rows = _random_graph(rnd)
        bulk(conn, rows, [(a, b) for a, prereqs in edges.items() for b in prereqs])

        def reachable(start):  # prerequisite closure by depth-first search, min depths by BFS levels
            depth, frontier, level = {}, [start], 0
            while frontier:
                level += 1
                frontier = [p for node in frontier for p in edges.get(node, ()) if p not in depth and p != start]
                for p in frontier:
                    depth.setdefault(p, level)
            return depth

        for task_id in spec:
            got = graph.blocked_by(conn, task_id)
            want = reachable(task_id)
            assert {e["id"]: e["depth"] for e in got["blockers"]} == want
            assert got["blocked"] == any(spec.get(p, {}).get("status") != "completed" for p in want)
            down = {d["id"]: d["depth"] for d in graph.impact(conn, task_id)["dependents"]}
            assert down == {other: reachable(other)[task_id] for other in spec if task_id in reachable(other)}
        ids = list(spec)
        for _attempt in range(6):
            a, b = rnd.choice(ids), rnd.choice(ids + ["ghost9"])
            cycle = a == b or a in reachable(b)
            already = b in edges.get(a, ())
            if cycle:
                with pytest.raises(Refused, match=r"^dependency cycle: "):
                    graph.add_dependency(conn, a, b)
            else:
                assert graph.add_dependency(conn, a, b)["added"] is (not already)
                edges.setdefault(a, [])
                if not already:
                    edges[a].append(b)


# ---------------------------------------------------------------------------------------
# scale: 2,000 tasks (checks results, not timing)


def test_two_thousand_task_chain(conn):
    n = 2000
    bulk(conn, chain_rows(n), [(f"c{i:04d}", f"c{i - 1:04d}") for i in range(1, n)])
    path = graph.critical_path(conn)
    assert path["length"] == n and path["path"][0]["id"] == "c0000" and path["path"][-1]["id"] == "c1999"
    plan = graph.plan(conn)
    assert plan["waves_total"] == n == len(plan["waves"]) and plan["scheduled_tasks"] == n
    assert all(w["tasks"][0]["id"] == f"c{w['wave'] - 1:04d}" for w in plan["waves"])
    blockers = graph.blocked_by(conn, "c1999")["blockers"]
    assert len(blockers) == n - 1 and blockers[-1] == {"id": "c0000", "depth": n - 1, "status": "queued",
                                                       "title": "title c0000", "satisfied": False}
    assert graph.impact(conn, "c0000")["impacted"] == n - 1
    before = snapshot(conn)
    with pytest.raises(Refused) as info:
        graph.add_dependency(conn, "c0000", "c1999")
    message = str(info.value)
    assert message.startswith("dependency cycle: c0000 -> c1999 -> c1998 -> ")
    assert message.endswith(" -> c0001 -> c0000") and "(1981 more)" in message and "\n" not in message
    assert snapshot(conn) == before
    assert graph.add_dependency(conn, "c1999", "c0000")["added"] is True  # a shortcut is no cycle
    assert graph.critical_path(conn)["length"] == n


def test_two_thousand_task_layered_dag(conn):
    # 40 layers of 50; each task depends on two tasks of the previous layer; layer 0 half completed
    rnd = random.Random(5)
    now = clock.now_iso()
    rows, edges = [], []
    for layer in range(40):
        for k in range(50):
            status = "completed" if layer == 0 and k % 2 == 0 else "queued"
            rows.append((f"L{layer:02d}-{k:02d}", "P", status, "P2", (), None, now))
            if layer:
                for j in rnd.sample(range(50), 2):
                    edges.append((f"L{layer:02d}-{k:02d}", f"L{layer - 1:02d}-{j:02d}"))
    bulk(conn, rows, edges)
    plan = graph.plan(conn)
    path = graph.critical_path(conn)
    assert plan["open_tasks"] == path["open_tasks"] == 1975
    assert plan["waves_total"] == path["length"] == len(plan["waves"])
    assert plan["unschedulable"] == [] and plan["scheduled_tasks"] == 1975
    # every path step is a real unsatisfied edge
    pairs = set(edges)
    assert all((b["id"], a["id"]) in pairs for a, b in zip(path["path"], path["path"][1:]))
    # every task sits one wave after its latest open prerequisite
    wave_of = {t["id"]: w["wave"] for w in plan["waves"] for t in w["tasks"]}
    prereqs = {}
    for task_id, prereq in edges:
        prereqs.setdefault(task_id, []).append(prereq)
    for task_id, wave in wave_of.items():
        assert wave == 1 + max((wave_of[p] for p in prereqs.get(task_id, ()) if p in wave_of), default=0)
    assert graph.metrics(conn)["critical_path_length"] == path["length"]
    with pytest.raises(Refused):
        graph.add_dependency(conn, path["path"][0]["id"], path["path"][-1]["id"])


# ---------------------------------------------------------------------------------------
# metrics


def test_metrics_counts_queued_blocked_and_critical_path(conn):
    assert graph.metrics(conn) == {"queued_blocked_by_deps": 0, "critical_path_length": 0}
    mk(conn, "a")
    mk(conn, "b", deps=["a"])
    mk(conn, "c", deps=["ghost"])
    mk(conn, "r", deps=["a"], status="running")  # running, not queued
    mk(conn, "d", deps=["done"])
    mk(conn, "done", status="completed")
    assert graph.metrics(conn) == {"queued_blocked_by_deps": 2, "critical_path_length": 2}
    assert "mindos.work.graph" in metrics.PROVIDERS


# ---------------------------------------------------------------------------------------
# CLI


def test_cli_commands_print_core_results(conn, cli_json):
    cli_json("autopilot", "create", "--project", "P", "--title", "A", "--id", "a")
    cli_json("autopilot", "create", "--project", "P", "--title", "B", "--id", "b")
    added = cli_json("autopilot", "dep", "b", "a")
    assert added["added"] is True and added["blockers"] == [{"id": "a", "status": "queued"}]
    assert cli_json("autopilot", "dep", "b", "a")["already_present"] is True
    assert cli_json("autopilot", "blocked-by", "b")["blockers"][0]["id"] == "a"
    assert cli_json("autopilot", "impact", "a")["dependents"][0] == {"id": "b", "title": "B", "depth": 1,
                                                                     "status": "queued", "settled": 0}
    assert [p["id"] for p in cli_json("autopilot", "critical-path", "--project", "P")["path"]] == ["a", "b"]
    assert cli_json("autopilot", "plan", "--tag", "none")["open_tasks"] == 0
    assert cli_json("autopilot", "plan")["waves_total"] == 2
    assert cli_json("autopilot", "dep-remove", "b", "a")["removed"] is True
    assert events(conn, "dependency_removed") == [("b", {"depends_on": "a"})]


@pytest.mark.parametrize("argv, code, message", [
    (["dep", "a", "a"], 1, "dependency cycle: a -> a (a task cannot depend on itself)"),
    (["dep", "a", "b"], 1, "dependency cycle: a -> b -> a"),
    (["dep", "nope", "a"], 1, "unknown task 'nope'"),
    (["dep-remove", "a", "b"], 1, "no dependency edge: task 'a' does not depend on 'b'"),
    (["dep-remove", "zz", "a"], 1, "unknown task 'zz'"),
    (["blocked-by", "zz"], 1, "unknown task 'zz'"),
    (["impact", "zz"], 1, "unknown task 'zz'"),
    (["dep", "a; DROP TABLE tasks", "b"], 2, "invalid task: "),
    (["dep", "a", "x" * 5000], 2, "invalid prerequisite: "),
    (["plan", "--project", "a b"], 2, "invalid --project: "),
    (["critical-path", "--tag", "*"], 2, "invalid --tag: "),
    (["dep", "a"], 2, "autopilot.py dep: error: "),
    (["dep-remove"], 2, "autopilot.py dep-remove: error: "),
])
def test_cli_errors_are_one_line_and_change_nothing(conn, cli, argv, code, message):
    mk(conn, "a")
    mk(conn, "b", deps=["a"])
    before = snapshot(conn)
    rc, out, err = cli("autopilot", *argv)
    assert rc == code and out == ""
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err
    assert snapshot(conn) == before


def test_cli_help_has_examples(cli):
    for name in ("dep", "dep-remove", "blocked-by", "impact", "critical-path", "plan"):
        rc, out, err = cli("autopilot", name, "--help")
        assert rc == 0 and "Example:\n  autopilot.py " + name in out


def test_front_door_subprocess(home):
    env = {"MINDOS_NOW": "2026-08-21T09:00:00Z"}
    for argv in (["create", "--project", "P", "--title", "A", "--id", "a"],
                 ["create", "--project", "P", "--title", "B", "--id", "b"]):
        assert script("autopilot.py", *argv, home=home, env=env).returncode == 0
    done = script("autopilot.py", "dep", "b", "a", home=home, env=env)
    assert done.returncode == 0 and done.stderr == "" and json.loads(done.stdout)["added"] is True
    refused = script("autopilot.py", "dep", "a", "b", home=home, env=env)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == "dependency cycle: a -> b -> a\n"
    plan = script("autopilot.py", "plan", home=home, env=env)
    assert plan.returncode == 0 and plan.stderr == ""
    assert [[t["id"] for t in w["tasks"]] for w in json.loads(plan.stdout)["waves"]] == [["a"], ["b"]]
