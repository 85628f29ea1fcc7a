"""Shared plumbing of the end-to-end tests: the pinned clients, a sealed-off environment, runs.

Every run gets a throwaway ``HOME`` (so ``~/.claude``, ``~/.claude.json``, ``~/.hermes`` are
the test's), a throwaway ``CODEX_HOME`` and its own MindOS home; nothing of this machine's
environment that could steer a client (API keys, base URLs, MindOS variables) is passed on.
Network stays on 127.0.0.1: the model endpoint is there, and every proxy variable points at a
closed loopback port (``NO_PROXY`` exempts loopback), so a client that tries to reach the
internet (telemetry, update checks) fails fast instead of leaving the machine.

The fixtures live here, not in a tests/e2e/conftest.py (a second ``conftest`` module would
shadow the root one that other tests import from); the test modules import them.  Where node
or npm is missing, or a client is not installed or does not start, the tests skip and the run
ends with ONE line saying so (tests/conftest.py prints :data:`SKIPPED`); in CI (``CI=true``)
with node present a missing client is a failure: the install failed.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
E2E_BIN = os.path.join(ROOT, ".e2e", "node_modules", ".bin")
AUTOPILOT = os.path.join(ROOT, "autopilot.py")
HOLD_LOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hold_lock.py")
CLIENT_TIMEOUT = 180          # seconds one non-interactive client run may take
DEAD_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens, so a proxied request fails at once
PROJECT = "e2eproj"           # the project directory's name, which is also the tasks' project


def which_client(name):
    """``(path, None)`` of the pinned client ``name`` (claude | codex), or ``(None, reason)``."""
    override = os.environ.get(f"MINDOS_E2E_{name.upper()}")  # a client installed elsewhere
    path = override or os.path.join(E2E_BIN, name)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return None, f"{path} is not installed (run tests/e2e/install.sh)"
    return path, None


_STARTS = {}


def client_starts(name, env=None):
    """``(version line, None)`` when the client answers ``--version``, else ``(None, reason)``."""
    if name not in _STARTS:
        path, reason = which_client(name)
        if path is None:
            _STARTS[name] = (None, reason)
        else:
            try:
                done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60,
                                      env=env or base_env("/nonexistent-home"), stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired) as exc:
                _STARTS[name] = (None, f"{path} --version did not run: {exc}")
            else:
                if done.returncode == 0 and done.stdout.strip():
                    _STARTS[name] = (done.stdout.strip().splitlines()[0], None)
                else:
                    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
                    _STARTS[name] = (None, f"{path} --version exited {done.returncode}: {tail[0]}")
    return _STARTS[name]


def base_env(user_home, **extra):
    """A minimal environment for a client run with ``HOME`` at ``user_home``."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(user_home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "HTTP_PROXY": DEAD_PROXY, "HTTPS_PROXY": DEAD_PROXY, "ALL_PROXY": DEAD_PROXY,
        "http_proxy": DEAD_PROXY, "https_proxy": DEAD_PROXY, "all_proxy": DEAD_PROXY,
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    }
    env.update({k: str(v) for k, v in extra.items()})
    return env


