"""The documents the spec names hold true: ARCHITECTURE.md's fact table cites source and test
paths (and names) that exist, INSTALL.md is where the README's quick start points, and the
licence is the one pyproject.toml states."""

import ast
import os
import re

import pytest

from conftest import ROOT

CITED = re.compile(r"`([^`]+?)`")


def _read(name):
    with open(os.path.join(ROOT, name), encoding="utf-8") as handle:
        return handle.read()


def _fact_rows():
    text = _read("ARCHITECTURE.md")
    table = text.split("## Fact table", 1)[1]
    rows = []
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].isdigit():
            rows.append(cells)
    return rows


def _defined(path):
    """Names defined at the top level of ``path`` (functions, classes, assignments)."""
    tree = ast.parse(_read(path))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


def test_the_fact_table_has_claims_each_with_a_source_and_a_test():
    rows = _fact_rows()
    assert len(rows) >= 20
    assert [int(row[0]) for row in rows] == list(range(1, len(rows) + 1))
    for number, claim, source, test in rows:
        assert claim and CITED.findall(source), number
        assert all(c.startswith("mindos/") for c in CITED.findall(source)), number
        assert CITED.findall(test) and all(c.startswith("tests/") for c in CITED.findall(test)), number


@pytest.mark.parametrize("row", _fact_rows(), ids=lambda row: f"fact-{row[0]}")
def test_every_cited_path_and_name_exists(row):
    for cited in CITED.findall(row[2]) + CITED.findall(row[3]):
        path, _, name = cited.partition("::")
        assert os.path.isfile(os.path.join(ROOT, path)), f"fact {row[0]}: {path} does not exist"
        if name:
            assert name in _defined(path), f"fact {row[0]}: {path} defines no {name}"


def test_install_md_is_where_the_readme_quick_start_points():
    readme = _read("README.md")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "INSTALL.md" in quick
    install = _read("INSTALL.md")
    for command in ("autopilot.py init", "ops.py doctor", "ops.py migrate-inventory", "ops.py onboard",
                    "ops.py migrate-rollback", "ops.py home-deselect --apply", "mindos_context_pack.py sentinel --json"):
        assert command in install, command


def test_the_licence_is_the_one_pyproject_states():
    licence = _read("LICENSE")
    assert licence.startswith("# Functional Source License, Version 1.1, MIT Future License")
    assert "FSL-1.1-MIT" in licence and "Grant of Future License" in licence and "MIT license" in licence
    assert re.search(r'^license = \{text = "FSL-1.1-MIT"\}', _read("pyproject.toml"), re.M)


def _literal(path, name):
    """The literal value assigned to ``name`` at the top level of ``path``."""
    for node in ast.parse(_read(path)).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path} assigns no {name}")


def test_the_engineers_guide_names_the_floors_the_import_rules_enforce():
    """docs/ARCHITECTURE.md lists the floors in the order tests/layout/test_import_rules.py
    enforces, and the top layer it names."""
    guide = _read("docs/ARCHITECTURE.md")
    floors = guide.split("## The floors", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\d+\. \*\*(\w+)\*\*", floors, re.M)
    assert listed == _literal("tests/layout/test_import_rules.py", "DIMENSIONS")
    top = set(re.findall(r"^\* \*\*(\w+)\*\*", floors, re.M))
    assert top == _literal("tests/layout/test_import_rules.py", "TOP")


def test_the_engineers_guide_cites_files_that_exist_and_the_two_pages_link():
    guide = _read("docs/ARCHITECTURE.md")
    cited = {c.split("::")[0] for c in CITED.findall(guide)
             if re.fullmatch(r"(mindos|tests|policies|scripts|bench|docs)/[\w/.-]+", c.split("::")[0])}
    assert len(cited) >= 20
    missing = sorted(c for c in cited if not os.path.exists(os.path.join(ROOT, c)))
    assert not missing, f"docs/ARCHITECTURE.md cites paths that do not exist: {missing}"
    assert "](../ARCHITECTURE.md)" in guide and "](docs/ARCHITECTURE.md)" in _read("ARCHITECTURE.md")
