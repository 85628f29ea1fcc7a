"""Scenario tests of the poll cycle with a controllable clock (one rule per test)."""

from moodkit import agent, later, room, run_tick, say  # noqa: F401 (agent, room, run_tick: fixtures)

from mindos.comms import dials, posts, tick, wakes
from mindos.store import ledger


def quiet_magent(conn):
    dials.set_dial(conn, "listening", "mentions", mood="infra", agent="magent")


# --- mentions and grace ------------------------------------------------------------------

def test_a_mention_waits_out_grace_then_wakes(room, agent, run_tick):
    quiet_magent(room)
    say(room, "@re can you check step 4")
    assert run_tick()["wakes"] == []
    later(599)
    report = run_tick()
    assert report["wakes"] == [] and "grace" in report["waiting"][0]["why"]
    later(1)
    report = run_tick()
    assert [(w["agent"], w["kind"]) for w in report["wakes"]] == [("re", "mention")]
    assert "nobody answered" in report["wakes"][0]["why"]
    later(600)
    assert run_tick()["wakes"] == [], "one wake per mention"


def test_a_mention_someone_answered_within_grace_does_not_wake(room, agent, run_tick):
    quiet_magent(room)
    say(room, "@re can you check step 4")
    later(60)
    say(room, "done it myself, it's fine", author="alice", reply_to=1)
    later(600)
    assert [w["kind"] for w in run_tick()["wakes"]] == ["consider"], "alice's answer is a burst, not a mention"


def test_small_talk_after_a_mention_does_not_answer_it(room, agent, run_tick):
    # the case: the mention must not be lost to someone else's "thanks all"
    quiet_magent(room)
    say(room, "@re please rotate the staging cert")
    later(60)
    say(room, "thanks all", author="alice")
    later(539)
    assert run_tick()["wakes"] == [], "still inside grace"
    later(1)
    report = run_tick()
    assert [(w["agent"], w["kind"], w["posts"]) for w in report["wakes"]] == [("re", "mention", [1])]
    assert "please rotate the staging cert" in agent.seen[0]["text"]


def test_the_authors_own_follow_up_and_another_agents_reply_do_not_answer_a_mention(room, agent, run_tick):
    quiet_magent(room)
    say(room, "@re please rotate the staging cert")
    say(room, "(the one that expires friday)", reply_to=1)
    say(room, "I could look, but it is yours", author="magent", via="agent", reply_to=1)
    later(600)
    assert [(w["agent"], w["kind"]) for w in run_tick()["wakes"]] == [("re", "mention")]


def test_a_mention_with_no_session_wakes_at_once(room, agent, run_tick):
    quiet_magent(room)
    say(room, "@re from the web", via="web")
    assert [w["kind"] for w in run_tick()["wakes"]] == ["mention"]
    later(60)
    say(room, "@re by handoff", via="handoff")
    assert [w["why"] for w in run_tick()["wakes"]] == ["a mention with no session behind it wakes at once"]


def test_an_alias_and_a_name_the_agent_once_had_both_wake_it(room, agent, run_tick):
    from mindos.comms import agents

    dials.set_dial(room, "listening", "mentions", mood="infra", agent="re")
    say(room, "@mag look", via="web")
    assert [w["agent"] for w in run_tick()["wakes"]] == ["magent"]
    agents.update(room, "magent", new_name="magent2")
    later(60)
    say(room, "@magent still you?", via="web")
    assert [w["agent"] for w in run_tick()["wakes"]] == ["magent2"]


def test_max_wakes_per_hour_holds_further_mentions_until_a_slot_frees(room, agent, run_tick):
    quiet_magent(room)
    dials.set_dial(room, "max_wakes_per_hour", "1", agent="re")
    say(room, "@re one", via="web")
    assert len(run_tick()["wakes"]) == 1
    later(60)
    say(room, "@re two", via="web")
    report = run_tick()
    assert report["wakes"] == [] and "max_wakes_per_hour" in report["waiting"][0]["why"]
    later(3600)
    assert [w["posts"] for w in run_tick()["wakes"]] == [[2]]