class World:
    """One test's throwaway machine: a user home, a Codex home, a MindOS home and a project."""

    def __init__(self, root):
        self.root = str(root)
        self.user_home = os.path.join(self.root, "user")
        self.codex_home = os.path.join(self.user_home, ".codex-e2e")
        self.mindos_home = os.path.join(self.root, "mindos-home")
        self.project = os.path.join(self.root, PROJECT)
        for path in (self.user_home, self.codex_home, self.project):
            os.makedirs(path, exist_ok=True)
        subprocess.run(["git", "init", "-q", self.project], check=True, capture_output=True)
        self.env = base_env(self.user_home, CODEX_HOME=self.codex_home, HERMES_AUTOPILOT_HOME=self.mindos_home)
        self.autopilot("init")

    # -- MindOS through its CLI ---------------------------------------------------------

    def autopilot(self, *args, env=None, check=True):
        """Run ``autopilot.py ARGS`` as the user would (in the project); return the parsed JSON."""
        done = subprocess.run([sys.executable, AUTOPILOT, *args], capture_output=True, text=True, timeout=120,
                              env=env or self.env, cwd=self.project, stdin=subprocess.DEVNULL)
        if check and done.returncode != 0:
            raise AssertionError(f"autopilot.py {shlex.join(args)} exited {done.returncode}: {done.stderr.strip()}")
        try:
            return json.loads(done.stdout) if done.stdout.strip() else None
        except ValueError:
            return done.stdout

    def setup(self, *args):
        """``autopilot.py setup ARGS``; an exit other than 0 fails the test with the CLI's own line."""
        return self.autopilot("setup", *args)

    def create_task(self, task_id, title):
        return self.autopilot("create", "--project", PROJECT, "--title", title, "--id", task_id,
                              "--next-action", "follow the MindOS loop")

    def events(self, task_id, home=None):
        """The audit actions of ``task_id`` in ``home`` (default: this world's), oldest first."""
        env = dict(self.env, HERMES_AUTOPILOT_HOME=home or self.mindos_home)
        found = self.autopilot("events", "--entity-id", task_id, "--limit", "200", env=env)
        return list(reversed(found["events"]))

    def stray_homes(self):
        """MindOS homes nobody asked for: the default ``~/.hermes/autopilot`` under this HOME."""
        default = os.path.join(self.user_home, ".hermes", "autopilot")
        return [default] if os.path.exists(default) else []

    # -- the clients --------------------------------------------------------------------

    def claude(self, prompt, base_url, *args, env=None):
        """Run ``claude -p PROMPT --output-format json`` in the project against ``base_url``."""
        path, reason = which_client("claude")
        assert path, reason
        run_env = dict(env or self.env)
        run_env.update({
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-e2e-not-a-real-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # MCP tools inline in the request (not deferred behind Claude Code's tool search),
            # so the scripted model can call them on its first turn as a real model would
            # after searching.
            "ENABLE_TOOL_SEARCH": "false",
        })
        argv = [path, "-p", prompt, "--output-format", "json", *args]
        return _run(argv, run_env, self.project)

    def codex(self, prompt, base_url, *args, env=None):
        """Run ``codex exec --json PROMPT`` in the project with a model provider at ``base_url``."""
        path, reason = which_client("codex")
        assert path, reason
        provider = ('{ name = "scripted", base_url = "%s/v1", wire_api = "responses",'
                    ' request_max_retries = 0, stream_max_retries = 0 }' % base_url)
        argv = [path, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                "-c", 'model="gpt-5"', "-c", 'model_provider="scripted"', "-c", f"model_providers.scripted={provider}",
                *args, prompt]
        return _run(argv, env or self.env, self.project)


class Run:
    """A finished client run: ``returncode``, ``stdout``, ``stderr``, ``seconds``, ``json``."""

    def __init__(self, argv, returncode, stdout, stderr, seconds):
        self.argv, self.returncode, self.stdout, self.stderr, self.seconds = argv, returncode, stdout, stderr, seconds
        try:
            self.json = json.loads(stdout)
        except ValueError:
            self.json = None

    def jsonl(self):
        """stdout as JSON lines (``codex exec --json``), unparsable lines skipped."""
        found = []
        for line in self.stdout.splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                pass
        return found

    def describe(self):
        return (f"{os.path.basename(self.argv[0])} exited {self.returncode} after {self.seconds:.1f} s\n"
                f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}")


def _run(argv, env, cwd):
    started = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=CLIENT_TIMEOUT, env=env, cwd=cwd,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{os.path.basename(argv[0])} did not finish within {CLIENT_TIMEOUT} s:"
                             f" {(exc.stderr or b'')[-2000:]!r}") from None
    return Run(argv, done.returncode, done.stdout, done.stderr, time.monotonic() - started)


