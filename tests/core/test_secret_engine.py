"""The detector's fast forms find exactly what its shapes find (mindos.core.secrets, issue 8).

Each detector is defined by its shape; the scan runs a fast form (opening on a literal,
case-folded instead of case-insensitive, value checks partly inside the regex, candidates
judged before the pass is followed, gated on the literals it needs; the reference runs every
shape, ungated, over the view).  These tests hold the two to the same findings, in the
same order, over the corpus, mixtures of it, fuzzed key/value text and hostile inputs, and
check the pieces the equivalence rests on against unicodedata and the regex engine (the
narrow copy the fast regexes read, the prefilters, the literals detectors share, the memo
of key = value verdicts), each also against its simple definition.  Speed
itself is measured in bench/guard_speed.py, not here.
"""

import importlib.util
import os
import random
import re
import unicodedata

import pytest

from conftest import ROOT
from mindos.core import secrets

# the corpus beside conftest, loaded by path: bench/ has a module of the same name
_SPEC = importlib.util.spec_from_file_location("tests_secret_corpus", os.path.join(ROOT, "tests", "secret_corpus.py"))
secret_corpus = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(secret_corpus)

_EXTRA = ["API_KEY : abc123def456", "Password=hunter2x1", "DB_PASS='s3cr3t99x'", 'SECRET_KEY_BASE = "a1b2c3d4e5f6g7"',
          "client_credentials: Zx81kq02mm", "MY_TOKEN\t=\tabc123xyz789", "api-key=> 9f8e7d6c5b4a",
          "ACCESS_KEYs = 'Ab12Cd34Ef'", "the \u212aEY = abc123def", "curl -u admin:pa55word1 https://x",
          "mysql -pS3cretPw1 db", "<password>hunter2x1</password>", "--api-key abc123def456",
          "Cookie: sessionid=ab12cd34ef56gh78ij90", "AP\u0130_KEY=abc123def456", "ap\u0131_key=abc123def456",
          "x-api-key: 0123456789abcdef0123", "Authorization: token abcdef0123456789abcd",
          "postgres://app:s3cretPw9@db:5432/app", "a://u:p@bc://x:y@h", 'password="a token=\'b" 1234567\'',
          "page_token=abc123def456", "max_tokens: abcdefg1", "bypass: abc123def456", "second pass: v2.1.3x9"]


def _corpus():
    return [text for _, _, text in secret_corpus.secret_texts()] + list(secret_corpus.CLEAN) + _EXTRA


def _mixtures(count=300, seed=7):
    texts, rng = _corpus(), random.Random(seed)
    return [rng.choice(["\n", " ", "\n\n", "; ", ""]).join(rng.sample(texts, 3)) for _ in range(count)]


_WORDS = ["token", "TOKEN", "password", "Password", "passwd", "pass", "pwd", "secret", "api_key", "API-KEY", "apikey",
          "access_key", "secret_key_base", "credentials", "auth_key", "subscription_key", "key", "Bearer",
          "authorization", "basic", "Cookie", "sessionid", "sid", "curl", "mysql", "sshpass", "redis-cli", "-u", "-p",
          "-a", "--token", "--password", "<token>", "</token>", "<api_key>", "</", "https://", "postgres://", "://",
          "@",
          "is", "was", "for", "max_tokens", "page_token", "bypass", "DB_PASS", "x" * 70, "AKIA", "ghp_", "sk-",
          "sk-ant-", "xoxb-", "AIza", "npm_", "hf_", "SG.", "eyJ", "key-", "[REDACTED:api_key_assignment]",
          "[REDACTED:", "\u200b", "\u00ad", "\uff54\uff4f\uff4b\uff45\uff4e", "\u0130", "\u0131", "e\u0301", "\u212a",
          "\u201c", "\u2026", "\u3131\u314f", "\ufb01", "${VAR}", "changeme", "/etc/x", "12ms", "1.2.3"]
