"""prime: the session-start pack -- scope, budget, redaction, determinism, audit, time bound."""

import json
import os

import pytest

from mindos.context import builder, prime
from mindos.core import secret_gate
from mindos.errors import InvalidInput
from mindos.memory import handoffs, notes
from mindos.work import leases
from tests.conftest import last_event, make_task

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def fleet(conn):
    """Two projects, two agents: codex holds a Trove task, claude-code an Acme one; each has
    a pinned constraint, an inbox item and a queued task in its project."""
    make_task(conn, "trove-held", project="Trove", title="trove retry path", priority="P1",
              next_action="write the trove test", description="trovewords only")
    make_task(conn, "trove-queued", project="Trove", title="trove queued work", priority="P2")
    make_task(conn, "acme-held", project="Acme", title="acme billing export", priority="P1",
              next_action="acme secretplan")
    make_task(conn, "acme-queued", project="Acme", title="acme queued work", priority="P0")
    leases.claim(conn, "trove-held", "codex")
    leases.claim(conn, "acme-held", "claude-code")
    notes.add(conn, "trove-held", content="trove: no new dependencies", kind="constraint", pinned=True, source="lead")
    notes.add(conn, "acme-held", content="acme: never touch the ledger", kind="constraint", pinned=True,
              source="lead")
    notes.add(conn, "acme-held", content="acme private finding", source="claude-code")
    notes.add(conn, "trove-held", content=f"deploy key {SECRET}", allow_secret=True, source="codex")
    handoffs.record(conn, "trove-queued", from_agent="lead", to_agent="codex", objective="trove inbox objective")
    handoffs.record(conn, "acme-queued", from_agent="lead", to_agent="claude-code",
                    objective=f"acme inbox objective {SECRET}", allow_secret=True)
    return conn


