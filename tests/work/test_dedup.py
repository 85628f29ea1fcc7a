"""Task deduplication: similar, ops.py dup-tasks, and similar_open_tasks on create."""

import json
import random

import pytest
from conftest import script, seed_once

from mindos.core import clock
from mindos.memory import notes
from mindos.store import db, fts
from mindos.work import dedup, rows, tasks
from mindos.errors import InvalidInput, NotFound

INJECTION = 'NEAR(fix "login" AND) OR -bug * title:x ^ {a b}: ( % _ \\ ;DROP TABLE tasks;--'


def make(conn, task_id, title, project="Trove", description=""):
    clock.advance(seconds=1)  # distinct created_at: "oldest" is meaningful
    return tasks.create(conn, project=project, title=title, task_id=task_id, description=description)


def snapshot(conn):
    return {table: [tuple(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2")]
            for table in ("tasks", "audit_events", "dependencies", "notes")}


def created_payload(conn, task_id):
    row = conn.execute("SELECT payload_json FROM audit_events WHERE entity_id = ? AND action = 'created'",
                       (task_id,)).fetchone()
    return json.loads(row[0])


@pytest.fixture
def fleet(conn):
    seed_once(conn, __name__ + ".fleet", _fleet)  # built once; each test gets a copy of the database
    return conn


def _fleet(conn):
    make(conn, "a", "Fix the login redirect bug", description="users land on /home")
    make(conn, "b", "fix login redirect bug", description="users land on /home")  # same tokens minus 'the'
    make(conn, "c", "Fix the login redirect", description="users land on /home")
    make(conn, "d", "Write the quarterly report")
    make(conn, "other-proj", "Fix the login redirect bug", project="Elsewhere", description="users land on /home")
    for task_id, status in (("done", "completed"), ("failed", "failed"), ("gone", "cancelled")):
        make(conn, task_id, "Fix the login redirect bug", description="users land on /home")
        tasks.update(conn, task_id, status=status)
    make(conn, "blocked", "Fix the login redirect bug", description="users land on /home")
    tasks.update(conn, "blocked", status="blocked")


# ---------------------------------------------------------------------------------------
# similar


def test_similar_lists_open_same_project_near_duplicates(fleet):
    result = dedup.similar(fleet, "a")
    assert result["task_id"] == "a" and result["project"] == "Trove" and result["threshold"] == 0.8
    ids = [item["id"] for item in result["similar"]]
    assert ids == ["blocked", "b", "c"]  # similarity descending, then id
    assert [item["similarity"] for item in result["similar"]] == [1.0, 0.8889, 0.8889]
    assert result["count"] == 3
    item = result["similar"][0]
    assert set(item) == {"id", "title", "status", "priority", "created_at", "similarity"}
    assert item["status"] == "blocked"


def test_similar_never_counts_settled_other_project_or_itself(fleet):
    ids = {item["id"] for item in dedup.similar(fleet, "a", threshold_value=0.1)["similar"]}
    assert not ids & {"a", "done", "failed", "gone", "other-proj"}


def test_similar_threshold_controls_matching(fleet):
    assert [i["id"] for i in dedup.similar(fleet, "a", threshold_value=1.0)["similar"]] == ["blocked"]
    loose = dedup.similar(fleet, "a", threshold_value=0.05)["similar"]
    assert "d" in {i["id"] for i in loose}  # shares only 'the'
    assert loose[-1]["id"] == "d" and loose[-1]["similarity"] < 0.2


def test_similar_threshold_from_environment(fleet, monkeypatch):
    monkeypatch.setenv("AUTOPILOT_NEAR_DUP_THRESHOLD", "0.95")
    assert [i["id"] for i in dedup.similar(fleet, "a")["similar"]] == ["blocked"]
    assert dedup.similar(fleet, "a")["threshold"] == 0.95


@pytest.mark.parametrize("value", [0, -0.5, 1.01, float("nan"), float("inf"), True, "0.8"])
def test_similar_rejects_bad_thresholds(fleet, value):
    with pytest.raises(InvalidInput, match="invalid --threshold"):
        dedup.similar(fleet, "a", threshold_value=value)


def test_similar_rejects_a_malformed_environment_threshold(fleet, monkeypatch):
    monkeypatch.setenv("AUTOPILOT_NEAR_DUP_THRESHOLD", "lots")
    with pytest.raises(InvalidInput, match="invalid AUTOPILOT_NEAR_DUP_THRESHOLD"):
        dedup.similar(fleet, "a")


def test_similar_unknown_task(fleet):
    with pytest.raises(NotFound, match="unknown task 'nope'"):
        dedup.similar(fleet, "nope")


def test_similar_uses_the_note_guards_measure(fleet):
    mine = notes.tokens("Fix the login redirect bug users land on /home")
    theirs = notes.tokens("fix login redirect bug users land on /home")
    expected = round(notes.jaccard(mine, theirs), 4)
    by_id = {i["id"]: i for i in dedup.similar(fleet, "a")["similar"]}
    assert by_id["b"]["similarity"] == expected == 0.8889


def test_similar_on_a_tokenless_task_is_empty(conn):
    make(conn, "x", "!!!")
    make(conn, "y", "!!!")
    assert dedup.similar(conn, "x")["similar"] == []


@pytest.mark.parametrize("title", [INJECTION, '"', "NEAR(", "a OR b", "*", "col:x", "%", "_"])
def test_injection_shaped_titles_never_raise(conn, title):
    make(conn, "x", title)
    created = make(conn, "y", title)
    assert created["title"] == title
    result = dedup.similar(conn, "x", threshold_value=0.5)
    if notes.tokens(title):
        assert [i["id"] for i in result["similar"]] == ["y"]
        assert created["similar_open_tasks"][0]["id"] == "x"
    else:
        assert result["similar"] == [] and "similar_open_tasks" not in created
    assert dedup.dup_tasks(conn)["open_tasks"] == 2


def brute_force(conn, task_id, threshold):
    me = conn.execute("SELECT project, title, description FROM tasks WHERE id = ?", (task_id,)).fetchone()
    mine = notes.tokens(f"{me['title']} {me['description']}")
    out = []
    for row in conn.execute("SELECT id, title, description FROM tasks WHERE project = ? AND id <> ?"
                            " AND status NOT IN ('completed', 'failed', 'cancelled')", (me["project"], task_id)):
        score = notes.jaccard(mine, notes.tokens(f"{row['title']} {row['description']}"))
        if mine and score >= threshold:
            out.append((row["id"], round(score, 4)))
    return sorted(out, key=lambda x: (-x[1], x[0]))


def seed_random(conn, count=120, seed=3):
    rng = random.Random(seed)
    vocab = ["fix", "login", "bug", "the", "cache", "retry", "deploy", "api", "rate", "limit", "pool", "db",
             "a", "to", "page", "error", "slow", "auth"]
    for i in range(count):
        words = rng.sample(vocab, rng.randint(1, 6))
        desc = " ".join(rng.sample(vocab, rng.randint(0, 3)))
        project = rng.choice(["P", "Q"])
        tasks.create(conn, project=project, title=" ".join(words).title(), description=desc, task_id=f"r{i:03d}")
        if rng.random() < 0.15:
            tasks.update(conn, f"r{i:03d}", status=rng.choice(["completed", "cancelled"]))


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.8, 1.0])
def test_candidate_prefilter_is_exact_against_brute_force(conn, threshold):
    seed_random(conn)
    for i in range(0, 120, 7):
        task_id = f"r{i:03d}"
        got = [(item["id"], item["similarity"]) for item in dedup.similar(conn, task_id, threshold_value=threshold)["similar"]]
        assert got == brute_force(conn, task_id, threshold), task_id


