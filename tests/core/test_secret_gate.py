"""The secret detector's front gate (mindos/core/secret_gate.py): a text it clears must be a
text the detector finds nothing in, and a plain write or pack must not load the detector."""

import importlib.util
import os
import random
import subprocess
import sys

import pytest

from conftest import ROOT
from mindos.core import secret_gate, secrets

_SPEC = importlib.util.spec_from_file_location("tests_secret_corpus_gate", os.path.join(ROOT, "tests", "secret_corpus.py"))
secret_corpus = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(secret_corpus)


def _engine(text):
    """The detector's verdict without the gate: the plain reference pass over the view and
    over each percent-decoded round (what scan reads), kinds sorted."""
    kinds, decoded = set(), text
    kinds.update(kind for _, _, kind in secrets._findings(secrets._view(text), reference=True))
    for _ in range(secrets._PERCENT_ROUNDS):
        decoded = secrets._percent_windows(decoded)
        if decoded is None:
            break
        kinds.update(kind for _, _, kind in secrets._findings(secrets._view(decoded), reference=True))
    return sorted(kinds)


def _corpus():
    return [text for _, _, text in secret_corpus.secret_texts()] + list(secret_corpus.CLEAN)


def _fuzz(count, seed):
    words = ["token", "Token", "password", "pass", "pwd", "secret", "api_key", "key", "key-", "SK", "sk", "task",
             "ask", "Bearer", "authorization", "cookie", "curl", "mysql", "--", "</", ":", "=", ".", "://", "https://",
             "discord", "AKIA", "ghp_", "sk-", "sk_", "xox", "AIza", "eyJ", ":AA", "_v1_", "shp", "hf_", "SG.",
             "npm_", "aws", "-----BEGIN PRIVATE KEY-----", "%3A", "%", "\u200b", "\uff54\uff4f\uff4b\uff45\uff4e"]
    alnum = "abcdefABCDEF0123456789"
    rng, texts = random.Random(seed), []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 10)):
            if rng.random() < 0.5:
                parts.append(rng.choice(words))
            else:
                parts.append("".join(rng.choice(alnum + " ._-/") for _ in range(rng.choice([1, 6, 8, 20, 32, 40]))))
        texts.append("".join(parts))
    return texts


def test_the_detectors_take_their_literals_from_the_gates_declaration():
    detectors = secrets._detectors()
    assert [detector.kind for detector in detectors] == [kind for kind, _, _ in secret_gate.LITERALS]
    for detector, (_, gates, needs) in zip(detectors, secret_gate.LITERALS):
        assert detector.gates is gates and detector.needs is needs
    assert [tuple(frozenset(group) for group in groups) for groups in secret_gate.GROUPS] == \
        [detector.groups for detector in detectors]
    assert secrets._OPENED_BY is secret_gate._OPENED_BY and secrets._LITERALS is secret_gate._LITERALS
    assert [detectors[index].words for index in (-2, -1)] == [secret_gate.FAMILIES] * 2
    # its extra conditions belong to the detectors they name
    assert {index: detectors[index].kind for index in secret_gate.PRECHECKS} == \
        {secret_gate._TWILIO: "twilio_key", secret_gate._DISCORD: "discord_token"}
    assert detectors[secret_gate._DISCORD].precheck is secret_gate.dots_seven_apart
    assert secret_gate.SHORT == secrets._SHORT and secret_gate.SHORTEST_LABEL == len("[REDACTED:x]")


@pytest.mark.parametrize("change", ["drop", "add", "rename"])
def test_the_detectors_refuse_to_build_when_the_declaration_disagrees(monkeypatch, change):
    from mindos.errors import IntegrityError

    rows = list(secret_gate.LITERALS)
    if change == "drop":  # a detector with no declared literals
        rows.pop()
    elif change == "add":  # a declared row with no detector
        rows.append(("new_key", (), (("new_",),)))
    else:
        rows[3] = ("gitlab_token",) + rows[3][1:]
    monkeypatch.setattr(secret_gate, "LITERALS", tuple(rows))
    monkeypatch.setattr(secrets, "_DETECTORS", None)
    with pytest.raises(IntegrityError, match="declared literals"):
        secrets._detectors()
    assert secrets._DETECTORS is None  # nothing half-built is kept


def test_the_twilio_condition_is_necessary_for_its_fast_form():
    # its fast regex is case-sensitive and opens on "SK": no "SK", no match
    detector = secrets._detectors()[secret_gate._TWILIO]
    assert detector.target == "view" and all(regex.pattern.startswith("SK") for regex in detector.fast())
    assert secret_gate.clean("Scale task 7: the ask is steady") is True
    assert secret_gate.clean("key SK0123456789abcdef0123456789abcdef") is False