def test_pack_sections_and_scope_for_one_agent(fleet):
    printed = prime.prime(fleet, "codex", fmt="json")
    assert printed["leases"][0] == ["task_id", "project", "title", "status", "lease_expires_at", "lease_epoch",
                                    "priority"]  # a table: the header row, then a row per lease
    pack = builder.decode(printed)
    assert pack["sections"] == ["leases", "inbox", "constraints", "next", "held"]
    assert [e["task_id"] for e in pack["leases"]] == ["trove-held"]
    assert [i["task_id"] for i in pack["inbox"]] == ["trove-queued"]
    assert [c["content"] for c in pack["constraints"]] == ["trove: no new dependencies"]
    assert pack["projects"] == ["Trove"]
    assert pack["held_task_id"] == "trove-held" and pack["held"]["task"]["title"] == "trove retry path"
    assert "id" not in pack["held"]["task"]  # held_task_id names it
    assert pack["next"]["id"] == "acme-queued"  # without --project: what next would hand codex
    assert len(pack["digest"]) == 64 and "degraded" not in pack  # lean: absent is false


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_no_cross_agent_or_cross_project_leakage(fleet, fmt):
    for agent, project, mine, theirs in (
        ("codex", "Trove", "trove", "acme"),
        ("claude-code", "Acme", "acme", "trove"),
    ):
        out = prime.prime(fleet, agent, project=project, fmt=fmt)
        text = out if fmt == "text" else json.dumps(out)
        assert mine in text and theirs not in text.lower(), (agent, text)
    # codex looking at Acme sees Acme's queue and constraints, never claude-code's lease or inbox
    out = prime.prime(fleet, "codex", project="Acme", fmt="json")
    assert not {"leases", "inbox", "held"} & set(out)  # lean: nothing held, leased or handed over
    assert "acme private finding" not in json.dumps(out) and "claude-code" not in json.dumps(out)
    assert [c["content"] for c in builder.decode(out)["constraints"]] == ["acme: never touch the ledger"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_no_secret_ever_leaves(fleet, fmt):
    for agent in ("codex", "claude-code"):
        out = prime.prime(fleet, agent, fmt=fmt)
        text = out if fmt == "text" else json.dumps(out)
        assert SECRET not in text and "ghp_" not in text
    assert "[REDACTED:" in prime.prime(fleet, "codex", fmt="text")


def test_deterministic_for_identical_state(fleet):
    first, second = prime.prime(fleet, "codex"), prime.prime(fleet, "codex")
    assert first == second
    assert prime.prime(fleet, "codex", fmt="json") == prime.prime(fleet, "codex", fmt="json")
    notes.add(fleet, "trove-held", content="a new observation", source="codex")
    assert prime.prime(fleet, "codex") != first


@pytest.mark.parametrize("budget", [400, 450, 600, 800, 1200, 2000, 4000, 8000])
def test_within_the_budget(fleet, budget):
    for i in range(30):
        notes.add(fleet, "trove-held", content=f"observation number {i} " + "é" * 40, source="codex")
    text = prime.prime(fleet, "codex", budget=budget)
    assert len(text.encode("utf-8")) <= budget
    assert text.startswith("# MindOS prime for codex digest=")
    pack = prime.prime(fleet, "codex", budget=budget, fmt="json")
    assert pack["used_chars"] <= budget
    if budget < 4000:
        assert pack["truncated"] is True


def test_audited_like_a_recall_and_the_held_recall_digest_is_a_valid_citation(fleet):
    from mindos.context import recall

    pack = prime.prime(fleet, "codex", fmt="json")
    primed = last_event(fleet, "context_primed")
    assert primed["digest"] == pack["digest"] and primed["agent"] == "codex"
    assert primed["held_recall_digest"] == pack["held_recall_digest"]
    recalled = last_event(fleet, "context_recalled")
    assert recalled["digest"] == pack["held_recall_digest"] and recalled["via"] == "prime"
    assert recalled["params"] == recall.make_params() and recalled["prime_digest"] == pack["digest"]
    assert f"cite --recall-digest {pack['held_recall_digest']}" in prime.prime(fleet, "codex")
    # the citation is the standard recall of the held task: recall-verify calls it fresh
    assert recall.verify(fleet, "trove-held", pack["held_recall_digest"], agent="codex",
                         params=recall.make_params())["fresh"] is True
    assert recall.diff(fleet, "trove-held", pack["held_recall_digest"])["fresh"] is True
    handoffs.record(fleet, "trove-held", from_agent="codex", to_agent="claude-code", objective="finish it",
                    evidence=["tests pass"], next_actions=["review"], recall_digest=pack["held_recall_digest"])
    report = handoffs.check(fleet, task="trove-held")
    assert all("unproven_recall_digest" not in p["reasons"] and "older_than_latest_recall" not in p["reasons"]
               for p in report["problems"]), report


def test_metrics_count_primes(fleet):
    from mindos.views import metrics

    assert metrics.collect(fleet)["primes_total"] == 0
    prime.prime(fleet, "codex")
    prime.prime(fleet, "newcomer")
    assert metrics.collect(fleet)["primes_total"] == 2


def test_an_agent_with_nothing_gets_a_short_pack(conn):
    text = prime.prime(conn, "newcomer")
    assert "Nothing held, handed to you or dispatchable right now." in text
    assert last_event(conn, "context_recalled") is None
    assert "held_recall_digest" not in prime.prime(conn, "newcomer", fmt="json")


def test_degrades_instead_of_running_late(fleet):
    pack = prime.prime(fleet, "codex", seconds=1e-9, fmt="json")
    assert pack["degraded"] is True and pack["sections_skipped"]
    assert "[degraded]" in prime.prime(fleet, "codex", seconds=1e-9) or "degraded" in prime.prime(
        fleet, "codex", seconds=1e-9)


@pytest.mark.parametrize("kwargs, match", [
    ({"budget": 10}, "--budget"),
    ({"seconds": 0}, "--seconds"),
    ({"seconds": True}, "--seconds"),
    ({"fmt": "yaml"}, "--format"),
    ({"project": "bad project!"}, "--project"),
])
def test_invalid_options(conn, kwargs, match):
    with pytest.raises(InvalidInput, match=match):
        prime.prime(conn, "codex", **kwargs)


def test_cli_text_by_default_json_on_request(fleet, cli, cli_json):
    rc, out, err = cli("autopilot", "prime", "--agent", "codex", "--project", "Trove")
    assert rc == 0 and err == "" and out.startswith("# MindOS prime for codex (project Trove) digest=")
    pack = cli_json("autopilot", "prime", "--agent", "codex", "--format", "json", "--budget", "1000")
    assert pack["budget"] == 1000
    rc, out, err = cli("autopilot", "prime", "--agent", "codex", "--budget", "5")
    assert rc == 2 and out == "" and "--budget" in err


def test_prime_through_the_mcp_server(fleet):
    from mindos.mcp import server, tools

    srv = server.Server(fleet, tools.exposed())
    answer = srv.handle_line(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "prime", "arguments": {"agent": "codex", "format": "json"}}}))["result"]
    assert answer["isError"] is False and answer["structuredContent"]["held_task_id"] == "trove-held"


