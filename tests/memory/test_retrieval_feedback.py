"""Pseudo-relevance feedback and change records named by their old value: memory-search
finds what its best answer names (multi-hop), and the note written with a change that names
only what was replaced."""

from conftest import make_task
from mindos.core import clock
from mindos.memory import facts, learned, notes, retrieval
from mindos.memory import memory_search as search


def _keys(hits):
    return [(hit["kind"], hit["id"]) for hit in hits]


def _owners(conn):
    """svc-ledger is owned by team-otter; team-otter runs cassandra-4; plenty of rows talk
    about the team and what it runs."""
    make_task(conn, "k", project="Core", title="knowledge")
    owner = facts.assert_fact(conn, subject="svc-ledger", predicate="owned-by", obj="team-otter", source="codex",
                              task="k")
    runs = facts.assert_fact(conn, subject="team-otter", predicate="operates", obj="cassandra-4", source="codex",
                             task="k")
    facts.assert_fact(conn, subject="team-otter", predicate="meets-on", obj="tuesday", source="codex", task="k")
    for n in range(25):
        clock.advance(hours=1)
        notes.add(conn, "k", content=f"the team offsite {n} needs a run book")
    return owner, runs


def test_the_best_answers_distinctive_words_bring_what_it_names(conn, monkeypatch):
    # feedback alone: the everyday reading "database" -> cassandra switched off
    monkeypatch.setattr(retrieval, "everyday_readings", lambda tokens: {})
    owner, runs = _owners(conn)
    query = "what database does the team owning svc-ledger run"
    hits = _keys(search.memory_search(conn, query, project="Core", limit=5))
    assert hits[:2] == [("fact", owner["id"]), ("fact", runs["id"])]
    # without feedback (and the candidates' own associations, which name team-otter beside both the
    # service and the team) the second hop is lost in the crowd
    monkeypatch.setattr(search, "FEEDBACK_WEIGHT", 0.0)
    monkeypatch.setattr(learned, "LOCAL_ASSOCIATES", 0)
    assert ("fact", runs["id"]) not in _keys(search.memory_search(conn, query, project="Core", limit=5))[:2]


def test_feedback_is_deterministic_and_keeps_the_best_answer_first(conn):
    owner, _ = _owners(conn)
    query = "what database does the team owning svc-ledger run"
    first = search.memory_search(conn, query, project="Core", limit=10)
    assert first == search.memory_search(conn, query, project="Core", limit=10)
    assert _keys(first)[0] == ("fact", owner["id"])


def test_feedback_needs_learned_state(conn):
    _owners(conn)
    conn.execute("DROP TABLE term_pairs")  # a database without the learned tables searches as before
    hits = search.memory_search(conn, "what database does the team owning svc-ledger run", project="Core")
    assert hits and all(hit["score"] > 0 for hit in hits)


def _qc(conn, gap_hours):
    make_task(conn, "lab", project="Lab", title="lab knowledge")
    for n in range(6):  # older rows naming the old value's word, outside any change
        notes.add(conn, "lab", content=f"the night shift rota {n} was moved to next quarter")
    clock.advance(days=10)
    old = notes.add(conn, "lab", content="Quality control samples run once per shift on every analyzer")
    clock.advance(days=10)
    new = notes.supersede(conn, old["id"], content="Quality control samples run every four hours on every analyzer")
    clock.advance(hours=gap_hours)
    why = notes.add(conn, "lab", content="QC frequency raised after the audit found drift between shifts went unnoticed")
    return new["note"], why


def test_a_record_naming_only_the_old_value_written_with_the_change_ranks_with_it(conn):
    new, why = _qc(conn, gap_hours=2)
    hits = search.memory_search(conn, "how often do quality control samples run", project="Lab", limit=5)
    assert _keys(hits)[:2] == [("note", new["id"]), ("note", why["id"])]
    assert hits[1]["history_of"] == {"kind": "note", "id": new["id"]}


def test_a_row_naming_the_old_value_long_after_the_change_is_not_its_record(conn, monkeypatch):
    # found only by the old-value probe: the everyday reading "how often" -> "frequency" would
    # make it a candidate of the search itself (and a candidate naming the old value is a record)
    monkeypatch.setattr(retrieval, "everyday_readings", lambda tokens: {})
    new, why = _qc(conn, gap_hours=24 * 30)
    hits = search.memory_search(conn, "how often do quality control samples run", project="Lab", limit=5)
    assert _keys(hits)[0] == ("note", new["id"]) and not any(hit.get("history_of") for hit in hits)