@pytest.fixture
def plain_conn(tmp_path, monkeypatch):
    """A database built as on an SQLite without FTS5."""
    monkeypatch.setattr(db, "fts5_supported", lambda: False)
    connection = db.connect(str(tmp_path / "plain"))
    assert not fts.has(connection, "tasks_fts")
    yield connection
    connection.close()


def test_substring_fallback_matches_the_fts_path(conn, plain_conn):
    seed_random(conn)
    seed_random(plain_conn)
    for i in range(0, 120, 11):
        task_id = f"r{i:03d}"
        assert dedup.similar(plain_conn, task_id, threshold_value=0.5) == dedup.similar(conn, task_id, threshold_value=0.5)
    assert dedup.dup_tasks(plain_conn) == dedup.dup_tasks(conn)


# ---------------------------------------------------------------------------------------
# similar_open_tasks on create


def test_create_records_similar_open_tasks_in_response_and_audit(conn):
    first = make(conn, "a", "Fix the login redirect bug")
    assert "similar_open_tasks" not in first
    assert "similar_open_tasks" not in created_payload(conn, "a")
    second = make(conn, "b", "fix the LOGIN redirect bug!")
    expected = [{"id": "a", "title": "Fix the login redirect bug", "similarity": 1.0}]
    assert second["similar_open_tasks"] == expected
    assert created_payload(conn, "b")["similar_open_tasks"] == expected
    assert rows.get(conn, "b")["status"] == "queued"  # informational, never blocking