# --- full tools or look-only -----------------------------------------------------------------

def tools_of(report):
    return [w["tools"] for w in report["wakes"]]


def test_full_tools_only_when_every_waking_post_is_trusted(room, agent, run_tick):
    quiet_magent(room)
    say(room, "@re ssh ask", via="ssh")
    later(600)
    assert tools_of(run_tick()) == ["full"]
    assert agent.seen[-1]["env"]["MOOD_WAKE_TOOLS"] == "full"
    assert "has your full tools" in agent.seen[-1]["text"]
    later(60)
    say(room, "@re ssh again", via="ssh")
    say(room, "@re and from the web", via="web", author="alice")
    assert tools_of(run_tick()) == ["look-only"], "a mix with an untrusted post is look-only"
    assert "can look but not touch" in agent.seen[-1]["text"]


def test_look_only_sources_and_full_tools_for(room, agent, run_tick):
    quiet_magent(room)
    for via in ("web", "terminal"):
        later(3600)
        say(room, f"@re via {via}", via=via)
        later(600)
        assert tools_of(run_tick()) == ["look-only"], via
    dials.set_dial(room, "full_tools_for", "alice,bob", mood="infra")
    later(3600)
    say(room, "@re alice on the web", via="web", author="alice")
    assert tools_of(run_tick()) == ["full"]


def test_another_agents_post_wakes_look_only_whatever_its_tools(room, agent, run_tick):
    dials.set_dial(room, "listening", "mentions", mood="infra")
    say(room, "@re please take over", author="magent", via="handoff", full_tools=True)
    assert tools_of(run_tick()) == ["look-only"]
    later(3600)
    say(room, "@re please double-check the deploy", author="magent", via="agent", full_tools=True)
    later(600)
    assert tools_of(run_tick()) == ["look-only"]
    later(3600)
    say(room, "@re ordinary mention", author="magent", via="agent")
    later(600)
    assert tools_of(run_tick()) == ["look-only"]


# --- listening ----------------------------------------------------------------------------

def test_listening_off_holds_says_it_once_renews_and_releases(room, agent, run_tick):
    quiet_magent(room)
    dials.set_dial(room, "listening", "off", mood="infra", agent="re")
    say(room, "@re are you there", via="web")
    report = run_tick()
    assert report["wakes"] == [] and len(report["holds"]) == 1 and report["holds"][0]["renewed"] is False
    said = [p for p in posts.recent(room, "infra") if p["kind"] == "hold"]
    assert len(said) == 1 and "re is not listening here right now" in said[0]["body"]
    assert run_tick()["holds"] == [], "said once, not every tick"
    later(60)
    say(room, "@re hello?", via="web")
    report = run_tick()
    assert report["holds"][0]["renewed"] is True and report["holds"][0]["mentions"] == [1, 3]
    assert ledger.count_action(room, "mood_hold") == 2
    dials.set_dial(room, "listening", "on", mood="infra", agent="re")
    report = run_tick()
    assert [(w["agent"], w["posts"]) for w in report["wakes"]] == [("re", [1, 3])]


def test_listening_mentions_answers_mentions_but_never_considers(room, agent, run_tick):
    dials.set_dial(room, "listening", "mentions", mood="infra")
    say(room, "the deploy looks slow today")
    later(3600 * 2)
    assert run_tick()["wakes"] == []
    say(room, "@re any idea", via="web")
    assert [w["kind"] for w in run_tick()["wakes"]] == ["mention"]


def test_listening_on_considers_a_burst_once(room, agent, run_tick):
    quiet_magent(room)
    say(room, "the deploy looks slow today")
    later(30)
    say(room, "yes, the queue is backed up again", author="alice")
    later(60)
    report = run_tick()
    assert report["wakes"] == [] and "consider_after" in report["waiting"][0]["why"]
    later(60)
    report = run_tick()
    assert [(w["kind"], w["posts"]) for w in report["wakes"]] == [("consider", [1, 2])]
    later(300)
    assert run_tick()["wakes"] == [], "one look per burst, not per post"


