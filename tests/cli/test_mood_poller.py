"""mood_poller.py as agents and cron run it: real subprocesses (MINDOS_NOW) and in-process main(argv)."""

import json
import os
import shlex
import sys

import pytest
from conftest import script


def ok(proc):
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return json.loads(proc.stdout)


def fails(proc, code):
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    return proc.stderr.strip()


def at(moment):
    return {"MINDOS_NOW": moment}


def test_a_mention_round_trip_through_the_front_door(home, tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text("import os, sys\nwake = sys.stdin.read()\n"
                     "print('re here (' + os.environ['MOOD_WAKE_TOOLS'] + ', ' + str(len(wake) > 0) + ')')\n")
    run = lambda *argv, when="2026-08-21T09:00:00Z": script("mood_poller.py", *argv, home=home, env=at(when))
    ok(run("mood", "create", "infra", "--title", "Infra room"))
    ok(run("agent", "create", "re", "--command", f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))}"))
    ok(run("mood", "join", "infra", "re"))
    post = ok(run("post", "infra", "@re is step 4 done?", "--author", "justin", "--via", "ssh"))
    assert post["id"] == 1 and post["via"] == "ssh"
    assert ok(run("tick", when="2026-08-21T09:05:00Z"))["wakes"] == []
    explained = ok(run("explain", "infra", "re", when="2026-08-21T09:05:00Z"))
    assert explained["action"] == "wait" and explained["due"] == "2026-08-21T09:10:00Z"
    report = ok(run("tick", when="2026-08-21T09:10:00Z"))
    wake = report["wakes"][0]
    assert (wake["kind"], wake["tools"], wake["outcome"]) == ("mention", "full", "replied")
    said = ok(run("posts", "infra"))["posts"]
    assert said[-1]["author"] == "re" and said[-1]["body"] == "re here (full, True)"
    shown = ok(run("show-wake", str(wake["id"])))
    assert shown["text"].startswith('<mood-wake reason="mention">') and "has your full tools" in shown["text"]
    text_only = run("show-wake", str(wake["id"]), "--text")
    assert text_only.returncode == 0 and text_only.stdout == shown["text"]
    bundle = ok(run("bundle", wake["bundle"]))
    assert bundle["layers"][0]["layer"] == "greeting"
    listed = ok(run("wakes", "--mood", "infra", "--kind", "mention"))
    assert listed["total_matching"] == 1
    assert ok(run("wakes", "--duplicates"))["count"] == 0
    assert ok(run("budget"))["daily_budget_usd"] == 2.0


def test_failures_are_one_line_with_the_right_exit_code(home):
    run = lambda *argv: script("mood_poller.py", *argv, home=home, env=at("2026-08-21T09:00:00Z"))
    ok(run("mood", "create", "infra", "--title", "Infra room"))
    assert fails(run("post", "nowhere", "hi", "--author", "j", "--via", "web"), 1) == "no Mood named 'nowhere'"
    assert "invalid choice" in fails(run("post", "infra", "hi", "--author", "j", "--via", "fax"), 2)
    assert "must not be empty" in fails(run("post", "infra", "", "--author", "j", "--via", "web"), 2)
    assert "unknown dial" in fails(run("set", "loudness", "11"), 2)
    assert fails(run("show-wake", "99"), 1) == "no wake 99"
    assert fails(run("bundle", "nope"), 1) == "no bundle nope"
    assert "invalid bundle id" in fails(run("bundle", "../../etc"), 2)
    assert "no-such" in fails(run("no-such"), 2)
    secret = fails(run("post", "infra", "key AKIAIOSFODNN7EXAMPLE", "--author", "j", "--via", "web"), 1)
    assert "secret guard" in secret and "AKIA" not in secret
    assert ok(run("posts", "infra"))["posts"] == []


@pytest.mark.parametrize("argv", [
    ["post", "infra", "x" * 40000, "--author", "j", "--via", "web"],
    ["post", "infra", "hi", "--author", "j;rm -rf /", "--via", "web"],
    ["typing", "infra", "alice", "--seconds", "-5"],
    ["set", "grace", "1e9"],
    ["wakes", "--since", "yesterday"],
    ["wakes", "--kind", "'; DROP TABLE moods; --"],
    ["explain", "infra", "ghost"],
    ["page", "show", "Nope"],
    ["page", "set", "GeneralOrders", "--editor", "re", "--file", "/nonexistent/file"],
    ["tick", "--seconds", "0"],
    ["show-wake", "notanumber"],
    ["mood"],
])
def test_bad_input_never_produces_a_traceback_or_changes_the_database(home, argv):
    first = script("mood_poller.py", "mood", "create", "infra", "--title", "Infra room", home=home)
    assert first.returncode == 0
    events = ok(script("autopilot.py", "events", "--limit", "1", home=home))["total_matching"]
    proc = script("mood_poller.py", *argv, home=home)
    assert proc.returncode in (1, 2) and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert ok(script("autopilot.py", "events", "--limit", "1", home=home))["total_matching"] == events


def test_help_lists_the_commands(home):
    proc = script("mood_poller.py", "--help", home=home)
    assert proc.returncode == 0
    for name in ("tick", "post", "typing", "arrive", "mood", "agent", "set", "page", "wakes", "show-wake",
                 "bundle", "explain"):
        assert name in proc.stdout