def test_create_ignores_settled_and_other_project_tasks(conn):
    make(conn, "a", "Rotate the TLS certificate")
    tasks.update(conn, "a", status="completed")
    make(conn, "b", "Rotate the TLS certificate", project="Elsewhere")
    third = make(conn, "c", "Rotate the TLS certificate")
    assert "similar_open_tasks" not in third
    assert "similar_open_tasks" not in created_payload(conn, "c")


def test_create_uses_description_too_and_the_threshold(conn, monkeypatch):
    make(conn, "a", "Cert", description="rotate the tls certificate before friday")
    near = make(conn, "b", "Cert", description="rotate the tls certificate before monday")
    assert "similar_open_tasks" not in near  # 6/8 = 0.75 < 0.8
    monkeypatch.setenv("AUTOPILOT_NEAR_DUP_THRESHOLD", "0.7")
    looser = make(conn, "c", "Cert", description="rotate the tls certificate before monday")
    assert [(s["id"], s["similarity"]) for s in looser["similar_open_tasks"]] == [("b", 1.0), ("a", 0.75)]


def test_create_is_never_refused_by_a_malformed_threshold(conn, monkeypatch):
    make(conn, "a", "Rotate the TLS certificate")
    monkeypatch.setenv("AUTOPILOT_NEAR_DUP_THRESHOLD", "not-a-number")
    created = make(conn, "b", "Rotate the TLS certificate")
    assert created["similar_open_tasks"][0]["id"] == "a"


def test_create_reports_a_bounded_list(conn):
    for i in range(dedup.CREATE_REPORT_LIMIT + 5):
        make(conn, f"dup{i:02d}", "Nightly backup job")
    last = make(conn, "last", "Nightly backup job")
    assert len(last["similar_open_tasks"]) == dedup.CREATE_REPORT_LIMIT
    assert [s["id"] for s in last["similar_open_tasks"]] == [f"dup{i:02d}" for i in range(dedup.CREATE_REPORT_LIMIT)]


@pytest.mark.parametrize("fts", [True, False])
def test_create_finds_an_exact_duplicate_beyond_the_scan_limit(conn, plain_conn, fts):
    # 260 older near-identical tasks (7/8 = 0.875) fill more than the CREATE_SCAN_LIMIT window;
    # the exact duplicate is the newest of them and must still be examined and reported first
    target = conn if fts else plain_conn
    title = "Deploy the gateway canary to staging region"
    crowd = 260
    assert crowd > dedup.CREATE_SCAN_LIMIT
    with db.write(target):  # seeded directly: 260 creates would each run the hook
        for i in range(crowd):
            target.execute("INSERT INTO tasks(id, project, title, created_at, updated_at) VALUES (?, 'Trove', ?, ?, ?)",
                           (f"near{i:03d}", f"{title} variant{i}", "2026-08-20T09:00:00Z", "2026-08-20T09:00:00Z"))
    make(target, "exact", title)
    created = make(target, "new", title)
    found = created["similar_open_tasks"]
    assert found[0] == {"id": "exact", "title": title, "similarity": 1.0}
    assert len(found) == dedup.CREATE_REPORT_LIMIT
    assert all(item["similarity"] == 0.875 for item in found[1:])
    assert dedup.similar(target, "new")["count"] == crowd + 1  # the uncapped command sees them all


@pytest.mark.parametrize("fts", [True, False])
def test_capped_create_scan_agrees_with_the_uncapped_search_below_the_cap(conn, plain_conn, fts, monkeypatch):
    # with fewer candidates than the cap, ranking then filling must still examine every one
    target = conn if fts else plain_conn
    seed_random(target)
    monkeypatch.setenv("AUTOPILOT_NEAR_DUP_THRESHOLD", "0.5")
    for i in range(0, 120, 7):
        row = target.execute("SELECT id, project, title, description FROM tasks WHERE id = ?", (f"r{i:03d}",)).fetchone()
        capped = dedup.similar_open_tasks(target, row["id"], row["project"], row["title"], row["description"])
        full = dedup.similar(target, row["id"])["similar"][:dedup.CREATE_REPORT_LIMIT]
        assert capped == [{"id": m["id"], "title": m["title"], "similarity": m["similarity"]} for m in full], row["id"]