def test_typing_or_at_work_holds_the_consider_look(room, agent, run_tick):
    quiet_magent(room)
    say(room, "the deploy looks slow today")
    later(200)
    posts.signal(room, "infra", "alice", kind="typing", seconds=30)
    report = run_tick()
    assert report["wakes"] == [] and "alice typing or at work" in report["waiting"][0]["why"]
    later(31)
    posts.signal(room, "infra", "bob", kind="at-work", seconds=100)
    assert run_tick()["wakes"] == []
    later(101)
    assert [w["kind"] for w in run_tick()["wakes"]] == ["consider"]


def test_a_mention_inside_a_burst_belongs_to_the_mention_path(room, agent, run_tick):
    from mindos.comms import decide

    posts_ = [{"id": i, "kind": "post", "author": "justin", "is_agent": 0, "via": "web", "full_tools": 0,
               "body": "", "created_at": "2026-08-21T09:00:00Z", "mentions": m}
              for i, m in ((1, []), (2, ["re"]), (3, []))]
    unit = {"agent": "re", "last_post_id": 3, "mention_id": 2, "considered_id": 0, "seen_id": 0, "held_id": 0,
            "last_post_at": "2026-08-21T09:00:00Z", "last_post_person": 1, "last_post_author": "justin",
            "quiet_post_id": 0, "quiet_looks": 0, "quiet_last_at": None}
    values = {name: dials.Table({}).get(name, 1, "re") for name in dials.DIALS}
    result = decide.decide(unit, posts_, dials=values, now="2026-08-21T09:05:00Z")
    assert result["action"] == "consider" and [p["id"] for p in result["posts"]] == [3]


# --- the long quiet ---------------------------------------------------------------------

def test_quiet_looks_double_after_each_silent_look_and_rest_after_12_hours(room, agent, run_tick):
    quiet_magent(room)
    dials.set_dial(room, "discretion", "chatty", mood="infra")  # no screen in this scenario
    say(room, "could someone look at the deploy logs sometime")
    later(200)
    assert [w["kind"] for w in run_tick()["wakes"]] == ["consider"]  # silent by default
    looks = []
    for _ in range(80):  # 09:03 .. 22:23, in ten-minute steps
        later(600)
        looks += [(w["kind"], w["id"]) for w in run_tick()["wakes"]]
    times = [wakes.show(room, wake_id)["created_at"][11:16] for _, wake_id in looks]
    assert [kind for kind, _ in looks] == ["quiet", "quiet", "quiet"]
    # due 1h after the post, then 2h after that look, then 4h; the next (8h) falls past the 12h rest
    assert times == ["10:03", "12:03", "16:03"]
    assert "a person's post is still unanswered" in wakes.show(room, looks[0][1])["text"]
    later(hours=24)
    assert run_tick()["wakes"] == []


def test_a_reply_ends_the_quiet(room, agent, run_tick):
    quiet_magent(room)
    dials.set_dial(room, "discretion", "chatty", mood="infra")
    agent.replies["re"] = ["I'll look at the logs"]
    say(room, "could someone look at the deploy logs sometime")
    later(200)
    assert [w["outcome"] for w in run_tick()["wakes"]] == ["replied"]
    later(hours=3)
    assert run_tick()["wakes"] == []


# --- the screen ---------------------------------------------------------------------------

def test_the_screen_dismisses_plain_small_talk_as_its_own_call(room, agent, run_tick):
    quiet_magent(room)
    say(room, "good morning all")
    later(200)
    report = run_tick()
    assert report["wakes"] == []
    assert report["screens"][0]["verdict"] == "dismiss" and report["screens"][0]["by"] == "builtin"
    mark = [p for p in posts.recent(room, "infra") if p["kind"] == "quiet"]
    assert len(mark) == 1 and mark[0]["author"] == "screen" and mark[0]["about_agent"] == "re"
    assert mark[0]["body"].startswith("- - the screen passed")
    event = ledger.events(room, action="mood_screen")["events"][0]
    assert event["payload"]["verdict"] == "dismiss" and event["payload"]["by"] == "builtin"
    later(300)
    assert run_tick()["screens"] == [], "the dismissed burst is not screened again"


