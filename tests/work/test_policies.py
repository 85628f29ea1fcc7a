"""Project policies: the strict YAML subset, readiness gates, dispatch gates, ops.py policy."""

import json
import os

import pytest

from conftest import ROOT, last_event, script
from mindos.core import clock
from mindos.work import leases, lifecycle, policies, rows, tasks
from mindos.errors import Refused
from conftest import make_task as make


def write_policy(home, project, text):
    directory = os.path.join(str(home), "policies")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{project}.yaml")
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    # rewrites in one test can land in the same mtime tick with the same size; give each
    # write its own mtime, as any real edit (seconds apart) has, so the stat-keyed cache sees it
    _writes.append(path)
    stamp = 1_700_000_000 + len(_writes)
    os.utime(path, (stamp, stamp))
    return path


_writes = []


def state(conn):
    return ([tuple(r) for r in conn.execute("SELECT * FROM tasks ORDER BY id")],
            conn.execute("SELECT count(*) FROM audit_events").fetchone()[0])


# ---------------------------------------------------------------------------------------
# the parser


def test_parser_accepts_the_documented_subset():
    text = ("\ufeff# a comment\n"
            "\n"
            "merge_requires_user: true   # trailing comment\n"
            "deploy_requires_user: false\r\n"
            "dispatch_requires_tag: 'client:trove' # quoted\n"
            "max_wip_per_owner: 2\n"
            "   \n"
            "   # indented comment lines are still comments\n")
    assert policies.parse(text, "p.yaml") == {"merge_requires_user": True, "deploy_requires_user": False,
                                              "dispatch_requires_tag": "client:trove", "max_wip_per_owner": 2}
    assert policies.parse('dispatch_requires_tag: "infra"\n') == {"dispatch_requires_tag": "infra"}
    assert policies.parse("dispatch_requires_tag: client:trove\n") == {"dispatch_requires_tag": "client:trove"}
    assert policies.parse("") == {}
    assert policies.parse("# only comments\n\n") == {}


