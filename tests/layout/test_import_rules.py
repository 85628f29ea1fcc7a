"""The package's import rules, read from the source with ``ast``.

The tree answers "where does this rule live?" only while the layering holds:
  * no import cycles anywhere (module-level and function-local imports alike);
  * ``mindos.core`` imports nothing of mindos but ``mindos.errors`` and itself;
  * ``mindos.store`` imports only core (and errors);
  * the dimension packages import store, core and each other only downward, in
    ``DIMENSIONS`` order;
  * ``mindos.cli``, ``mindos.mcp`` and ``mindos.harness`` (the top layer: front doors, the
    MCP server, harness setup and hooks) may import anything, and nothing below imports them;
    ``mindos.harness`` imports no code of the other two (it only names their commands);
  * a module named in a string (``"mindos.x.y"``: a name handed to ``load_module`` or
    ``importlib``, a ``-m`` / ``-c`` worker command line) obeys the same floors as an import:
    an upper floor's code reaches a lower one as a provider passed down by the top layer;
  * a function-local import exists only to keep a call's import cost down and says so in a
    one-line ``# lazy:`` comment on the import line or the line above.
"""

import ast
import os
import re

import pytest

from conftest import ROOT

PACKAGE = os.path.join(ROOT, "mindos")
# lowest first: a package may import the ones before it, never the ones after
DIMENSIONS = ["core", "store", "work", "memory", "context", "views", "recovery", "migration", "autonomy", "comms",
              "demo"]
TOP = {"cli", "mcp", "harness"}


def _modules():
    found = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[rel[:-9] if rel.endswith(".__init__") else rel] = path
    return found


MODULES = _modules()


def _resolve(module, node):
    """The mindos modules an import node names (``from mindos.x import y`` may name module y)."""
    targets = []
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = module.split(".")
            base = ".".join(parts[: len(parts) - node.level] + ([base] if base else []))
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            targets.append(candidate if candidate in MODULES else base)
    return [t for t in targets if t == "mindos" or t.startswith("mindos.")]


def _imports():
    """``{module: [(target, lineno, is_function_local, source line, line above)]}``."""
    graph = {}
    for module, path in MODULES.items():
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        lines = source.splitlines()
        tree = ast.parse(source)
        local = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local.update(id(inner) for inner in ast.walk(node) if isinstance(inner, (ast.Import, ast.ImportFrom)))
        edges = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(module, node):
                    edges.append((target, node.lineno, id(node) in local, lines[node.lineno - 1],
                                  lines[node.lineno - 2] if node.lineno > 1 else ""))
        graph[module] = edges
    return graph


GRAPH = _imports()


def _dimension(module):
    parts = module.split(".")
    if len(parts) < 2:
        return "root"
    if parts[1] == "errors":
        return "errors"
    return parts[1]


def test_every_module_is_in_a_known_place():
    stray = [m for m in MODULES if _dimension(m) not in (*DIMENSIONS, *TOP, "root", "errors")]
    assert not stray, f"modules outside the dimension packages: {stray}"


def test_there_are_no_import_cycles():
    edges = {m: sorted({t for t, *_ in GRAPH[m] if t in MODULES and t != m}) for m in MODULES}
    state, stack, cycles = {}, [], []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in edges[node]:
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def _below(own):
    """The floors a module of floor ``own`` may use: its own, those below it, and errors."""
    if own == "errors":
        return {"errors"}
    allowed = {"errors", own}
    if own in DIMENSIONS:
        allowed |= set(DIMENSIONS[: DIMENSIONS.index(own)])
    return allowed


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_downward(module):
    own = _dimension(module)
    if own in TOP or own == "root":
        return
    allowed = _below(own)
    wrong = [(t, line) for t, line, *_ in GRAPH[module]
             if t != "mindos" and _dimension(t) not in allowed]
    root = [line for t, line, *_ in GRAPH[module] if t == "mindos"]
    assert not wrong, f"{module} imports upward or sideways: {wrong} (allowed: {sorted(allowed)})"
    assert not root, f"{module} imports the package root at lines {root}"


def test_nothing_imports_the_front_door_layer():
    wrong = [(m, t) for m in MODULES if _dimension(m) not in TOP for t, *_ in GRAPH[m] if _dimension(t) in TOP]
    assert not wrong, f"only front doors may import mindos.cli / mindos.mcp: {wrong}"