# -- reading what setup installed ------------------------------------------------------


def claude_settings_files(world):
    """Every Claude Code settings file of the world that exists (project shared and local, user)."""
    candidates = [os.path.join(world.project, ".claude", "settings.json"),
                  os.path.join(world.project, ".claude", "settings.local.json"),
                  os.path.join(world.user_home, ".claude", "settings.json"),
                  os.path.join(world.user_home, ".claude", "settings.local.json")]
    return [path for path in candidates if os.path.exists(path)]


def installed_hooks(world, event):
    """``[(matcher, hook)]`` of the MindOS command hooks for ``event`` in any settings file."""
    found = []
    for path in claude_settings_files(world):
        with open(path, encoding="utf-8") as handle:
            settings = json.load(handle)
        for group in (settings.get("hooks") or {}).get(event) or []:
            for hook in group.get("hooks") or []:
                command = hook.get("command") or ""
                if hook.get("type") == "command" and re.search(r"(?i)mindos|autopilot|prime", command):
                    found.append((group.get("matcher", ""), hook))
    return found


def hook_seconds(hook):
    """The time a hook promises to finish in: its ``--seconds``, else its harness timeout."""
    found = re.search(r"--seconds[= ]([0-9.]+)", hook.get("command", ""))
    if found:
        return float(found.group(1))
    return float(hook.get("timeout") or 60)


def run_hook(world, hook, payload, env=None):
    """Run an installed hook's command as Claude Code does (``sh -c``, JSON on stdin, in the
    project); return ``(returncode, stdout, stderr, seconds)``."""
    started = time.monotonic()
    done = subprocess.run(["sh", "-c", hook["command"]], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=120, env=env or world.env, cwd=world.project)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


class LockHolder:
    """``with LockHolder(home):`` another process holds the home's write lock (at most 60 s)."""

    def __init__(self, home, seconds=60):
        self.home, self.seconds, self.proc = home, seconds, None

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, HOLD_LOCK, self.home, str(self.seconds)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if line.strip() != "locked":
            self.proc.kill()
            raise AssertionError(f"the lock holder did not take the lock: {line!r} {self.proc.stderr.read()!r}")
        return self

    def held(self):
        return self.proc.poll() is None

    def __exit__(self, *exc):
        try:
            self.proc.stdin.close()  # lets go of the lock
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return False


def node_tools():
    """Why the e2e tests cannot run here at all (no node / npm), else None."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not found" if missing else None


# -- fixtures (imported by the test modules) ----------------------------------------------

SKIPPED = {}  # client -> why its tests were skipped; reported once at the end of the run


def require(client):
    """The client's ``--version`` line, or skip (fail in CI when the install went missing)."""
    reason = node_tools()
    if reason is None:
        path, reason = which_client(client)
        if path is None and os.environ.get("CI") == "true":
            pytest.fail(f"E2E: {reason}; in CI the install must succeed (.ci/run calls tests/e2e/install.sh)")
        if path is not None:
            version, reason = client_starts(client)
            if version is not None:
                return version
    SKIPPED[client] = reason
    pytest.skip(f"E2E SKIPPED ({client}): {reason}")


def skipped_line():
    """The one line the run ends with when e2e tests were skipped, else None."""
    if not SKIPPED:
        return None
    reasons = "; ".join(f"{client}: {reason}" for client, reason in sorted(SKIPPED.items()))
    return f"E2E SKIPPED: the real-client end-to-end tests did not run ({reasons})"


@pytest.fixture(scope="session")
def claude_client():
    """The pinned Claude Code's ``--version`` line (skips loudly when it cannot run)."""
    return require("claude")


@pytest.fixture(scope="session")
def codex_client():
    """The pinned Codex's ``--version`` line (skips loudly when it cannot run)."""
    return require("codex")


@pytest.fixture
def world(tmp_path):
    """A throwaway user home, Codex home, initialized MindOS home and git project."""
    return World(tmp_path / "e2e")
