"""The atomic directory publish: a staged tree appears whole with one rename, or not at all."""

import os

import pytest

from mindos.core.atomic import StagedTree
from mindos.errors import Refused


def _listing(path):
    found = []
    for directory, dirs, files in os.walk(path):
        found += [os.path.relpath(os.path.join(directory, n), path) for n in dirs + files]
    return sorted(found)


def test_a_staged_tree_appears_whole_with_one_rename(tmp_path):
    home = tmp_path / "root"  # not the test home: a bare directory
    home.mkdir()
    target = home / "archive" / "obsidian" / "v1"
    stage = StagedTree(str(target), confined=str(home))
    stage.write("files/daily/a.md", b"a", 0o400)
    stage.write("manifest.json", b"{}")
    assert not target.exists() and len(os.listdir(home / "archive" / "obsidian")) == 1  # only the staging dir
    created = stage.publish()
    assert created == [str(home / "archive"), str(home / "archive" / "obsidian"), str(target)]
    assert _listing(target) == ["files", "files/daily", "files/daily/a.md", "manifest.json"]
    assert (target / "files" / "daily" / "a.md").stat().st_mode & 0o777 == 0o400
    assert (target / "manifest.json").stat().st_mode & 0o777 == 0o600
    assert os.listdir(home / "archive" / "obsidian") == ["v1"]
    with pytest.raises(Refused, match="already exists"):
        StagedTree(str(target), confined=str(home))
    StagedTree.remove(created)
    assert os.listdir(home) == []


def test_discard_leaves_nothing_and_a_stale_staging_dir_is_swept(tmp_path):
    home = tmp_path / "root"  # not the test home: a bare directory
    home.mkdir()
    target = home / "hermes" / "registered" / "h1"
    stage = StagedTree(str(target), confined=str(home))
    stage.write("files/x", b"x")
    stage.discard()
    assert os.listdir(home) == []
    killed = StagedTree(str(target), confined=str(home))  # a killed attempt leaves its staging dir
    killed.write("files/x", b"x")
    assert len(os.listdir(home / "hermes" / "registered")) == 1
    fresh = StagedTree(str(target), confined=str(home))
    assert os.listdir(home / "hermes" / "registered") == [os.path.basename(fresh.staging)]
    fresh.write("files/x", b"y")
    fresh.publish()
    assert os.listdir(home / "hermes" / "registered") == ["h1"] and (target / "files" / "x").read_bytes() == b"y"


def test_refusals_outside_through_symlinks_and_odd_paths(tmp_path):
    home = tmp_path / "root"  # not the test home: a bare directory
    home.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(Refused, match="outside"):
        StagedTree(str(tmp_path / "other" / "t"), confined=str(home))
    with pytest.raises(Refused, match="outside"):
        StagedTree(str(home), confined=str(home))
    os.symlink(str(elsewhere), str(home / "archive"))
    with pytest.raises(Refused, match="symlink"):
        StagedTree(str(home / "archive" / "obsidian" / "v1"), confined=str(home))
    assert os.listdir(elsewhere) == []
    stage = StagedTree(str(home / "ok" / "t"), confined=str(home))
    for bad in ("../x", "/abs", "a//b", "a/./b", ""):
        with pytest.raises(Refused, match="plain relative path"):
            stage.write(bad, b"x")
    stage.discard()
    assert sorted(os.listdir(home)) == ["archive"]