def test_function_local_imports_say_why():
    silent = [f"{m}:{line}" for m in MODULES for _, line, local, text, above in GRAPH[m]
              if local and "# lazy:" not in text and "# lazy:" not in above]
    assert not silent, f"function-local imports without a '# lazy:' reason: {silent}"


def test_core_and_store_stay_leaves():
    """core never touches the database; store knows nothing of the domains."""
    for module in MODULES:
        dimension = _dimension(module)
        targets = {_dimension(t) for t, *_ in GRAPH[module] if t != "mindos"}
        if dimension == "core":
            assert targets <= {"core", "errors"}, module
        if dimension == "store":
            assert targets <= {"core", "store", "errors"}, module


def _prints(path):
    """Lines of ``path`` that print: ``print(...)`` or a write to ``sys.stdout`` / ``sys.stderr``."""
    found = []
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print":
            found.append(node.lineno)
        elif (isinstance(func, ast.Attribute) and func.attr == "write" and isinstance(func.value, ast.Attribute)
              and func.value.attr in ("stdout", "stderr") and isinstance(func.value.value, ast.Name)
              and func.value.value.id == "sys"):
            found.append(node.lineno)
    return found


def test_only_the_cli_prints():
    """Core code returns data; the front doors under mindos/cli print it."""
    wrong = {module: lines for module, path in MODULES.items()
             if _dimension(module) != "cli" and (lines := _prints(path))}
    assert not wrong, f"printing outside mindos.cli: {wrong}"


def test_no_private_stdlib_modules():
    """Only public modules of the standard library: private ones (``_sha256``, ``_hashlib``,
    ...) are implementation details that move between Python versions (``_sha256`` is gone
    in 3.12), so a supported interpreter could fail to import the package."""
    found = []
    for module, path in MODULES.items():
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            found += [f"{module}:{node.lineno} imports {name}" for name in names
                      if name.split(".")[0].startswith("_") and name != "__future__"]
    assert not found, found


# a dotted mindos name inside a string literal (an f-string's literal parts included)
NAMED = re.compile(r"\bmindos(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# strings allowed to name an upper floor, by the module's last name: none (onboarding's probe
# gets the front door it drives from its command, like every other provider)
PENDING = set()


def _docstrings(tree):
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _named_module(dotted):
    """The module (or package) of mindos that ``dotted`` names: its longest prefix that is one;
    None when only the root matches (``"mindos.botmail/1"`` is a format name, not a module)."""
    parts = dotted.split(".")
    for end in range(len(parts), 1, -1):
        candidate = ".".join(parts[:end])
        if candidate in MODULES:
            return candidate
    return None


def _string_names():
    """``{module: [(named module, lineno)]}``: mindos modules named in string literals outside docstrings."""
    found = {}
    for module, path in MODULES.items():
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        skip = _docstrings(tree)
        names = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                names += [(target, node.lineno) for match in NAMED.findall(node.value)
                          if (target := _named_module(match))]
        found[module] = names
    return found


STRINGS = _string_names()


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_named_in_strings_obey_the_floors(module):
    """A name in a string is a dependency the import graph cannot see: held to the same rule."""
    own = _dimension(module)
    if own in TOP or own == "root":
        return
    allowed = _below(own)
    wrong = [(target, line) for target, line in STRINGS[module]
             if _dimension(target) not in allowed and (module.rsplit(".", 1)[-1], target) not in PENDING]
    assert not wrong, (f"{module} names an upper floor in a string: {wrong} (allowed: {sorted(allowed)});"
                       " have the top layer pass a provider down instead")


def test_the_string_rule_sees_names_in_code_strings():
    """The rule reads names out of f-strings, ``-c`` programs and lists, and skips docstrings."""
    tree = ast.parse('''"""Docstring naming mindos.cli.autopilot."""
PROVIDERS = ["mindos.autonomy.grants"]
argv = ["-c", "from mindos.cli.context.stale_worker import work; work()"]
loaded = f"mindos.cli.{name}"
FORMAT = "mindos.botmail/1"
''')
    skip = _docstrings(tree)
    named = [_named_module(match) for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
             for match in NAMED.findall(node.value)]
    assert sorted(n for n in named if n) == ["mindos.autonomy.grants", "mindos.cli", "mindos.cli.context.stale_worker"]


def test_harness_imports_no_front_door_code():
    """The harness layer writes the front doors' command lines; it never imports cli or mcp."""
    wrong = [(m, t, line) for m in MODULES if _dimension(m) == "harness"
             for t, line, *_ in GRAPH[m] if _dimension(t) in ("cli", "mcp")]
    assert not wrong, wrong
