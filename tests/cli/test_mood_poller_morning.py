"""One morning in a Mood, with every poll run the way cron runs it.

Each tick is its own process started with ``env -i`` and only what a crontab line sets (the
home, a PATH) plus the pinned clock (``MINDOS_NOW``); the agents are real delivery commands (a
small script that answers from a queue and can post while its turn runs).  People's posts,
reactions, sign-ins and dial changes go through the front door in-process at the same pinned
times.  The morning covers: a mention with grace that small talk must not swallow, an agent's
full-tools reply mentioning another agent (look-only), crosstalk, three agents asked at once
(take, took, taken, typing), listening off and back on (a held mention), reactions, near-miss,
an announcement from another Mood, consider looks (one passed, one dismissed by the screen), a
quiet look, a sign-in, the daily budget (unasked looks wait, mentions do not), /incorporate
with a failed refresh of the read-only copies, the tool-loop guard, and a /handoff carried to
another Mood.  At the end every line on the spec's words page has appeared in some wake.
"""

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

from mindos.comms import words as words_module
from mindos.core import clock

pytestmark = pytest.mark.slow

DAY = "2026-08-21T"
AGENT_SCRIPT = r'''
import json, os, subprocess, sys
wake = sys.stdin.read()
here = os.path.dirname(os.path.abspath(__file__))
name = os.environ["MOOD_AGENT"]
with open(os.path.join(here, "seen.jsonl"), "a") as log:
    log.write(json.dumps({"agent": name, "mood": os.environ["MOOD_SLUG"], "reason": os.environ["MOOD_WAKE_REASON"],
                          "tools": os.environ["MOOD_WAKE_TOOLS"], "at": os.environ.get("MINDOS_NOW")}) + "\n")
path = os.path.join(here, "replies.json")
with open(path) as handle:
    queues = json.load(handle)
queue = queues.get(name) or []
step = queue.pop(0) if queue else {"reply": "<silent>nothing for me</silent>"}
with open(path, "w") as handle:
    json.dump(queues, handle)
if step.get("during"):
    subprocess.run([sys.executable, os.path.join(os.environ["MINDOS_ROOT"], "mood_poller.py"), *step["during"]],
                   check=True, capture_output=True)
print(step["reply"])
'''

# The spec's words page, in its order: every one of these must appear in some wake.
SPEC_LINES = ("full-tools", "full-tools-offer", "look-only", "tools-offer", "after-loop", "reorient", "fresh-failed",
              "crosstalk", "quiet", "arrival", "others-asked", "wait-offer", "wait-all", "take-offer", "taken", "took",
              "settings-changed", "typing", "announced", "reacted", "nearmiss", "incorporate", "handoff", "handed")


def silent(why="nothing for me"):
    return {"reply": f"<silent>{why}</silent>"}


def fragment(text):
    """The longest fixed part of a wake text (between its {fields})."""
    return max((part.strip() for part in re.split(r"\{[A-Za-z_]+\}", text)), key=len)


