"""The detector's per-pattern gates are a necessary condition only: with or without them every
text yields exactly the same findings and the same redaction."""

import importlib.util
import os
import random

from conftest import ROOT
from mindos.core import secrets

# the corpus beside conftest, loaded by path: bench/ has a module of the same name
_SPEC = importlib.util.spec_from_file_location("tests_secret_corpus", os.path.join(ROOT, "tests", "secret_corpus.py"))
secret_corpus = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(secret_corpus)


def _texts():
    texts = [text for _, _, text in secret_corpus.secret_texts()] + list(secret_corpus.CLEAN)
    texts += ["API_KEY : abc123def456", "Password=hunter2x1", "DB_PASS='s3cr3t99x'", 'SECRET_KEY_BASE = "a1b2c3d4e5f6g7"',
              "client_credentials: Zx81kq02mm", "MY_TOKEN\t=\tabc123xyz789", "api-key=> 9f8e7d6c5b4a", "ACCESS_KEYs = 'Ab12Cd34Ef'",
              "the \u212aEY = abc123def", "curl -u admin:pa55word1 https://x", "mysql -pS3cretPw1 db",
              "<password>hunter2x1</password>", "--api-key abc123def456", "Cookie: sessionid=ab12cd34ef56gh78ij90"]
    rng = random.Random(7)
    # mixtures: secrets embedded in prose, several per text, across lines
    for _ in range(300):
        parts = rng.sample(texts, 3)
        texts.append(rng.choice(["\n", " ", "\n\n", "; "]).join(parts))
    return texts


def test_gates_never_change_findings_or_redaction(monkeypatch):
    texts = _texts()
    gated = [(secrets.scan(t), secrets.redact(t)) for t in texts]
    monkeypatch.setattr(secrets, "_gated_out", lambda kind, check, lowered: False)
    ungated = [(secrets.scan(t), secrets.redact(t)) for t in texts]
    assert gated == ungated


def test_every_detector_kind_has_a_gate_or_is_known_ungated():
    kinds = {kind for kind, _, _ in secrets._patterns()}
    assert kinds - set(secrets._GATES) <= {"cli_password"}
