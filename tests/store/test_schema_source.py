"""schema.sql has one source (the top level) and builds a database from a checkout cloned
without symlinks and from an installed wheel alike."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from mindos.store import db

PROBE = ("import sys; sys.path.insert(0, sys.argv[1]); from mindos.store import db; "
         "c = db.connect(sys.argv[2]); print(db.schema_file()); "
         "print(c.execute('SELECT count(*) FROM sqlite_master WHERE type=\"table\"').fetchone()[0])")


def _tables(home):
    conn = db.connect(str(home))
    try:
        return conn.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
    finally:
        conn.close()


def test_the_checkout_reads_the_top_level_schema_and_there_is_no_symlink():
    assert db.schema_file() == os.path.join(ROOT, "schema.sql")
    assert not os.path.islink(os.path.join(ROOT, "schema.sql"))
    assert not os.path.lexists(os.path.join(ROOT, "mindos", "schema.sql"))


@pytest.mark.skipif(shutil.which("git") is None or not os.path.isdir(os.path.join(ROOT, ".git")),
                    reason="needs git and a git checkout")
def test_a_clone_without_symlinks_builds_a_database(tmp_path, home):
    clone = tmp_path / "clone"
    subprocess.run(["git", "-c", "core.symlinks=false", "clone", "-q", ROOT, str(clone)], check=True, timeout=120)
    proc = subprocess.run([sys.executable, "-c", PROBE, str(clone), str(tmp_path / "h")], capture_output=True,
                          text=True, timeout=60, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    schema, count = proc.stdout.split()
    assert schema == str(clone / "schema.sql") and int(count) == _tables(home)


@pytest.mark.slow
def test_an_installed_wheel_builds_a_database(tmp_path, home):
    wheels = tmp_path / "wheels"
    source = tmp_path / "src"  # build from a copy: setuptools writes build/ and *.egg-info beside the source
    # (without .e2e/: the e2e clients CI installs there are some 800 MB, and no part of the wheel)
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__",
                                                                 ".pytest_cache", "bench", ".e2e"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)],
                           capture_output=True, text=True, timeout=300)
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here (no setuptools from the index?): {built.stderr.strip()[-200:]}")
    target = tmp_path / "site"
    wheel = next(wheels.glob("mindos-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    proc = subprocess.run([sys.executable, "-c", PROBE, str(target), str(tmp_path / "h")], capture_output=True,
                          text=True, timeout=60, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    schema, count = proc.stdout.split()
    assert schema == str(target / "mindos" / "store" / "schema.sql") and int(count) == _tables(home)
    with open(schema, encoding="utf-8") as packaged, open(os.path.join(ROOT, "schema.sql"), encoding="utf-8") as top:
        assert packaged.read() == top.read()