def test_a_text_the_gate_clears_holds_no_finding():
    cleared = 0
    for text in _corpus() + _fuzz(1500, seed=3):
        if secret_gate.clean(text):
            cleared += 1
            assert _engine(text) == [], text[:80]
    assert cleared > 200  # the test means something: plenty of texts are cleared


def test_every_credential_of_the_corpus_goes_to_the_detector():
    for _, _, text in secret_corpus.secret_texts():
        assert secret_gate.clean(text) is False, text[:80]


@pytest.mark.parametrize("text", ["", "Scale task 12", "Scale observation 4: latency is steady",
                                  "Done. Tests are green. Review requested.", "2026-12-05T01:58:02Z"])
def test_plain_text_is_cleared(text):
    assert secret_gate.clean(text) is True
    assert secrets.scan(text) == []


@pytest.mark.parametrize("text", ["caf\u00e9 token=abc123def456", "t%6Fken=abc123def456", "x" * 4097,
                                  "tok\u200ben=abc123def456"])
def test_text_the_gate_cannot_read_as_its_view_goes_to_the_detector(text):
    # non-ASCII (the view differs from the text), percent escapes (decoded rounds), long text
    assert secret_gate.clean(text) is False


def test_a_plain_write_and_a_plain_pack_do_not_load_the_detector(tmp_path):
    probe = (
        "import sys\n"
        "from mindos.store import guard\n"
        "from mindos.context import prime, sections\n"
        "assert guard._row_findings({'title': 'Scale task 3', 'tags': ['a', 'b'], 'url': 'x'}) == ([], [])\n"
        "assert prime.scrub({'title': 'Scale task 3', 'at': '2026-12-05T01:00:00Z'})['title'] == 'Scale task 3'\n"
        "assert sections.scrub(['Done. Tests green.']) == ['Done. Tests green.']\n"
        "print('mindos.core.secrets' in sys.modules)\n"
        "assert guard._row_findings({'note': 'token=abc123def456'}) == (['api_key_assignment'], ['note'])\n"
        "assert prime.scrub(['token=abc123def456']) == ['token=[REDACTED:api_key_assignment]']\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_a_url_field_with_userinfo_is_still_refused_through_the_gate():
    assert secret_gate.clean("https://user@example.com/x") is False
    from mindos.store import guard

    assert guard._row_findings({"pr_url": "https://user@example.com/x"}) == (["url_credentials"], ["pr_url"])


def _reference_clean(text):
    """The gate's verdict worked out the long way: every declared literal the folded text
    holds, then whether any detector has each of its groups held (and its precheck passes)."""
    if not text:
        return True
    if len(text) > secret_gate.SHORT or not text.isascii() or "%" in text:
        return False
    folded = text.lower()
    held = {literal for literal in secret_gate._LITERALS if literal in folded}
    for index, groups in enumerate(secret_gate.GROUPS):
        if all(not held.isdisjoint(group) for group in groups):
            check = secret_gate.PRECHECKS.get(index)
            if check is None or check(text):
                return False
    return True


def test_the_written_out_tables_are_their_derivation():
    alone = set()
    for index, groups in enumerate(secret_gate.GROUPS):
        if len(groups) == 1 and index not in secret_gate.PRECHECKS:
            alone.update(groups[0])
    shortest = {literal for literal in alone if not any(other != literal and other in literal for other in alone)}
    filed = [literal for _, literals in secret_gate._ALONE_BY_CHAR for literal in literals]
    listed = list(secret_gate._ALONE) + filed
    assert sorted(listed) == sorted(shortest)  # each once, and only the shortest
    assert set(secret_gate._ALONE_COVERED) == alone - shortest
    for literal in secret_gate._ALONE_COVERED:  # a longer one is found through a shorter one it holds
        assert any(other in literal for other in shortest)
    for char, literals in secret_gate._ALONE_BY_CHAR:
        assert all(char in literal for literal in literals)
    for literal in secret_gate._ALONE:  # (not one of the filing characters: it would be filed)
        assert not any(char in literal for char, _ in secret_gate._ALONE_BY_CHAR)
    joint = [(groups, secret_gate.PRECHECKS.get(index)) for index, groups in enumerate(secret_gate.GROUPS)
             if len(groups) > 1 or index in secret_gate.PRECHECKS]
    assert list(secret_gate._JOINT) == joint


def test_the_gate_gives_the_long_ways_verdict():
    texts = _corpus() + _fuzz(3000, seed=11) + ["x sk_live y", "SK" + "a" * 32, "a.bcdefg.h", "--token x",
                                                "</key>", "key: v", "https://discord.com/api/webhooks/1/x",
                                                "sshpass -p x", "task ask", "curl", "x" * 4096]
    for text in texts:
        assert secret_gate.clean(text) is _reference_clean(text), text[:80]


def test_a_declared_literal_missing_from_the_tables_is_still_looked_for():
    # the tables are a speed hint: leave a literal out of them and the gate still sends its text on
    source = open(secret_gate.__file__, encoding="utf-8").read()
    assert '"curl", "mysql", ' in source  # (its place in _ALONE)
    namespace = {"__name__": "gate_copy"}
    exec(compile(source.replace('"curl", "mysql", ', '"curl", '), "gate_copy", "exec"), namespace)
    assert "mysql" in namespace["_ALONE"] and namespace["_ALONE_BY_CHAR"] == ()
    assert namespace["clean"]("mysql -u root -phunter2abc db") is False
    assert secrets.scan("mysql -u root -phunter2abc db") == ["cli_password"]


def test_every_literal_is_filed_once_under_its_rarest_character():
    filed = [(char, literal) for char, literals in secret_gate._BY_CHAR.items() for literal in literals]
    assert sorted(literal for _, literal in filed) == sorted(secret_gate._LITERALS)
    assert all(char in literal for char, literal in filed)
    assert secret_gate._RAREST == frozenset(secret_gate._BY_CHAR)
    for char, literal in filed:  # (its rarest: no character of it ranks rarer)
        assert all(secret_gate._RARITY.find(other) >= secret_gate._RARITY.find(char) for other in literal)


def test_a_declared_literal_missing_from_the_filing_is_still_looked_for_in_a_short_text():
    source = open(secret_gate.__file__, encoding="utf-8").read()
    assert "'q': ('mysql',), " in source
    namespace = {"__name__": "gate_copy"}
    exec(compile(source.replace("'q': ('mysql',), ", ""), "gate_copy", "exec"), namespace)
    assert namespace["_BY_CHAR"]["q"] == ("mysql",)
    assert len("mysql -phunter2") <= namespace["_FEW"]
    assert namespace["clean"]("mysql -phunter2") is False


@pytest.mark.parametrize("length", [1, 2, 5, secret_gate._FEW - 1, secret_gate._FEW, secret_gate._FEW + 1, 40])
def test_short_and_long_texts_get_the_long_ways_verdict(length):
    rng = random.Random(length)
    pieces = ["sk", "SK", ".", "a.bcdef.g", "--", "token", "</", ":", "=", "key", "pass", "ghp_", "aws", "x", " ", "é"]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(length))[:length]
        assert secret_gate.clean(text) is _reference_clean(text), text