def test_the_screen_passes_anything_not_plainly_small_talk(room, agent, run_tick):
    quiet_magent(room)
    say(room, "thanks, but the build still fails on arm64")
    later(200)
    report = run_tick()
    assert report["screens"][0]["verdict"] == "pass" and [w["kind"] for w in report["wakes"]] == ["consider"]


def test_chatty_skips_the_screen(room, agent, run_tick):
    quiet_magent(room)
    dials.set_dial(room, "discretion", "chatty", agent="re")
    say(room, "good morning all")
    later(200)
    report = run_tick()
    assert report["screens"] == [] and [w["kind"] for w in report["wakes"]] == ["consider"]
    assert "small talk included" in agent.seen[-1]["text"]


def test_a_screen_command_decides_and_costs_a_look(room, agent, run_tick, tmp_path):
    import sys

    script = tmp_path / "screen.py"
    script.write_text("import json, sys\nreq = json.load(sys.stdin)\nprint('dismiss people coordinating'"
                      " if 'lunch' in req['posts'][0]['body'] else 'pass')\n")
    dials.set_dial(room, "screen_command", f"{sys.executable} {script}")
    quiet_magent(room)
    say(room, "alice, lunch at 12 with bob and carol?")
    later(200)
    report = run_tick()
    assert report["screens"][0] == {"mood": "infra", "agent": "re", "kind": "consider", "verdict": "dismiss",
                                    "by": "command", "why": "people coordinating", "mark": 2}
    assert report["budget"]["by_kind"]["screen"] == {"count": 1, "usd": 0.004}


# --- caps and the budget ------------------------------------------------------------------

def test_considerations_are_capped_per_mood_per_hour(room, agent, run_tick):
    quiet_magent(room)
    dials.set_dial(room, "max_considers_per_hour", "1", mood="infra")
    say(room, "the deploy looks slow today")
    later(200)
    assert len(run_tick()["wakes"]) == 1
    later(60)
    say(room, "and now the cache is cold", author="alice")
    later(200)
    report = run_tick()
    assert report["wakes"] == [] and "max_considers_per_hour" in report["waiting"][0]["why"]
    later(3600)
    assert [w["kind"] for w in run_tick()["wakes"]] == ["consider"]


def test_an_exhausted_budget_stops_unasked_looks_but_never_mentions(room, agent, run_tick):
    quiet_magent(room)
    dials.set_dial(room, "daily_budget_usd", "0.001")
    say(room, "the deploy looks slow today")
    later(200)
    report = run_tick()
    assert report["wakes"] == [] and "daily budget" in report["waiting"][0]["why"]
    say(room, "@re please look", via="web")
    report = run_tick()
    assert [w["kind"] for w in report["wakes"]] == ["mention"]
    assert report["budget"]["spent_usd"] == 0 and report["budget"]["exempt_usd"] > 0


def test_a_new_day_brings_a_new_budget(room, agent, run_tick):
    quiet_magent(room)
    dials.set_dial(room, "discretion", "chatty", mood="infra")
    say(room, "the deploy looks slow today")
    later(200)
    first = run_tick()["wakes"][0]["usd"]
    dials.set_dial(room, "daily_budget_usd", str(round(first * 1.5, 6)))
    later(hours=2)  # cold again
    say(room, "and the cache is cold", author="alice")
    later(200)
    assert "daily budget" in run_tick()["waiting"][0]["why"]
    later(hours=13)  # past midnight UTC
    report = run_tick()
    assert [w["kind"] for w in report["wakes"]] == ["consider"]
    assert report["budget"]["day"] == "2026-08-22"


