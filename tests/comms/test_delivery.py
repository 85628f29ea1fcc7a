"""Delivery through real commands: hangs, crashes, garbage and missing binaries never stop a
tick or lose a post; replies are parsed (silent, take, near misses)."""

import shlex
import sys

from moodkit import say

from moodkit import room  # noqa: F401 (fixtures)
from mindos.comms import agents, delivery, dials, moods, posts, tick, wakes
from mindos.store import ledger

PY = shlex.quote(sys.executable)


def command(code):
    return f"{PY} -c {shlex.quote(code)}"


def test_a_hanging_crashing_garbage_or_missing_command_never_stops_the_tick(room):
    dials.set_dial(room, "listening", "mentions", mood="infra")
    dials.set_dial(room, "wake_timeout", "1", mood="infra")
    setups = {
        "hangs": "import time; time.sleep(30)",
        "crashes": "import sys; sys.stderr.write('boom: it broke\\n'); sys.exit(3)",
        "garbage": "import sys; sys.stdout.buffer.write(b'\\xff\\xfe\\x00garbage\\x1b[31m ok')",
        "closes": "import sys; sys.exit(0)",
        "tools": "import os, sys; sys.stdin.read(); print(os.environ['MOOD_WAKE_TOOLS'])",
    }
    for name, code in setups.items():
        agents.create(room, name, command=command(code))
        moods.join(room, "infra", name)
    agents.create(room, "missing", command="/nonexistent/agent --flag")
    moods.join(room, "infra", "missing")
    post = say(room, "@hangs @crashes @garbage @closes @tools @missing status?", via="web")
    report = tick.run(room)
    outcomes = {w["agent"]: (w["outcome"], w.get("detail", "")) for w in report["wakes"]}
    assert outcomes["hangs"] == ("timeout", "no reply within 1s")
    assert outcomes["crashes"] == ("failed", "exit 3: boom: it broke")
    assert outcomes["garbage"][0] == "replied"
    assert outcomes["closes"][0] == "empty"
    assert outcomes["tools"][0] == "replied"
    assert outcomes["missing"][0] == "failed" and outcomes["missing"][1].startswith("could not start")
    said = {p["author"]: p["body"] for p in posts.recent(room, "infra")}
    assert said["tools"] == "look-only"
    assert said["garbage"] == "\ufffd\ufffdgarbage[31m ok", "undecodable bytes replaced, control characters dropped"
    assert said["justin"] == "@hangs @crashes @garbage @closes @tools @missing status?"
    assert room.execute("SELECT id FROM mood_posts WHERE id = ?", (post,)).fetchone() is not None
    # recorded, counted, never retried in a loop
    assert tick.run(room)["wakes"] == []
    assert wakes.listing(room, outcome="failed")["total_matching"] == 2
    assert ledger.count_action(room, "mood_reply") == 6 and ledger.verify_chain(room)["ok"]


def test_a_reply_with_a_credential_is_posted_redacted(room):
    dials.set_dial(room, "listening", "mentions", mood="infra")
    # the command itself holds no credential (the guard refuses one): it assembles the key
    agents.update(room, "re", command=command("print('the key is ' + 'AKIA' + 'IOSFODNN7EXAMPLE ok')"))
    say(room, "@re key?", via="web")
    wake = tick.run(room)["wakes"][0]
    assert wake["outcome"] == "replied"
    body = posts.recent(room, "infra")[-1]["body"]
    assert "AKIAIOSFODNN7EXAMPLE" not in body and "[REDACTED" in body


def test_parse_reply_reads_silence_takes_and_near_misses():
    assert delivery.parse_reply("") == {"outcome": "empty"}
    assert delivery.parse_reply("<silent>not mine</silent>") == {"outcome": "silent", "why": "not mine"}
    assert delivery.parse_reply('<take to="check step 4"/>') == {"outcome": "took", "to": "check step 4"}
    assert delivery.parse_reply("sure thing <silent>x</silent>") == {
        "outcome": "replied", "text": "sure thing <silent>x</silent>", "nearmiss": True}
    huge = delivery.parse_reply("x" * (delivery.MAX_REPLY + 10))
    assert len(huge["text"]) == delivery.MAX_REPLY and huge["truncated"] == delivery.MAX_REPLY + 10


def test_run_never_raises(tmp_path):
    assert delivery.run(["/no/such/binary"], "wake")["outcome"] == "failed"
    assert delivery.run([], "wake")["outcome"] == "failed"
    assert delivery.run([sys.executable, "-c", "print('hi')"], "wake")["outcome"] == "replied"