def test_clean_each_gives_every_texts_own_verdict(monkeypatch):
    """clean_each answers exactly what clean answers text by text: runs of plain texts cleared
    at once, a run held back by literals split across its texts (":" in one, "token" in the
    next; two dots seven apart over a join) answered text by text, and texts that cannot join
    a run (not ASCII, a percent sign, past SHORT, empty, not a str) answered alone."""
    rng = random.Random(11)
    words = ["keep", "the", "window", "small", "token", ":", "=", "x.abcde", "f.", "SK", "sk-ant-" + "a" * 20,
             "ghp_" + "a" * 36, "é", "%", "pass", "--", "</", "bearer", "curl", "a" * 300, "", "key", "https://",
             "discord", "AKIAIOSFODNN7EXAMPLE"]
    for _ in range(1500):
        texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(0, 60))]
        if rng.random() < 0.1:
            texts.append("y" * (secret_gate.SHORT + 1))
        if rng.random() < 0.1:
            texts.insert(rng.randint(0, len(texts)), None)
        expected = [secret_gate.clean(text) if type(text) is str else False for text in texts]
        monkeypatch.setattr(secret_gate, "_SEEN_CLEAN", set())
        assert secret_gate.clean_each(texts) == expected, texts
    # plain texts are cleared a run at a time: far fewer looks than texts
    looks = []
    real = secret_gate._clean
    monkeypatch.setattr(secret_gate, "_clean", lambda text: looks.append(text) or real(text))
    plain = [f"rule {n}: keep the window small and the queue short" + " again" * (n % 5) for n in range(200)]
    assert secret_gate.clean_each(plain) == [True] * 200 and len(looks) < 10
    # a run held back by a split literal: the rest go text by text, every one still clean
    looks.clear()
    split = ["the deploy note says:", "token rotation is weekly"] + plain[:50]
    assert secret_gate.clean_each(split) == [True] * 52 and len(looks) == 1 + 52