@pytest.mark.parametrize("text, line, phrase", [
    ("merge_requires_user: true\n  nested: 1\n", 2, "indented line"),
    ("merge_requires_user:\n  - a\n", 1, "missing value"),
    ("- merge_requires_user\n", 1, "lists are not supported"),
    ("dispatch_requires_tag: [a, b]\n", 1, "unsupported YAML syntax"),
    ("dispatch_requires_tag: {a: 1}\n", 1, "unsupported YAML syntax"),
    ("{merge_requires_user: true}\n", 1, "expected 'key: value'"),
    ("merge_requires_user: &flag true\n", 1, "unsupported YAML syntax"),
    ("merge_requires_user: *flag\n", 1, "unsupported YAML syntax"),
    ("merge_requires_user: !!bool true\n", 1, "unsupported YAML syntax"),
    ("dispatch_requires_tag: |\n", 1, "unsupported YAML syntax"),
    ("dispatch_requires_tag: >\n", 1, "unsupported YAML syntax"),
    ("---\nmerge_requires_user: true\n", 1, "document markers"),
    ("%YAML 1.2\n", 1, "document markers"),
    ("max_wip_per_owner: 2\nmax_wip_per_owner: 3\n", 2, "duplicate key 'max_wip_per_owner' (first set on line 1)"),
    ("merge_require_user: true\n", 1, "unknown key 'merge_require_user'"),
    ("merge_requires_user: 1\n", 1, "merge_requires_user must be true or false"),
    ("merge_requires_user: yes\n", 1, "ambiguous bare value"),
    ("merge_requires_user: True\n", 1, "ambiguous bare value"),
    ("merge_requires_user: 'true'\n", 1, "must be true or false"),
    ("max_wip_per_owner: '2'\n", 1, "must be an integer"),
    ("max_wip_per_owner: 0\n", 1, "from 1 to 100000"),
    ("max_wip_per_owner: 1.5\n", 1, "ambiguous bare value"),
    ("max_wip_per_owner: 007\n", 1, "ambiguous bare value"),
    ("max_wip_per_owner: +2\n", 1, "ambiguous bare value"),
    ("dispatch_requires_tag: true\n", 1, "must be a string"),
    ("dispatch_requires_tag: null\n", 1, "ambiguous bare value"),
    ("dispatch_requires_tag: ~\n", 1, "ambiguous bare value"),
    ("dispatch_requires_tag: Client Trove\n", 1, "invalid dispatch_requires_tag"),
    ("dispatch_requires_tag: a: b\n", 1, "nested mappings"),
    ("dispatch_requires_tag: ''\n", 1, "invalid dispatch_requires_tag"),
    ('dispatch_requires_tag: "a\\nb"\n', 1, "backslash escapes"),
    ('dispatch_requires_tag: "open\n', 1, "unterminated"),
    ("dispatch_requires_tag: 'a' b\n", 1, "unexpected text after quoted string"),
    ("merge_requires_user:\ttrue\n", 1, "tab characters"),
    ("\tmerge_requires_user: true\n", 1, "tab characters"),
    ("merge_requires_user:true\n", 1, "expected 'key: value'"),
    ("Merge_Requires_User: true\n", 1, "expected 'key: value'"),
    ("merge_requires_user: true\rmax_wip_per_owner: 1\n", 1, "control characters"),
    ("# ok\n\nmerge_requires_user: maybe\n", 3, "must be true or false"),
    # invisible characters: only ASCII spaces are whitespace here, everything else is refused
    ("merge_requires_user: true\x0c\n", 1, "control characters are not allowed (U+000C at column 26)"),
    ("max_wip_per_owner: 2\x1f\n", 1, "control characters are not allowed (U+001F at column 21)"),
    ("merge_requires_user: true\x0b\n", 1, "control characters are not allowed (U+000B"),
    ("merge_requires_user: true\x01\n", 1, "control characters are not allowed (U+0001"),
    ("merge_requires_user: true\x7f\n", 1, "control characters are not allowed (U+007F"),
    ("merge_requires_user: true\x85\n", 1, "control characters are not allowed (U+0085"),
    ("merge_requires_user: true\x9b\n", 1, "control characters are not allowed (U+009B"),
    ("\x1cmerge_requires_user: true\n", 1, "control characters are not allowed (U+001C at column 1)"),
    ("# a comment\x0c\n", 1, "control characters are not allowed"),
    ("\u00a0\n", 1, "non-ASCII whitespace is not allowed (U+00A0 at column 1); use plain spaces"),
    ("\u3000\n", 1, "non-ASCII whitespace is not allowed (U+3000 at column 1)"),
    ("merge_requires_user: \u2003true\n", 1, "non-ASCII whitespace is not allowed (U+2003 at column 22)"),
    ("merge_requires_user: true\u00a0\n", 1, "non-ASCII whitespace is not allowed (U+00A0"),
    ("merge_requires_user:\u00a0true\n", 1, "non-ASCII whitespace is not allowed (U+00A0"),
    ("\u2028merge_requires_user: true\n", 1, "non-ASCII whitespace is not allowed (U+2028"),
    ("dispatch_requires_tag: 'infra\u205f'\n", 1, "non-ASCII whitespace is not allowed (U+205F"),
    ("# ok\nmax_wip_per_owner: 2\u1680\n", 2, "non-ASCII whitespace is not allowed (U+1680"),
])
def test_parser_refuses_everything_else_naming_file_and_line(text, line, phrase):
    with pytest.raises(Refused) as info:
        policies.parse(text, "/x/policies/P.yaml")
    message = str(info.value)
    assert message.startswith(f"invalid policy /x/policies/P.yaml:{line}: "), message
    assert phrase in message
    assert "\n" not in message


def test_load_refuses_invisible_characters_naming_the_file_and_line(home):
    path = write_policy(home, "Ws", "# ok\nmerge_requires_user: true\x0c\n")
    with pytest.raises(Refused) as info:
        policies.load(str(home), "Ws")
    assert str(info.value) == f"invalid policy {path}:2: control characters are not allowed (U+000C at column 26)"
    write_policy(home, "Ws", "merge_requires_user: true\u3000\n")
    with pytest.raises(Refused, match=r"Ws.yaml:1: non-ASCII whitespace is not allowed \(U\+3000"):
        policies.load(str(home), "Ws")
    # non-ASCII text that is not whitespace stays readable in comments
    write_policy(home, "Ws", "# reviewed by Zo\u00eb \u2014 ok\nmerge_requires_user: true\n")
    assert policies.load(str(home), "Ws") == {"merge_requires_user": True}