def test_a_failed_delivery_counts_against_the_caps(room, agent, run_tick):
    quiet_magent(room)
    dials.set_dial(room, "max_wakes_per_hour", "1", agent="re")
    agent.replies["re"] = [{"outcome": "failed", "detail": "exit 1: boom", "seconds": 0.1}]
    say(room, "@re one", via="web")
    assert [w["outcome"] for w in run_tick()["wakes"]] == ["failed"]
    say(room, "@re two", via="web")
    assert run_tick()["wakes"] == []


# --- crosstalk -------------------------------------------------------------------------

def test_crosstalk_looks_once_after_a_mentions_turn(room, agent, run_tick):
    quiet_magent(room)
    agent.replies["re"] = ["step 4 is fine"]
    agent.during["re"] = lambda: say(room, "also the DNS is down", author="alice", via="web")
    say(room, "@re check step 4", via="web")
    report = run_tick()
    assert [(w["kind"], w["posts"]) for w in report["wakes"]] == [("mention", [1]), ("crosstalk", [2])]
    crosstalk = agent.seen[-1]["text"]
    assert crosstalk.startswith('<mood-wake reason="crosstalk">') and "bear on what you just said" in crosstalk
    later(30)
    assert run_tick()["wakes"] == []


def test_crosstalk_never_sets_up_a_further_look(room, agent, run_tick):
    quiet_magent(room)
    agent.replies["re"] = ["step 4 is fine", "<silent>unrelated</silent>"]
    agent.during["re"] = lambda: (say(room, "also the DNS is down", author="alice", via="web"),
                                  agent.during.__setitem__("re", lambda: say(room, "and mail", author="bob",
                                                                             via="web")))
    say(room, "@re check step 4", via="web")
    report = run_tick()
    assert [w["kind"] for w in report["wakes"]] == ["mention", "crosstalk"]


def test_no_crosstalk_when_nothing_landed(room, agent, run_tick):
    quiet_magent(room)
    say(room, "@re check step 4", via="web")
    assert [w["kind"] for w in run_tick()["wakes"]] == ["mention"]


# --- takes and the accepted race --------------------------------------------------------------

def test_a_take_marks_the_post_taken_for_wakes_that_start_after_it(room, agent, run_tick):
    agent.replies["magent"] = ['<take to="check the end of step 4"/>', "step 4 ends fine"]
    say(room, "@magent @re check the end of step 4", via="web")
    report = run_tick()
    assert [(w["agent"], w["kind"], w["outcome"]) for w in report["wakes"]] == [
        ("magent", "mention", "took"), ("magent", "mention", "replied"), ("re", "mention", "silent")]
    took, answer, other = agent.seen
    assert 'reply with only <take to=' in took["text"], "nobody had taken it yet: the take offer"
    assert "You took this, to check the end of step 4. Now answer it." in answer["text"]
    assert "magent has taken this, to check the end of step 4." in other["text"]
    assert wakes.duplicates(room)["count"] == 0
    assert ledger.count_action(room, "mood_take") == 1


def test_a_take_the_tool_loop_guard_ended_is_still_recorded(room, agent, run_tick):
    agent.replies["magent"] = ['<take to="check step 4"/>\n<loop-guard why="40 tool calls"/>', "step 4 is fine"]
    say(room, "@magent check step 4", via="web")
    took = run_tick()["wakes"][0]
    assert (took["outcome"], took["loop_guard"]) == ("took", "40 tool calls")
    assert ledger.count_action(room, "mood_take") == 1
    assert room.execute("SELECT count(*) FROM mood_takes WHERE agent = 'magent'").fetchone()[0] == 1