def test_default_threshold_is_inclusive_at_exactly_0_8(conn, monkeypatch):
    monkeypatch.delenv("AUTOPILOT_NEAR_DUP_THRESHOLD", raising=False)
    make(conn, "four", "a b c d")
    five = make(conn, "five", "a b c d e")  # Jaccard 4/5 = 0.8
    assert five["similar_open_tasks"] == [{"id": "four", "title": "a b c d", "similarity": 0.8}]
    assert created_payload(conn, "five")["similar_open_tasks"] == five["similar_open_tasks"]
    assert [(i["id"], i["similarity"]) for i in dedup.similar(conn, "four")["similar"]] == [("five", 0.8)]
    assert [c["canonical"]["id"] for c in dedup.dup_tasks(conn)["clusters"]] == ["four"]
    make(conn, "six", "a b c d e f")  # 4/6 against "four": below; 5/6 against "five": above
    assert [i["id"] for i in dedup.similar(conn, "six")["similar"]] == ["five"]


def test_create_via_cli_shows_similar_open_tasks(conn, cli_json):
    make(conn, "a", "Fix the login redirect bug")
    out = cli_json("autopilot", "create", "--project", "Trove", "--title", "Fix login redirect bug", "--id", "b")
    assert out["similar_open_tasks"] == [{"id": "a", "title": "Fix the login redirect bug", "similarity": 0.8}]


# ---------------------------------------------------------------------------------------
# dup-tasks


def test_dup_tasks_clusters_per_project_with_oldest_canonical(fleet):
    result = dedup.dup_tasks(fleet)
    assert result["read_only"] is True and result["threshold"] == 0.8
    assert result["open_tasks"] == 6 and result["clusters_total"] == 1 and result["duplicate_tasks"] == 3
    cluster = result["clusters"][0]
    assert cluster["project"] == "Trove" and cluster["canonical"]["id"] == "a" and cluster["size"] == 4
    assert [(d["id"], d["similarity"]) for d in cluster["duplicates"]] == [("blocked", 1.0), ("b", 0.8889), ("c", 0.8889)]
    assert "a" in cluster["suggested_action"] and "blocked, b, c" in cluster["suggested_action"]
    assert "dep" in cluster["suggested_action"]


def test_dup_tasks_is_greedy_against_the_canonical_only(conn):
    make(conn, "x1", "alpha beta gamma delta")
    make(conn, "x2", "alpha beta gamma delta epsilon")  # 0.8 with x1
    make(conn, "x3", "beta gamma delta epsilon zeta")  # 0.67 with x2, 0.5 with x1
    make(conn, "x4", "beta gamma delta epsilon zeta")  # joins x3's cluster, not x1's
    result = dedup.dup_tasks(conn)
    clusters = [(c["canonical"]["id"], [d["id"] for d in c["duplicates"]]) for c in result["clusters"]]
    assert clusters == [("x1", ["x2"]), ("x3", ["x4"])]


def test_dup_tasks_threshold_and_singletons(fleet):
    strict = dedup.dup_tasks(fleet, threshold_value=1.0)
    assert [(c["canonical"]["id"], [d["id"] for d in c["duplicates"]]) for c in strict["clusters"]] == [("a", ["blocked"])]
    loose = dedup.dup_tasks(fleet, threshold_value=0.05)
    assert {d["id"] for c in loose["clusters"] for d in c["duplicates"]} >= {"b", "c", "blocked", "d"}


def test_dup_tasks_separates_projects(conn):
    make(conn, "p1", "Rotate the TLS certificate", project="P")
    make(conn, "q1", "Rotate the TLS certificate", project="Q")
    make(conn, "p2", "Rotate the TLS certificate", project="P")
    make(conn, "q2", "Rotate the TLS certificate", project="Q")
    result = dedup.dup_tasks(conn)
    assert [(c["project"], c["canonical"]["id"], [d["id"] for d in c["duplicates"]]) for c in result["clusters"]] == [
        ("P", "p1", ["p2"]), ("Q", "q1", ["q2"])]


def naive_greedy(conn, threshold):
    rows = conn.execute("SELECT id, project, title, description FROM tasks WHERE status NOT IN"
                        " ('completed', 'failed', 'cancelled') ORDER BY project, created_at, seq").fetchall()
    clusters = []
    for row in rows:
        mine = notes.tokens(f"{row['title']} {row['description']}")
        for cluster in clusters:
            if cluster[0] == row["project"] and notes.jaccard(mine, cluster[2]) >= threshold:
                cluster[3].append(row["id"])
                break
        else:
            clusters.append((row["project"], row["id"], mine, []))
    return [(c[1], sorted(c[3])) for c in clusters if c[3]]


