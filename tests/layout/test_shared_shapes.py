"""Shared shapes written once, held by reading the source with ``ast``:

  * directory walks (``os.walk``, ``os.fwalk``, ``os.scandir``) and no-follow opens
    (``O_NOFOLLOW``) live in :mod:`mindos.core.files` (its ``walk`` and ``open_regular``);
  * the write guard is imported from one place, :mod:`mindos.store.guard`.

Each rule lists the files still allowed an exception, with the reason; the owners of those
files shrink the lists (a listed file that no longer needs its exception fails the test,
so a list never goes stale).
"""

import ast
import os

from conftest import ROOT

PACKAGE = os.path.join(ROOT, "mindos")
WALKS = {"walk", "fwalk", "scandir"}

# file -> why it may walk a directory or open without following a link itself
WALK_ALLOWED = {
    "mindos/core/files.py": "the one walker and no-follow reader",
    "mindos/core/atomic.py": "the atomic writer: no-follow creates of new files, not reads",
    "mindos/store/db.py": "creates the new database and its lock file no-follow, not reads",
}

# file -> why it may import the write guard from mindos.memory.guard
GUARD_ALLOWED = {}


def _sources():
    for folder, _, names in os.walk(PACKAGE):
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    yield os.path.relpath(path, ROOT).replace(os.sep, "/"), ast.parse(handle.read())


SOURCES = dict(_sources())


def _walks_or_nofollow(tree):
    """Line numbers of ``os.walk`` / ``os.fwalk`` / ``os.scandir`` and of ``O_NOFOLLOW``
    (an attribute, or the name given to ``getattr``) in code, never in docstrings."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if (node.attr in WALKS and isinstance(node.value, ast.Name) and node.value.id == "os") \
                    or node.attr == "O_NOFOLLOW":
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            if any(isinstance(a, ast.Constant) and a.value == "O_NOFOLLOW" for a in node.args):
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            if any(alias.name in WALKS | {"O_NOFOLLOW"} for alias in node.names):
                lines.append(node.lineno)
    return lines


def test_walkers_and_no_follow_opens_live_in_core_files():
    found = {rel: lines for rel, tree in SOURCES.items() if (lines := _walks_or_nofollow(tree))}
    offenders = {rel: lines for rel, lines in found.items() if rel not in WALK_ALLOWED}
    assert not offenders, ("a private directory walk or no-follow open (use mindos.core.files.walk /"
                           f" open_regular / read_bytes): {offenders}")
    stale = sorted(set(WALK_ALLOWED) - set(found))
    assert not stale, f"no longer needs its exception (remove it from WALK_ALLOWED): {stale}"


def _guard_imports(tree):
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.module == "mindos.memory" and any(a.name == "guard" for a in node.names):
                lines.append(node.lineno)
            elif node.module == "mindos.memory.guard" and any(a.name in ("guard", "guard_record") for a in node.names):
                lines.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name == "mindos.memory.guard" for a in node.names):
            lines.append(node.lineno)
    return lines


def test_the_write_guard_has_one_import_path():
    """Writers import ``from mindos.store import guard``; mindos.memory.guard is the read-only
    sweep, loaded only by its own command."""
    found = {rel: lines for rel, tree in SOURCES.items() if (lines := _guard_imports(tree))}
    offenders = {rel: lines for rel, lines in found.items()
                 if rel not in GUARD_ALLOWED and not rel.startswith("mindos/cli/")}
    assert not offenders, f"the write guard imported from mindos.memory (use mindos.store.guard): {offenders}"
    stale = sorted(set(GUARD_ALLOWED) - set(found))
    assert not stale, f"no longer needs its exception (remove it from GUARD_ALLOWED): {stale}"