_SEPARATORS = ["=", ":", " = ", ": ", ":=", "=>", " ", "", "\n", "\t", "'", '"', ";", ",", "(", "`", "|", "/", ".", "-"]
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _fuzz(count, seed):
    """Short texts of credential words, separators and values of every length and alphabet."""
    rng, texts = random.Random(seed), []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 14)):
            roll = rng.random()
            if roll < 0.35:
                parts.append(rng.choice(_WORDS))
            elif roll < 0.65:
                parts.append(rng.choice(_SEPARATORS))
            else:
                alphabet = rng.choice([_ALNUM, "0123456789", "abcdef", _ALNUM + "._~+/-=", _ALNUM + "_-"])
                length = rng.choice([1, 5, 6, 7, 8, 12, 16, 20, 24, 32, 36, 40, 64, 520])
                parts.append("".join(rng.choice(alphabet) for _ in range(length)))
        texts.append("".join(parts))
    return texts


# hostile shapes, 8 KiB each (the reference pass is slow; bench/guard_speed.py runs 64 KiB)
_HOSTILE = [unit * (8192 // len(unit)) for unit in (
    "token ", "password ", "key=", "token=", "secret: ", "secret: x ", "a", "=", ":", ".", "a=b:", "Bearer ",
    "_key=", "page_token=", "pass: ", "key-", "sk-", "://", ":AA", "<token>", "<token>abc123def</token>",
    "cookie: ", "a;", "curl -u a:", "the password is ", "[REDACTED:api_key_assignment] ", "[REDACTED:",
    "token=abc123def ", "api_key=" + "a1" * 300 + " ", "https://user@host.example/" + "a" * 40 + " ",
    "-----BEGIN PRIVATE KEY-----.", "\uff54\uff4f\uff4b\uff45\uff4e\uff1d\uff41\uff42\uff43\uff11\uff12\uff13 ",
    "pass\u200bword=abc123 ", "a" * 70 + "token=x ", "12345678:AA" + "a" * 33 + " ")] + [
    "password=" + "a" * 510 + "xtoken=abc123def456", "token=" + "a" * 600 + "token=abc123def456",
    "Cookie: sessionid=a1" + ";sid=" * 1500, "eyJ" + "a." * 4000, "M" + "T" * 27 + "." * 4000]


def _agree(texts):
    """The texts whose fast findings differ from their shapes' (none, when all is well)."""
    differ = []
    for text in texts:
        view = secrets._view(text)
        if secrets._findings(view) != secrets._findings(view, reference=True):
            differ.append(text[:80])
        elif secrets.scan(text) != sorted({kind for _, _, kind in secrets._findings(view, reference=True)}):
            differ.append(text[:80])
    return differ


def test_fast_forms_find_what_the_shapes_find_on_the_corpus_and_its_mixtures():
    assert _agree(_corpus() + _mixtures()) == []


def test_fast_forms_find_what_the_shapes_find_on_fuzzed_key_value_text():
    texts = _fuzz(1500, seed=8)
    assert sum(1 for text in texts if secrets.scan(text)) > 30  # the fuzz does reach the detectors
    assert _agree(texts) == []


@pytest.mark.parametrize("text", _HOSTILE, ids=lambda text: f"{text[:12]!r}*{len(text)}")
def test_fast_forms_find_what_the_shapes_find_on_hostile_input(text):
    assert _agree([text]) == []


def test_fast_forms_find_what_the_shapes_find_on_long_text():
    # past _SHORT characters, a detector's needs are checked by their characters only
    rng, texts = random.Random(10), []
    for _ in range(6):
        pieces = rng.sample(_corpus(), 60) + rng.sample(_fuzz(200, seed=rng.randint(0, 999)), 40)
        texts.append("\n".join(pieces))
    texts.append("token=" * 900 + "sk-" * 10)  # most detectors' characters absent
    assert all(len(text) > secrets._SHORT for text in texts)
    assert _agree(texts) == []


def test_every_detector_is_gated_on_a_literal_its_matches_hold():
    # a short field without the literal never compiles nor runs the detector (every write runs a first scan)
    assert [detector.kind for detector in secrets._detectors() if not detector.needs and not detector.gates] == []