@pytest.mark.parametrize("threshold", [0.4, 0.6, 0.8])
def test_dup_tasks_matches_a_naive_greedy_clustering(conn, threshold):
    seed_random(conn, count=150, seed=11)
    result = dedup.dup_tasks(conn, threshold_value=threshold)
    got = [(c["canonical"]["id"], sorted(d["id"] for d in c["duplicates"])) for c in result["clusters"]]
    assert got == naive_greedy(conn, threshold)


def test_dup_tasks_is_read_only_and_deterministic(fleet):
    before = snapshot(fleet)
    first = dedup.dup_tasks(fleet)
    dry = dedup.dup_tasks(fleet, dry_run=True)
    assert snapshot(fleet) == before
    assert dry["dry_run"] is True and first["dry_run"] is False
    assert dict(dry, dry_run=False) == first == dedup.dup_tasks(fleet)


@pytest.mark.parametrize("value", [0, 1.5, -1, float("nan")])
def test_dup_tasks_rejects_bad_thresholds(fleet, value):
    with pytest.raises(InvalidInput, match="invalid --threshold"):
        dedup.dup_tasks(fleet, threshold_value=value)


# ---------------------------------------------------------------------------------------
# CLI


def test_similar_cli(fleet, cli_json):
    out = cli_json("autopilot", "similar", "a", "--threshold", "0.95")
    assert [i["id"] for i in out["similar"]] == ["blocked"]


def test_dup_tasks_cli_identical_with_and_without_dry_run(fleet, cli):
    rc1, out1, err1 = cli("ops", "dup-tasks", "--threshold", "0.7")
    rc2, out2, err2 = cli("ops", "dup-tasks", "--threshold", "0.7", "--dry-run")
    assert rc1 == rc2 == 0 and err1 == err2 == ""
    assert json.loads(out1) == dict(json.loads(out2), dry_run=False)
    assert cli("ops", "dup-tasks", "--threshold", "0.7") == (rc1, out1, err1)


@pytest.mark.parametrize("door,argv,rc,message", [
    ("autopilot", ["similar", "nope"], 1, "unknown task 'nope'"),
    ("autopilot", ["similar", "a", "--threshold", "0"], 2, "invalid --threshold"),
    ("autopilot", ["similar", "a", "--threshold", "2"], 2, "invalid --threshold"),
    ("autopilot", ["similar", "a", "--threshold", "high"], 2, "expected a number in ASCII digits"),
    ("autopilot", ["similar", "a", "--threshold", "nan"], 2, "expected a number in ASCII digits"),
    ("autopilot", ["similar", "../../x"], 2, "invalid"),
    ("autopilot", ["similar"], 2, "required"),
    ("ops", ["dup-tasks", "--threshold", "-0.1"], 2, "invalid --threshold"),
    ("ops", ["dup-tasks", "--threshold", "x"], 2, "expected a number in ASCII digits"),
])
def test_cli_errors_are_one_line_and_change_nothing(fleet, cli, door, argv, rc, message):
    before = snapshot(fleet)
    code, out, err = cli(door, *argv)
    assert code == rc and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert snapshot(fleet) == before


def test_env_threshold_error_through_the_cli(fleet, cli, monkeypatch):
    monkeypatch.setenv("AUTOPILOT_NEAR_DUP_THRESHOLD", "7")
    code, out, err = cli("ops", "dup-tasks")
    assert code == 2 and out == "" and "invalid AUTOPILOT_NEAR_DUP_THRESHOLD" in err


def test_real_front_doors_subprocess(fleet, home):
    proc = script("autopilot.py", "similar", "a", home=home)
    assert proc.returncode == 0 and proc.stderr == ""
    assert [i["id"] for i in json.loads(proc.stdout)["similar"]] == ["blocked", "b", "c"]
    ops = script("ops.py", "dup-tasks", "--dry-run", home=home)
    assert ops.returncode == 0 and ops.stderr == "" and json.loads(ops.stdout)["clusters_total"] == 1


@pytest.mark.parametrize("fts", [True, False])
def test_huge_descriptions_work_on_both_paths(conn, plain_conn, fts):
    target = conn if fts else plain_conn
    description = " ".join(f"word{i}" for i in range(3000))
    make(target, "big1", "Huge", description=description)
    second = make(target, "big2", "Huge", description=description + " extra")
    assert second["similar_open_tasks"][0]["id"] == "big1"
    assert [i["id"] for i in dedup.similar(target, "big1", threshold_value=0.1)["similar"]] == ["big2"]
    assert dedup.dup_tasks(target)["clusters"][0]["canonical"]["id"] == "big1"
