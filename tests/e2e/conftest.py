"""Fixtures of the end-to-end tests, and their one loud line when they cannot run.

The tests drive the pinned Claude Code and Codex CLIs that ``tests/e2e/install.sh`` puts in
``.e2e/`` (``.ci/run`` calls it).  Where node or npm is missing, or a client is not installed
or does not start, the tests skip, and the run ends with ONE line saying so (never silently).
In CI (``CI=true``) with node present, a missing client is a failure: the install failed.
"""

import os

import pytest

import e2ekit

_SKIPPED = {}  # client -> the reason its tests were skipped (reported once at the end)


def _require(client):
    reason = e2ekit.node_tools()
    if reason is None:
        path, reason = e2ekit.which_client(client)
        if path is None and os.environ.get("CI") == "true":
            pytest.fail(f"E2E: {reason}; in CI the install must succeed (.ci/run calls tests/e2e/install.sh)")
        if path is not None:
            version, reason = e2ekit.client_starts(client)
            if version is not None:
                return version
    _SKIPPED[client] = reason
    pytest.skip(f"E2E SKIPPED ({client}): {reason}")


@pytest.fixture(scope="session")
def claude_client():
    """The pinned Claude Code's ``--version`` line (skips loudly when it cannot run)."""
    return _require("claude")


@pytest.fixture(scope="session")
def codex_client():
    """The pinned Codex's ``--version`` line (skips loudly when it cannot run)."""
    return _require("codex")


@pytest.fixture
def world(tmp_path):
    """A throwaway user home, Codex home, initialized MindOS home and git project."""
    return e2ekit.World(tmp_path / "e2e")


def pytest_terminal_summary(terminalreporter):
    if _SKIPPED:
        reasons = "; ".join(f"{client}: {reason}" for client, reason in sorted(_SKIPPED.items()))
        terminalreporter.write_line(f"E2E SKIPPED: the real-client end-to-end tests did not run ({reasons})",
                                    red=True, bold=True)