def test_in_process_page_set_show_and_trust(cli, cli_json, tmp_path):
    page = tmp_path / "dials.md"
    page.write_text("## verbosity-terse\nPurpose: p\n```text\nBe brief.\n```\n")
    saved = cli_json("mood_poller", "page", "set", "Moods/Dials", "--editor", "re", "--file", str(page))
    assert saved["trusted"] is False
    assert cli_json("mood_poller", "page", "trust", "re")["trusted"] is True
    shown = cli_json("mood_poller", "page", "show", "Moods/Dials", "--history")
    assert shown["in_use"] == 1 and shown["revision"]["body"].startswith("## verbosity-terse")
    assert cli_json("mood_poller", "page", "list")["pages"] == [{"page": "Moods/Dials", "revisions": 1, "in_use": 1}]


def test_in_process_dials_agents_and_signals(cli, cli_json):
    cli_json("mood_poller", "mood", "create", "infra", "--title", "Infra")
    cli_json("mood_poller", "agent", "create", "re", "--alias", "r2")
    cli_json("mood_poller", "mood", "join", "infra", "re")
    result = cli_json("mood_poller", "set", "listening", "off", "--mood", "infra", "--agent", "re", "--by", "skyler")
    assert result["scope"] == "mood+agent" and result["effective"] == "off"
    assert cli_json("mood_poller", "set", "listening", "--clear", "--mood", "infra", "--agent", "re")["effective"] == "on"
    assert cli_json("mood_poller", "typing", "infra", "alice")["until"] == "2026-08-21T09:00:30Z"
    assert cli_json("mood_poller", "typing", "infra", "alice", "--stop")["until"] is None
    assert cli_json("mood_poller", "arrive", "infra", "justin")["arrival"] == 1
    assert cli_json("mood_poller", "agent", "update", "re", "--rename", "re3")["aliases"] == ["r2", "re"]
    assert cli_json("mood_poller", "agent", "list")["agents"][0]["agent"] == "re3"
    assert cli_json("mood_poller", "mood", "list")["moods"][0]["members"] == 1
    rc, out, err = cli("mood_poller", "set", "listening")
    assert rc == 2 and out == "" and err.strip() == "give a value, or --clear without one"


def test_dry_run_tick_from_the_front_door_writes_nothing(cli, cli_json):
    cli_json("mood_poller", "mood", "create", "infra", "--title", "Infra")
    cli_json("mood_poller", "agent", "create", "re")
    cli_json("mood_poller", "mood", "join", "infra", "re")
    cli_json("mood_poller", "post", "infra", "@re hi", "--author", "justin", "--via", "web")
    report = cli_json("mood_poller", "tick", "--dry-run")
    assert report["wakes"][0]["outcome"] == "composed"
    assert cli_json("mood_poller", "wakes")["total_matching"] == 0
    report = cli_json("mood_poller", "tick")
    assert report["wakes"][0]["outcome"] == "undeliverable"


def test_concurrent_ticks_never_deliver_a_wake_twice(home, tmp_path):
    import subprocess

    from conftest import ROOT

    env = dict(os.environ, HERMES_AUTOPILOT_HOME=str(home), MINDOS_NOW="2026-08-21T09:00:00Z")
    door = os.path.join(ROOT, "mood_poller.py")
    for argv in (["mood", "create", "infra", "--title", "I"], ["agent", "create", "re"], ["mood", "join", "infra", "re"],
                 ["post", "infra", "@re hi", "--author", "j", "--via", "web"]):
        assert subprocess.run([sys.executable, door, *argv], env=env, capture_output=True).returncode == 0
    procs = [subprocess.Popen([sys.executable, door, "tick"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(3)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    delivered = sum(len(json.loads(out)["wakes"]) for out, _ in outs)
    assert delivered == 1


def test_tick_in_a_loop_runs_each_cycle_and_refuses_bad_loop_flags(cli, cli_json):
    cli_json("mood_poller", "mood", "create", "infra", "--title", "Infra")
    reports = cli_json("mood_poller", "tick", "--cycles", "3", "--every", "0")
    assert len(reports) == 3 and all(r["wakes"] == [] for r in reports)
    for argv in (["--cycles", "0"], ["--every", "-1"], ["--cycles", "2", "--every", "1e9"]):
        rc, out, err = cli("mood_poller", "tick", *argv)
        assert rc == 2 and out == "" and err.count("\n") == 1


def test_set_help_states_the_command_format_and_a_json_array_goes_through_the_door(cli, cli_json):
    rc, out, err = cli("mood_poller", "set", "--help")
    assert rc == 0 and "JSON array of strings" in " ".join(out.split()) and "without a shell" in out
    result = cli_json("mood_poller", "set", "screen_command", '["python3", "/opt/screen.py"]')
    assert result["effective"] == ["python3", "/opt/screen.py"]
    rc, out, err = cli("mood_poller", "set", "screen_command", '["python3", "/opt/screen.py"')
    assert rc == 2 and out == "" and err.count("\n") == 1 and "not a JSON array" in err
    assert cli_json("mood_poller", "set", "screen_command", "--clear")["effective"] == []


def test_the_readme_crontab_runs_the_poller_every_minute_beside_the_nanny():
    from conftest import ROOT

    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        text = handle.read()
    block = text.split("```cron\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line and not line.startswith("#")]
    nanny = next(i for i, line in enumerate(lines) if "ops.py nanny" in line)
    poller = next(i for i, line in enumerate(lines) if "mood_poller.py tick" in line)
    assert abs(poller - nanny) == 1, "beside the nanny's line"
    fields = lines[poller].split()
    assert fields[:5] == ["*"] * 5, "every minute: one bounded tick per cron minute"
    assert fields[5].startswith("HERMES_AUTOPILOT_HOME=/"), "cron has no login environment"
    assert fields[6].startswith("/") and fields[7].endswith("/mood_poller.py") and fields[8] == "tick"