def _opening(conn, gap_hours):
    make_task(conn, "reg", project="Campus", title="registration knowledge")
    for n in range(4):
        notes.add(conn, "reg", content=f"the dashboard {n} has open questions")
    clock.advance(days=5)
    old = notes.add(conn, "reg", content="Registration opens at 08:00 for every year group")
    clock.advance(days=5)
    new = notes.supersede(conn, old["id"], content="Registration opens at 07:00 for every year group")["note"]
    clock.advance(hours=gap_hours)
    why = notes.add(conn, "reg", content="Opening moved earlier so students abroad are not registering at midnight")
    return new, why


def test_a_record_saying_the_shared_subject_changed_near_the_change_ranks_with_it(conn):
    new, why = _opening(conn, gap_hours=3)
    hits = search.memory_search(conn, "what time does registration open", project="Campus", limit=5)
    assert _keys(hits)[:2] == [("note", new["id"]), ("note", why["id"])]
    assert hits[1]["history_of"] == {"kind": "note", "id": new["id"]}


def test_a_change_word_far_from_the_change_records_nothing(conn):
    new, why = _opening(conn, gap_hours=24 * 20)
    hits = search.memory_search(conn, "what time does registration open", project="Campus", limit=5)
    assert _keys(hits)[0] == ("note", new["id"]) and not any(hit.get("history_of") for hit in hits)


def _lag_home(conn, alerts=12):
    """A report in the question's words naming the lag alert, the older note that explains the
    lag in other words, and ``alerts`` newer rows that share only some of the report's words."""
    make_task(conn, "ops", project="Data", title="ops")
    for n in range(20):
        clock.advance(hours=1)
        notes.add(conn, "ops", content=f"the weekly revenue chart {n} was reviewed")
    clock.advance(hours=1)
    answer = notes.add(conn, "ops", content="Lag alert fired: traced to a slow enrichment call in the pipeline")
    clock.advance(hours=1)
    report = notes.add(conn, "ops", content="Kafka consumers fell behind again, the lag alert fired twice")
    for n in range(alerts):
        clock.advance(hours=1)
        notes.add(conn, "ops", content=f"the disk alert {n} fired for the backup volume")
    return answer, report


def _no_bridges(monkeypatch):
    """Only the feedback left to bridge: no everyday readings, no learned associates, stored or
    read from the candidates."""
    monkeypatch.setattr(retrieval, "everyday_readings", lambda tokens: {})
    monkeypatch.setattr(learned, "expansions", lambda conn, groups: {})
    monkeypatch.setattr(learned, "LOCAL_ASSOCIATES", 0)


def test_feedback_bridges_a_question_to_an_answer_in_other_words(conn, monkeypatch):
    _no_bridges(monkeypatch)
    answer, report = _lag_home(conn, alerts=0)
    query = "why did the consumers fall behind"
    hits = _keys(search.memory_search(conn, query, project="Data", limit=5))
    assert hits[:2] == [("note", report["id"]), ("note", answer["id"])]  # the words first, then what they name
    monkeypatch.setattr(search, "FEEDBACK_WEIGHT", 0.0)
    assert ("note", answer["id"]) not in _keys(search.memory_search(conn, query, project="Data", limit=5))


def test_feedback_reads_the_rows_holding_every_term_before_each_terms_newest(conn, monkeypatch):
    # twelve newer rows share "alert" and "fired" with the report: read newest first through
    # one OR of the terms they would fill the feedback's candidates, and the older answer,
    # which holds the rarer "lag" too, would never be read
    _no_bridges(monkeypatch)
    answer, report = _lag_home(conn, alerts=12)
    query = "why did the consumers fall behind"
    hits = _keys(search.memory_search(conn, query, project="Data", limit=5))
    assert hits[:2] == [("note", report["id"]), ("note", answer["id"])]
    _feedback_reads_one_or(monkeypatch)
    assert ("note", answer["id"]) not in _keys(search.memory_search(conn, query, project="Data", limit=5))


def _feedback_reads_one_or(monkeypatch):
    """Make the feedback pass read its words' rows through one OR, newest first, instead of
    tier by tier (the first pass's reads are left alone)."""
    feedback, fetch, inside = search._feedback, search._Surface.fetch, []

    def feedback_marked(*args, **kwargs):
        inside.append(True)
        try:
            return feedback(*args, **kwargs)
        finally:
            inside.pop()

    def fetch_flat(self, conn, expressions, params):
        return fetch(self, conn, [" OR ".join(expressions)] if inside else expressions, params)

    monkeypatch.setattr(search, "_feedback", feedback_marked)
    monkeypatch.setattr(search._Surface, "fetch", fetch_flat)


