"""The command reference: every subcommand documents itself, and docs/cli.md never drifts."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gen_cli_docs  # noqa: E402

from mindos.cli import build_parser, doors  # noqa: E402

DOORS = gen_cli_docs.front_doors()


def _subparsers(door):
    table = doors.commands(doors.DOORS[door])
    parser = build_parser(doors.DOORS[door], doors.DOORS[door].script)
    choices = parser.mindos_commands
    helps = {name: sub.mindos_command.summary for name, sub in choices.items()}
    return table, choices, helps


def test_front_doors_are_discovered():
    names = dict(DOORS)
    assert names["autopilot.py"] == "autopilot"
    assert names["ops.py"] == "ops"


@pytest.mark.parametrize("script,door", DOORS)
def test_every_table_entry_builds_a_subparser(script, door):
    table, choices, _ = _subparsers(door)
    missing = sorted(set(table) - set(choices))
    assert not missing, f"{script}: COMMANDS names with no add_<name> in their module: {missing}"


@pytest.mark.parametrize("script,door", DOORS)
def test_every_subcommand_has_help_and_an_example(script, door):
    _, choices, helps = _subparsers(door)
    assert choices, f"{script} has no commands"
    for name, sub in choices.items():
        assert (helps.get(name) or "").strip(), f"{script} {name}: no help="
        description = sub.description or ""
        assert "Example:" in description, f"{script} {name}: no 'Example:' in its description"
        example = description.split("Example:", 1)[1].strip()
        assert example, f"{script} {name}: empty example"
        assert name in example.split("\n")[0], f"{script} {name}: the example does not run {name!r}"


def test_docs_cli_md_matches_the_help_text():
    with open(gen_cli_docs.DOC_PATH, encoding="utf-8") as handle:
        current = handle.read()
    assert gen_cli_docs.same_as_generated(current, gen_cli_docs.render()), \
        "docs/cli.md is stale: run python3 scripts/gen_cli_docs.py (under Python 3.11)"


def test_comparable_removes_only_the_layout_argparse_varies_by_version():
    older = "  --to-owner TO_OWNER, --to-agent TO_OWNER\nusage: x [-h] --granted-by\n      GRANTED_BY\n"
    newer = "  --to-owner, --to-agent TO_OWNER\nusage: x [-h]\n      --granted-by GRANTED_BY\n"
    assert gen_cli_docs.comparable(older) == gen_cli_docs.comparable(newer)
    # content still counts: another flag, metavar or help word is drift
    assert gen_cli_docs.comparable(older) != gen_cli_docs.comparable(older.replace("GRANTED_BY", "GRANTOR"))
    assert gen_cli_docs.comparable("--a A, --b B") == "--a A, --b B"
    assert not gen_cli_docs.same_as_generated(None, "x")


def test_check_mode_reports_drift(tmp_path, monkeypatch):
    stale = tmp_path / "cli.md"
    stale.write_text("# outdated\n", encoding="utf-8")
    monkeypatch.setattr(gen_cli_docs, "DOC_PATH", str(stale))
    assert gen_cli_docs.main(["--check"]) == 1
    assert gen_cli_docs.main([]) == 0  # regenerates
    assert gen_cli_docs.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == gen_cli_docs.render()


@pytest.mark.bare_home
def test_docs_match_what_the_real_front_door_prints(home):
    env = dict(os.environ, COLUMNS=gen_cli_docs.WIDTH, HERMES_AUTOPILOT_HOME=str(home))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "autopilot.py"), "--help"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert "```\n" + proc.stdout.rstrip() + "\n```" in gen_cli_docs.render()
    assert not home.exists(), "--help must not create a home"


def _readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        return handle.read()


def _tour_commands():
    """The README tour as ``[(door, argv)]``, in order (``ap`` is autopilot.py)."""
    import re
    import shlex

    text = _readme()
    tour = text[text.index("## A short tour"):text.index("## Benchmark")]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", tour, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            argv = shlex.split(line, comments=True)
            if not argv or argv[0].startswith("ap()") or argv[0] == "export":
                continue
            if argv[0] == "ap":
                commands.append(("autopilot", argv[1:]))
            else:
                assert argv[:1] == ["python3"] and argv[1].endswith(".py"), line
                commands.append((argv[1][:-3], argv[2:]))
    return commands


def test_readme_opens_with_the_demo_and_the_test_command():
    head = "\n".join(_readme().splitlines()[:8])
    assert "python3 autopilot.py demo" in head
    assert "python3 -m pip install pytest" in head and "python3 -m pytest -q" in head


@pytest.mark.bare_home
def test_readme_tour_runs_top_to_bottom(cli):
    commands = _tour_commands()
    assert len(commands) > 30
    outputs = {}
    for door, argv in commands:
        rc, out, err = cli(door, *argv)
        assert (rc, err) == (0, ""), f"README: {door}.py {' '.join(argv)} -> rc={rc} {err.strip()}"
        outputs.setdefault(" ".join(argv[:2]), json.loads(out))
    assert outputs["transfer t-cert"]["lease_epoch"] == 3
    assert outputs["next --claim"]["task"]["id"] == "t-build"
    assert outputs["verify-chain"]["ok"] is True


def test_readme_newcomer_hour_install_zsh_and_cron():
    text = _readme()
    assert "python3 -m venv" in text and "pipx install" in text and "externally-managed-environment" in text
    tour = text[text.index("## A short tour"):text.index("## Benchmark")]
    assert "\n$A " not in tour and 'ap() { python3 autopilot.py "$@"; }' in tour  # zsh does not split $A
    assert "\nap init" in tour
    cron = text[text.index("### Cron"):]
    for command in ("ops.py recover", "ops.py escalate"):
        line = next(line for line in cron.splitlines() if command in line)
        assert "HERMES_AUTOPILOT_HOME=/" in line


@pytest.mark.slow
@pytest.mark.bare_home
def test_readme_tour_runs_in_a_real_posix_shell(home):
    import re
    import subprocess

    text = _readme()
    tour = text[text.index("## A short tour"):text.index("## Benchmark")]
    script = "set -e\ncd " + ROOT + "\n" + "\n".join(re.findall(r"```sh\n(.*?)```", tour, re.S))
    script = script.replace("export HERMES_AUTOPILOT_HOME=/tmp/mindos-tour", f"export HERMES_AUTOPILOT_HOME={home}")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert "Traceback" not in proc.stderr
