"""What a recall or a prime reads and loads per call: bounded reads and modules left unloaded."""

from conftest import make_task, modules_loaded
from mindos.context import prime
from mindos.memory import handoffs


def _hand_over(conn, count):
    """``count`` tasks handed to ``inboxed``; the last in inbox order (the only P3) is the one
    task of project Zed."""
    for n in range(count):
        last = n == count - 1
        make_task(conn, f"h-{n:04d}", project="Zed" if last else ("Acme", "Trove")[n % 2],
                  title=f"handed task {n}", priority="P3" if last else "P1")
        handoffs.record(conn, f"h-{n:04d}", from_agent="lead", to_agent="inboxed", objective=f"finish part {n}")


def test_prime_reads_a_bounded_head_of_a_long_inbox_yet_counts_and_scopes_it_all(conn, monkeypatch):
    """An agent handed more tasks than prime reads: at most MAX_INBOX inbox rows are built
    (the budget holds fewer), ``inbox_total`` still counts every handed task and the project
    of the last one still scopes the pack (``projects``); the pack is the one a full read gives."""
    count = prime.MAX_INBOX + 40
    _hand_over(conn, count)
    built, real = [], handoffs.inbox
    monkeypatch.setattr(handoffs, "inbox", lambda *a, **k: built.append(real(*a, **k)) or built[-1])
    bounded = prime.prime(conn, "inboxed", budget=prime.MIN_BUDGET, fmt="json")
    assert [len(found["items"]) for found in built] == [prime.MAX_INBOX]
    assert bounded["inbox_total"] == count and "Zed" in bounded["projects"]
    monkeypatch.setattr(prime, "MAX_INBOX", 100000)  # the full read, for reference
    full = prime.prime(conn, "inboxed", budget=prime.MIN_BUDGET, fmt="json")
    assert len(built[-1]["items"]) == count
    assert full["digest"] == bounded["digest"] and full["inbox"] == bounded["inbox"]


def test_prime_reads_the_whole_inbox_when_it_is_short(conn, monkeypatch):
    _hand_over(conn, 5)
    scoped = []
    monkeypatch.setattr(handoffs, "inbox_scope", lambda *a, **k: scoped.append(a) or (0, []))
    packed = prime.prime(conn, "inboxed", fmt="json")
    assert not scoped and len(packed["inbox"]) - 1 == 5 and "inbox_total" not in packed  # the table's row count
    assert packed["projects"] == ["Acme", "Trove", "Zed"]


def test_inbox_scope_counts_what_the_inbox_lists(conn):
    _hand_over(conn, 7)
    handoffs.ack(conn, "h-0002", "inboxed")
    for project, unacked in ((None, False), (None, True), ("Acme", True), ("Nowhere", False)):
        listed = handoffs.inbox(conn, "inboxed", project=project, unacked_only=unacked)["items"]
        assert handoffs.inbox_scope(conn, "inboxed", project=project, unacked_only=unacked) == (
            len(listed), sorted({item["project"] for item in listed}))


_OPTIONAL = ("mindos.context.sections", "mindos.memory.rerank")


def test_bundles_without_an_opt_in_section_leave_the_sections_and_the_rerank_unloaded(home):
    """``prime`` for an agent holding a lease (it recalls the held task with the default
    parameters), ``recall`` and ``recall --related`` build bundles without an opt-in section:
    they load neither the opt-in sections nor the rerank; ``--rerank`` loads the rerank only,
    an opt-in section loads the sections."""
    codes, steps = modules_loaded(home, _OPTIONAL, [
        [["note", "{task}", "--content", "the payments path retries twice"], ["claim", "{task}", "--owner", "a1"],
         ["prime", "--agent", "a1", "--format", "json"], ["recall", "{task}", "--agent", "a1"],
         ["recall", "{task}", "--agent", "a1", "--related", "3"]],
        [["recall", "{task}", "--agent", "a1", "--related", "3", "--rerank"]],
        [["recall", "{task}", "--agent", "a1", "--related-facts", "2"]]])
    assert codes == [0] * 8
    assert steps == [[], ["mindos.memory.rerank"], sorted(_OPTIONAL)]


def test_related_notes_of_one_common_prefix_term_rank_as_fts5_without_its_bm25(conn):
    """A task whose text is one retrieval group matched through a prefix term that is common
    (more notes than the related postings budget): the related notes are FTS5's own BM25
    order over the window of newest postings, their scores FTS5's up to one factor (the
    term's weight), and bm25() is never asked (it would first merge every posting of every
    word the prefix covers)."""
    from mindos.context import pack
    from mindos.core import clock
    from mindos.memory import notes, retrieval
    from mindos.store import fts
    from mindos.work import rows

    make_task(conn, "t-mig", project="P", title="migrate")
    forms = ("migration", "migrating", "migrated", "migrations")
    for n in range(pack.RELATED_POSTINGS_BUDGET + 60):
        make_task(conn, f"t-o{n:03d}", project="P" if n % 5 else "Q", title=f"other task {n}")
        filler = " ".join(("alpha", "beta", "gamma", "delta")[(n + k) % 4] for k in range(n % 9))
        notes.add(conn, f"t-o{n:03d}", content=" ".join([forms[n % 4]] * (1 + n % 3)) + " " + filler)
    task, now = rows.get(conn, "t-mig"), clock.now_iso()
    statements = []
    conn.set_trace_callback(statements.append)
    try:
        found, used, skipped = pack.related_candidates(conn, task, 5, "project", now)
    finally:
        conn.set_trace_callback(None)
    assert used == 1 and len(found) == 5
    assert not [text for text in statements if "bm25(" in text]
    expression = retrieval.groups(pack.task_text(task))[0].expression()
    assert pack._single_prefix(expression)
    floor = conn.execute("SELECT min(rowid) FROM (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?"
                         " ORDER BY rowid DESC LIMIT ?)", (expression, pack.RELATED_POSTINGS_BUDGET)).fetchone()[0]
    reference = conn.execute(
        "SELECT n.id, bm25(notes_fts) FROM notes_fts CROSS JOIN notes n ON n.id = notes_fts.rowid"
        " CROSS JOIN tasks t ON t.id = n.task_id WHERE notes_fts MATCH ? AND notes_fts.rowid >= ?"
        " AND n.superseded_by IS NULL AND n.task_id <> ? AND t.project = ? ORDER BY bm25(notes_fts), notes_fts.rowid"
        " LIMIT 5", (expression, floor, "t-mig", "P")).fetchall()
    assert [item["id"] for item in found] == [row[0] for row in reference]
    factors = {round(item["score"] / row[1], 4) for item, row in zip(found, reference)}
    assert len(factors) == 1 and fts.single_word(expression) is None