def test_a_take_that_lands_while_a_wake_runs_is_not_seen_and_the_duplicate_is_counted(room, agent, run_tick):
    from mindos.core import clock
    from mindos.store import db

    dials.set_dial(room, "listening", "mentions", mood="infra")
    post = say(room, "@magent @re check the end of step 4", via="web")

    def re_takes_it_meanwhile():  # another process's tick: re takes the post while magent reads
        clock.advance(20)
        with db.write(room):
            room.execute("INSERT INTO mood_takes(post_id, agent, words, created_at) VALUES (?, 're', 'check it', ?)",
                         (post, clock.now_iso()))
            room.execute("UPDATE mood_agent_state SET mention_id = ? WHERE agent = 're'", (post,))
        clock.advance(40)

    agent.during["magent"] = re_takes_it_meanwhile
    agent.replies["magent"] = ["the end of step 4 is fine"]
    report = run_tick()
    wake = report["wakes"][0]
    assert wake["agent"] == "magent" and wake["outcome"] == "replied"
    assert wake["after_take"] == [{"post": post, "taker": "re"}] and wake["duplicate"] is True
    assert "has taken this" not in agent.seen[0]["text"], "the take landed after the wake started"
    found = wakes.duplicates(room)
    assert found["count"] == 1 and found["duplicates"][0]["taker"] == "re"


# --- arrivals ----------------------------------------------------------------------------

def test_a_sign_in_wakes_listening_agents_once(room, agent, run_tick):
    dials.set_dial(room, "listening", "off", mood="infra", agent="magent")
    posts.arrive(room, "infra", "justin")
    report = run_tick()
    assert [(w["agent"], w["kind"]) for w in report["wakes"]] == [("re", "arrival")]
    assert "justin has just signed in." in agent.seen[0]["text"]
    assert run_tick()["wakes"] == []


# --- dry run, explain, the record ---------------------------------------------------------------

def test_dry_run_composes_and_writes_nothing(room, agent, run_tick):
    quiet_magent(room)
    say(room, "@re check", via="web")
    height = ledger.height(room)
    report = run_tick(dry_run=True)
    assert report["wakes"][0]["outcome"] == "composed" and report["wakes"][0]["text"].startswith("<mood-wake")
    assert agent.seen == [] and ledger.height(room) == height
    assert room.execute("SELECT count(*) FROM mood_wakes").fetchone()[0] == 0


def test_explain_says_what_the_next_tick_would_do_and_writes_nothing(room, agent, run_tick):
    quiet_magent(room)
    say(room, "@re check", via="ssh")
    height = ledger.height(room)
    early = tick.explain(room, "infra", "re")
    assert early["action"] == "wait" and early["due"] == "2026-08-21T09:10:00Z"
    later(600)
    ready = tick.explain(room, "infra", "re")
    assert ready["action"] == "mention" and ready["tools"] == "full" and "has your full tools" in ready["wake"]["text"]
    assert ready["dials"]["grace"] == {"value": 600, "from": "default"}
    assert ledger.height(room) == height


def test_every_wake_and_reply_is_audited_and_recorded(room, agent, run_tick):
    quiet_magent(room)
    agent.replies["re"] = ["on it"]
    say(room, "@re check", via="web")
    report = run_tick()
    wake_id = report["wakes"][0]["id"]
    record = wakes.show(room, wake_id)
    assert record["outcome"] == "replied" and record["reply_post"] == report["wakes"][0]["post"]
    assert record["text"] == agent.seen[0]["text"]
    actions = [e["action"] for e in ledger.events(room, entity_id=str(wake_id))["events"]]
    assert actions == ["mood_reply", "mood_wake"]
    assert ledger.verify_chain(room)["ok"]
    reply = posts.recent(room, "infra")[-1]
    assert reply["author"] == "re" and reply["via"] == "agent" and reply["is_agent"]
    bundle = wakes.bundle(room, record["bundle"])
    assert [layer["layer"] for layer in bundle["layers"]] == [
        "greeting", "agent page", "roster", "standing orders", "own instructions", "moods layer", "mood instructions"]


def test_an_idle_tick_writes_nothing(room, agent, run_tick):
    quiet_magent(room)
    say(room, "@re check", via="web")
    run_tick()
    run_tick()
    height = ledger.height(room)
    changes = room.total_changes
    run_tick()
    assert ledger.height(room) == height and room.total_changes == changes