def test_a_clean_short_field_compiles_no_regex_in_a_fresh_process():
    import subprocess
    import sys

    probe = ("import re, mindos.core.secrets as s; compiled = []; original = re.compile\n"
             "re.compile = lambda *a, **k: compiled.append(a[0]) or original(*a, **k)\n"
             "assert s.scan('Fix the flaky login test in CI') == []; print(len(compiled))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "0"


def test_redaction_reads_every_finding_and_scan_reports_their_kinds():
    for text in _corpus() + _mixtures(100, seed=9):
        redacted, kinds = secrets.redact(text)
        assert kinds == secrets.scan(text)
        assert secrets.scan(redacted) == []


# --- structure: what keeps a 64 KiB scan in the milliseconds (no timing here) ---------------

def _opens_on_literal(regex):
    """True when the regex engine can skip ahead to the regex's first literal character."""
    from re import _parser  # lazy: the engine's own parser, for its view of the pattern

    op, value = _parser.parse(regex.pattern, regex.flags)[0]
    if op is _parser.LITERAL:
        return True
    if op is _parser.BRANCH:  # every alternative opens on one
        return all(branch and branch[0][0] is _parser.LITERAL for branch in value[1])
    return False


def _regexes(detector):
    prefilter = [detector.prefilter()] if detector.prefilter() is not None else []
    return detector.fast() + [detector.candidates(index) for index in range(len(detector.fast())) if detector.flagged] \
        + prefilter


def test_every_fast_form_and_candidate_search_opens_on_a_literal():
    # a regex that opens on a class or a look-behind is tried at every position of the text:
    # what the shapes did, at tens of milliseconds for 64 KiB
    opening = []
    for detector in secrets._detectors():
        for regex in _regexes(detector):
            if not _opens_on_literal(regex):
                opening.append((detector.kind, regex.pattern[:40]))
    assert opening == []


def test_case_insensitive_shapes_run_lowercase_and_case_sensitive():
    for detector in secrets._detectors():
        for regex in _regexes(detector):
            assert not regex.flags & re.IGNORECASE, detector.kind
        if detector.target == "folded":
            assert detector.shape_regex().flags & re.IGNORECASE


def test_every_detector_kind_is_reported_by_some_detector():
    kinds = {kind for detector in secrets._detectors() for kind in detector.kinds}
    assert {kind for kind, _, _ in secret_corpus.SECRETS} <= kinds


# --- the view and the fold ------------------------------------------------------------------

_UNICODE_PIECES = ["token", "=", "abc123", " ", "\u200b", "\u00ad", "\u202e", "\ufeff", "\uff54\uff4f\uff4b",
                   "\u2026", "\ufb01", "\u00e9", "e\u0301", "\u0301", "\u0323\u0301", "\u1100", "\u1161",
                   "\uac00\u11a8", "\u3131\u314f", "\u0b47\u0b3e", "\u65e5\u672c", "\u201c\u201d", "\U0001f600",
                   "\u0130", "\u0131", "\u017f", "\u212a", "\u00a0", "\n", "\ud800", "\uff21\uff22\uff23"]


def test_the_fast_view_equals_normalizing_each_character_on_its_own():
    rng = random.Random(11)
    texts = ["".join(rng.choice(_UNICODE_PIECES) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    texts += [piece * 300 for piece in _UNICODE_PIECES]  # dense: normalized as a whole
    texts += ["plain ascii " * 40 + piece + " more" * 40 for piece in _UNICODE_PIECES]  # mostly ASCII: by pieces
    assert [text for text in texts if secrets._view(text) != secrets._view_map(text)[0]] == []


def test_the_view_catches_fullwidth_split_and_folded_keys():
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in "AKIA2R29TQLR0VLG5W1H")
    assert secrets.scan(f"key is {fullwidth}") == ["aws_access_key"]
    assert secrets.scan("AKIA\u200b2R29TQLR0VLG5W1H") == ["aws_access_key"]  # zero-width space
    assert secrets.scan("AKIA2R29\u00adTQLR0VLG5W1H") == ["aws_access_key"]  # soft hyphen
    assert secrets.scan("pass\u200bword=hunter2x9") == ["password_assignment"]
    assert secrets.scan("\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44\uff1a hunter2x9") == ["password_assignment"]
    # (?i) matches dotted and dotless I (and the long s, the Kelvin sign) to ASCII letters
    assert secrets.scan("AP\u0130_KEY=abc123def456") == ["api_key_assignment"]
    assert secrets.scan("ap\u0131_key=abc123def456") == ["api_key_assignment"]
    # each character is normalized on its own: a combining mark is not folded into the key
    assert secrets.scan("pas\u0301sword=hunter2x9") == []
    assert secrets.scan("\u201cthe password is hunter2x9\u201d \u2014 rotate") == ["password_assignment"]


def test_redaction_replaces_the_original_characters():
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in "AKIA2R29TQLR0VLG5W1H")
    assert secrets.redact(f"\u00e9 {fullwidth} \u2014 ok") == ("\u00e9 [REDACTED:aws_access_key] \u2014 ok",
                                                             ["aws_access_key"])
    text = "note\u200b: pass\u200bword=hunter2x9 \ufb01ne " * 50
    redacted, kinds = secrets.redact(text)
    assert kinds == ["password_assignment"]
    assert redacted == "note\u200b: pass\u200bword=[REDACTED:password_assignment] \ufb01ne " * 50


def test_the_fold_matches_what_case_insensitive_matching_matches():
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    folded = secrets._fold(everything)
    assert len(folded) == len(everything)
    for letter in "abcdefghijklmnopqrstuvwxyz":
        matched = [m.start() for m in re.finditer(f"(?i){letter}", everything)]
        assert [m.start() for m in re.finditer(letter, folded)] == matched, letter
    # the fold changes nothing but letters into letters
    changed = [i for i, (a, b) in enumerate(zip(everything, folded)) if a != b]
    assert all(everything[i].isalpha() and folded[i].isalpha() for i in changed)


def test_the_combining_table_and_the_format_class_agree_with_unicodedata():
    seconds = set()
    for code in range(0x110000):
        char = chr(code)
        decomposition = unicodedata.decomposition(char)
        if decomposition and not decomposition.startswith("<") and len(decomposition.split()) == 2:
            seconds.add(chr(int(decomposition.split()[1], 16)))
    # a starter that still combines with the character before it must be in the table
    assert {char for char in seconds if unicodedata.combining(char) == 0} - {"\u1161", "\u11a8"} <= secrets._SECOND
    assert unicodedata.normalize("NFC", "\u1100\u1161") == "\uac00" and "\u1161" in secrets._SECOND
    assert unicodedata.normalize("NFC", "\uac00\u11a8") == "\uac01" and "\u11a8" in secrets._SECOND
    formats = [chr(code) for code in range(0x110000) if secrets._FORMAT().match(chr(code))]
    format_set = set(formats)
    # every format character, and every Default_Ignorable_Code_Point (DerivedCoreProperties.txt)
    assert {chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"} <= format_set
    assert DEFAULT_IGNORABLE <= format_set
    assert all(unicodedata.category(char) in ("Cf", "Cn", "Mn", "Lo") for char in formats)
    assert all(set(unicodedata.normalize("NFKC", char)) <= format_set for char in formats)
    # the printable ones are exactly those _printable looks for
    assert [char for char in formats if char.isprintable()] == \
        [char for char in formats if secrets._VISIBLE_IGNORABLE().match(char)]
    assert not any(char.isspace() for char in formats)
    # no other character normalizes into a format character
    assert not [code for code in range(0x110000) if unicodedata.decomposition(chr(code))
                and chr(code) not in format_set
                and any(secrets._FORMAT().match(c) for c in unicodedata.normalize("NFKC", chr(code)))]


# Default_Ignorable_Code_Point, from the Unicode Character Database's DerivedCoreProperties.txt
DEFAULT_IGNORABLE = {chr(code) for first, last in (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF)) for code in range(first, last + 1)}


def _unicode_texts(seed, count=1500):
    """Random texts of the unicode pieces: short ones, ones with more than ``_SPLICE``
    occurrences of a piece, and ones with more than ``_DISTINCT`` distinct characters."""
    rng = random.Random(seed)
    texts = ["".join(rng.choice(_UNICODE_PIECES) for _ in range(rng.randint(1, 40))) for _ in range(count)]
    texts += ["x = " * 30 + rng.choice(_UNICODE_PIECES) * rng.randint(40, 80) + " ascii" * 200 for _ in range(60)]
    many = [chr(code) for code in range(0xff01, 0xff5f)] + ["\u2026", "\u200b", "\u00ad", "\ufb01", "\u00e9"]
    texts += ["".join(rng.choice(many) + "ab" for _ in range(rng.randint(60, 400))) for _ in range(30)]
    return texts


def test_the_replaced_view_equals_normalizing_each_character_on_its_own():
    # _view replaces each distinct character by its view when the text is not mostly non-ASCII
    assert [text for text in _unicode_texts(12) if secrets._view(text) != secrets._view_map(text)[0]] == []


def test_no_characters_view_holds_a_character_whose_own_view_differs():
    # what lets _replaced replace characters one at a time, in any order
    differ = []
    for code in range(0x80, 0x110000):
        mapped = secrets._CHAR_VIEW[chr(code)]
        if mapped != chr(code) and any(secrets._CHAR_VIEW[char] != char for char in mapped if not char.isascii()):
            differ.append(hex(code))
        if len(secrets._CHAR_VIEW) > 4096:
            secrets._CHAR_VIEW.clear()
    assert differ == []


def test_the_segments_map_every_view_span_as_the_character_map_does():
    for text in _unicode_texts(13, count=400):
        view, reference = secrets._view_map(text)
        segments = secrets._segments(text)
        if reference is None or segments is None:  # one for one: a view span is the text span
            assert len(view) == len(text) and (reference is None or [s[2] for s in reference] == [s[3] for s in reference])
            assert segments is None or [s[2] for s in segments] == [s[3] for s in segments]
            continue
        ref_starts, starts = [s[0] for s in reference], [s[0] for s in segments]
        step = max(1, len(view) // 40)
        for start in range(0, len(view), step):
            for end in range(start + 1, len(view) + 1, step):
                assert secrets._to_text(segments, starts, start, end) == \
                    secrets._to_text(reference, ref_starts, start, end), (text[:40], start, end)


def test_redaction_maps_findings_back_through_format_characters_and_expansions():
    text = ("note\u200b: pass\u200bword=hunter2x9 \ufb01ne \u2026 " * 60) + "AKIA\u200b2R29TQLR0VLG5W1H \u00ad"
    redacted, kinds = secrets.redact(text)
    assert kinds == ["aws_access_key", "password_assignment"]
    assert redacted == ("note\u200b: pass\u200bword=[REDACTED:password_assignment] \ufb01ne \u2026 " * 60
                        + "[REDACTED:aws_access_key] \u00ad")


# --- the narrow copy: the fast regexes read one byte per character ------------------------

# above U+00FF: letters, ideographs, punctuation, spaces (U+1680, U+2028), a non-ASCII
# decimal digit (no stand-in), what (?i) folds to ASCII, a non-BMP symbol; and "?", the
# markers and Latin-1 characters, which stay as they are
_WIDE_PIECES = ["\u65e5", "\u672c", "\u2014", "\u201c", "\u201d", "\u2192", "\u3007", "\u1680", "\u2028", "\u0663",
                "\u0130", "\u0131", "\u017f", "\u212a", "\U0001f600", "\u0436", "?", "\x01", "\x02", "\xe9", "\x85",
                "\xaa", "\xa7", "\xa0"]


def _narrow_reference(text):
    """Each character above U+00FF replaced by its stand-in, one at a time; None without one."""
    out = []
    for char in text:
        if char > "\xff":
            char = secrets._STAND_INS.get(secrets._signature(char))
            if char is None:
                return None
        out.append(char)
    return "".join(out)


def _wide_texts(seed, count=1500):
    rng = random.Random(seed)
    texts = ["".join(rng.choice(_WIDE_PIECES + ["token=", "abc1", " ", "\n", "AKIA", "sk-"])
                     for _ in range(rng.randint(1, 40))) for _ in range(count)]
    texts += ["ascii " * 20 + rng.choice(_WIDE_PIECES) * rng.randint(40, 90) + rng.choice(_WIDE_PIECES) * 3
              + " ascii?" * 20 for _ in range(80)]  # more than _SPLICE occurrences: replaced
    texts += ["".join(rng.choice(_WIDE_PIECES[:10]) for _ in range(3)) * 30 + "?" * rng.randint(0, 2) for _ in range(40)]
    texts += ["\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11?\u65e5", "\u65e5" * 50 + "\u2014" * 50 + "\u1680" * 50]
    # past _NARROW_PASSES characters of many occurrences: the encoder stands in for the commonest kind
    texts += ["".join(rng.sample(_WIDE_PIECES[:16], 7)) * rng.randint(49, 70) + rng.choice(["", "?", "a?b\x01\x02"])
              for _ in range(60)]
    texts += ["".join(rng.sample(_WIDE_PIECES[:9], 7)) * 50 + "?\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11"]
    return texts


def test_stand_ins_are_told_apart_from_wide_characters_by_nothing_a_fast_regex_reads():
    everything = "".join(chr(code) for code in range(0x100, 0x110000) if not 0xD800 <= code <= 0xDFFF)
    for position, category in enumerate((r"\s", r"\d", r"\w")):
        matched = {m.start() for m in re.finditer(category, everything)}
        assert [i for i, char in enumerate(everything) if secrets._signature(char)[position] != (i in matched)] == []
        for signature, stand_in in secrets._STAND_INS.items():
            assert "\x80" <= stand_in <= "\xff"
            assert (re.fullmatch(category, stand_in) is not None) == signature[position]


def _reads_wide_characters_as_classes_only(pattern, flags):
    """True when the parsed regex tells characters past ASCII apart only by \\s, \\d and \\w:
    every literal and range in it is ASCII, no back-reference, no case folding."""
    from re import _constants, _parser  # lazy: the engine's own parser

    if flags & (re.IGNORECASE | re.LOCALE):
        return False

    def clean(items):
        for op, value in items:
            if op in (_constants.LITERAL, _constants.NOT_LITERAL):
                if value > 0x7F:
                    return False
            elif op is _constants.IN:
                for item_op, item in value:
                    if item_op is _constants.LITERAL and item > 0x7F or item_op is _constants.RANGE and item[1] > 0x7F:
                        return False
                    if item_op not in (_constants.LITERAL, _constants.RANGE, _constants.NEGATE, _constants.CATEGORY):
                        return False
            elif op in (_constants.GROUPREF, _constants.GROUPREF_EXISTS) or "IGNORE" in str(op):
                return False
            elif op in (_constants.BRANCH,):
                if not all(clean(branch) for branch in value[1]):
                    return False
            elif op in (_constants.SUBPATTERN,):
                if not clean(value[-1]):
                    return False
            elif op in (_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT):
                if not clean(value[2]):
                    return False
            elif op in (_constants.ASSERT, _constants.ASSERT_NOT):
                if not clean(value[1]):
                    return False
            elif op is _constants.ATOMIC_GROUP:
                if not clean(value):
                    return False
            elif op not in (_constants.ANY, _constants.AT):
                return False
        return True

    return clean(_parser.parse(pattern, flags))


def test_every_regex_run_on_the_narrow_copies_reads_wide_characters_as_classes_only():
    secrets._detectors()
    regexes = [regex for detector in secrets._detectors() for regex in _regexes(detector)]
    regexes += [secrets._label(), *secrets._PRIVATE_KEY]
    assert len(regexes) > 60
    assert [regex.pattern[:60] for regex in regexes if not _reads_wide_characters_as_classes_only(regex.pattern,
                                                                                                   regex.flags)] == []


def test_the_narrow_copy_equals_standing_in_for_each_character_on_its_own():
    narrowed = 0
    for text in _wide_texts(14):
        reference = _narrow_reference(text)
        narrow = secrets._narrow(text)
        assert narrow == reference or narrow is text, text[:40]
        assert len(narrow) == len(text)
        narrowed += narrow is not text and narrow == reference
        view, wide = secrets._view_wide(text)
        assert view == secrets._view(text)
        if wide is not None:  # the view's characters above U+00FF, when known on the way
            assert wide == {char: view.count(char) for char in set(view) if char > "\xff"}
        pair = secrets._narrow_pair(view, wide)
        assert pair[0] in (view, _narrow_reference(view)) and pair[1] in (secrets._fold(view),
                                                                          _narrow_reference(secrets._fold(view)))
        assert pair == secrets._narrow_pair(view)
    assert narrowed > 600  # most texts do get a narrow copy (some hold a digit, or nothing, above U+00FF)


def test_fast_forms_find_what_the_shapes_find_on_text_with_wide_characters():
    rng, texts = random.Random(15), []
    corpus = _corpus()
    for _ in range(300):  # corpus texts with wide characters around and inside them
        pieces = []
        for text in rng.sample(corpus, 3):
            at = rng.randint(0, len(text))
            pieces.append(text[:at] + rng.choice(_WIDE_PIECES) + text[at:])
        texts.append(rng.choice(_WIDE_PIECES).join(pieces))
    for _ in range(4):  # long: past _SHORT, with each kind of stand-in
        texts.append("\n".join(rng.choice(_WIDE_PIECES[:9]) + text for text in rng.sample(corpus, 120)))
    assert _agree(texts) == []
    assert sum(1 for text in texts if secrets._narrow(secrets._view(text)) is not secrets._view(text)) > 200


def test_a_repeated_value_is_judged_under_its_own_key_and_quoting():
    # the key = value verdicts are memoized per text (secrets._assignment_memo)
    rng = random.Random(16)
    keys = ["password", "token", "page_token", "max_tokens", "pass", "db_pass", "bypass", "api_key", "secret",
            "--token", "--pass", "<password>", "<page_token>", "credentials"]
    values = ["abc123x", "12345ab", "4.5k", "abcdefgh1", "hunter2", "${VAR}1abc", "/etc/x1abc", "abc12"]
    texts = []
    for _ in range(60):
        parts = []
        for _ in range(rng.randint(5, 40)):
            key, val = rng.choice(keys), rng.choice(values)
            quote = rng.choice(["", '"', "'"])
            if key.startswith("<"):
                parts.append(f"{key}{val}</{key[1:]}")
            else:
                parts.append(f"{key}{rng.choice(['=', ': ', ' '])}{quote}{val}{quote}")
        texts.append(rng.choice([" ", "\n", "; "]).join(parts))
    assert sum(1 for text in texts if secrets.scan(text)) > 40
    assert _agree(texts) == []


def test_a_prefilter_finds_something_wherever_a_candidate_form_does():
    rng = random.Random(17)
    ends = ["password", "passwd", "passphrase", "pass", "pwd", "secret", "secret_key", "secret_key_base", "token",
            "api_key", "apikey", "access-key", "credential", "credentials", "db_pass", "x", "key"]
    texts = [f"<{rng.choice(ends)}{rng.choice(['', 's', 'S'])}>{rng.choice(['abc123def', 'a1', 'x' * 70, '${X}1abcdef'])}"
             f"</{rng.choice(ends)}>" for _ in range(400)] + _fuzz(800, seed=18) + _corpus()
    for detector in secrets._detectors():
        if detector.prefilter() is None:
            continue
        for text in texts:
            folded = secrets._fold(secrets._view(text))
            if any(detector.candidates(index).search(folded) for index in range(len(detector.fast()))):
                assert detector.prefilter().search(folded), text[:60]
    assert _agree(texts[:400]) == []


def test_detectors_sharing_a_literal_open_on_it_and_read_the_same_text():
    shared = {}
    for detector in secrets._detectors():
        if detector.share is None:
            continue
        assert len(detector.fast()) == 1 and not detector.flagged and detector.walk is None
        assert detector.fast()[0].pattern.startswith(re.escape(detector.share).replace("\\-", "-")) or \
            detector.fast()[0].pattern.startswith(detector.share), detector.kind
        shared.setdefault(detector.share, set()).add(detector.target)
    assert shared and all(len(targets) == 1 for targets in shared.values())


def test_fast_forms_find_what_the_shapes_find_where_detectors_share_a_literal():
    rng = random.Random(19)
    units = ["sk-", "sk-ant-", "sk-ant-api03-", "sk-proj-", "sk-admin-", "xsk-", "sk-sk-", "https://",
             "https://hooks.slack.com/services/", "https://discord.com/api/webhooks/12345678901234567/",
             "https://https://hooks.slack.com/workflows/"]
    alphabet = _ALNUM + "_-"
    texts = []
    for count in (3, 40, 90, 300):  # past secrets._SHARED occurrences too
        for _ in range(4):
            texts.append(" ".join(rng.choice(units) + "".join(rng.choice(alphabet) for _ in range(rng.choice(
                [4, 20, 24, 40, 70]))) for _ in range(count)))
    assert sum(1 for text in texts if secrets.scan(text)) > 10
    assert _agree(texts) == []


@pytest.mark.parametrize("stop", ["\\s\"'`,;()", "\"\\n", "'\\n", "<\\s", "\\s\"'", "\\s\"'`;|&()", "\\n"])
def test_the_possessive_run_lookahead_equals_the_lazy_one(stop):
    # secrets._up_to stands for (?=[^stop]{0,within-1}?wanted) in the good flags
    rng = random.Random(20)
    alphabet = ["a", "Z", "0", "9", "_", "=", "-", " ", "\n", "\t", "\x1c", '"', "'", "`", ",", ";", "(", ")", "<", "|",
                "&", "\u00e9", "\u0663", "\u2028", "\u3000", "\u65e5", "\x85"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(300)]
    texts += ["a" * n + "1" for n in range(5, 70)] + ["1" * n + "a" for n in range(5, 70)]
    for wanted in (secrets._MAYBE_DIGIT, secrets._MAYBE_ALPHA, f"[^{stop}0-9]"):
        for within in (8, 64, 512):
            lazy = re.compile(f"(?=[^{stop}]{{0,{within - 1}}}?{wanted})")
            fast = re.compile(secrets._up_to(stop, wanted, within))
            for text in texts:
                assert [bool(lazy.match(text, at)) for at in range(len(text) + 1)] == \
                    [bool(fast.match(text, at)) for at in range(len(text) + 1)], (wanted, within, text)


def test_the_worked_out_classes_are_the_computed_ones_and_cover_every_pair_asked(monkeypatch):
    # each entry of the table equals what _neither would compute, and it matches exactly the
    # ASCII characters outside the stop class and not wanted
    for (stop, wanted), body in secrets._NEITHER.items():
        assert secrets._work_out_neither(stop, wanted) == body
        run, wanted_re, cls = re.compile(f"[^{stop}]"), re.compile(wanted), re.compile(f"[{body}]")
        for code in range(512):
            expected = code < 128 and bool(run.fullmatch(chr(code))) and not wanted_re.fullmatch(chr(code))
            assert bool(cls.fullmatch(chr(code))) == expected, (stop, wanted, code)
    # building the detectors asks for no pair outside the table (so no process pays for one)
    asked, table = set(), set(secrets._NEITHER)
    real = secrets._neither
    monkeypatch.setattr(secrets, "_neither", lambda stop, wanted: asked.add((stop, wanted)) or real(stop, wanted))
    monkeypatch.setattr(secrets, "_DETECTORS", None)
    secrets._detectors()
    assert asked and asked <= table