def test_load_missing_file_is_no_policy_and_edits_and_deletion_take_effect(home):
    assert policies.load(str(home), "Trove") == {}
    path = write_policy(home, "Trove", "max_wip_per_owner: 2\n")
    assert policies.load(str(home), "Trove") == {"max_wip_per_owner": 2}
    write_policy(home, "Trove", "max_wip_per_owner: 5\n")
    assert policies.load(str(home), "Trove") == {"max_wip_per_owner": 5}
    os.unlink(path)
    assert policies.load(str(home), "Trove") == {}


def test_load_refuses_bad_files_fail_closed(home):
    directory = os.path.join(str(home), "policies")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "Bin.yaml"), "wb") as handle:
        handle.write(b"merge_requires_user: true\n\xff\xfe\n")
    with pytest.raises(Refused, match=r"Bin.yaml:2: not valid UTF-8"):
        policies.load(str(home), "Bin")
    write_policy(home, "Big", "# " + "x" * 70000 + "\n")
    with pytest.raises(Refused, match="over the limit"):
        policies.load(str(home), "Big")
    os.makedirs(os.path.join(directory, "Dir.yaml"))
    with pytest.raises(Refused, match="not a regular file"):
        policies.load(str(home), "Dir")


def test_repo_examples_parse_and_readme_documents_every_key():
    for name in ("example-project.yaml", "client-trove.yaml"):
        with open(os.path.join(ROOT, "policies", name), encoding="utf-8") as handle:
            parsed = policies.parse(handle.read(), name)
        assert parsed["dispatch_requires_tag"] == "client:trove" and parsed["max_wip_per_owner"] == 2
    with open(os.path.join(ROOT, "policies", "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    for key in policies.KEYS:
        assert f"`{key}`" in readme


# ---------------------------------------------------------------------------------------
# readiness gates (update --status ready_to_merge|ready_to_deploy)


def test_readiness_gate_requires_an_approver_and_records_it(conn, home, cli, cli_json):
    write_policy(home, "Trove", "merge_requires_user: true\n")
    make(conn, "t1")
    before = state(conn)
    rc, out, err = cli("autopilot", "update", "t1", "--status", "ready_to_merge")
    assert (rc, out) == (1, "")
    assert "requires user approval to merge (merge_requires_user)" in err and "--approved-by" in err
    assert state(conn) == before
    rc, out, err = cli("autopilot", "update", "t1", "--status", "ready_to_merge", "--approved-by", "bad name")
    assert rc == 2 and "invalid --approved-by" in err
    assert state(conn) == before
    out = cli_json("autopilot", "update", "t1", "--status", "ready_to_merge", "--approved-by", "leo")
    assert out["status"] == "ready_to_merge"
    event = last_event(conn, "updated")
    assert event["approved_by"] == "leo" and event["gate"] == "merge_requires_user"
    # re-stating the current status is not a transition: ungated
    cli_json("autopilot", "update", "t1", "--status", "ready_to_merge")
    # deploy is not gated by this policy
    cli_json("autopilot", "update", "t1", "--status", "ready_to_deploy")
    assert "gate" not in last_event(conn, "updated")


def test_deploy_gate_and_policy_less_projects(conn, home):
    write_policy(home, "Trove", "deploy_requires_user: true\nmerge_requires_user: false\n")
    make(conn, "t1")
    make(conn, "free", project="Other")
    with pytest.raises(Refused, match="requires user approval to deploy"):
        tasks.update(conn, "t1", status="ready_to_deploy")
    assert tasks.update(conn, "t1", status="ready_to_merge")["status"] == "ready_to_merge"
    assert tasks.update(conn, "free", status="ready_to_deploy")["status"] == "ready_to_deploy"
    assert "gate" not in last_event(conn, "updated")


def test_malformed_policy_refuses_gated_updates(conn, home):
    write_policy(home, "Trove", "merge_requires_user: yes\n")
    make(conn, "t1")
    with pytest.raises(Refused, match=r"Trove.yaml:1: ambiguous bare value"):
        tasks.update(conn, "t1", status="ready_to_merge", approved_by="leo")


# ---------------------------------------------------------------------------------------
# dispatch gates (claim)


def test_required_tag_refuses_claim_until_tagged_and_is_audited(conn, home, cli):
    write_policy(home, "Trove", "dispatch_requires_tag: client:trove\n")
    make(conn, "t1")
    make(conn, "t2", tags=["client:trove"])
    before = state(conn)
    rc, out, err = cli("autopilot", "claim", "t1", "--owner", "codex")
    assert (rc, out) == (1, "")
    assert err.strip() == ("policy refused claim: project 'Trove' requires tag 'client:trove'"
                           " (dispatch_requires_tag); tag task 't1' first or pass --force")
    after = state(conn)
    assert after[0] == before[0] and after[1] == before[1] + 1
    assert last_event(conn, "claim_refused_policy") == {"owner": "codex", "reason": "policy_missing_tag",
                                                        "required_tag": "client:trove"}
    assert leases.claim(conn, "t2", "codex")["lease_owner"] == "codex"
    assert policies.metrics(conn) == {"claims_refused_by_policy": 1}


def test_wip_cap_counts_live_leases_in_the_project_only(conn, home):
    write_policy(home, "Trove", "max_wip_per_owner: 2\n")
    for tid in ("a", "b", "c"):
        make(conn, tid)
    make(conn, "elsewhere", project="Other")
    leases.claim(conn, "a", "hermes")
    leases.claim(conn, "b", "hermes")
    assert policies.dispatch_gate(conn, rows.get(conn, "c"), "hermes") == {
        "reason": "policy_wip_cap", "held": ["a", "b"], "max_wip_per_owner": 2}
    with pytest.raises(Refused, match=r"holds 2/2 live leases in project 'Trove' \(max_wip_per_owner; held: a, b\)"):
        leases.claim(conn, "c", "hermes")
    assert last_event(conn, "claim_refused_policy")["held"] == ["a", "b"]
    assert leases.claim(conn, "elsewhere", "hermes")["lease_owner"] == "hermes"  # other project: no cap
    assert leases.claim(conn, "c", "codex")["lease_owner"] == "codex"  # per owner
    lifecycle.complete(conn, "a", "hermes")
    leases.release(conn, "c", "codex")
    assert leases.claim(conn, "c", "hermes")["lease_owner"] == "hermes"  # capacity freed


def test_force_overrides_policy_and_records_policy_overrides(conn, home, cli_json):
    write_policy(home, "Trove", "dispatch_requires_tag: client:trove\n")
    make(conn, "t1")
    out = cli_json("autopilot", "claim", "t1", "--owner", "codex", "--force")
    assert out["lease_owner"] == "codex"
    assert out["policy_overrides"] == [{"reason": "policy_missing_tag", "required_tag": "client:trove"}]
    assert last_event(conn, "claimed")["policy_overrides"] == out["policy_overrides"]


def test_deleting_the_policy_reopens_dispatch(conn, home):
    path = write_policy(home, "Trove", "dispatch_requires_tag: infra\n")
    make(conn, "t1")
    with pytest.raises(Refused, match="policy refused claim"):
        leases.claim(conn, "t1", "codex")
    os.unlink(path)
    assert leases.claim(conn, "t1", "codex")["lease_owner"] == "codex"


def test_malformed_policy_fails_claims_closed_even_with_force(conn, home):
    write_policy(home, "Trove", "max_wip_per_owner: two\n")
    make(conn, "t1")
    before = state(conn)
    for force in (False, True):
        with pytest.raises(Refused, match=r"invalid policy .*Trove.yaml:1:"):
            leases.claim(conn, "t1", "codex", force=force)
    assert state(conn) == before


def test_seam_is_checked_before_policy(conn, home):
    write_policy(home, "Trove", "dispatch_requires_tag: infra\n")
    make(conn, "a", tags=["infra"])
    make(conn, "b")
    tasks.update(conn, "a", worktree="/srv/wt")
    tasks.update(conn, "b", worktree="/srv/wt")
    leases.claim(conn, "a", "hermes")
    with pytest.raises(Refused, match="seam conflict"):
        leases.claim(conn, "b", "codex")
    out = leases.claim(conn, "b", "codex", force=True)
    assert "seam_overrides" in out and "policy_overrides" in out


# ---------------------------------------------------------------------------------------
# ops.py policy


def test_ops_policy_reports_decisions(home, cli_json, cli):
    write_policy(home, "Trove", "merge_requires_user: true\ndispatch_requires_tag: client:trove\n")
    merge = cli_json("ops", "policy", "Trove", "merge")
    assert merge["decision"] == "requires_user" and merge["requires_user"] is True
    assert merge["rule"] == "merge_requires_user" and merge["policy_found"] is True
    assert merge["policy_file"] == os.path.join(str(home), "policies", "Trove.yaml")
    assert cli_json("ops", "policy", "Trove", "ready_to_deploy")["decision"] == "allowed"
    dispatch = cli_json("ops", "policy", "Trove", "dispatch")
    assert dispatch["decision"] == "gated" and dispatch["dispatch_requires_tag"] == "client:trove"
    assert dispatch["max_wip_per_owner"] is None
    assert cli_json("ops", "policy", "Nothing", "merge") == {
        "project": "Nothing", "action": "merge", "policy_file": os.path.join(str(home), "policies", "Nothing.yaml"),
        "policy_found": False, "policy": {}, "requires_user": False, "rule": "merge_requires_user",
        "decision": "allowed"}
    other = cli_json("ops", "policy", "Trove", "send-email")
    assert other["requires_user"] is True and other["rule"] == "unlisted_action_requires_user"
    for argv, code, phrase in ((["../../etc", "merge"], 2, "invalid project"),
                               (["Trove", "Merge Now"], 2, "invalid action"),
                               (["Trove"], 2, "required")):
        rc, out, err = cli("ops", "policy", *argv)
        assert (rc, out) == (code, "") and phrase in err
    write_policy(home, "Trove", "merge_requires_user: true\nmerge_requires_user: false\n")
    rc, out, err = cli("ops", "policy", "Trove", "merge")
    assert (rc, out) == (1, "") and "Trove.yaml:2: duplicate key" in err


def test_ops_policy_subprocess_reads_the_home_without_creating_a_database(tmp_path):
    home = tmp_path / "fresh"
    os.makedirs(home / "policies")
    (home / "policies" / "Trove.yaml").write_text("deploy_requires_user: true\n")
    proc = script("ops.py", "policy", "Trove", "deploy", home=home)
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["decision"] == "requires_user"
    assert not (home / "state.db").exists()


def test_policy_files_are_found_case_insensitively(home):
    os.makedirs(os.path.join(str(home), "policies"), exist_ok=True)
    with open(os.path.join(str(home), "policies", "gated.yaml"), "w", encoding="utf-8") as handle:
        handle.write("merge_requires_user: true\n")
    assert policies.load(str(home), "Gated") == {"merge_requires_user": True}
    assert policies.load(str(home), "GATED") == {"merge_requires_user": True}
    assert policies.load(str(home), "Other") == {}
    with open(os.path.join(str(home), "policies", "Gated.yaml"), "w", encoding="utf-8") as handle:
        handle.write("merge_requires_user: false\n")
    assert policies.load(str(home), "Gated") == {"merge_requires_user": False}  # the exact spelling wins


def test_a_credential_shaped_policy_value_fails_closed(home, cli):
    os.makedirs(os.path.join(str(home), "policies"), exist_ok=True)
    with open(os.path.join(str(home), "policies", "Leaky.yaml"), "w", encoding="utf-8") as handle:
        handle.write("dispatch_requires_tag: xoxb-2718281828-akia2r29tqlr0vlg5w1h\n")
    with pytest.raises(Refused, match="credential-shaped"):
        policies.load(str(home), "Leaky")
    rc, out, err = cli("ops", "policy", "Leaky", "dispatch", "--json-errors")
    assert rc == 1 and out == "" and json.loads(err)["error"]["code"] == "secret_blocked"
    assert "xoxb-2718281828" not in err