def _constraints_in_one_query(conn, projects, now, cap):
    """What the constraints section listed before it read one project at a time: one query over
    every live note of the home, sorted whole (the reference the per-project reads must match)."""
    marks = ", ".join("?" * len(projects))
    return [dict(row) for row in conn.execute(
        "SELECT n.id AS note_id, n.task_id, t.project, n.content, n.source, n.created_at"
        " FROM notes n JOIN tasks t ON t.id = n.task_id"
        " WHERE n.superseded_by IS NULL AND (n.expires_at IS NULL OR n.expires_at > ? OR n.pinned = 1)"
        f" AND n.pinned = 1 AND n.kind = 'constraint' AND t.project IN ({marks})"
        " ORDER BY t.project, n.created_at, n.id LIMIT ?", (now, *projects, cap))]


@pytest.mark.parametrize("cap", [prime.MAX_CONSTRAINTS, 7])
def test_constraints_of_big_and_small_projects_are_the_ones_one_query_lists(conn, monkeypatch, cap):
    from mindos.core import clock
    from mindos.store import db

    with db.write(conn):  # a big project (past the small-project bound), a small one, and one never asked for
        for n in range(prime._SMALL_PROJECT + 40):
            for project, every in (("Big", 1), ("Small", 150), ("Other", 2)):
                if n % every:
                    continue
                task_id = f"{project.lower()}-{n:04d}"
                conn.execute("INSERT INTO tasks(id, project, title, description, status, created_at, updated_at)"
                             " VALUES (?, ?, 't', '', 'queued', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                             (task_id, project))
                for k, (kind, pinned, expires, superseded) in enumerate((
                        ("constraint", n % 3 == 0, None, None), ("constraint", 1, "2000-01-01T00:00:00Z", None),
                        ("constraint", 1, None, 1 if n % 5 == 0 else None), ("decision", 1, None, None))):
                    conn.execute("INSERT INTO notes(task_id, kind, content, source, pinned, expires_at, superseded_by,"
                                 " created_at) VALUES (?, ?, ?, 'bulk', ?, ?, ?, ?)",
                                 (task_id, kind, f"rule {project} {n}-{k}", int(pinned), expires, superseded,
                                  f"2026-01-{1 + (n * 7 + k) % 28:02d}T00:00:00Z"))
    monkeypatch.setattr(prime, "MAX_CONSTRAINTS", cap)
    now = clock.now_iso()
    for projects in (["Big"], ["Small"], ["Big", "Small"], ["Nobody", "Small"], ["Big", "Other", "Small"]):
        expected = _constraints_in_one_query(conn, projects, now, cap)
        assert expected, projects
        for limit in (100000, 700, 120, 30):  # everything fits, some fit, one fits, none fits
            state = {"conn": conn, "projects": projects, "now": now}
            meter, reference = prime.RedactingBudget(limit), prime.RedactingBudget(limit)
            listed = prime._section_constraints(state, meter)
            usable = expected[:limit // prime._LEAST_CONSTRAINT + 1]  # what the budget could hold, and one more
            offered = reference.take_all([builder.compact(row, defaults=builder.NOTE_DEFAULTS) for row in usable],
                                         table=builder.TABLES["constraints"])
            assert listed["constraints_total"] == len(usable)
            assert listed["constraints"] == offered
            assert (meter.used, meter.truncated) == (reference.used, reference.truncated)


@pytest.mark.parametrize("item", [
    {}, {"a": 1}, {"note_id": 12, "task_id": "t-1", "content": "x" * 300, "created_at": "2026-01-01T00:00:00Z"},
    {"k": "", "n": -5, "big": 10 ** 30}, {"é_clé": "ünïcode text that is long enough", "z": 0},
    {"flag": True, "a": "b"}, {"none": None}, {"f": 1.5}, {"nested": {"a": "bcdefghijklmnopq"}}, {"list": ["abc", 1]},
    {"bad key": "v"}, {'q"uote': "v"}, {1: "int key"}, {"text": 'quotes " and \\ and \n newline'}, ["a", {"b": 2}], "s",
])
def test_least_cost_is_the_cost_of_the_shortest_redaction(item):
    from mindos.context import builder

    assert prime.least_cost(item) == builder.cost(prime._shortest(item))


def _pinned_constraints(conn, task_id, start, count):
    from mindos.store import db

    with db.write(conn):
        for n in range(start, start + count):
            conn.execute("INSERT INTO notes(task_id, kind, content, source, pinned, created_at)"
                         " VALUES (?, 'constraint', ?, 'bulk', 1, ?)",
                         (task_id, f"bulk rule {n:05d}: keep the window", f"2026-01-01T{n // 3600 % 24:02d}:"
                                                                             f"{n // 60 % 60:02d}:{n % 60:02d}Z"))


def test_the_constraint_walk_reads_only_what_the_budget_could_hold(fleet):
    _pinned_constraints(fleet, "trove-held", 0, 150)
    for budget in (400, 1000, 4000):
        pack = builder.decode(prime.prime(fleet, "codex", budget=budget, fmt="json"))
        assert pack["truncated"] is True
        assert pack["constraints_total"] <= budget // prime._LEAST_CONSTRAINT + 1
        # oldest first: what was read is the front of the index order, and what was packed is a prefix of it
        contents = [c["content"] for c in pack.get("constraints", [])]
        assert contents == sorted(contents)
    # a budget that holds them all lists them all, as before
    pack = builder.decode(prime.prime(fleet, "codex", budget=200000, fmt="json"))
    assert pack["constraints_total"] == 151 and len(pack["constraints"]) == 151


def test_hashlib_is_loaded_before_the_first_digest(fleet, monkeypatch):
    # a prime hashes past sha256_hex's pure-Python budget (its pack's digest and its audit
    # event at least): hashlib comes first, so no digest is paid for in Python and then again
    from mindos.core import canonical

    order, load, hash_hex = [], canonical.sha256, canonical.sha256_hex
    monkeypatch.setattr(canonical, "sha256", lambda: order.append("load") or load())
    monkeypatch.setattr(canonical, "sha256_hex", lambda data: order.append("hash") or hash_hex(data))
    first = prime.prime(fleet, "codex", fmt="json")
    assert order and order[0] == "load" and "hash" in order
    monkeypatch.undo()
    assert prime.prime(fleet, "codex", fmt="json")["digest"] == first["digest"]


def test_scrub_remembers_only_short_clean_strings_and_still_redacts_secrets(monkeypatch):
    monkeypatch.setattr(secret_gate, "_SEEN_CLEAN", set())
    item = {"project": "Trove", "source": "codex", "content": "x" * (secret_gate._SEEN_LONGEST + 1), "key": SECRET}
    for _ in range(2):  # the second pass answers the short clean strings from the memo
        scrubbed = prime.scrub(dict(item))
        assert scrubbed["key"].startswith("[REDACTED:") and scrubbed["project"] == "Trove"
        assert scrubbed["content"] == item["content"]
    assert secret_gate._SEEN_CLEAN == {"Trove", "codex"}  # never a secret, never a long text


def test_the_clean_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(secret_gate, "_SEEN_CLEAN", set())
    monkeypatch.setattr(secret_gate, "_SEEN_MAX", 3)
    for word in ("alpha", "beta", "gamma", "delta"):
        assert prime.scrub(word) == word
    assert secret_gate._SEEN_CLEAN == {"delta"}  # full at three: forgotten, then the newest kept


def test_a_table_row_is_charged_as_redacted_exactly_as_the_plain_budget_would(monkeypatch):
    """RedactingBudget.take_all lays a table row out once and reuses it unless redaction
    changed a value: what it packs, charges and truncates is what scrubbing each entry and
    charging it through the plain budget gives, at every budget."""
    import copy

    table = builder.TABLES["constraints"]
    items = [{"note_id": 1, "task_id": "t-1", "project": "Trove", "content": "keep the window small",
              "source": "lead", "created_at": "2026-01-01T00:00:00Z"},
             {"note_id": 2, "task_id": "t-2", "project": "Trove", "content": f"deploy key {SECRET} " + "x" * 80,
              "source": "codex", "created_at": "2026-01-02T00:00:00Z"},
             {"note_id": 3, "task_id": "t-3", "project": "Trove", "content": "y" * 120, "source": SECRET,
              "created_at": "2026-01-03T00:00:00Z"},
             {"note_id": 4, "task_id": "t-4", "project": "Trove", "content": "short", "created_at": "2026-01-04"}]
    for limit in range(0, 700, 7):
        monkeypatch.setattr(secret_gate, "_SEEN_CLEAN", set())
        meter, reference = prime.RedactingBudget(limit), builder.Budget(limit)
        packed = meter.take_all(copy.deepcopy(items), table=table)
        expected = []
        for item in copy.deepcopy(items):
            item = prime.scrub(item)
            if prime.least_cost(item, table) > reference.left():
                reference.truncated = True
            elif reference.take(item, table=table):
                expected.append(item)
        assert packed == expected and SECRET not in json.dumps(packed), limit
        assert (meter.used, meter.truncated) == (reference.used, reference.truncated), limit


def _constraints_the_plain_way(found, budget):
    """The constraints section's charging loop before constraint rows were judged without an
    entry built: every row compacted into an entry and offered to ``take_all``."""
    packed = []
    for row in found:
        if budget.left() < prime._LEAST_CONSTRAINT:
            budget.truncated = True
            break
        packed += budget.take_all([builder.compact(dict(row), defaults=builder.NOTE_DEFAULTS)],
                                  table=builder.TABLES["constraints"])
    return packed


def test_constraint_rows_refused_unbuilt_are_the_ones_the_plain_path_refuses(conn, monkeypatch):
    """A constraint row judged straight from the database (laid out, scrubbed value by value,
    costed) packs, charges and truncates exactly as building its entry and offering it to
    take_all does, at every budget, with secrets in any column, defaults and empty values."""
    import random

    from mindos.core import clock
    from mindos.store import db

    rng = random.Random(7)
    words = ["keep", "the", "window", "small", "deploy", "task", "ask", "token:", "pass", "x" * 90, SECRET,
             f"password={SECRET[4:]}", "sk-ant-" + "a" * 40, "é", "quote\"d", "back\\slash", "line\nbreak", "--"]
    with db.write(conn):
        for n in range(60):
            task_id = f"t-{n:03d}" if n % 7 else f"t-{SECRET}-{n}"
            conn.execute("INSERT INTO tasks(id, project, title, description, status, created_at, updated_at)"
                         " VALUES (?, 'Trove', 't', '', 'queued', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                         (task_id,))
            content = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
            source = rng.choice(["operator", "codex", "", SECRET, "lead"])
            created = rng.choice(["2026-01-02T00:00:00Z", f"2026-01-03 {SECRET}", "2026-01-04"])
            conn.execute("INSERT INTO notes(task_id, kind, content, source, pinned, created_at)"
                         " VALUES (?, 'constraint', ?, ?, 1, ?)", (task_id, content, source, created))
    now = clock.now_iso()
    found = prime._project_constraints(conn, "Trove", now, 200).fetchall()
    assert len(found) == 60
    for limit in list(range(0, 900, 13)) + [4000, 100000]:
        monkeypatch.setattr(secret_gate, "_SEEN_CLEAN", set())
        meter, reference = prime.RedactingBudget(limit), prime.RedactingBudget(limit)
        monkeypatch.setattr(prime, "MAX_CONSTRAINTS", 200)
        listed = prime._section_constraints({"conn": conn, "projects": ["Trove"], "now": now}, meter)
        usable = found[:min(200, limit // prime._LEAST_CONSTRAINT + 1)]
        expected = _constraints_the_plain_way(usable, reference)
        assert listed["constraints"] == expected, limit
        assert (meter.used, meter.truncated) == (reference.used, reference.truncated), limit
        assert SECRET not in json.dumps(listed["constraints"])


def test_a_constraint_whose_clean_content_cannot_fit_is_refused_before_its_entry_is_built(conn, monkeypatch):
    """Once what is left of the budget is shorter than a row's cleared content, the row is
    refused from its content's length alone (no entry compacted, laid out or scrubbed): the
    pack, its charges and its truncation are the plain path's, and a content the gate does not
    clear (a secret, whose redaction may make the row fit) still takes the plain path."""
    from mindos.core import clock
    from mindos.store import db

    with db.write(conn):
        conn.execute("INSERT INTO tasks(id, project, title, description, status, created_at, updated_at)"
                     " VALUES ('t-1', 'Trove', 't', '', 'queued', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')")
        for n in range(40):
            content = (f"rule {n:02d}: " + "keep the window small and the queue short " * (1 + n % 4)
                       + (f"deploy key {SECRET}" if n % 9 == 4 else ""))
            conn.execute("INSERT INTO notes(task_id, kind, content, source, pinned, created_at)"
                         " VALUES ('t-1', 'constraint', ?, 'lead', 1, ?)", (content, f"2026-01-01T00:00:{n:02d}Z"))
    now = clock.now_iso()
    found = prime._project_constraints(conn, "Trove", now, 200).fetchall()
    contents = {row["note_id"]: row["content"] for row in found}
    built, meters = [], []
    compact = builder.compact
    monkeypatch.setattr(builder, "compact", lambda entry, *a, **k: built.append(
        (entry.get("note_id"), meters[-1].left())) or compact(entry, *a, **k))
    for limit in (300, 700, 1000, 2500):
        built.clear()
        meters.append(prime.RedactingBudget(limit))
        listed = prime._section_constraints({"conn": conn, "projects": ["Trove"], "now": now}, meters[-1])
        mine = list(built)
        reference = prime.RedactingBudget(limit)
        expected = _constraints_the_plain_way(found[:min(200, limit // prime._LEAST_CONSTRAINT + 1)], reference)
        assert listed["constraints"] == expected
        assert (meters[-1].used, meters[-1].truncated) == (reference.used, True)
        packed = {entry["note_id"] for entry in expected}
        # a row built and not packed: one whose content could still fit, or one the gate could not clear
        for note_id, left in mine:
            if note_id not in packed:
                assert len(contents[note_id]) + prime._LEAST_BESIDE_CONTENT <= left or SECRET in contents[note_id]
        assert len(mine) < min(len(found), limit // prime._LEAST_CONSTRAINT + 1), limit


@pytest.mark.parametrize("entry", [
    {"note_id": 1, "task_id": "", "project": "", "source": "", "created_at": "", "content": "x"},
    {"note_id": 7, "task_id": "t", "project": "P", "source": "s", "created_at": "2", "content": "plain rule"},
    {"note_id": 9, "task_id": "t", "project": "P", "source": "operator", "created_at": "2026-01-01T00:00:00Z",
     "content": "quotes \" and \\ and é"},
    {"note_id": 3, "task_id": SECRET, "project": "P", "source": SECRET, "created_at": SECRET, "content": "ok"},
])
def test_a_cleared_content_bounds_its_constraint_row_from_below(entry):
    # the row can cost no less than its content's length and _LEAST_BESIDE_CONTENT, whatever
    # the other columns hold or redaction makes of them
    table = builder.TABLES["constraints"]
    item = prime.scrub(builder.compact(dict(entry), defaults=builder.NOTE_DEFAULTS))
    assert table.cost(item) >= len(entry["content"]) + prime._LEAST_BESIDE_CONTENT
    if entry["note_id"] == 7:
        assert table.cost(item) == len(entry["content"]) + prime._LEAST_BESIDE_CONTENT  # and no more: exact here


def test_a_prime_with_a_lease_and_a_pick_leaves_weakref_unloaded_and_dispatch_heapq(fleet, home):
    """prime's pick (the dispatcher's) leaves weakref unloaded (about 2.5M instructions: only a
    server's connection keeps choices) and, in a home without a policy directory, the policies
    module (about 1.2M); importing the dispatcher leaves heapq for the first pick that merges
    streams.  prime reads its leases itself and its pick takes none: neither the lease module
    nor the progress records' is loaded."""
    import os
    import subprocess
    import sys

    from mindos.core import clock

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    probe = ("import io, json, sys; sys.path.insert(0, %r)\n"
             "import mindos.work.dispatch\n"
             "print('heapq' in sys.modules)\n"
             "from mindos.cli import run\n"
             "out, sys.stdout = sys.stdout, io.StringIO()\n"
             "codes = [run('autopilot', ['prime', '--agent', 'codex', '--format', 'json'])]\n"
             "printed, sys.stdout = json.loads(sys.stdout.getvalue()), out\n"
             "print(codes, printed['held_task_id'], 'next' in printed)\n"
             "print('weakref' in sys.modules, 'mindos.work.policies' in sys.modules,"
             " 'mindos.work.progress' in sys.modules, 'mindos.work.leases' in sys.modules)\n" % root)
    # -S: the machine's own site hooks (.pth files) may load either before our first line
    proc = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, HERMES_AUTOPILOT_HOME=str(home), MINDOS_NOW=clock.now_iso()))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["False", "[0] trove-held True", "False False False False"], proc.stderr


def test_prime_lists_the_leases_the_lease_listing_lists_without_their_progress(fleet):
    """prime reads the agent's leases itself (its columns only: the progress records and their
    module are left unread): the same leases as ``leases.list_leases(owner=...)``, in its order
    (soonest expiry first, then id), neither an expired, a finished nor another agent's one."""
    from datetime import timedelta

    from mindos.core import clock

    for n, minutes in enumerate((50, 20, 20, 90)):
        make_task(fleet, f"more-{n}", project=("Trove", "Acme")[n % 2], title=f"more work {n}")
        leases.claim(fleet, f"more-{n}", "codex", minutes=minutes)
    for task_id in ("lapsed", "finished"):
        make_task(fleet, task_id, project="Trove", title=f"{task_id} work")
        leases.claim(fleet, task_id, "codex", minutes=1 if task_id == "lapsed" else 60)
    with fleet:
        fleet.execute("UPDATE tasks SET status = 'completed' WHERE id = 'finished'")
    clock.set_now(clock.now() + timedelta(minutes=5))  # "lapsed" expired; the home fixture resets the clock
    listed = [(e["task_id"], e["lease_expires_at"], e["lease_epoch"]) for e in leases.list_leases(fleet, owner="codex")]
    packed = builder.decode(prime.prime(fleet, "codex", budget=20000, fmt="json"))
    assert [(e["task_id"], e["lease_expires_at"], e["lease_epoch"]) for e in packed["leases"]] == listed
    assert [task_id for task_id, _, _ in listed] == ["more-1", "more-2", "trove-held", "more-0", "more-3"]
    assert packed["held_task_id"] == "more-1" and packed["leases_total"] == 5
    acme = builder.decode(prime.prime(fleet, "codex", project="Acme", budget=20000, fmt="json"))
    assert [e["task_id"] for e in acme["leases"]] == ["more-1", "more-3"]


def test_the_pick_in_prime_still_applies_a_policy_once_the_home_has_a_policy_directory(fleet, home):
    # without a policy directory no project has a policy (the dispatcher does not load them);
    # with one, a dispatch_requires_tag policy keeps an untagged task out of prime's next
    from mindos.work import dispatch, policies

    assert dispatch._POLICY_DIR == os.path.basename(policies.policy_dir(str(home)))
    assert builder.decode(prime.prime(fleet, "codex", fmt="json"))["next"]["id"] == "acme-queued"
    os.makedirs(policies.policy_dir(str(home)))
    assert builder.decode(prime.prime(fleet, "codex", fmt="json"))["next"]["id"] == "acme-queued"
    with open(policies.policy_path(str(home), "Acme"), "w", encoding="utf-8") as handle:
        handle.write("dispatch_requires_tag: ready\n")
    assert builder.decode(prime.prime(fleet, "codex", fmt="json"))["next"]["id"] == "trove-queued"


def test_the_gate_is_asked_about_constraint_contents_a_run_at_a_time(conn, monkeypatch):
    """The contents of rows that may be refused are cleared a run (what one clean_each run
    holds) at a time: a walk that stops early has asked about at most one run past its last
    row, and a content the gate does not clear ends the runs (one at a time after it)."""
    from mindos.core import clock
    from mindos.store import db

    with db.write(conn):
        conn.execute("INSERT INTO tasks(id, project, title, description, status, created_at, updated_at)"
                     " VALUES ('t-1', 'Trove', 't', '', 'queued', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')")
        for n in range(150):
            content = f"rule {n:03d}: " + "keep the window small and the queue short " * 3 + (
                f"deploy key {SECRET}" if n == 60 else "")
            conn.execute("INSERT INTO notes(task_id, kind, content, source, pinned, created_at)"
                         " VALUES ('t-1', 'constraint', ?, 'lead', 1, ?)",
                         (content, f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z"))
    now = clock.now_iso()
    asked, real = [], secret_gate.clean_each
    monkeypatch.setattr(secret_gate, "clean_each", lambda texts: asked.append(len(texts)) or real(texts))
    for limit in (400, 4000):
        asked.clear()
        meter, reference = prime.RedactingBudget(limit), prime.RedactingBudget(limit)
        listed = prime._section_constraints({"conn": conn, "projects": ["Trove"], "now": now}, meter)
        found = prime._project_constraints(conn, "Trove", now, 200).fetchall()
        expected = _constraints_the_plain_way(found[:min(200, limit // prime._LEAST_CONSTRAINT + 1)], reference)
        assert listed["constraints"] == expected and (meter.used, meter.truncated) == (reference.used, True)
        run = secret_gate.SHORT // (len(found[0]["content"]) + 1)
        assert asked and max(asked) <= run
        if limit == 400:  # a few rows fit, the next is refused and the walk stops at the cap: one run asked
            assert len(asked) == 1
        else:  # every row past the packed ones is refused: runs until the secret, then one at a time
            assert asked[:2] == [run, run] and set(asked[3:]) == {1}


def test_an_inbox_of_hundreds_packs_as_the_plain_path_and_builds_only_what_may_fit(conn, monkeypatch):
    """An agent handed hundreds of tasks: the inbox packs, charges and truncates exactly as
    offering every entry to the plain budget does (secrets, empty values and long objectives
    included), and an entry that cannot fit whatever its redaction is refused before it is
    built or scanned."""
    import copy
    import random

    rng = random.Random(3)
    texts = ["keep the window small", SECRET, f"deploy with {SECRET} today", "x" * 300, "", "é ü", "ok"]
    items = [{"task_id": f"t-{n:03d}", "project": rng.choice(["Trove", "Acme"]), "title": rng.choice(texts),
              "from_agent": rng.choice(["lead", "codex"]), "handoff_status": "proposed",
              "objective": rng.choice(texts) + " " * rng.randint(0, 3) + "objective " * rng.randint(0, 30),
              "created_at": "2026-01-01T00:00:00Z"} for n in range(300)]
    built, compact = [], builder.compact
    monkeypatch.setattr(builder, "compact", lambda entry, *a, **k: built.append(entry) or compact(entry, *a, **k))
    for limit in list(range(400, 5000, 277)) + [100000]:
        monkeypatch.setattr(secret_gate, "_SEEN_CLEAN", set())
        built.clear()
        meter = prime.RedactingBudget(limit)
        listed = prime._section_inbox({"inbox": copy.deepcopy(items)}, meter)
        mine = len(built)
        reference, expected = prime.RedactingBudget(limit), []
        for item in copy.deepcopy(items):
            entry = compact({k: item[k] for k in prime._INBOX_FIELDS})
            if reference.take(entry, table=builder.TABLES["inbox"]):
                expected.append(entry)
        assert listed["inbox"] == expected and listed["inbox_total"] == 300, limit
        assert (meter.used, meter.truncated) == (reference.used, reference.truncated), limit
        assert SECRET not in json.dumps(listed["inbox"])
        if limit < 5000:
            assert mine < 300, limit  # the long ones past the budget were never built


def _seeded_primes(conn):
    """Every prime of a seeded home (a lease holder with a hundred pinned constraints, secrets
    and long ones among them; an agent handed eighty tasks; one with nothing) at budgets from
    tight to roomy, text and JSON, joined."""
    from mindos.core import clock

    for n in range(30):
        make_task(conn, f"big-{n:02d}", project="Big", title=f"big task {n} " + "word " * (n % 7),
                  priority=("P0", "P1", "P2", "P3")[n % 4], next_action=f"step {n}" if n % 3 else None)
    make_task(conn, "small-1", project="Small", title="small task")
    leases.claim(conn, "big-00", "holder")
    leases.claim(conn, "small-1", "holder")
    for n in range(100):
        content = (f"rule {n:03d}: " + "keep the window small and the queue short " * (n % 5)
                   + (f"deploy key {SECRET}" if n % 17 == 3 else "") + ("é ü" if n % 23 == 5 else ""))
        notes.add(conn, f"big-{n % 30:02d}", content=content.strip(), kind="constraint", pinned=True,
                  source=("lead", "codex", "operator")[n % 3], allow_secret=True)
        clock.set_now(f"2026-08-21T09:{n // 60:02d}:{n % 60:02d}Z")
    for n in range(80):
        handoffs.record(conn, f"big-{n % 30:02d}", from_agent="lead", to_agent="inboxed",
                        objective=f"objective {n}: " + "finish the export " * (n % 6)
                        + (f" with {SECRET}" if n % 11 == 2 else ""), allow_secret=True)
    printed = []
    for agent in ("holder", "inboxed", "nobody"):
        for budget in (400, 900, 2000, 4000, 12000):
            for fmt in ("text", "json"):
                out = prime.prime(conn, agent, budget=budget, fmt=fmt)
                printed.append(out if fmt == "text" else json.dumps(out, sort_keys=True))
    return "\n".join(printed)


def test_seeded_primes_print_what_they_printed_before_the_cost_work(conn):
    """The packs of a seeded home, text and JSON, for an agent holding leases, one handed many
    tasks and one with nothing, are byte for byte those printed before prime's per-call cost
    was cut (the digest below was taken from that version)."""
    from mindos.core import canonical

    printed = _seeded_primes(conn)
    assert SECRET not in printed and "[REDACTED:" in printed
    assert canonical.sha256_hex(printed) == SEEDED_PRIMES_DIGEST


# The digest of _seeded_primes as printed before the cost work (commit 71bc6e2).  A deliberate
# change of what prime, its pack or the held recall print changes it: take it anew then.
SEEDED_PRIMES_DIGEST = "a901643d8fbbf44d11a53504de1ca74ee184629723d21abe6196f8076efde7b0"
