"""Task tags: validated, idempotent, audited, compare-and-swap."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, db_state
from mindos.core import validate
from mindos.store import db, ledger
from mindos.work import rows, tags, tasks
from mindos.errors import InvalidInput, NotFound


def _last_event(conn):
    row = conn.execute("SELECT action, payload_json FROM audit_events ORDER BY id DESC LIMIT 1").fetchone()
    return row[0], json.loads(row[1])


@pytest.fixture
def task(conn):
    return tasks.create(conn, project="Infra", title="rotate logs", task_id="t-123")


def test_tag_adds_sorted_and_audits(conn, task):
    report = tags.add(conn, "t-123", ["client:trove", "autopilot-safe"])
    assert report == {"task_id": "t-123", "tags": ["autopilot-safe", "client:trove"],
                      "added": ["autopilot-safe", "client:trove"], "already_present": []}
    assert rows.get(conn, "t-123")["tags"] == ["autopilot-safe", "client:trove"]
    assert _last_event(conn) == ("task_tagged", {"added": ["autopilot-safe", "client:trove"],
                                                  "tags": ["autopilot-safe", "client:trove"]})


def test_tag_is_idempotent_and_reports_what_was_present(conn, task):
    tags.add(conn, "t-123", ["infra"])
    events = ledger.count_action(conn, "task_tagged")
    before = db_state(conn)
    report = tags.add(conn, "t-123", ["infra"])
    assert report == {"task_id": "t-123", "tags": ["infra"], "added": [], "already_present": ["infra"]}
    assert db_state(conn) == before and ledger.count_action(conn, "task_tagged") == events
    mixed = tags.add(conn, "t-123", ["infra", "ops/oncall"])
    assert (mixed["added"], mixed["already_present"], mixed["tags"]) == (["ops/oncall"], ["infra"],
                                                                        ["infra", "ops/oncall"])


def test_untag_removes_and_audits(conn, task):
    tags.add(conn, "t-123", ["a", "b", "c"])
    report = tags.remove(conn, "t-123", ["b"])
    assert report == {"task_id": "t-123", "removed": ["b"], "tags": ["a", "c"]}
    assert _last_event(conn) == ("task_untagged", {"removed": ["b"], "tags": ["a", "c"]})
    assert [t["id"] for t in tasks.list_tasks(conn, tag="b")] == []
    assert [t["id"] for t in tasks.list_tasks(conn, tag="a")] == ["t-123"]


def test_untag_of_an_absent_tag_fails_and_changes_nothing(conn, task):
    tags.add(conn, "t-123", ["a"])
    before = db_state(conn)
    with pytest.raises(NotFound, match=r"task 't-123' has no tag 'client:trove'"):
        tags.remove(conn, "t-123", ["client:trove"])
    with pytest.raises(NotFound):  # all-or-nothing: 'a' stays when 'zz' is absent
        tags.remove(conn, "t-123", ["a", "zz"])
    assert db_state(conn) == before


@pytest.mark.parametrize("bad", ["UPPER", "has space", "", "x" * 65, "tag;drop", "ü", "a,b", '"q"', "%", "a\nb"])
def test_invalid_tags_are_refused_naming_the_flag(conn, task, bad):
    before = db_state(conn)
    for call in (tags.add, tags.remove):
        with pytest.raises(InvalidInput, match=r"^invalid --tag"):
            call(conn, "t-123", [bad])
    assert db_state(conn) == before


def test_tag_charset_limit_is_64(conn, task):
    assert tags.add(conn, "t-123", ["a" * 64])["added"] == ["a" * 64]


def test_unknown_task_and_bad_ids(conn):
    for call in (tags.add, tags.remove):
        with pytest.raises(NotFound, match="unknown task 'ghost'"):
            call(conn, "ghost", ["a"])
        with pytest.raises(InvalidInput, match="^invalid task id"):
            call(conn, "../ghost", ["a"])
        with pytest.raises(InvalidInput, match="^invalid --tag"):
            call(conn, "ghost", [])
    assert conn.execute("SELECT count(*) FROM audit_events").fetchone()[0] == 0


def test_a_task_carries_at_most_max_tags(conn, task):
    tags.add(conn, "t-123", [f"t{n}" for n in range(validate.MAX_TAGS)])
    before = db_state(conn)
    with pytest.raises(InvalidInput, match="would carry"):
        tags.add(conn, "t-123", ["one-more"])
    assert db_state(conn) == before


def test_compare_and_swap_retries_when_the_value_changed_under_it(conn, task):
    calls = []

    def change(current):
        calls.append(list(current))
        if len(calls) == 1:  # another writer lands between our read and our write
            conn.execute("UPDATE tasks SET tags = '[\"theirs\"]' WHERE id = 't-123'")
        merged = sorted(set(current) | {"mine"})
        return merged, {"tags": merged}

    with db.write(conn):
        report, new_tags = tags._swap(conn, "t-123", change)
    assert calls == [[], ["theirs"]]
    assert new_tags == ["mine", "theirs"] and rows.get(conn, "t-123")["tags"] == ["mine", "theirs"]


def test_concurrent_taggers_never_drop_each_others_tags(conn, task, home):
    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home))
    names = [f"agent-{n}" for n in range(6)]
    procs = [subprocess.Popen([sys.executable, os.path.join(ROOT, "autopilot.py"), "tag", "t-123", "--tag", name],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for name in names]
    results = [(p.wait(timeout=60), p.stdout.read(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert all(rc == 0 and err == "" for rc, _, err in results), results
    assert rows.get(conn, "t-123")["tags"] == sorted(names)
    assert ledger.count_action(conn, "task_tagged") == len(names)
    assert ledger.verify_chain(conn)["ok"]


def test_cli_tag_and_untag(conn, task, cli, cli_json):
    assert cli_json("autopilot", "tag", "t-123", "--tag", "autopilot-safe", "--tag", "client:trove")["tags"] == \
        ["autopilot-safe", "client:trove"]
    assert cli_json("autopilot", "untag", "t-123", "--tag", "client:trove")["tags"] == ["autopilot-safe"]
    rc, out, err = cli("autopilot", "untag", "t-123", "--tag", "client:trove")
    assert (rc, out) == (1, "") and err == "task 't-123' has no tag 'client:trove'\n"
    rc, out, err = cli("autopilot", "tag", "t-123", "--tag", "Nope")
    assert (rc, out) == (2, "") and err.startswith("invalid --tag: 'Nope'")
    rc, out, err = cli("autopilot", "tag", "t-123")
    assert rc == 2 and out == "" and "--tag" in err


# ---------------------------------------------------------------------------------------
# The task_tags index (what tag-scoped dispatch reads) stays in step with tasks.tags


def _indexed(conn):
    return sorted(tuple(row) for row in conn.execute("SELECT tag, task_id FROM task_tags"))


def test_tag_index_follows_create_tag_untag_and_delete(conn):
    tasks.create(conn, project="Infra", title="a", task_id="a", tags=["infra", "autopilot-safe"])
    tasks.create(conn, project="Infra", title="b", task_id="b")
    assert _indexed(conn) == [("autopilot-safe", "a"), ("infra", "a")]
    tags.add(conn, "b", ["infra"])
    tags.remove(conn, "a", ["infra"])
    assert _indexed(conn) == [("autopilot-safe", "a"), ("infra", "b")]
    with db.write(conn):
        conn.execute("DELETE FROM tasks WHERE id = 'b'")
    assert _indexed(conn) == [("autopilot-safe", "a")]


@pytest.mark.bare_home
def test_migration_4_backfills_the_tag_index_of_an_older_database(home):
    from mindos.store import migrations

    os.makedirs(home, exist_ok=True)
    raw = db.sqlite3.connect(os.path.join(str(home), "state.db"), isolation_level=None)
    for migration in migrations.MIGRATIONS[:3]:
        for statement in db.split_statements(migration()):
            raw.execute(statement)
    raw.execute("PRAGMA user_version=3")
    raw.execute("INSERT INTO tasks(id, project, title, tags, created_at, updated_at)"
                " VALUES ('old', 'Infra', 'legacy', '[\"db\",\"infra\"]', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')")
    raw.close()
    conn = db.connect(str(home))
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations.MIGRATIONS)
        assert _indexed(conn) == [("db", "old"), ("infra", "old")]
        from mindos.work import dispatch

        assert dispatch.next_task(conn, tags=["db"])["task"]["id"] == "old"
    finally:
        conn.close()