def test_overlapping_ticks_never_deliver_the_same_wake_twice(room, agent, run_tick, home):
    """A tick's transaction is committed while an agent's own command runs; another tick
    (cron running long, a loop beside it) may act then, and the first one never repeats it."""
    from mindos.comms.words import Words
    from mindos.store import db

    say(room, "@re @magent check", via="web")
    other = db.connect(str(home))
    agent.external = True  # delivered as by a command: nothing of the tick's held open meanwhile

    def another_tick_meanwhile():
        inner = tick.run(other, deliver=agent, words=Words())  # its snapshot is newer; it commits first
        assert [w["agent"] for w in inner["wakes"]] == ["re"]

    agent.during["magent"] = another_tick_meanwhile
    report = run_tick()
    other.close()
    assert [w["agent"] for w in report["wakes"]] == ["magent"]
    assert report["raced"][0]["agent"] == "re"
    assert room.execute("SELECT count(*) FROM mood_wakes WHERE agent = 're'").fetchone()[0] == 1
    assert [seen["agent"] for seen in agent.seen] == ["magent", "re"]


def test_a_reply_ending_in_a_control_tag_after_other_words_is_posted_and_shown_as_a_near_miss(room, agent, run_tick):
    quiet_magent(room)
    agent.replies["re"] = ["looks fine to me <silent>not mine</silent>", "<silent>ok</silent>"]
    say(room, "@re check", via="web")
    first = run_tick()["wakes"][0]
    assert first["outcome"] == "replied" and first["nearmiss"] is True
    assert posts.recent(room, "infra")[-1]["body"] == "looks fine to me <silent>not mine</silent>"
    later(60)
    say(room, "@re again", via="web")
    run_tick()
    text = agent.seen[-1]["text"]
    assert "These replies of yours ended with a control tag after other words" in text
    assert f"#{first['post']} " in text.split("Recent turns")[0]
    later(60)
    say(room, "@re third", via="web")
    run_tick()
    assert "ended with a control tag" not in agent.seen[-1]["text"], "only the replies since the last wake"


def test_an_idle_tick_reads_a_fixed_number_of_statements_whatever_the_size(conn, agent):
    from mindos.comms import agents, moods
    from mindos.comms.words import Words

    def idle_statements():
        tick.run(conn, deliver=agent, words=Words())  # wakes, if any
        tick.run(conn, deliver=agent, words=Words())  # the one write that settles cursors
        statements = []
        conn.set_trace_callback(statements.append)
        report = tick.run(conn, deliver=agent, words=Words())
        conn.set_trace_callback(None)
        assert report["wakes"] == [] and not any(s.startswith(("INSERT", "UPDATE", "BEGIN")) for s in statements)
        return len(statements)

    agents.create(conn, "re")
    moods.create(conn, "m0", title="m0")
    moods.join(conn, "m0", "re")
    say(conn, "hello there", mood="m0")
    later(hours=13)
    small = idle_statements()
    for m in range(1, 30):
        moods.create(conn, f"m{m}", title=f"m{m}")
        moods.join(conn, f"m{m}", "re")
        for i in range(20):
            say(conn, f"post {i} about the deploy", mood=f"m{m}", via="web")
    later(hours=13)  # past the quiet rest: nothing is due anywhere
    assert idle_statements() == small <= 12


def test_an_idle_tick_loads_no_composer_delivery_or_screen(room, home):
    """A tick with nothing to wake (cron's usual minute) composes, delivers and screens
    nothing, so it does not pay for importing them (subprocess alone is millions of
    instructions per tick)."""
    import subprocess
    import sys

    from conftest import ROOT

    room.commit()
    probe = ("import io, sys; sys.path.insert(0, %r)\n"
             "from mindos.cli import run\n"
             "out, sys.stdout = sys.stdout, io.StringIO()\n"
             "code = run('mood_poller', ['tick'])\n"
             "sys.stdout = out\n"
             "print(code, sorted(m for m in ('subprocess', 'mindos.comms.compose', 'mindos.comms.delivery',"
             " 'mindos.comms.screen', 'mindos.comms.pages') if m in sys.modules))\n" % ROOT)
    proc = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60,
                          env=dict(__import__("os").environ, HERMES_AUTOPILOT_HOME=str(home)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0 []", proc.stderr
