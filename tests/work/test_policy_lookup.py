"""policies.Lookup: the policy files of one ``next`` call, read once for all its candidates,
with the answers :func:`policies.load` gives one project at a time."""

import os

import pytest

from mindos.work import dispatch, policies, tasks
from mindos.errors import InvalidInput, Refused


def put(home, name, text):
    os.makedirs(policies.policy_dir(str(home)), exist_ok=True)
    with open(os.path.join(policies.policy_dir(str(home)), name), "w", encoding="utf-8") as handle:
        handle.write(text)


def answer(call, *args):
    try:
        return call(*args)
    except Refused as exc:
        return ("refused", str(exc), exc.code)


PROJECTS = ["Gated", "gated", "Loose", "Broken", "Leaky", "Nothing", "capped"]


@pytest.mark.parametrize("layout", ["no-directory", "empty-directory", "files"])
def test_lookup_answers_as_load_does(home, layout):
    if layout != "no-directory":
        os.makedirs(policies.policy_dir(str(home)))
    if layout == "files":
        put(home, "gated.yaml", "dispatch_requires_tag: autopilot-safe\n")
        put(home, "GATED.yaml", "dispatch_requires_tag: other\n")
        put(home, "loose.YAML", "merge_requires_user: true\n")
        put(home, "broken.yaml", "dispatch_requires_tag: [a, b]\n")
        put(home, "Leaky.yaml", "dispatch_requires_tag: ghp_" + "a1B2" * 9 + "\n")
        put(home, "Capped.yaml", "max_wip_per_owner: 2\n")
        put(home, "notes.txt", "not a policy\n")
    lookup = policies.Lookup(str(home))
    for _ in range(2):  # the second round answers from what the first one read
        for project in PROJECTS:
            assert answer(lookup.load, project) == answer(policies.load, str(home), project), project
    with pytest.raises(InvalidInput):
        lookup.load("../escape")


def test_a_cached_answer_is_a_copy(home):
    put(home, "gated.yaml", "dispatch_requires_tag: autopilot-safe\n")
    lookup = policies.Lookup(str(home))
    lookup.load("gated")["dispatch_requires_tag"] = "changed"
    assert lookup.load("gated") == {"dispatch_requires_tag": "autopilot-safe"}


def counted(monkeypatch, home):
    """The file-system calls made on the policy directory or anything in it."""
    where = policies.policy_dir(str(home))
    calls = []

    def spying(name, real):
        def spy(path, *args, **kw):
            if str(path).startswith(where):
                calls.append(name)
            return real(path, *args, **kw)
        return spy

    for module, name in ((os, "stat"), (os, "listdir"), (os.path, "exists"), (os.path, "isfile")):
        monkeypatch.setattr(module, name, spying(name, getattr(module, name)))
    return calls


@pytest.mark.parametrize("with_directory", [False, True])
def test_next_reads_the_policy_directory_once_per_call(conn, home, monkeypatch, with_directory):
    if with_directory:
        put(home, "elsewhere.yaml", "dispatch_requires_tag: autopilot-safe\n")
    for n in range(30):
        tasks.create(conn, project=f"proj-{n % 5}", title=f"task {n}", task_id=f"t-{n:02d}",
                     depends_on=["t-00"] if n % 2 else [])
    calls = counted(monkeypatch, home)
    result = dispatch.next_task(conn, explain=True)  # walks every candidate
    assert result["considered"] == 30
    # a read-only pick looks whether the directory exists (a home without one has no policy)
    assert calls == (["stat", "listdir"] if with_directory else ["stat"])
    calls.clear()
    assert dispatch.next_task(conn, claim=True, owner="codex")["task"]["id"] == "t-00"
    assert calls == ["listdir"]


def test_next_still_applies_each_projects_policy(conn, home):
    put(home, "Gated.yaml", "dispatch_requires_tag: autopilot-safe\n")
    put(home, "broken.yaml", "dispatch_requires_tag: [a]\n")
    tasks.create(conn, project="gated", title="untagged", task_id="a", priority="P0")
    tasks.create(conn, project="Broken", title="malformed policy", task_id="b", priority="P0")
    tasks.create(conn, project="gated", title="untagged too", task_id="c", priority="P1")
    tasks.create(conn, project="gated", title="tagged", task_id="d", priority="P2", tags=["autopilot-safe"])
    result = dispatch.next_task(conn, explain=True)
    assert result["task"]["id"] == "d"
    reasons = {skip["task_id"]: skip["reason"] for skip in result["skipped"]}
    assert reasons == {"a": "policy_missing_tag", "b": "policy_invalid", "c": "policy_missing_tag"}
    assert dispatch.next_task(conn, claim=True, owner="codex")["task"]["id"] == "d"