@pytest.fixture
def morning(home, tmp_path, cli_json):
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "run.py").write_text(AGENT_SCRIPT)
    (agent_dir / "replies.json").write_text(json.dumps({
        "re": [
            {"reply": "Rotating it now. @magent please double-check the deploy afterwards.",
             "during": ["post", "infra", "the staging dashboard is red too", "--author", "bob", "--via", "web"]},
            silent("unrelated to the cert"),                      # crosstalk
            silent("bolt has it"),                                # taken
            {"reply": "Here now. <silent>nothing else</silent>"},  # a near miss
            silent("they are sorting it out"),                    # consider
            silent("nothing for me yet"),                         # consider
            silent("still nothing for me"),                       # quiet
            silent("nothing to tell justin"),                     # arrival
            {"reply": "Looking at the runners."},                 # mention, budget spent
            {"reply": 'Folded the thread in.\n<loop-guard why="30 tool calls without progress"/>'},
            {"reply": "Context for staging: the cert on infra is rotated; staging is next."},
            silent("read it"),                                    # handed, in staging
        ],
        "magent": [{"reply": "Deploy double-checked: fine."}, silent("bolt has it")],
        "bolt": [{"reply": '<take to="check the end of step 4"/>'}, {"reply": "The end of step 4 is fine."}],
    }))
    command = json.dumps([sys.executable, str(agent_dir / "run.py")])

    def at(moment):
        clock.set_now(DAY + moment + "Z")

    def door(*argv):
        return cli_json("mood_poller", *argv)

    def tick(moment):
        """One cron poll: a fresh process with only the crontab line's environment."""
        proc = subprocess.run(
            ["env", "-i", f"HERMES_AUTOPILOT_HOME={home}", f"MINDOS_NOW={DAY}{moment}Z", "PATH=/usr/bin:/bin",
             f"MINDOS_ROOT={ROOT}", sys.executable, os.path.join(ROOT, "mood_poller.py"), "tick"],
            capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        return json.loads(proc.stdout)

    at("07:55:00")
    for slug, title in (("infra", "Infra room"), ("staging", "Staging room"), ("cert-thread", "Rotating the cert")):
        door("mood", "create", slug, "--title", title)
    for name in ("bolt", "magent", "re"):
        door("agent", "create", name, "--command", command)
        door("mood", "join", "infra", name)
    door("mood", "join", "staging", "re")
    door("mood", "join", "cert-thread", "re")
    for name in ("bolt", "magent"):
        door("set", "listening", "mentions", "--mood", "infra", "--agent", name)
    door("set", "listening", "mentions", "--mood", "staging")
    return {"at": at, "door": door, "tick": tick, "seen": agent_dir / "seen.jsonl"}


def test_one_morning_in_a_mood_with_every_poll_run_as_cron_runs_it(morning):
    at, door, tick = morning["at"], morning["door"], morning["tick"]

    def post(moment, text, author, via, *extra):
        at(moment)
        return door("post", "infra", text, "--author", author, "--via", via, *extra)["id"]

    def wakes_of(report, agent=None):
        return [(w["agent"], w["kind"], w["tools"]) for w in report["wakes"] if agent in (None, w["agent"])]

    # 08:00 a mention from a signed-in user, then someone else's small talk: the mention waits out grace
    cert = post("08:00:00", "@re please rotate the staging cert", "justin", "ssh")
    post("08:01:00", "thanks all", "alice", "web")
    report = tick("08:05:00")
    assert report["wakes"] == [] and any("grace" in w["why"] for w in report["waiting"])
    # 08:10 grace is over: re is woken (small talk did not answer it), with full tools; bob posts
    # while the turn runs, so one crosstalk look follows
    report = tick("08:10:00")
    assert wakes_of(report, "re") == [("re", "mention", "full"), ("re", "crosstalk", "look-only")]
    assert report["wakes"][0]["posts"] == [cert]
    # re's full-tools reply mentioned magent: magent wakes after grace, look-only
    assert tick("08:15:00")["wakes"] == []
    assert wakes_of(tick("08:20:00")) == [("magent", "mention", "look-only")]

    # 08:25 one post asks all three; alice is typing when the tick runs; bolt takes it
    post("08:25:00", "@magent @re @bolt who can check the end of step 4?", "justin", "ssh")
    at("08:34:50")
    door("typing", "infra", "alice", "--seconds", "30")
    report = tick("08:35:00")
    assert [(w["agent"], w["outcome"]) for w in report["wakes"]] == [
        ("bolt", "took"), ("bolt", "replied"), ("magent", "silent"), ("re", "silent")]
    reply_id = next(p["id"] for p in door("posts", "infra")["posts"] if p["author"] == "re")
    at("08:36:00")
    door("react", "infra", str(reply_id), "👍", "--who", "alice")

    # 08:40 re's listening goes off: a mention is held and said in the Mood, then released
    at("08:40:00")
    door("set", "listening", "off", "--mood", "infra", "--agent", "re", "--by", "skyler", "--note", "heads down")
    post("08:41:00", "@re are you around?", "justin", "web")
    report = tick("08:42:00")
    assert report["wakes"] == [] and [h["agent"] for h in report["holds"]] == ["re"]
    assert tick("08:50:00")["holds"] == [], "said once"
    at("09:00:00")
    door("set", "listening", "on", "--mood", "infra", "--agent", "re", "--by", "skyler", "--note", "back")
    report = tick("09:01:00")
    assert wakes_of(report) == [("re", "mention", "look-only")] and report["wakes"][0]["nearmiss"] is True

    # 09:05 an announcement in another Mood; 09:10 people talk without naming re: one consider look
    at("09:05:00")
    door("post", "staging", "/announce the deploy freeze starts at noon", "--author", "justin", "--via", "ssh")
    post("09:10:00", "the deploy queue is backed up again", "bob", "terminal")
    post("09:10:30", "yes, the runners look stuck", "carol", "terminal")
    report = tick("09:11:00")
    assert report["wakes"] == [] and any("consider_after" in w["why"] for w in report["waiting"])
    report = tick("09:13:00")
    assert wakes_of(report) == [("re", "consider", "look-only")] and report["screens"][0]["verdict"] == "pass"
    # 09:20 small talk: the screen dismisses it as its own call
    post("09:20:00", "good morning all", "alice", "web")
    report = tick("09:23:00")
    assert report["wakes"] == [] and report["screens"][0]["verdict"] == "dismiss"
    # 09:30 a person's post nobody answers: a consider look, then a quiet look an hour on
    post("09:30:00", "could someone look at the deploy logs sometime", "justin", "ssh")
    assert wakes_of(tick("09:33:00")) == [("re", "consider", "full")]
    assert tick("10:00:00")["wakes"] == []
    assert wakes_of(tick("10:31:00")) == [("re", "quiet", "full")]

    # 10:40 someone signs in
    at("10:40:00")
    door("arrive", "infra", "justin")
    assert wakes_of(tick("10:41:00")) == [("re", "arrival", "look-only")]

    # 10:50 the daily budget is spent: a burst waits, a mention still wakes
    at("10:50:00")
    door("set", "daily_budget_usd", "0.0001", "--by", "skyler")
    post("10:51:00", "the runners are stuck again, anyone?", "bob", "terminal")
    report = tick("10:54:00")
    assert report["wakes"] == [] and any("daily budget" in w["why"] for w in report["waiting"])
    post("10:55:00", "@re can you look at the runners?", "justin", "web")
    report = tick("10:55:30")
    assert wakes_of(report) == [("re", "mention", "look-only")] and report["budget"]["exempt_usd"] > 0
    at("10:58:00")
    door("set", "daily_budget_usd", "2.00", "--by", "skyler")

    # 11:00 /incorporate, with the read-only copies failing to refresh; re's turn hits the loop guard
    at("10:59:00")
    door("set", "fresh_command", json.dumps([sys.executable, "-c", "import sys; sys.exit(2)"]))
    post("11:00:00", "/incorporate cert-thread @re the cert rotation is settled", "justin", "web")
    report = tick("11:00:30")
    assert wakes_of(report) == [("re", "mention", "look-only")]
    assert report["wakes"][0]["fresh_failed"] is True and report["wakes"][0]["loop_guard"]
    at("11:02:00")
    door("set", "fresh_command", "--clear")

    # 11:05 /handoff from a signed-in user: re answers in infra, the answer is carried to staging
    handoff = post("11:05:00", "/handoff staging @re the cert rotation", "justin", "ssh")
    assert tick("11:10:00")["wakes"] == []
    # (staging is read after infra in the same tick, so the carried handoff wakes re there at once)
    report = tick("11:15:00")
    assert [(w["mood"], w["agent"], w["kind"], w["tools"]) for w in report["wakes"]] == [
        ("infra", "re", "mention", "full"), ("staging", "re", "mention", "full")]
    assert report["wakes"][0]["posts"] == [handoff] and report["wakes"][1]["posts"] == report["wakes"][0]["handed"]
    assert tick("11:20:00")["wakes"] == []

    # the record: every wake the agents were handed, each line of the spec at least once
    seen = [json.loads(line) for line in morning["seen"].read_text().splitlines()]
    listed = door("wakes", "--limit", "100")
    assert listed["total_matching"] == len(seen) == 16
    texts = "\n".join(door("show-wake", str(w["id"]))["text"] for w in listed["wakes"])
    spec = words_module.load_recovery()["Moods/Wake texts"]
    missing = [key for key in SPEC_LINES if fragment(spec[key]["text"]) not in texts]
    assert missing == [], f"wake lines never composed this morning: {missing}"
    said = door("posts", "infra", "--limit", "200")["posts"]
    assert [p["kind"] for p in said if p["author"] in ("mood-poller", "screen")] == ["hold", "quiet"]
