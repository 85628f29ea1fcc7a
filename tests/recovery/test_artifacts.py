"""Every sealed recovery artifact: format-checked, byte-exact, and refused cleanly when wrong."""

import json
import os

import pytest

from conftest import db_state
from recovery_helpers import populate
from mindos.core import seal
from mindos.errors import IntegrityError
from mindos.recovery import archive, artifacts, checkpoint, snapshot, workorder

READERS = {
    "snapshot": ("snapshot-restore", "--force"),
    "archive": ("archive-restore", "--force"),
    "checkpoint": ("checkpoint-check",),
    "workorder": ("import-task", "--force"),
}


@pytest.fixture
def made(conn, home, tmp_path):
    populate(conn)
    from mindos.work import lifecycle

    files = {"snapshot": snapshot.create(conn)["path"], "checkpoint": checkpoint.create(conn)["path"],
             "workorder": workorder.export_task(conn, "t3", out=str(tmp_path / "t3.json"))["path"]}
    lifecycle.complete(conn, "t2", "claude")
    files["archive"] = archive.archive(conn, "2026-08-21T10:00:00Z")["path"]
    return files


def test_each_artifact_is_fully_sealed_with_its_format(made):
    formats = {"snapshot": "autopilot-snapshot-v1", "archive": "autopilot-archive-v1",
               "checkpoint": "autopilot-checkpoint-v1", "workorder": "autopilot-workorder-v1"}
    formats["snapshot"] = "autopilot-snapshot-v2"  # a tar whose first member is the sealed manifest
    formats["archive"] = "autopilot-archive-v2"  # the same shape
    for kind, path in made.items():
        if kind in ("snapshot", "archive"):
            import tarfile

            with tarfile.open(path, "r|") as tar:
                first = next(iter(tar))
                data = tar.extractfile(first).read()
            assert first.name == "manifest.json"
        else:
            data = open(path, "rb").read()
        doc = json.loads(data)
        assert doc["format"] == formats[kind] and doc["seal"]["outside"] == [] and "created_at" in doc
        assert os.stat(path).st_mode & 0o777 == 0o600
        assert data == seal.dumps(doc)


def test_a_changed_created_at_is_refused_too(made):
    path = made["checkpoint"]
    data = open(path, "rb").read()
    open(path, "wb").write(data.replace(b"2026-08-21T09", b"2026-08-21T08", 1))
    with pytest.raises(IntegrityError, match="seal mismatch"):
        checkpoint.load(path)


def test_every_reader_refuses_every_other_format(conn, cli, made):
    for kind, argv in READERS.items():
        for other, path in made.items():
            if other == kind:
                continue
            state = db_state(conn)
            rc, out, err = cli("ops", argv[0], path, *argv[1:])
            assert rc == 1 and out == "" and err.count("\n") == 1, (kind, other, err)
            assert "expected 'autopilot-" in err
            assert db_state(conn) == state


@pytest.mark.parametrize("content", [b"", b"\x00\xff", b"{", b"[]", b"null", b'{"format":"autopilot-snapshot-v1"}',
                                     b'{"seal":{},"format":"autopilot-archive-v1"}'])
def test_malformed_files_are_one_line_refusals(conn, cli, tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    for argv in READERS.values():
        state = db_state(conn)
        rc, out, err = cli("ops", argv[0], str(path), *argv[1:])
        assert rc == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err
        assert db_state(conn) == state
    for check in ("snapshot-check", "archive-check"):
        rc, out, err = cli("ops", check, str(path))
        assert rc == 1 and out == "" and err.count("\n") == 1


def test_out_into_a_missing_unwritable_place_is_a_clean_refusal(conn, cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    rc, out, err = cli("ops", "snapshot", "--out", str(blocker / "snap.json"))
    assert rc == 1 and out == "" and err.count("\n") == 1 and "cannot write" in err