def test_feedback_terms_are_weighed_by_rarity_and_are_deterministic(conn, monkeypatch):
    _no_bridges(monkeypatch)
    _lag_home(conn, alerts=12)
    query = "why did the consumers fall behind"
    first = search.memory_search(conn, query, project="Data", limit=10)
    assert first == search.memory_search(conn, query, project="Data", limit=10)
    by_text = {hit["text"]: hit["score"] for hit in first}
    explained = by_text["Lag alert fired: traced to a slow enrichment call in the pipeline"]
    # a disk alert holds the common "alert" and "fired" but not the rare "lag": it gains less
    assert all(score < explained for text, score in by_text.items() if text.startswith("the disk alert"))


def _near_miss_home(conn):
    """A near miss that repeats the question's words, the report that says them about the
    fault, the note that explains the fault in other words, and chatter."""
    make_task(conn, "web", project="Shop", title="storefront")
    for n in range(20):
        clock.advance(hours=1)
        notes.add(conn, "web", content=f"the quarterly budget sheet {n} was reviewed")
    clock.advance(hours=1)
    answer = notes.add(conn, "web", content="Inventory cache served an hour-old warehouse count after the replica lagged")
    clock.advance(hours=1)
    report = notes.add(conn, "web", content="Shoppers bought jackets listed in stock, but the warehouse count was hour-old")
    clock.advance(hours=1)
    near = notes.add(conn, "web", content="Product page redesign: jackets listed in stock get a green badge so shoppers buy")
    return answer, report, near


def test_a_weaker_feedback_row_names_an_answer_the_best_one_does_not(conn, monkeypatch):
    _no_bridges(monkeypatch)
    answer, report, near = _near_miss_home(conn)
    query = "why did shoppers buy jackets the page listed in stock"
    hits = _keys(search.memory_search(conn, query, project="Shop", limit=5))
    assert hits == [("note", near["id"]), ("note", report["id"]), ("note", answer["id"])]
    monkeypatch.setattr(search, "FEEDBACK_DOCS", 1)  # only the near miss's words: they name nothing
    assert _keys(search.memory_search(conn, query, project="Shop", limit=5)) == [("note", near["id"]),
                                                                                ("note", report["id"])]


def test_a_weaker_feedback_row_never_lends_to_a_row_the_query_matches_well(conn, monkeypatch):
    _no_bridges(monkeypatch)
    answer, report, near = _near_miss_home(conn)
    query = "why did shoppers buy jackets the page listed in stock"
    scores = {hit["id"]: hit["score"] for hit in search.memory_search(conn, query, project="Shop", limit=5)}
    # the report is a feedback row itself: its own words lift nothing of its own score, and the
    # near miss keeps exactly its share of the best answer's feedback (its own words)
    monkeypatch.setattr(search, "FEEDBACK_DOCS", 1)
    alone = {hit["id"]: hit["score"] for hit in search.memory_search(conn, query, project="Shop", limit=5)}
    assert scores[near["id"]] == alone[near["id"]] and scores[report["id"]] == alone[report["id"]]
    monkeypatch.setattr(search, "FEEDBACK_DOCS", 3)
    monkeypatch.setattr(search, "FEEDBACK_UNMATCHED", 10.0)  # lent to every row: the report lifts itself
    lifted = {hit["id"]: hit["score"] for hit in search.memory_search(conn, query, project="Shop", limit=5)}
    assert lifted[report["id"]] > scores[report["id"]]


def _lagging_consumers(conn):
    """A home where the answer ("the enrichment step's geo lookups got slow") shares no word
    with the question ("why did the consumers fall behind"); one chatter row names both
    vocabularies, and a handful of rows each mention one of the question's words."""
    make_task(conn, "ev", project="Events", title="event pipeline")
    for text in ("Consumers fall behind again tonight; enrichment workers stuck on geo lookups, vendor cluster suspected",
                 "Vendor cluster contract renewal is due in March",
                 "The workers autoscaler was held at four pods",
                 "Nightly export workers moved to the vendor cluster"):
        clock.advance(hours=1)
        notes.add(conn, "ev", content=text)
    clock.advance(hours=1)
    answer = notes.add(conn, "ev", content="Enrichment step calls the geo service once per event; its p99 went from 5 ms to 300 ms")
    for n in range(4):  # rows naming one of the question's words, about something else
        clock.advance(hours=1)
        notes.add(conn, "ev", content=f"Consumers of the billing feed {n} are listed on the wiki page")
    for n in range(3):
        clock.advance(hours=1)
        notes.add(conn, "ev", content=f"Behind the office {n} there is parking for visitors")
    return answer


def test_an_answer_naming_a_few_of_the_bridging_rows_words_ranks_above_single_word_matches(conn, monkeypatch):
    # the everyday reading "fall behind" -> lag, backlog and the candidates' own associations are
    # switched off: the feedback from the bridge alone links them
    monkeypatch.setattr(retrieval, "everyday_readings", lambda tokens: {})
    monkeypatch.setattr(learned, "LOCAL_ASSOCIATES", 0)
    answer = _lagging_consumers(conn)
    query = "why did the consumers fall behind"

    def ranks():
        """The answer's rank and the best rank of a row matching one of the question's words."""
        hits = search.memory_search(conn, query, project="Events", limit=20)
        texts = [hit["text"] for hit in hits]
        single = min(position for position, text in enumerate(texts) if text.startswith(("Consumers of", "Behind")))
        keys = _keys(hits)
        return keys.index(("note", answer["id"])) if ("note", answer["id"]) in keys else len(keys), single

    answer_at, single_at = ranks()
    assert answer_at < single_at and answer_at <= 2  # with the chatter that names both vocabularies
    assert search.memory_search(conn, query, project="Events", limit=20) == \
        search.memory_search(conn, query, project="Events", limit=20)
    # a linear share (all five of the bridge's distinctive words for the whole weight) leaves the
    # answer, which names two of them, below the rows matching one of the question's words
    monkeypatch.setattr(search, "FEEDBACK_SATURATION", 1.0)
    answer_at, single_at = ranks()
    assert answer_at > single_at


def _waiting_drivers(conn):
    """The answer ("truck appointment slots are capped") shares no word with the question ("why
    were drivers waiting on the road"); two chatter rows each name one of the question's words
    beside the answer's words, and rows naming one of the question's words about something else."""
    make_task(conn, "yard", project="Port", title="terminal")
    for text in ("Drivers stuck at the gate again, appointment slots all gone by six",
                 "Long line on the road this morning; every appointment slot was full",
                 "Road resurfacing on the north side is booked for May",
                 "Drivers must wear hi-vis in the yard",
                 "Drivers badge renewals happen in January",
                 "Road signs at the roundabout were replaced"):
        clock.advance(hours=1)
        notes.add(conn, "yard", content=text)
    clock.advance(hours=1)
    return notes.add(conn, "yard", content="Truck appointment system caps slots at 40 per half hour")


def test_what_the_candidates_name_beside_several_query_words_is_lent_to_them(conn, monkeypatch):
    monkeypatch.setattr(retrieval, "everyday_readings", lambda tokens: {})
    answer = _waiting_drivers(conn)
    query = "why were drivers waiting on the road"
    query_groups = retrieval.groups(query)
    texts = [row[0] for row in conn.execute("SELECT content FROM notes")]
    lent = learned.local_expansions(conn, query_groups, texts)
    words = {group.word: {term for term, _ in lent.get(position, ())} for position, group in enumerate(query_groups)}
    # "appointment" sits beside "drivers" in one row and "road" in another: both lend it
    assert "appointment" in words["drivers"] and "appointment" in words["road"]
    # what only one query word's rows name is not lent ("gate", "resurfacing", "badge")
    assert not ({"gate", "resurfacing", "badge", "yard"} & (words["drivers"] | words["road"]))
    assert all(0 < weight <= learned.W_ASSOCIATE for others in lent.values() for _, weight in others)
    assert lent == learned.local_expansions(conn, query_groups, texts)  # deterministic
    assert learned.local_expansions(conn, query_groups, []) == {}
    # only the words passed as rare lend: "road" alone has no second query word to agree with
    road = [position for position, group in enumerate(query_groups) if group.word == "road"]
    assert learned.local_expansions(conn, query_groups, texts, rare=road) == {}
    stored = {0: [("lorry", 0.25)]}
    assert learned.local_expansions(conn, query_groups, texts, stored, rare=[]) == stored

    def found():
        return ("note", answer["id"]) in _keys(search.memory_search(conn, query, project="Port", limit=10))

    monkeypatch.setattr(search, "FEEDBACK_WEIGHT", 0.0)  # the lent words alone find it
    assert found()
    monkeypatch.setattr(learned, "LOCAL_ASSOCIATES", 0)  # without them nothing leads to it
    assert not found()
