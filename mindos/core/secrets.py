"""The credential detector and redactor: pure functions, no database.

Credentials never enter shared memory.  Every write path that stores agent text (note,
supersede-note, handoff) passes its fields through :func:`mindos.store.guard.guard`, which runs the shape
detectors below and either refuses the write (``secret_blocked``), stores a redacted copy
(``secret_redacted``) or, on an explicit override, stores it verbatim (``secret_allowed``).

Design decisions
  * Kind-only reporting.  A finding is named by its pattern kind (``aws_access_key``,
    ``password_assignment``, ...), never by its value: :func:`scan` returns kinds only, and
    errors, outputs and audit payloads carry kinds and field names, nothing else.
  * Specific shapes over entropy guesses.  Vendor tokens have fixed prefixes and lengths
    (``AKIA``, ``ghp_``, ``sk-``, ``xoxb-``, ``AIza``, ``npm_``, ``pypi-``, ``key-``, JWT's
    ``eyJ..eyJ..``, Discord's base64-of-a-user-id bot tokens and webhook URLs); those are
    matched exactly.  The generic shapes (``password: ...``,
    ``api_key=...``, ``Bearer ...``) require a digit in the value, skip placeholders
    (``${VAR}``, ``<token>``, ``****``) and code (``token_hex(32)``), and only fire when the
    key *ends* in a credential word, so ``password_min_length=12``, ``max_tokens=4096``,
    "fencing token: lease_epoch chain" and "password policy" pass.  ``pass`` counts only as
    a whole key or key segment (``DB_PASS``, not ``bypass``); prose ("the password is
    ...") and command lines (``curl -u user:pw``, ``mysql -pPW``, ``sshpass -p``,
    ``redis-cli -a``, only on a line that runs that tool) follow the same value rules;
    Cookie headers flag only session-like cookies with long mixed values.
  * Overlaps resolve to the most specific kind when redacting (``api_key=sk-...`` is
    replaced as ``openai_key``), while :func:`scan` reports every kind that fired.
  * Detection reads a normalized view: NFKC with every default-ignorable code point (zero-width
    space, word joiner, soft hyphen, bidi controls, variation selectors, the combining
    grapheme joiner, ...) removed, so a key split by U+200B or U+FE0F or written in fullwidth
    letters is still the key; redaction replaces the original characters.
  * Percent escapes are read through: :func:`scan` also reads the decoded text around each
    run of escapes (up to three times over, for a doubly encoded URL), and :func:`redact`
    replaces the escapes that encode a finding.
  * Only a ``[REDACTED:<kind>]`` label naming a kind this detector reports is an earlier
    redaction; a lookalike holding anything else (``[REDACTED:npm_...]``) is read as text.
  * Patterns compile on first use, so commands that never store text never pay for them.

Speed (the guard's time on a 64 KiB text is measured by ``bench/guard_speed.py``; its budget
is in bench/NOTES.md)
  * Every detector has a *shape*, the regex that defines what it finds, and a *fast form*
    that finds the same matches: the shape opening on its literal (``AKIA``, ``sk-``,
    ``://``, the credential word) with any look-behind moved after that literal, so the
    regex engine skips ahead by substring search instead of trying the whole pattern at
    every position.  Case-insensitive shapes run case-sensitively, in lowercase, over a
    folded copy of the view (:func:`_fold`, one character for one), which is what lets the
    engine skip.  ``_findings(view, reference=True)`` runs the shapes plainly; the tests
    (tests/core/test_secret_engine.py) require both to agree on the corpus, mixtures of it,
    fuzzed key/value text and hostile inputs.
  * Matches are consumed exactly as one pass of the shape consumes them (a rejected value
    still hides what it covers).  The generic shapes repeat the cheap part of their value
    check inside the regex as a ``good`` flag (enough characters, a digit, not a
    placeholder), and a cheaper required form of it finds candidates, so the many matches
    that cannot pass ("secret: x", "token: 1234") cost no Python work; a candidate is judged
    on its own first, and the match sequence is followed only when one passes (:func:`_flagged`).
  * :func:`scan` stops a detector at its first finding: it reports kinds, not spans.
  * Regexes compile one at a time on first use, and in a short text a detector runs only when
    the text holds its literals, so a write of a few short fields compiles little.  A long
    text skips a detector when it lacks a character of each of its literals: a
    single-character search runs at memory speed, a substring search costs a whole pass.
  * ASCII text is its own view; text with few distinct non-ASCII characters has each one
    that changes replaced by its view (a pass or a splice per character, no normalization
    of the ASCII around them); other text is normalized as a whole wherever that equals
    normalizing it character by character (:func:`_view`).
  * The regexes read a narrow copy of a view that holds characters above U+00FF: each
    replaced by a Latin-1 stand-in with the same answer to \\s, \\d and \\w, all a fast
    regex can tell of such a character (its literals and ranges are ASCII; tests check
    both), so a regex pass runs over one byte per character, about twice as fast
    (:func:`_narrow`); values are still read from the view, at the same positions.
  * The three detectors opening on ``sk-`` try their regexes at its occurrences, found once
    (up to _SHARED of them); xml_element first looks, in one pass over the rare ">", for
    a credential word's ending with a value after it, instead of running six candidate
    passes; a text's key = value verdicts are memoized by key, value and quoting (a text
    repeating one costs one check); ``[REDACTED:<kind>]`` labels are read only once there
    is a hit to hold against them.
  * Redaction maps findings back to the text only when there are some, from the positions
    of the characters whose view is not one character (:func:`_segments`).

Interface (stable; handoffs and context packs call it):
  * ``scan(text) -> list[str]``: sorted unique finding kinds.
  * ``redact(text) -> (str, list[str])``: each finding replaced by ``[REDACTED:<kind>]``.
  * ``guard(conn, entity_type, entity_id, fields, *, redact=False, allow_secret=False)
    -> (fields, outcome)``: call inside ``db.write``; see its docstring.
  * ``guard_record(conn, entity_type, entity_id, fields, identities, *, redact, allow_secret)``:
    the same plus agent-name fields (note source, handoff agents), which are refused
    outright when credential-shaped: an id can be neither redacted nor allowed.
"""

import bisect
import itertools
import re

from mindos.core import secret_gate


# Kinds whose match is a structural shape rather than a vendor prefix; when spans overlap,
# a specific kind wins the redaction label.
_GENERIC = frozenset({"password_assignment", "api_key_assignment", "bearer_token", "basic_auth",
                      "connection_string", "cli_password", "session_cookie"})
_ASSIGNED = frozenset({"password_assignment", "api_key_assignment"})

_DETECTORS = None
# the characters of every literal a detector is gated on (see _Present)
_LITERAL_CHARS = frozenset()
# every literal of every detector's gates and needs, and literal -> the indexes of the
# detectors with a gate or need it satisfies (the gate's, built from its declaration)
_LITERALS, _OPENED_BY = secret_gate._LITERALS, secret_gate._OPENED_BY
_UNGATED = frozenset()  # the detectors with neither gates nor needs
# Command-line credentials only count on a line that runs the tool they belong to
# (``-u user:pw`` means a password to curl, a uid to docker).
_COMMANDS = {
    "curl": r"(?<![\w-])curl(?![\w-])",
    "mysql": r"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)(?![\w-])",
    "sshpass": r"(?<![\w-])sshpass(?![\w-])",
    "redis-cli": r"(?<![\w-])redis-cli(?![\w-])",
}

# the characters of a generic key (assignment) and of an XML element name, as folded
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
_XML_KEY_CHARS = _KEY_CHARS | {":"}
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")


class _Detector:
    """One detector: ``kind``; ``check``, the value check a match must pass; ``shape``, the
    regex that defines it; ``target``, "view" or "folded" (a folded shape is matched
    case-insensitively on the view and its fast forms are lowercase, for the folded text);
    ``fast``, the fast regexes (several when the shape's alternatives open on different
    literals, one each), given as ``(fast, candidate)`` source pairs when they carry the good
    flag (``flagged``); ``back(view, match)``, the hit's start when a fast form opens after
    the shape's start; ``gates``, literal groups the folded text must each hold one of before
    the detector runs (``needs``: the same, checked exactly in a short text and by their
    characters in a long one, see :class:`_Present`), both taken from the one declaration of
    the literals, ``mindos.core.secret_gate.LITERALS`` (:meth:`take_literals`); ``walk``, a special
    walk ("private_key", "words", "url"); ``words``, a word-family walk's literal per regex;
    ``kinds``, what it can report, and ``good_kinds``, what each fast regex can (a word
    family's kind); ``prefilter``, a regex that finds something wherever any of the
    candidate forms does (one pass instead of one per candidate form); ``share``, the
    literal its one fast regex opens on, when other detectors open on it too (their matches
    are looked for at its occurrences, found once for all of them: see :func:`_plain`);
    ``groups``, the gates and needs as sets (a short text decides them against the literals
    it holds); ``precheck(text)``, a plain-Python necessary condition of a fast match, for a
    detector whose literal is common and whose regex is slow to compile.
    """

    __slots__ = ("kind", "check", "shape", "target", "flagged", "good_kinds", "words", "back", "gates", "needs",
                 "walk", "kinds", "_sources", "_candidate_sources", "_fast", "_candidates", "_shape",
                 "_prefilter", "share", "groups", "precheck")

    def __init__(self, kind, check, shape, fast, *, target="view", back=None, walk=None,
                 words=None, good_kinds=None, prefilter=None, share=None, precheck=None):
        self.kind, self.check, self.shape, self.target = kind, check, shape, target
        pairs = [source if isinstance(source, tuple) else (source, None) for source in fast]
        self._sources = [source for source, _ in pairs]
        self._candidate_sources = [candidate for _, candidate in pairs]
        self.flagged = bool(pairs) and pairs[0][1] is not None
        self.back, self.walk, self.words = back, walk, words
        self.kinds = _ASSIGNED if check == "assignment" else frozenset({kind})
        # what each fast regex can report (a generic key's word family decides its kind)
        self.good_kinds = [self.kinds] * len(pairs) if good_kinds is None else good_kinds
        self._fast, self._candidates, self._shape = [None] * len(pairs), [None] * len(pairs), None
        self._prefilter, self.share = (_Lazy(prefilter) if prefilter else None), share
        self.gates, self.needs, self.groups = (), (), ()
        self.precheck = precheck

    def take_literals(self, gates, needs):
        """Set the gates and needs (from :data:`mindos.core.secret_gate.LITERALS`)."""
        self.gates, self.needs = gates, needs
        self.groups = tuple(frozenset(group) for group in (*gates, *needs))

    # Everything compiles on first use, one regex at a time: a write of a few short fields
    # compiles only the detectors whose literal it holds.
    def fast(self, index=None):
        """The fast regexes (or the one at ``index``)."""
        for at in range(len(self._fast)) if index is None else (index,):
            if self._fast[at] is None:
                self._fast[at] = re.compile(self._sources[at])
        return self._fast if index is None else self._fast[index]

    def candidates(self, index):
        """The candidate form of fast regex ``index`` (a flagged detector's)."""
        if self._candidates[index] is None:
            self._candidates[index] = re.compile(self._candidate_sources[index])
        return self._candidates[index]

    def prefilter(self):
        """The prefilter regex compiled, or None when the detector has none."""
        return None if self._prefilter is None else self._prefilter()

    def shape_regex(self):
        """The shape compiled to run on the view (case-insensitive when the target is folded)."""
        if self._shape is None:
            self._shape = re.compile(("(?i)" if self.target == "folded" else "") + self.shape)
        return self._shape


def _unlabelled(val):
    """``val`` without its well-formed ``[REDACTED:<kind>]`` placeholders (what the value checks judge)."""
    # a dangling "[REDACTED:" (no kind, no closing bracket) is text like any other
    return _label().sub("", val).replace("[REDACTED:", "") if "[REDACTED:" in val else val


# --- the good flag: the cheap half of a value check, inside the regex ---------------------
# ``(?P<good>)`` is set when the value could pass its check.  It is a necessary condition
# only (the check still runs on every flagged match) and a zero-width optional group in
# front of the value, so it never changes what the regex matches or consumes.  A second,
# required and cheaper form of it finds the candidates (see :func:`_flagged`).
# (written as negated ASCII ranges: a class reaching U+10FFFF is slow to compile)
_MAYBE_DIGIT = r"[^\x00-\x2f\x3a-\x7f]"              # what str.isdigit() accepts: 0-9 or non-ASCII
_MAYBE_ALPHA = r"[^\x00-\x40\x5b-\x60\x7b-\x7f]"  # str.isalpha() likewise: A-Z, a-z or non-ASCII
# placeholders and paths at the start of a value ("[" is left out: it may open a label the
# check removes before it looks)
_NOT_PLACEHOLDER = (r"(?![$%{<*]|\.\.\.|[xX]{4,}|(?i:your|my|the)[_-]|(?i:redacted|changeme|example|placeholder"
                    r"|dummy)|[/~]|\.\.?/)")
# a bare number with a unit ("12ms", "4.5k"), the whole run of the value; "i" stays out of
# the unit, as folding turns dotted and dotless I into it (format ``run``: the value's class)
_NOT_NUMBER = r"(?![\d.,:]+[a-hj-zA-HJ-Z%]{{0,3}}(?!{run}))"


class _Lazy:
    """A regex compiled on its first use (``regex()``), so a scan that never judges a value,
    a cookie or a private key compiles none of the helpers below: every write process runs
    one scan of a few short fields."""

    __slots__ = ("pattern", "_compiled")

    def __init__(self, pattern):
        self.pattern, self._compiled = pattern, None

    def __call__(self):
        if self._compiled is None:
            self._compiled = re.compile(self.pattern)
        return self._compiled

    @property
    def flags(self):
        return self().flags


_COMMAND_RES = {command: _Lazy(pattern) for command, pattern in _COMMANDS.items()}
# only a complete, well-formed placeholder naming a kind this detector reports is exempt; a
# bare "[REDACTED:" prefix is not, nor a lookalike holding anything else (a token written as
# "[REDACTED:npm_...]" is still the token); built with the detectors (see _label)
_LABEL = None


def _label():
    """The regex of a well-formed ``[REDACTED:<kind>]`` placeholder (its kind one this detector reports)."""
    global _LABEL
    if _LABEL is None:
        kinds = sorted({kind for detector in _detectors() for kind in detector.kinds}, key=lambda k: (-len(k), k))
        _LABEL = _Lazy(r"\[REDACTED:(?:" + "|".join(kinds) + r")\]")
    return _LABEL()


_PLACEHOLDER = _Lazy(r"(?i)(?:[$%{<\[*]|\.\.\.|x{4,}|(?:your|my|the)[_-]|redacted|changeme|example|placeholder|dummy)")
_SKIP_KEY = _Lazy(r"(?i)(?:page|next|cursor|continuation|pagination|sync|csrf_?)[_.-]?tokens?$|"
                  r"(?:max|min|num|total|count|n)[_.-]?tokens?$")
_PASSWORD_WORD = _Lazy(r"(?i)(?:password|passwd|passphrase|pwd|pass)$")
# "pass" is a credential word only as a whole key or a key segment (DB_PASS, smtp.pass),
# never as the tail of another word (bypass, compass)
_BARE_PASS = _Lazy(r"(?i)(?<![_.-])(?<=[A-Za-z0-9])pass$")
_SESSION_COOKIE = _Lazy(r"(?i)sess|sid|auth|token|jwt|remember")
# a plain number with a unit suffix ("12ms", "4.5k") is configuration, not a credential
_NUMBER = _Lazy(r"[\d.,:]+[a-zA-Z%]{0,3}")
# a cookie pair (after a ";": the folded header gets one in front) that could hold a
# session cookie: a session word before its first "=", then 16 characters, a digit, a letter
_COOKIE_PAIR = _Lazy(r";(?=[^;=]*?(?:sess|sid|auth|token|jwt|remember))[^;=]*="
                     rf"(?=[^;]{{16}})(?=[^;]*?{_MAYBE_DIGIT})(?=[^;]*?{_MAYBE_ALPHA})")
# the private key's parts: one pass of its shape takes a header, then everything to the
# first END line after it, or else the base64 body that follows
_PRIVATE_KEY = (_Lazy(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
                _Lazy(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
                _Lazy(r"[A-Za-z0-9+/=\s:-]*"))


def _up_to(stop, wanted, within):
    """A lookahead for a character of class ``wanted`` among the first ``within`` characters
    of a run of characters outside ``stop``: ``(?=[^stop]{0,within-1}?wanted)`` written as
    a possessive run of the characters that are neither (always ASCII here) and then one
    that is wanted, which the engine reads in a tight loop instead of trying ``wanted`` at
    every step.  (The first wanted character of the run ends both; tests compare them.)"""
    return f"(?=[{_neither(stop, wanted)}]{{0,{within - 1}}}+{wanted})"


# _neither's answers worked out ahead for the pairs the detectors ask for (a test holds each
# to the computation and checks that no pair is missing): working them out takes 40 regex
# compiles, which every process would otherwise pay on its first scan, i.e. every write.
_NEITHER = {  # (stop, wanted) -> class body, for every pair the detectors ask for
    ('\n', '[^\n0-9]'):
        '\\x30-\\x39',
    ('\n', '[^\\x00-\\x2f\\x3a-\\x7f]'):
        '\\x00-\\x09\\x0b-\\x2f\\x3a-\\x7f',
    ('"\n', '[^"\n0-9]'):
        '\\x30-\\x39',
    ('"\n', '[^\\x00-\\x2f\\x3a-\\x7f]'):
        '\\x00-\\x09\\x0b-\\x21\\x23-\\x2f\\x3a-\\x7f',
    ('"\n', '[^\\x00-\\x40\\x5b-\\x60\\x7b-\\x7f]'):
        '\\x00-\\x09\\x0b-\\x21\\x23-\\x40\\x5b-\\x60\\x7b-\\x7f',
    ("'\n", "[^'\n0-9]"):
        '\\x30-\\x39',
    ("'\n", '[^\\x00-\\x2f\\x3a-\\x7f]'):
        '\\x00-\\x09\\x0b-\\x26\\x28-\\x2f\\x3a-\\x7f',
    ("'\n", '[^\\x00-\\x40\\x5b-\\x60\\x7b-\\x7f]'):
        '\\x00-\\x09\\x0b-\\x26\\x28-\\x40\\x5b-\\x60\\x7b-\\x7f',
    ('<\\s', '[^<\\s0-9]'):
        '\\x30-\\x39',
    ('<\\s', '[^\\x00-\\x2f\\x3a-\\x7f]'):
        '\\x00-\\x08\\x0e-\\x1b\\x21-\\x2f\\x3a-\\x3b\\x3d-\\x7f',
    ('<\\s', '[^\\x00-\\x40\\x5b-\\x60\\x7b-\\x7f]'):
        '\\x00-\\x08\\x0e-\\x1b\\x21-\\x3b\\x3d-\\x40\\x5b-\\x60\\x7b-\\x7f',
    ('\\s\\"\'', '[^\\s\\"\'0-9]'):
        '\\x30-\\x39',
    ('\\s\\"\'', '[^\\x00-\\x2f\\x3a-\\x7f]'):
        '\\x00-\\x08\\x0e-\\x1b\\x21\\x23-\\x26\\x28-\\x2f\\x3a-\\x7f',
    ('\\s\\"\'', '[^\\x00-\\x40\\x5b-\\x60\\x7b-\\x7f]'):
        '\\x00-\\x08\\x0e-\\x1b\\x21\\x23-\\x26\\x28-\\x40\\x5b-\\x60\\x7b-\\x7f',
    ('\\s\\"\'`,;()', '[^\\s\\"\'`,;()0-9]'):
        '\\x30-\\x39',
    ('\\s\\"\'`,;()', '[^\\x00-\\x2f\\x3a-\\x7f]'):
        '\\x00-\\x08\\x0e-\\x1b\\x21\\x23-\\x26\\x2a-\\x2b\\x2d-\\x2f\\x3a\\x3c-\\x5f\\x61-\\x7f',
    ('\\s\\"\'`,;()', '[^\\x00-\\x40\\x5b-\\x60\\x7b-\\x7f]'):
        '\\x00-\\x08\\x0e-\\x1b\\x21\\x23-\\x26\\x2a-\\x2b\\x2d-\\x3a\\x3c-\\x40\\x5b-\\x5f\\x7b-\\x7f',
    ('\\s\\"\'`;|&()', '[^\\s\\"\'`;|&()0-9]'):
        '\\x30-\\x39',
    ('\\s\\"\'`;|&()', '[^\\x00-\\x2f\\x3a-\\x7f]'):
        '\\x00-\\x08\\x0e-\\x1b\\x21\\x23-\\x25\\x2a-\\x2f\\x3a\\x3c-\\x5f\\x61-\\x7b\\x7d-\\x7f',
    ('\\s\\"\'`;|&()', '[^\\x00-\\x40\\x5b-\\x60\\x7b-\\x7f]'):
        '\\x00-\\x08\\x0e-\\x1b\\x21\\x23-\\x25\\x2a-\\x3a\\x3c-\\x40\\x5b-\\x5f\\x7b\\x7d-\\x7f',
}
_ASCII = "".join(map(chr, range(128)))


_NEITHER_MORE = {}  # pairs outside the table, worked out when asked for (the table itself never grows)


def _neither(stop, wanted):
    """The class body of the ASCII characters outside ``stop`` and not ``wanted``, as ranges
    (from :data:`_NEITHER` for the pairs the detectors use; worked out and kept otherwise)."""
    key = (stop, wanted)
    if key in _NEITHER:
        return _NEITHER[key]
    if key not in _NEITHER_MORE:
        _NEITHER_MORE[key] = _work_out_neither(stop, wanted)
    return _NEITHER_MORE[key]


def _work_out_neither(stop, wanted):
    """:func:`_neither` computed: the ASCII characters in ``[^stop]`` and not in ``wanted``."""
    chosen = set(re.findall(f"[^{stop}]", _ASCII)) - set(re.findall(wanted, _ASCII))
    codes = sorted(map(ord, chosen))
    ranges, start = [], None
    for position, code in enumerate(codes):
        if start is None:
            start = code
        if position + 1 == len(codes) or codes[position + 1] != code + 1:
            ranges.append(f"\\x{start:02x}" if start == code else f"\\x{start:02x}-\\x{code:02x}")
            start = None
    return "".join(ranges)


def _good(stop, *, length, alpha, number, bound):
    """Lookaheads at the start of a value that runs until a character of ``stop`` (a class
    body), at most ``bound`` characters: ``length`` characters, a digit, a letter
    (``alpha``) or else a non-digit, no placeholder or path, and (``number``) not a bare
    number with a unit."""
    run = f"[^{stop}]"
    other = _MAYBE_ALPHA if alpha else f"[^{stop}0-9]"
    parts = [f"(?={run}{{{length}}})", _up_to(stop, _MAYBE_DIGIT, bound), _up_to(stop, other, bound),
             _NOT_PLACEHOLDER]
    if number:
        parts.append(_NOT_NUMBER.format(run=run))
    return "".join(parts)


def _near(stop, *, length, number=True):
    """The candidate search's cheaper superset of :func:`_good` for a value running until a
    character of ``stop``: ``length`` characters, then 64 more or a digit and a non-digit
    among the first 64 (it runs at every credential word, also those inside a long value),
    and no placeholder or path."""
    run = f"[^{stop}]"
    near = (f"(?={run}{{{length}}})(?:(?={run}{{64}})|{_up_to(stop, _MAYBE_DIGIT, 64)}"
            f"{_up_to(stop, f'[^{stop}0-9]', 64)}){_NOT_PLACEHOLDER}")
    return near + (_NOT_NUMBER.format(run=run) if number else "")


def _flags(exact, near):
    """``(optional, required)``: the good flag as the fast form carries it (exact, optional,
    zero-width) and as the candidate search requires it (``near``)."""
    return f"(?:(?={exact})(?P<good>))?", f"(?={near})(?P<good>)"


def _value_flags(stop_bare, *, length, alpha, number_quoted, bound=512):
    """The good flags of a ``"dq"``, ``'sq'`` or bare value (a bare value is never a bare number)."""
    exact = "|".join((f'"{_good(chr(34) + chr(10), length=length, alpha=alpha, number=number_quoted, bound=bound)}',
                      f"'{_good(chr(39) + chr(10), length=length, alpha=alpha, number=number_quoted, bound=bound)}",
                      _good(stop_bare, length=length, alpha=alpha, number=True, bound=bound)))
    near = "|".join((f"[\"']{_near(chr(10), length=length, number=False)}", _near(stop_bare, length=length)))
    return _flags(exact, near)


def _flagged_pair(before, flags, after):
    """The fast form (optional flag, then the value) and the candidate form (``before`` and
    the required flag: where a match could be judged, the value itself unmatched)."""
    return before + flags[0] + after, before + flags[1]


def _detectors():
    """Compile the detectors once, in reporting order (see :class:`_Detector`).

    A regex with a ``val`` group redacts just that group; otherwise the whole match.  A
    ``body`` group is what the value check inspects when it differs from the span.  Checks:
    None (the shape is enough), "mixed" (digits and letters), "assignment" (key = value,
    see :func:`_assignment`), ``("password", command)`` (a password-shaped dq/sq/bare value,
    on a line running ``command`` unless None), "cookie" (:func:`_cookie_hits`), "openai",
    "bearer", "basic", "discord" and "password_url".
    """
    global _DETECTORS, _LITERAL_CHARS, _UNGATED
    if _DETECTORS is not None:
        return _DETECTORS
    cred_key = (r"(?:password|passwd|passphrase|pwd|secret[_-]?key[_-]?base|secret|token"
                r"|api[_-]?key|apikey|api[_-]?secret"
                r"|secret[_-]?key|access[_-]?key|private[_-]?key|signing[_-]?key|encryption[_-]?key"
                r"|master[_-]?key|account[_-]?key|auth[_-]?key|subscription[_-]?key|credentials?|pass)")
    value = r"(?:\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'|(?P<bare>[^\s\"'`,;()]{1,512}))"
    cli_value = r"(?:\"(?P<dq>[^\"\n]{1,256})\"|'(?P<sq>[^'\n]{1,256})'|(?P<bare>[^\s\"'`;|&()]{1,256}))"
    bare = r"\s\"'`,;()"
    password_flags = _value_flags(bare, length=6, alpha=True, number_quoted=True)
    cli_flags = _value_flags(r"\s\"'`;|&()", length=6, alpha=True, number_quoted=True, bound=256)

    def specific(kind, lead, literal, rest, check=None, share=None):
        """A vendor shape ``(?<!lead)literal rest``; its fast form opens on the literal (which
        its row of secret_gate.LITERALS needs, lowercase)."""
        options = literal[3:-1].split("|") if literal.startswith("(?:") else [literal]
        width = len(options[0].replace("\\", ""))
        fast = f"{literal}(?<!{lead}[\\s\\S]{{{width}}}){rest}"
        return _Detector(kind, check, f"(?<!{lead}){literal}{rest}", [fast], share=share)

    # Each detector's ``needs``, the literals its matches hold, and ``gates`` come from
    # secret_gate.LITERALS, row for row: needs are checked in a short text so that a write of
    # a few short fields compiles only what it may need, and by their characters in a long
    # one (a substring search costs as much as the regex's own; a single-character search
    # does not); gates are checked exactly, always.

    # The generic key = value shapes open, in their fast form, on the credential word that
    # ends the key: one regex per word family.  ``long`` flags a key that runs on for 65+
    # characters before the word (the shape allows a 64-character prefix, checked then);
    # ``cap`` a bare value that ran into its length cap (the next key may start inside it).
    # A password word's value needs 6 characters, any other's 8 and a letter.
    key_word = (r"(?:(?<=[_-]key)(?:(?<=api.key)|(?<=auth.key)|(?<=access.key)|(?<=master.key)"
                r"|(?<=private.key)|(?<=signing.key)|(?<=account.key)|(?<=encryption.key)|(?<=subscription.key))"
                r"|(?<=apikey)|(?<=authkey)|(?<=accesskey)|(?<=masterkey)|(?<=privatekey)|(?<=signingkey)"
                r"|(?<=accountkey)|(?<=encryptionkey)|(?<=subscriptionkey))")
    # (each family of secret_gate.FAMILIES, the literals these detectors need: its tail, and
    # whether its values are passwords)
    tails = {"pass": ("(?:word|wd|phrase)?", True), "pwd": ("", True),
             "secret": ("(?:[_-]?key(?:[_-]?base)?)?", False), "token": ("", False), "key": (key_word, False),
             "credential": ("s?", False)}
    families = secret_gate.FAMILIES
    words = tuple((word, *tails[word]) for word in families)
    family_kinds = [frozenset({"password_assignment" if password else "api_key_assignment"})
                    for _, _, password in words]

    # The candidate forms also leave out two keys the check always refuses: a bare "pass"
    # glued to the word before it (bypass, compass) and the paging and counting tokens
    # (page_token, max_tokens; see _SKIP_KEY).
    # (split by the character before the word, so a key is held against 14 of them, not 56)
    skipped_prefixes = ("page", "next", "cursor", "continuation", "pagination", "sync", "csrf", "csrf_",
                        "max", "min", "num", "total", "count", "n")
    skipped = ("(?:(?<=[_.-]token)" + "".join(f"(?<!{re.escape(prefix)}[_.-]token)" for prefix in skipped_prefixes)
               + "|(?<=[a-z0-9]token)" + "".join(f"(?<!{re.escape(prefix)}token)" for prefix in skipped_prefixes) + ")")
    # (atomic: a word that fails as "password" does not fail again as "pass")
    candidate_word = {"pass": ("pass(?>word|wd|phrase|(?<![a-z0-9]pass))", ""),
                      "token": ("token", f"(?:(?<![a-z0-9_.-]token)|{skipped})"),
                      "key": ("key(?<=[a-z_-]key)", key_word)}

    def by_word(chars, rest):
        return [rest(f"{word}(?P<long>(?<={chars}{{65}}{word}))?{tail}",
                     *candidate_word.get(word, (word + tail, "")), password) for word, tail, password in words]

    # (a candidate form checks the cheap things first: the separator after its word (most
    # credential words in prose have none), then the key before it, then the value, which
    # may mean reading 64 characters)
    def candidate(word, tie, after, flag):
        return f"{word}(?={tie})(?>{after})(?={tie}{flag})" if after else f"{word}(?={tie}{flag})"

    def assignment_rest(head, word, after, password):
        flags = _value_flags(bare, length=6 if password else 8, alpha=not password, number_quoted=False)
        tie = r"s?[\"']?\s*(?::=|=>|=|:)\s*"
        return (head + tie + flags[0] + value[:-1] + r"(?P<cap>(?=[^\s\"'`,;()]))?)",
                candidate(word, tie, after, flags[1]))

    def xml_rest(head, word, after, password):
        length = 6 if password else 8
        flags = _flags(_good(r"<\s", length=length, alpha=not password, number=True, bound=512),
                       _near(r"<\s", length=length))
        return head + "s?>" + flags[0] + r"(?P<bare>[^<\s]{1,512})</", candidate(word, "s?>", after, flags[1])

    bearer_flags = (r"(?:(?=(?=[a-z0-9._~+/-]*[a-z])(?:[a-z0-9._~+/-]*\d|[a-z0-9._~+/=-]{20}))(?P<good>))?",
                    r"(?=[a-z0-9._~+/-]{16})(?=(?=[a-z0-9._~+/-]{0,63}?[a-z]|[a-z0-9._~+/-]{64})"
                    r"(?:[a-z0-9._~+/-]{0,63}?\d|[a-z0-9._~+/=-]{20}))(?P<good>)")
    cookie_flags = (r"(?:(?=[^\n\"']{0,4079}?=[^\n\"';]{16})(?P<good>))?",
                    r"(?=[^\n\"']{0,63}?=[^\n\"';]{16}|[^\n\"']{64})(?P<good>)")
    curl_flags = _flags(_good(r"\s\"'", length=6, alpha=True, number=True, bound=256), _near(r"\s\"'", length=6))
    prose = (r"(?:\s+(?:for|of|on)\s+[^\s]{1,64})?"
             r"\s+(?:is|was)(?:\s+(?:now|still|currently|just|set\s+to|changed\s+to))?\s+")

    _DETECTORS = [
        _Detector("private_key", None,
                  r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
                  r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:-]*)",
                  [], walk="private_key"),
        specific("aws_access_key", "[A-Za-z0-9]", "(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA)",
                 r"[A-Z0-9]{16}(?![A-Za-z0-9])"),
        _Detector("aws_secret_key", None,
                  r"aws_?secret_?(?:access_?)?key[\"']?\s*(?:[:=]|=>)\s*[\"']?"
                  r"(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
                  [r"aws_?secret_?(?:access_?)?key[\"']?\s*(?:[:=]|=>)\s*[\"']?"
                   r"(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"], target="folded"),
        _Detector("github_token", None,
                  r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{50,})(?![A-Za-z0-9_])",
                  [r"gh(?<![A-Za-z0-9_]gh)[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])",
                   r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{50,}(?![A-Za-z0-9_])"]),
        specific("gitlab_token", "[A-Za-z0-9_-]", "glpat-", r"[A-Za-z0-9_-]{20,}"),
        specific("anthropic_key", "[A-Za-z0-9_-]", "sk-ant-", r"[a-z0-9]{2,10}-[A-Za-z0-9_-]{32,}", share="sk-"),
        # project/service/admin keys are specific by prefix; a plain sk- key must mix letters and
        # digits or carry OpenAI's T3BlbkFJ marker
        specific("openai_key", "[A-Za-z0-9_-]", "sk-", r"(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}", share="sk-"),
        specific("openai_key", "[A-Za-z0-9_-]", "sk-", r"(?!ant-|proj-|svcacct-|admin-)(?P<body>[A-Za-z0-9_-]{20,})",
                 check="openai", share="sk-"),
        _Detector("slack_token", None,
                  r"(?<![A-Za-z0-9])(?:xox[abeoprs]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{20,})",
                  [r"x(?<![A-Za-z0-9]x)(?:ox[abeoprs]-[A-Za-z0-9-]{10,}|app-\d-[A-Za-z0-9-]{20,})"]),
        _Detector("slack_webhook", None, r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/-]{20,}",
                  [r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/-]{20,}"]),
        specific("google_api_key", "[A-Za-z0-9_-]", "AIza", r"[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
        specific("google_oauth_secret", "[A-Za-z0-9_-]", "GOCSPX-", r"[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])"),
        # sk_live_/rk_test_ open on "k_", one character after the shape's start
        _Detector("stripe_key", None,
                  r"(?<![A-Za-z0-9_])(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[A-Za-z0-9]{24,})",
                  [r"k_(?<![A-Za-z0-9_][sr]k_)(?<=[sr]k_)(?:live|test)_[0-9A-Za-z]{16,}",
                   r"whsec_(?<![A-Za-z0-9_]whsec_)[A-Za-z0-9]{24,}"],
                  back=lambda view, m: m.start() - (view[m.start()] == "k")),
        specific("npm_token", "[A-Za-z0-9_]", "npm_", r"[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
        specific("pypi_token", "[A-Za-z0-9_-]", "pypi-AgE", r"[A-Za-z0-9_-]{50,}"),
        specific("huggingface_token", "[A-Za-z0-9_]", "hf_", r"[A-Za-z0-9]{34,}(?![A-Za-z0-9])"),
        specific("sendgrid_key", "[A-Za-z0-9]", r"SG\.", r"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}"),
        specific("twilio_key", "[A-Za-z0-9]", "SK", r"[0-9a-f]{32}(?![A-Za-z0-9])"),
        # the bot id's 8-10 digits come before the ":AA" the fast form opens on
        _Detector("telegram_bot_token", None, r"(?<![A-Za-z0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])",
                  [r":AA(?:(?<=(?<![A-Za-z0-9])\d{8}:AA)|(?<=(?<![A-Za-z0-9])\d{9}:AA)"
                   r"|(?<=(?<![A-Za-z0-9])\d{10}:AA))[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"],
                  back=lambda view, m: m.start() - _decimal_run(view, m.start())),
        _Detector("digitalocean_token", None, r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])",
                  [r"_v1_(?<=(?<![A-Za-z0-9_])do[opr]_v1_)[a-f0-9]{64}(?![A-Za-z0-9])"],
                  back=lambda view, m: m.start() - 3),
        specific("shopify_token", "[A-Za-z0-9_]", "shp", r"(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])"),
        specific("jwt", "[A-Za-z0-9_-]", "eyJ", r"[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
        # base64(user snowflake) . timestamp . HMAC: the first part must decode to the id's 17-20
        # digits (so it opens M[Tjz], N[DTjz] or O[DT]); the fast form opens on the first dot
        # (and needs it, like every detector its literal: its regex is slow to compile)
        _Detector("discord_token", "discord",
                  r"(?P<body>[MNO](?<![A-Za-z0-9_.-][MNO])[TDjz][A-Za-z0-9_-]{20,26})"
                  r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])",
                  [r"\.(?=[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27})(?:"
                   + "|".join(rf"(?<=(?<![A-Za-z0-9_.-])[MNO][TDjz][A-Za-z0-9_-]{{{n}}}\.)" for n in range(20, 27))
                   + r")[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])"],
                  back=lambda view, m: m.start() - _run_back(view, m.start(), _TOKEN_CHARS, 28), precheck=_dots_seven_apart),
        _Detector("discord_webhook", None,
                  r"https://(?:(?:canary|ptb)\.)?discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/"
                  r"\d{17,20}/[A-Za-z0-9_-]{60,80}",
                  [r"https://(?:(?:canary|ptb)\.)?discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/"
                   r"\d{17,20}/[A-Za-z0-9_-]{60,80}"]),
        _Detector("mailgun_key", "mixed", r"key-(?<![A-Za-z0-9_-]key-)(?P<body>[0-9a-z]{32})(?![A-Za-z0-9_-])",
                  [r"key-(?<![A-Za-z0-9_-]key-)(?P<body>[0-9a-z]{32})(?![A-Za-z0-9_-])"]),
        # the fast form opens on "://" and looks back for the 2-25 character scheme
        _Detector("connection_string", "password_url",
                  r"\b[a-z][a-z0-9+.-]{1,24}://[^\s:/@\"']{0,128}:(?P<val>[^\s@/\"']{1,256})@[A-Za-z0-9.\[\]_-]",
                  [r"://(?=[^\s:/@\"']{0,128}:[^\s@/\"']{1,256}@[a-z0-9.\[\]_-])(?:"
                   + "|".join(rf"(?<=\b[a-z][a-z0-9+.-]{{{n}}}://)" for n in range(1, 25))
                   + r")[^\s:/@\"']{0,128}:(?P<val>[^\s@/\"']{1,256})@[A-Za-z0-9.\[\]_-]"],
                  target="folded", walk="url"),
        _Detector("bearer_token", "bearer",
                  r"(?:\bbearer\s+|\bauthorization[\"']?\s*[:=]\s*[\"']?token\s+)(?P<val>[A-Za-z0-9._~+/-]{16,}=*)",
                  [_flagged_pair(f"{literal}(?<!\\w{literal}){rest}", bearer_flags,
                                 r"(?P<val>[A-Za-z0-9._~+/-]{16,}=*)")
                   for literal, rest in (("bearer", r"\s+"), ("authorization", r"[\"']?\s*[:=]\s*[\"']?token\s+"))],
                  target="folded"),
        _Detector("basic_auth", "basic",
                  r"\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+(?P<val>[A-Za-z0-9+/]{8,}={0,2})",
                  [r"authorization(?<!\wauthorization)[\"']?\s*[:=]\s*[\"']?basic\s+(?P<val>[A-Za-z0-9+/]{8,}={0,2})"],
                  target="folded"),
        # one match per Cookie header; _cookie_hits picks the session-like cookies out of it
        # (good: some "=" has 16 characters after it)
        _Detector("session_cookie", "cookie",
                  r"cookie(?<![A-Za-z0-9_]cookie)(?:[\"']?\s*[:=]|(?<=--cookie)\s)\s*[\"']?(?P<val>[^\n\"']{1,4096})",
                  [_flagged_pair(r"cookie(?<![A-Za-z0-9_]cookie)(?:[\"']?\s*[:=]|(?<=--cookie)\s)\s*[\"']?",
                                 cookie_flags, r"(?P<val>[^\n\"']{1,4096})")],
                  target="folded"),
        # curl -u/--user user:password, mysql -pPASSWORD, sshpass -p PASSWORD, redis-cli -a PASSWORD
        _Detector("cli_password", ("password", "curl"),
                  r"-(?<![\w-]-)(?:u|-user)(?:\s+|=)?[\"']?[^\s:\"'@]{1,128}:(?P<bare>[^\s\"']{1,256})",
                  [_flagged_pair(r"-(?<![\w-]-)(?:u|-user)(?:\s+|=)?[\"']?[^\s:\"'@]{1,128}:", curl_flags,
                                 r"(?P<bare>[^\s\"']{1,256})")]),
        _Detector("cli_password", ("password", "mysql"), r"-p(?<![\w-]-p)" + cli_value,
                  [_flagged_pair(r"-p(?<![\w-]-p)", cli_flags, cli_value)]),
        _Detector("cli_password", ("password", "sshpass"), r"-p(?<![\w-]-p)\s*" + cli_value,
                  [_flagged_pair(r"-p(?<![\w-]-p)\s*", cli_flags, cli_value)]),
        _Detector("cli_password", ("password", "redis-cli"), r"-a(?<![\w-]-a)\s+" + cli_value,
                  [_flagged_pair(r"-a(?<![\w-]-a)\s+", cli_flags, cli_value)]),
        # prose: "the password is hunter2abc", "the admin password for staging was ..."
        _Detector("password_assignment", ("password", None),
                  r"p(?<![A-Za-z0-9_]p)(?:assword|asswd|assphrase|wd)" + prose + value,
                  [(fast, candidate.replace(prose, r"(?=\s+[fiow])" + prose, 1)) for fast, candidate in (
                      _flagged_pair(f"{literal}(?<![a-z0-9_]{literal}){tail}{prose}", password_flags, value)
                      for literal, tail in (("pass", "(?:word|wd|phrase)"), ("pwd", "")))],
                  target="folded"),
        _Detector("cli_flag", "assignment",
                  r"(?<![A-Za-z0-9-])--(?P<key>(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret|api-key))"
                  r"(?:=|\s+)" + value,
                  [_flagged_pair(r"--(?<![a-z0-9-]--)(?P<key>(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret"
                                 r"|api-key))(?:=|\s+)", _value_flags(bare, length=6, alpha=False, number_quoted=False),
                                 value)],
                  target="folded"),
        # (its candidates each need a ">" after a credential word's ending, then a value)
        _Detector("xml_element", "assignment",
                  r"<(?P<key>[A-Za-z0-9_.:-]{0,64}?" + cred_key + r")s?>(?P<bare>[^<\s]{1,512})</",
                  by_word("[a-z0-9_.:-]", xml_rest), target="folded", walk="words", words=families,
                  good_kinds=family_kinds,
                  prefilter=">(?:" + "|".join(f"(?<={end}>)|(?<={end}s>)" for end in (
                      "pass", "word", "wd", "phrase", "secret", "base", "token", "key", "credential", "credentials"))
                  + ")" + _near(r"<\s", length=6)),
        _Detector("assignment", "assignment",
                  r"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z0-9_.-]{0,64}?" + cred_key + r")s?[\"']?"
                  r"\s*(?::=|=>|=|:)\s*" + value,
                  by_word("[a-z0-9_.-]", assignment_rest), target="folded", walk="words", words=families,
                  good_kinds=family_kinds),
    ]
    declared = secret_gate.LITERALS
    if [detector.kind for detector in _DETECTORS] != [kind for kind, _, _ in declared]:
        from mindos.errors import IntegrityError  # lazy: only a build that disagrees with its declaration

        _DETECTORS = None
        raise IntegrityError("the secret detectors and their declared literals (secret_gate.LITERALS) disagree")
    for detector, (_, gates, needs) in zip(_DETECTORS, declared):
        detector.take_literals(gates, needs)
    _LITERAL_CHARS = frozenset(char for detector in _DETECTORS
                               for literal in itertools.chain(*detector.needs, *detector.gates, detector.words or ())
                               for char in literal)
    _UNGATED = frozenset(index for index, detector in enumerate(_DETECTORS) if not detector.groups)
    return _DETECTORS


def _has_digit(text):
    return any(c.isdigit() for c in text)


def _has_alpha(text):
    return any(c.isalpha() for c in text)


def _decimal_run(view, end):
    """Length (at most 10) of the run of decimal digits ending at ``end``."""
    length = 0
    while length < 10 and end - length > 0 and view[end - length - 1].isdecimal():
        length += 1
    return length


def _run_back(text, end, chars, limit):
    """Length (at most ``limit``) of the run of ``chars`` ending at ``end``."""
    length = 0
    while length < limit and end - length > 0 and text[end - length - 1] in chars:
        length += 1
    return length


def _value_group(match):
    """The name of the value group (dq, sq or bare) that matched."""
    groups = match.re.groupindex
    for name in ("dq", "sq", "bare"):
        if name in groups and match.start(name) >= 0:
            return name
    raise ValueError("no value group matched")


def _assignment(match, view):
    """Classify a ``key = value`` match: returns (kind, start, end) or None."""
    group = _value_group(match)
    val = _unlabelled(view[match.start(group):match.end(group)])
    key = view[match.start("key"):match.end("key")]
    if _SKIP_KEY().search(key) or _BARE_PASS().search(key):
        return None
    if not val or val.startswith(("/", "~", "./", "../")) or "://" in val or _PLACEHOLDER().match(val):
        return None
    if not _has_digit(val) or val.isdigit():
        return None
    if group == "bare" and _NUMBER().fullmatch(val):
        return None
    kind = "password_assignment" if _PASSWORD_WORD().search(key.replace("-", "_")) else "api_key_assignment"
    if kind == "password_assignment":
        # a lone "pass:" is also prose ("second pass: v2.1.3"): it needs a longer value
        if len(val) < (8 if key.lower() == "pass" else 6):
            return None
    elif len(val) < 8 or not _has_alpha(val):
        return None
    return kind, match.start(group), match.end(group)


def _assignment_memo(match, view, verdicts):
    """:func:`_assignment` through ``verdicts``, ``{(group, key, value): kind or None}`` (a
    text that repeats a key = value pays for its checks once)."""
    group = _value_group(match)
    start, end = match.span(group)
    memo = (group, view[match.start("key"):match.end("key")], view[start:end])
    kind = verdicts.get(memo, False)
    if kind is False:
        found = _assignment(match, view)
        kind = verdicts[memo] = found[0] if found else None
    return (kind, start, end) if kind else None


def _password_value(match, view):
    """The ``(start, end)`` of a password-shaped value group, or None: it must mix in a digit,
    not be a bare number, a path, a URL, a placeholder or an earlier redaction label."""
    group = _value_group(match)
    val = _unlabelled(view[match.start(group):match.end(group)])
    if len(val) < 6 or not _has_digit(val) or not _has_alpha(val) or _NUMBER().fullmatch(val):
        return None
    if val.startswith(("/", "~", "./", "../", "-")) or "://" in val or _PLACEHOLDER().match(val):
        return None
    return match.start(group), match.end(group)


def _runs_command(text, position, command, lines):
    """True when the line holding ``position`` invokes ``command`` before it (cached per line)."""
    start = text.rfind("\n", 0, position) + 1
    if (command, start) not in lines:
        end = text.find("\n", start)
        found = _COMMAND_RES[command]().search(text, start, len(text) if end == -1 else end)
        lines[(command, start)] = found.start() if found else None
    first = lines[(command, start)]
    return first is not None and first < position


def _cookie_hits(match, view):
    """Spans of session-like cookie values (name mentions sess/sid/auth/token/...; the value
    is 16+ characters mixing letters and digits) in one Cookie header match."""
    offset, header = match.start("val"), view[match.start("val"):match.end("val")]
    spans = []
    # each pair of header.split(";") whose name, value and mix could pass (see _COOKIE_PAIR)
    for pair in _COOKIE_PAIR().finditer(";" + _fold(header)):
        first = pair.start()  # where the pair starts in the header
        last = header.find(";", first)
        name, val = header[first:pair.end() - 2], header[pair.end() - 1:len(header) if last < 0 else last]
        raw = val.strip()
        val = _unlabelled(raw)
        if not val or not _SESSION_COOKIE().search(name.strip()) or len(val) < 16:
            continue
        if not (_has_digit(val) and _has_alpha(val)) or _PLACEHOLDER().match(val):
            continue
        start = offset + pair.end() - 1 + (header[pair.end() - 1:].find(raw) if raw else 0)
        spans.append((start, start + len(raw)))
    return spans


def _is_snowflake(body):
    """True when a Discord token's first part is base64 of a 17-20 digit user id."""
    import binascii  # lazy: only a Discord-shaped token is decoded

    try:
        decoded = binascii.a2b_base64(body.replace("-", "+").replace("_", "/") + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.isdigit() and 17 <= len(decoded) <= 20


def _is_basic_credential(val):
    import binascii  # lazy: only an Authorization: Basic value is decoded

    try:
        decoded = binascii.a2b_base64(val + "=" * (-len(val) % 4))
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _bearer_value(val):
    """A bearer token value: mixed letters and digits, or (digit-free tokens exist) at least 20
    characters mixing cases or carrying token punctuation, and no placeholder."""
    if _PLACEHOLDER().match(val):
        return False
    if _has_digit(val) and _has_alpha(val):
        return True
    if len(val) < 20 or not _has_alpha(val):
        return False
    return (val.lower() != val and val.upper() != val) or any(c in val for c in "._~+/") or len(val) >= 32


def _judge(detector, match, view, lines, start=None, verdicts=None):
    """The hits ``(start, end, kind)`` one match of ``detector`` yields once its value check
    has run (values are read from ``view`` at the match's spans).  ``start`` overrides the
    match's start when the fast form opens after the shape's start.  ``verdicts``: a memo of
    the key = value verdicts, which depend on nothing but the key, the value and its quoting."""
    check = detector.check
    if check == "assignment":
        found = _assignment(match, view) if verdicts is None else _assignment_memo(match, view, verdicts)
        return [(found[1], found[2], found[0])] if found else []
    if check == "cookie":
        return [(first, last, detector.kind) for first, last in _cookie_hits(match, view)]
    if isinstance(check, tuple):  # ("password", command or None)
        found = _password_value(match, view)
        if found and (check[1] is None or _runs_command(view, match.start(), check[1], lines)):
            return [(found[0], found[1], detector.kind)]
        return []
    groups = match.re.groupindex
    span = match.span("val") if "val" in groups else (match.start() if start is None else start, match.end())
    if check is None:
        return [(span[0], span[1], detector.kind)]
    if "body" in groups:
        val = view[match.start("body"):match.end("body")]
    elif check == "discord":  # the fast form opens on the dot that ends the body
        val = view[span[0]:match.start()]
    else:
        val = view[span[0]:span[1]]
    if check == "mixed" and not (_has_digit(val) and _has_alpha(val)):
        return []
    if check == "openai" and not ((_has_digit(val) and _has_alpha(val)) or "T3BlbkFJ" in val):
        return []
    if check == "bearer" and not _bearer_value(val):
        return []
    if check == "password_url" and (_PLACEHOLDER().match(val) or val.lower() in
                                    ("password", "pass", "passwd", "pwd", "secret", "token")):
        return []
    if check == "basic" and not _is_basic_credential(val):
        return []
    if check == "discord" and not _is_snowflake(val):
        return []
    return [(span[0], span[1], detector.kind)]


# --- the walks: each yields exactly the hits one finditer pass of the shape yields ------------

_dots_seven_apart = secret_gate.dots_seven_apart  # (the gate applies it too, before this module loads)


def _walk(detector, view, narrow, folded, lines, found, present, verdicts, shared):
    """The hits of ``detector`` in order, from its fast form (``narrow``, ``folded``: the
    narrow copies of the view and of its fold, which the regexes read, see :func:`_narrow`;
    ``found``: the kinds a scan already has, whose candidates it no longer needs, None when
    every hit is wanted; ``present``: which literals the folded text may hold, see
    :class:`_Present`; ``verdicts``: see :func:`_assignment_memo`; ``shared``: the
    occurrences of shared literals, see :func:`_occurrences`)."""
    if detector.walk == "private_key":
        return _private_keys(detector, narrow)
    if detector.walk == "url":
        return _urls(detector, view, folded)
    if detector.flagged:
        return _flagged(detector, view, narrow, folded, lines, found, present, verdicts)
    return _plain(detector, view, narrow, folded, lines, shared)


def _plain(detector, view, narrow, folded, lines, shared):
    target = folded if detector.target == "folded" else narrow
    if detector.precheck is not None and not detector.precheck(target):
        return
    regexes, back = detector.fast(), detector.back
    occurrences = None if detector.share is None else _occurrences(target, detector.share, shared)
    if occurrences is not None:
        matches = _at_occurrences(regexes[0], target, occurrences)
    else:
        matches = regexes[0].finditer(target) if len(regexes) == 1 else _alternatives(regexes, target)
    for match in matches:
        yield from _judge(detector, match, view, lines, back(view, match) if back else None)


# past this many occurrences of a shared literal, each detector runs its own pass (each
# occurrence costs a search and a match per detector, about a pass for 40 of them)
_SHARED = 96


def _occurrences(target, literal, shared):
    """The positions of every occurrence of ``literal`` in ``target`` (overlapping ones too),
    found once per text for all the detectors that open on it (``shared``: the text's
    ``{literal: positions}``); None past _SHARED of them."""
    if literal not in shared:
        found, at = [], target.find(literal)
        while at >= 0 and len(found) <= _SHARED:
            found.append(at)
            at = target.find(literal, at + 1)
        shared[literal] = found if len(found) <= _SHARED else None
    return shared[literal]


def _at_occurrences(regex, target, occurrences):
    """The matches of one finditer pass of ``regex``, which can only match where it opens,
    on a literal at one of ``occurrences``: each the first match at an occurrence at or
    after the end of the one before."""
    position = 0
    for at in occurrences:
        if at >= position:
            match = regex.match(target, at)
            if match is not None:
                yield match
                position = match.end()


def _alternatives(regexes, target):
    """Matches of the alternation of ``regexes`` (one shape's alternatives, each opening on
    its own literal) as one pass of that alternation finds them: leftmost first, each
    search resuming where the previous match ended."""
    heads = _Heads(regexes, target)
    position = 0
    while True:
        match = heads.first(position)[1]
        if match is None:
            return
        yield match
        position = match.end()


_START = re.Match.start


def _in_order(iterators):
    """The matches of several finditer iterators, ordered by start (one regex's lazily: a
    scan may stop early; several are collected and sorted, cheaper than merging them)."""
    heads = []
    for iterator in iterators:
        first = next(iterator, None)
        if first is not None:
            heads.append((first, iterator))
    if len(heads) == 1:
        return itertools.chain((heads[0][0],), heads[0][1])
    matches = [match for first, iterator in heads for match in itertools.chain((first,), iterator)]
    matches.sort(key=_START)
    return matches


class _Heads:
    """The next match, at or after a position, of each of several regexes: searched when
    first asked for, searched again only once the position passes it."""

    __slots__ = ("regexes", "target", "heads")

    def __init__(self, regexes, target):
        self.regexes, self.target, self.heads = regexes, target, [False] * len(regexes)

    def first(self, position):
        """``(index, match)``: the leftmost of those next matches, ``(-1, None)`` when none is left."""
        best, found = -1, None
        for index, head in enumerate(self.heads):
            if head is False or (head is not None and head.start() < position):
                head = self.heads[index] = self.regexes[index].search(self.target, position)
            if head is not None and (found is None or head.start() < found.start()):
                best, found = index, head
        return best, found



def _flagged(detector, view, narrow, folded, lines, found, present, verdicts):
    """The hits of a detector whose fast form carries the good flag.

    The candidate regexes (flag required, cheap) find where a value could pass: text
    without one costs a search per regex and no Python work ("secret: x" a thousand times).
    Each candidate is first judged on its own, as if one pass of the shape reached it; only
    when one of them passes (being reached can only take hits away, never add one), or
    there are too many to judge one by one, is the pass itself followed: every match of the
    fast forms in order, consuming exactly what the shape consumes, judging those whose flag
    is set.  A scan (``found``) leaves out the candidates, and the judging, of a word family
    whose kind it already has, and of a word family whose word the text cannot hold.
    """
    target = folded if detector.target == "folded" else narrow
    prefilter = detector.prefilter()
    if prefilter is not None and prefilter.search(target) is None:  # no candidate anywhere
        return
    words, back = detector.walk == "words", detector.back
    # past this many characters of candidate matches, following the pass is cheaper
    budget = 4096
    wanted = [index for index, kinds in enumerate(detector.good_kinds) if not (found and kinds <= found)
              and (detector.words is None or present[detector.words[index]])]
    for index in wanted:
        candidates = detector.candidates(index)
        candidate = candidates.search(target)
        while candidate is not None:
            match = detector.fast(index).match(target, candidate.start())
            budget -= 64 if match is None else 64 + match.end() - match.start()
            if budget < 0:
                break
            if match is not None and match.start("good") >= 0:
                judged = _confirm(detector, match, view, folded, 0, False, True) if words else (match.end(), match)
                if judged is not None and judged[1] is not None and \
                        _judge(detector, judged[1], view, lines, back(view, match) if back else None, verdicts):
                    break
            candidate = candidates.search(target, candidate.start() + 1)
        else:
            continue
        break  # a candidate passes: follow the pass
    else:
        return
    # (a word family whose word the text cannot hold cannot match at all)
    indexes = [index for index in range(len(detector.good_kinds))
               if detector.words is None or present[detector.words[index]]]
    regexes = [detector.fast(index) for index in indexes]
    kinds = {detector.fast(index): detector.good_kinds[index] for index in indexes}
    position, capped, start = 0, False, 0
    while start is not None:
        matches = _in_order([regex.finditer(target, start) for regex in regexes])
        start = None
        for match in matches:
            begin = match.start()
            if begin < position:  # inside the previous match, which one pass of the shape consumed
                if match.end() > position:  # and its regex went on past that match: look again from there
                    start = position
                    break
                continue
            judge = match.start("good") >= 0 and not (found and kinds[match.re] <= found)
            if words:
                confirmed = _confirm(detector, match, view, folded, position, capped, judge)
                if confirmed is None:  # not a match of the shape: look again just after its word
                    start = begin + 1
                    break
                position, judged = confirmed
                capped = "cap" in match.re.groupindex and match.start("cap") >= 0
            else:
                position, judged = match.end(), match
            if judge and judged is not None:
                hits = _judge(detector, judged, view, lines, back(view, match) if back else None, verdicts)
                if hits:
                    yield from hits
                    if found:  # a scan: stop once no candidate of a kind it still lacks is left
                        candidates = _Heads([detector.candidates(index) for index in wanted
                                             if not detector.good_kinds[index] <= found], target)
                        if candidates.first(position)[1] is None:
                            return


def _confirm(detector, match, view, folded, position, capped, judge):
    """A credential-word match of a generic key shape, checked against the shape itself:
    ``(end, match to judge)``, or None when the shape does not match there.

    The word regex matches wherever the shape does (the shape starts at the key, before the
    word) and ends where it ends.  It is checked from the key's start when its value is to be
    judged (``judge``), when the key runs on long enough that the shape's 64-character prefix
    may not reach the word (``long``) or when the key may start inside the previous match
    (``capped``), and the shape itself is matched there when something is to be read from it.
    An XML match is only confirmed when judged: no "<" inside one opens another element, so
    consuming it unconfirmed hides nothing.
    """
    word = match.start()
    if detector.kind == "xml_element":
        if judge:
            key = word - _run_back(folded, word, _XML_KEY_CHARS, 78)
            if key > position and folded[key - 1] == "<":
                shaped = detector.shape_regex().match(view, key - 1)
                if shaped is not None:
                    return shaped.end(), shaped
        return match.end(), None
    if not (judge or match.start("long") >= 0 or (capped and word - position <= 64)):
        return match.end(), match
    key = word - _run_back(folded, word, _KEY_CHARS, 78)
    if key < position or (key and folded[key - 1] in _KEY_CHARS):
        return None
    if not judge and match.start("long") < 0:  # the shape matches from the key: nothing to read from it
        return match.end(), match
    shaped = detector.shape_regex().match(view, key)
    return None if shaped is None else (shaped.end(), shaped)


def _urls(detector, view, folded):
    """connection_string: the fast form checks the scheme behind "://" but not that it starts
    after the previous match, which only a scheme right behind that match can break."""
    position = 0
    for match in detector.fast()[0].finditer(folded):
        colon = match.start()
        if colon - 26 < position and not _scheme_from(folded, colon, position):
            continue
        yield from _judge(detector, match, view, None)
        position = match.end()


def _scheme_from(folded, colon, lowest):
    """True when a scheme the shape accepts (a letter at a word start, then 1-24 scheme
    characters) ends at ``colon`` and starts at or after ``lowest``."""
    for first in range(max(lowest, colon - 25), colon - 1):
        word_start = first == 0 or not (folded[first - 1].isalnum() or folded[first - 1] == "_")
        if "a" <= folded[first] <= "z" and word_start and all(c in _SCHEME_CHARS for c in folded[first:colon]):
            return True
    return False


def _private_keys(detector, view):
    """private_key: a header, then through the first END line after it, else the base64 body."""
    header, footer, body = (part() for part in _PRIVATE_KEY)
    position, no_footer_from = 0, None
    while True:
        found = header.search(view, position)
        if found is None:
            return
        end = None
        if no_footer_from is None or found.end() < no_footer_from:
            closing = footer.search(view, found.end())
            if closing is None:
                no_footer_from = found.end()  # no END line after here, so none after any later header
            else:
                end = closing.end()
        if end is None:
            end = body.match(view, found.end()).end()
        yield found.start(), end, detector.kind
        position = end


# --- the views -------------------------------------------------------------------------------

# Unicode format characters (category Cf: zero-width space and joiners, word joiner, soft
# hyphen, bidi controls, BOM, tag characters, ...) and every other Default_Ignorable_Code_Point
# (variation selectors, the combining grapheme joiner, Hangul fillers, Mongolian free
# variation selectors, the unassigned ignorable ranges): invisible, so detection removes them
_FORMAT = _Lazy("[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
                "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
                "\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
                "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")
# the default-ignorable code points that str.isprintable() accepts (combining marks and
# Hangul fillers): a text can be printable and still hold one of these (see _printable)
_VISIBLE_IGNORABLE = _Lazy("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u3164\ufe00-\ufe0f\uffa0"
                           "\U000e0100-\U000e01ef]")
# the runs of non-ASCII characters (what _view_map maps character by character)
_NON_ASCII = _Lazy(r"[^\x00-\x7f]+")
_ASCII_BYTES = bytes(range(128))
# The characters of canonical combining class 0 that still combine with the character
# before them under NFKC (the second half of a canonical pair: some Indic vowel signs and
# length marks, Hangul medial vowels and final consonants); tests check the list against
# unicodedata.
_SECOND = frozenset("\u09be\u09d7\u0b3e\u0b56\u0b57\u0bbe\u0bd7\u0cc2\u0cd5\u0cd6\u0d3e\u0d57\u0dcf\u0ddf"
                    "\u0fb5\u0fb7\u102e\u1b35\U00011127\U0001133e\U00011357\U000114b0\U000114ba\U000114bd"
                    "\U000115af\U00011930") | set(map(chr, range(0x1161, 0x1176))) \
    | set(map(chr, range(0x11a8, 0x11c3)))
_CHAR_KIND = {}


def _non_ascii(text):
    """The non-ASCII characters of ``text``, in order."""
    # UTF-8 keeps non-ASCII characters out of ASCII bytes: dropping those leaves exactly the
    # encodings of the non-ASCII characters, at memory speed
    return text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")


def _char_kind(char):
    """``(format, combines)`` for a non-ASCII character: a format character (the view drops
    it); one whose NFKC form can combine with or reorder against the character before it
    (its decomposition opens on a combining mark or a second half of a canonical pair)."""
    kind = _CHAR_KIND.get(char)
    if kind is None:
        import unicodedata  # lazy: only non-ASCII text is normalized

        if len(_CHAR_KIND) > 4096:
            _CHAR_KIND.clear()
        first = unicodedata.normalize("NFKD", char)[0]
        kind = _CHAR_KIND[char] = (_FORMAT().match(char) is not None,
                                   unicodedata.combining(first) != 0 or first in _SECOND)
    return kind


def _printable(text):
    """True when ``text`` holds no format character, judged at memory speed: every format
    character but the few of _VISIBLE_IGNORABLE is unprintable, so printable text (line
    breaks and tabs aside) without those holds none.  False means maybe (other unprintable
    characters fail it too)."""
    return (text.replace("\n", " ").replace("\t", " ").replace("\r", " ").isprintable()
            and _VISIBLE_IGNORABLE().search(text) is None)


def _without_format(text, chars=None):
    """``text`` with its format characters removed (``chars``: its distinct non-ASCII ones)."""
    if chars is None:
        if _printable(text):
            return text
        chars = set(_non_ascii(text))
    for char in chars:
        if _char_kind(char)[0]:
            text = text.replace(char, "")
    return text


def _view(text):
    """The text detection reads: each character NFKC-normalized on its own, format characters
    removed, so a key split by U+200B or written in fullwidth letters is still the key.

    Equal to ``_view_map(text)[0]``, computed without a Python loop over the characters
    where that is exact: ASCII is its own view; text that is not mostly non-ASCII and holds
    few distinct non-ASCII characters has each of those that changes replaced by its view
    (:func:`_replaced`); normalized text only loses its format characters; and other text
    is normalized as a whole (or, when it is mostly ASCII, by pieces) unless one of its
    characters can combine with the one before it: only then does that differ from
    normalizing one character at a time.
    """
    return _view_wide(text)[0]


def _view_wide(text):
    """``(view, wide)``: the view of :func:`_view`, and ``{char: occurrences}`` of its
    characters above U+00FF when they are known on the way (else None)."""
    if text.isascii():
        return text, {}
    others = _non_ascii(text)
    if len(others) * 2 <= len(text):
        counts = _distinct(others, _DISTINCT)
        if counts is not None:
            # the view's characters are those of its characters' views
            wide = {}
            for char, count in counts.items():
                for mapped in _CHAR_VIEW[char]:
                    if mapped > "\xff":
                        wide[mapped] = wide.get(mapped, 0) + count
            return _replaced(text, counts), wide
    return _view_normalized(text, others), None


def _view_normalized(text, others):
    """The view of a text that :func:`_replaced` does not handle (``others``: its non-ASCII characters)."""
    import unicodedata  # lazy: only non-ASCII text is normalized

    if unicodedata.is_normalized("NFKC", text):  # each character is its own NFKC form
        return _without_format(text)
    dense = len(others) * 8 > len(text)
    if dense:
        whole = unicodedata.normalize("NFKC", text)
        if whole.isascii():  # no mark, jamo or format character survived: none was there
            return whole
    chars = set(others)
    # a Hangul filler (U+3164, U+FFA0) normalizes into another ignorable one (U+1160)
    chars.update(mapped for char in tuple(chars) if _char_kind(char)[0]
                 for mapped in unicodedata.normalize("NFKC", char))
    if any(_char_kind(char)[1] for char in chars):
        return _view_map(text)[0]
    if not dense:  # mostly ASCII: normalize only the 256-character pieces that are not
        whole = "".join(piece if piece.isascii() else unicodedata.normalize("NFKC", piece)
                        for piece in (text[at:at + 256] for at in range(0, len(text), 256)))
    return _without_format(whole, chars)


# the view replaces characters one by one up to this many distinct non-ASCII ones (each
# replacement is a pass over the text), and splices in a character that changes length by
# its positions, all in one copy, up to this many occurrences of it (str.replace costs a
# pass and a copy for each; it is fast only one character for one)
_DISTINCT = 64
_SPLICE = 48


def _distinct(others, limit=None):
    """``{char: count}`` for the characters of ``others``; None past ``limit`` distinct ones."""
    if len(others) <= 1024:  # set() costs a Python object per character: fine for few
        chars = set(others)
        if limit is not None and len(chars) > limit:
            return None
        return {char: others.count(char) for char in chars}
    counts = {}
    while others:  # a pass over a shrinking string per character instead
        if len(counts) == limit:
            return None
        char, before = others[0], len(others)
        others = others.replace(char, "")
        counts[char] = before - len(others)
    return counts


def _positions(text, char, count):
    """The positions of the ``count`` occurrences of ``char`` in ``text``, in order."""
    found, at = [], -1
    for _ in range(count):
        at = text.find(char, at + 1)
        found.append(at)
    return found


def _replaced(text, counts):
    """``text`` with each of its non-ASCII characters (``counts``: ``{char: occurrences}``)
    replaced by its view (:class:`_CharView`): the view itself, since no character's view
    holds a character whose own view differs (tests check), so the order of replacement
    does not matter.  Returns ``text`` itself when nothing changes."""
    spliced, replaced = [], []
    for char, count in counts.items():
        mapped = _CHAR_VIEW[char]
        if mapped == char:
            continue
        if len(mapped) == 1 or count > _SPLICE:
            replaced.append((char, mapped))
        else:
            spliced.extend((at, mapped) for at in _positions(text, char, count))
    text = _spliced(text, spliced)
    for char, mapped in replaced:
        text = text.replace(char, mapped)
    return text


def _spliced(text, spliced):
    """``text`` with the character at each position of ``spliced`` (``[(at, piece)]``) replaced by its piece."""
    if not spliced:
        return text
    spliced.sort()
    pieces, cursor = [], 0
    for at, piece in spliced:
        pieces.append(text[cursor:at])
        pieces.append(piece)
        cursor = at + 1
    pieces.append(text[cursor:])
    return "".join(pieces)


class _CharView(dict):
    """Each non-ASCII character's view (NFKC on its own, or "" for a format character), cached
    (at most about 4096 characters: past that the cache starts over)."""

    def __missing__(self, char):
        import unicodedata  # lazy: only non-ASCII text is normalized

        if len(self) > 4096:
            self.clear()
        mapped = self[char] = "" if _FORMAT().match(char) else unicodedata.normalize("NFKC", char)
        return mapped


_CHAR_VIEW = _CharView()


def _one_for_one(text, cursor, start, out, pieces, segments):
    """Carry ``text[cursor:start]`` (no escapes in it) into a decoded view as it is, one
    segment mapping it back; return the view's new length."""
    if start > cursor:
        pieces.append(text[cursor:start])
        segments.append((out, cursor, start - cursor, start - cursor))
        out += start - cursor
    return out


def _view_map(text):
    """``(view, segments)``: the view of :func:`_view`, and None when it is the text itself
    (always for ASCII), else ``[(view_start, text_start, text_len, view_len)]`` mapping view
    positions back to the text, so redaction replaces the original characters."""
    if text.isascii():
        return text, None
    pieces, segments, cursor, out = [], [], 0, 0
    for run in _NON_ASCII().finditer(text):
        out = _one_for_one(text, cursor, run.start(), out, pieces, segments)
        mapped = list(map(_CHAR_VIEW.__getitem__, run.group()))
        if list(map(len, mapped)).count(1) == len(mapped):  # one for one: a single segment maps it
            pieces.extend(mapped)
            segments.append((out, run.start(), len(mapped), len(mapped)))
            out += len(mapped)
        else:
            for offset, piece in enumerate(mapped):
                if piece:
                    pieces.append(piece)
                    segments.append((out, run.start() + offset, 1, len(piece)))
                    out += len(piece)
        cursor = run.end()
    if cursor < len(text):
        pieces.append(text[cursor:])
        segments.append((out, cursor, len(text) - cursor, len(text) - cursor))
    view = "".join(pieces)
    return view, (None if view == text else segments)


def _segments(text):
    """The segments of ``_view_map(text)``, or None when the view maps one for one onto the
    text (then a view span is the same text span); for non-ASCII text only.

    Computed from the positions of the characters whose view is not one character (format
    characters, expansions such as the ellipsis): everything between them maps one for one.
    Redaction asks for it only when it has something to replace.
    """
    counts = _distinct(_non_ascii(text), _DISTINCT)
    if counts is None:  # many distinct characters: the character-by-character definition
        return _view_map(text)[1]
    moved = [char for char in counts if len(_CHAR_VIEW[char]) != 1]
    if not moved:
        return None
    segments, cursor, out = [], 0, 0
    for at in sorted(at for char in moved for at in _positions(text, char, counts[char])):
        if at > cursor:
            segments.append((out, cursor, at - cursor, at - cursor))
            out += at - cursor
        length = len(_CHAR_VIEW[text[at]])
        if length:
            segments.append((out, at, 1, length))
            out += length
        cursor = at + 1
    if cursor < len(text):
        segments.append((out, cursor, len(text) - cursor, len(text) - cursor))
    return segments


# what (?i) folds to an ASCII letter from above U+007F, and to which letter (see _fold)
_FOLDED = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}


def _fold(view):
    """``view`` with its letters folded one character for one, so that a lowercase regex run
    on it matches exactly where the same regex with ``(?i)`` matches on the view.

    The only characters that ``(?i)`` matches to ASCII letters are the ASCII capitals and
    four others (dotted and dotless I, long s, the Kelvin sign); every other character is
    left as it is (case-insensitive ASCII patterns cannot tell its case).  UTF-8 keeps
    non-ASCII characters away from ASCII bytes, so lowering the encoded bytes lowers ASCII
    alone, and three times faster than str.lower() on such text.
    """
    if view.isascii():
        return view.lower()
    folded = view.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")
    for char, letter in _FOLDED.items():
        if char in folded:
            folded = folded.replace(char, letter)
    return folded


# The narrow copy (:func:`_narrow`): a Latin-1 stand-in, past ASCII, for each character above
# U+00FF, by all that a fast regex can tell of such a character (their literals and ranges
# are ASCII): whether \s, \d and \w match it.  (No stand-in is a decimal digit.)
_STAND_INS = {(True, False, False): "\x85", (False, False, True): "\xaa", (False, False, False): "\xa7"}
_FOLDED_WIDE = frozenset(_FOLDED)  # all four lie above U+00FF
# stand-ins for "?" while the encoder's replacement marks the bulk of the wide characters
_MARKERS = "\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11"
# past this many str.replace passes (each a character with more than _SPLICE occurrences),
# the encoder puts in the commonest stand-in; past as many more, the wide text is read as it is
_NARROW_PASSES = 4


def _signature(char):
    """What a fast regex can tell of a character above U+00FF: whether \\s, \\d and \\w match it."""
    return char.isspace(), char.isdecimal(), char.isalnum()


def _wide(text):
    """``{char: occurrences}`` of the characters above U+00FF in non-ASCII ``text``; None past
    _DISTINCT distinct non-ASCII characters."""
    counts = _distinct(_non_ascii(text), _DISTINCT)
    return None if counts is None else {char: count for char, count in counts.items() if char > "\xff"}


def _narrow(text, wide=None):
    """``text`` as the fast regexes read it: each character above U+00FF replaced by its
    stand-in (:data:`_STAND_INS`), one character for one, so that the copy holds one byte
    per character and each regex pass over it runs about twice as fast; ``text`` itself when
    it has no such character, or one with no stand-in (a decimal digit), or too many
    distinct ones.  ``wide``: ``{char: occurrences}`` of those characters, when known.

    Each character goes in by its positions or, past _SPLICE occurrences, by str.replace;
    past _NARROW_PASSES of those, the stand-in of the most occurrences goes in by the
    Latin-1 encoder's "?" instead (one pass, a "?" of the text kept aside under a control
    character the text does not hold).
    """
    if text.isascii():
        return text
    if wide is None:
        wide = _wide(text)
    if not wide:
        return text
    stand_ins, totals = {}, {}
    for char, count in wide.items():
        stand_in = stand_ins[char] = _STAND_INS.get(_signature(char))
        if stand_in is None:
            return text
        totals[stand_in] = totals.get(stand_in, 0) + count
    # (str.replace returns a one-byte string once the last character above U+00FF is gone)
    if sum(count > _SPLICE for count in wide.values()) <= _NARROW_PASSES:
        bulk, rest = None, list(wide.items())
    else:
        bulk = max(totals, key=totals.get)
        rest = [(char, count) for char, count in wide.items() if stand_ins[char] != bulk]
        if sum(count > _SPLICE for _, count in rest) > _NARROW_PASSES:
            return text
    narrow = _spliced(text, [(at, stand_ins[char]) for char, count in rest if count <= _SPLICE
                             for at in _positions(text, char, count)])
    for char, count in rest:
        if count > _SPLICE:
            narrow = narrow.replace(char, stand_ins[char])
    if bulk is None:
        return narrow
    marker = None
    if "?" in narrow:
        marker = next((char for char in _MARKERS if char not in narrow), None)
        if marker is None:
            return text
        narrow = narrow.replace("?", marker)
    narrow = narrow.encode("latin-1", "replace").decode("latin-1").replace("?", bulk)
    return narrow if marker is None else narrow.replace(marker, "?")


def _narrow_pair(view, wide=None):
    """``(narrow, folded)``: :func:`_narrow` of the view and of its fold (:func:`_fold`)."""
    if not view.isascii() and wide is None:
        wide = _wide(view)
    if view.isascii() or wide is None:
        return view, _fold(view)
    narrow = _narrow(view, wide)
    if narrow is view:
        return view, _fold(view)
    if _FOLDED_WIDE.isdisjoint(wide):  # the fold changes only ASCII: it commutes with the stand-ins
        # (and on Latin-1 it is bytes.lower() of the Latin-1 bytes, ASCII alone, as in _fold)
        return narrow, narrow.encode("latin-1").lower().decode("latin-1")
    return narrow, _narrow(_fold(view), {char: count for char, count in wide.items() if char not in _FOLDED_WIDE})


def _to_text(segments, starts, start, end):
    """Map a view span back to a span of the original text (``starts``: each segment's view start)."""
    first = segments[bisect.bisect_right(starts, start) - 1]
    last = segments[bisect.bisect_right(starts, end - 1) - 1]
    if first[2] == first[3]:  # an unchanged run maps one to one
        start = first[1] + (start - first[0])
    else:
        start = first[1]
    if last[2] == last[3]:
        end = last[1] + (end - last[0])
    else:
        end = last[1] + last[2]
    return start, end


# --- findings ----------------------------------------------------------------------------------

# texts up to this long check their detectors' ``needs`` (a substring search is cheap there)
_SHORT = secret_gate.SHORT


class _Present(dict):
    """Whether the folded text may hold a literal, shared by the detectors gated on it: one
    substring search per literal and text (``exact``), or else only whether it holds each of
    the literal's characters, a necessary condition that a single-character search, at
    memory speed, decides (a substring search costs as much as a detector's own pass)."""

    __slots__ = ("text", "exact", "absent")

    def __init__(self, text, exact, absent=None):
        super().__init__()
        self.text, self.exact = text, exact
        # (a character outside _LITERAL_CHARS counts as held: the check only weakens)
        self.absent = frozenset(char for char in _LITERAL_CHARS if char not in text) if absent is None else absent

    def __missing__(self, literal):
        found = self[literal] = self.absent.isdisjoint(literal) and (not self.exact or literal in self.text)
        return found


def _findings(view, *, first=False, reference=False, wide=None, known=()):
    """Every detector hit in ``view`` as ``(start, end, kind)``, unresolved (overlaps
    included), in detector order.  ``first``: stop each detector at its first hit (all
    :func:`scan` needs).  ``reference``: run each shape plainly over the view (the slow
    definition the fast forms must agree with).  ``wide``: see :func:`_narrow`.  ``known``:
    kinds a ``first`` scan already holds (their detectors are skipped)."""
    hits = []
    if not view:
        return hits
    detectors = _detectors()
    # the fast regexes read the narrow copies (the same positions); values are read from the view
    narrow, folded = (view, None) if reference else _narrow_pair(view, wide)
    labelled, labels, label_starts = "[REDACTED:" in view, None, None
    lines, found, verdicts, shared = {}, set(known), {}, {}
    short = not reference and len(folded) <= _SHORT
    # gates hold exactly; a long text checks its needs (and its word families) by characters
    present = None if reference else _Present(folded, True)
    possible = present if reference or short else _Present(folded, False, present.absent)
    # a short text holds its literals exactly: one pass finds them all, and each detector's
    # gates and needs are then a few set operations
    held = frozenset(literal for literal in _LITERALS if literal in folded) if short else None
    if held is not None:  # only the detectors one of its literals opens can pass, in detector order
        opened = set(_UNGATED)
        for literal in held:
            opened.update(_OPENED_BY[literal])
        detectors = [detectors[index] for index in sorted(opened)]
    for detector in detectors:
        if first and detector.kinds <= found:
            continue
        if held is not None:
            if any(group.isdisjoint(held) for group in detector.groups):
                continue
            produced = _walk(detector, view, narrow, folded, lines, found if first else None, possible, verdicts,
                             shared)
        elif reference:
            produced = (hit for match in detector.shape_regex().finditer(view)
                        for hit in _judge(detector, match, view, lines))
        elif detector.gates and not all(any(present[literal] for literal in group) for group in detector.gates):
            continue
        elif detector.needs and not all(any(possible[literal] for literal in group) for group in detector.needs):
            continue
        else:
            produced = _walk(detector, view, narrow, folded, lines, found if first else None, possible, verdicts,
                             shared)
        for hit in produced:
            if labelled:  # inside an earlier [REDACTED:<kind>] label: already redacted
                if labels is None:  # (read only once there is a hit to hold against them)
                    labels = [match.span() for match in _label().finditer(narrow)]
                    label_starts = [span[0] for span in labels]
                index = bisect.bisect_right(label_starts, hit[0]) - 1
                if index >= 0 and hit[1] <= labels[index][1]:
                    continue
            hits.append(hit)
            if first:
                found.add(hit[2])
                if detector.kinds <= found:
                    break
    return hits


texts = secret_gate.texts  # the strings of a field value (a str, or the strings of a list)


def url_userinfo(text):
    """True when ``text`` holds a URL with userinfo (``https://user:token@host``, or a bare
    ``https://token@host``): in a field that is only ever a link, that is a credential."""
    if "://" not in text or "@" not in text:
        return False
    return re.search(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@]+@", text) is not None


def scan(text):
    """Return the sorted unique finding kinds in ``text`` (never the values); reads the
    normalized view (:func:`_view`), and the view of the percent-decoded text around each
    run of escapes (:func:`_percent_windows`): ``https%3A%2F%2Fuser%3Apw@host`` is the URL it
    encodes."""
    if secret_gate.clean(text):  # (plain text: decided from the literals, see mindos.core.secret_gate)
        return []
    view, wide = _view_wide(text)
    kinds = {kind for _, _, kind in _findings(view, first=True, wide=wide)}
    decoded = text
    for _ in range(_PERCENT_ROUNDS):
        decoded = _percent_windows(decoded)
        if decoded is None:
            break
        view, wide = _view_wide(decoded)
        kinds.update(kind for _, _, kind in _findings(view, first=True, wide=wide, known=kinds))
    return sorted(kinds)


def redact(text):
    """Return ``(redacted_text, kinds)``; see :func:`_redact`."""
    return _redact(text)


# a run of percent escapes; a text is decoded this many times over (a doubly encoded URL,
# %253A, is still the URL it encodes)
_PERCENT = _Lazy(r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*")  # (opening on its literal: the engine skips ahead)
_PERCENT_ROUNDS = 3


def _unescaped(run):
    """A run of percent escapes decoded as UTF-8 (an invalid byte becomes U+FFFD)."""
    return bytes.fromhex(run.replace("%", "")).decode("utf-8", "replace")


def _percent_decoded(text):
    """``text`` with every run of percent escapes decoded, or None when it holds none."""
    if "%" not in text:
        return None
    decoded = _PERCENT().sub(lambda run: _unescaped(run.group()), text)
    return None if decoded == text else decoded


# what a scan decodes around each run of escapes: the whitespace-delimited words it touches
# and this many characters on either side (a key before a percent-encoded value)
_PERCENT_CONTEXT = 256


def _percent_windows(text):
    """The decoded text around each run of percent escapes (a window per run, overlapping
    windows merged, cut at whitespace, joined by blank lines), or None when there is none:
    what :func:`scan` reads, so a long text with a few escapes is not scanned twice over."""
    if "%" not in text:
        return None
    windows = []
    for run in _PERCENT().finditer(text):
        start, end = max(0, run.start() - _PERCENT_CONTEXT), min(len(text), run.end() + _PERCENT_CONTEXT)
        if windows and start <= windows[-1][1]:
            windows[-1][1] = end
        else:
            windows.append([start, end])
    if not windows:
        return None
    pieces = []
    for start, end in windows:
        if start:  # widen to whole words: a cut word could read as another shape
            start = max(text.rfind(" ", 0, start), text.rfind("\n", 0, start), text.rfind("\t", 0, start)) + 1
        cut = min((at for at in (text.find(" ", end), text.find("\n", end), text.find("\t", end)) if at >= 0),
                  default=len(text))
        pieces.append(_PERCENT().sub(lambda run: _unescaped(run.group()), text[start:cut]))
    return "\n\n".join(pieces)


def _percent_segments(text):
    """``(decoded, segments)`` for :func:`_to_text`: each run of escapes one segment, the text
    between them one for one (the percent twin of :func:`_segments`)."""
    pieces, segments, cursor, out = [], [], 0, 0
    for run in _PERCENT().finditer(text):
        out = _one_for_one(text, cursor, run.start(), out, pieces, segments)
        piece = _unescaped(run.group())
        pieces.append(piece)
        segments.append((out, run.start(), run.end() - run.start(), len(piece)))
        out += len(piece)
        cursor = run.end()
    if cursor < len(text):
        pieces.append(text[cursor:])
        segments.append((out, cursor, len(text) - cursor, len(text) - cursor))
    return "".join(pieces), segments


def _spans(text):
    """``(spans, kinds)``: the text spans to replace, overlaps merged and labelled with the most
    specific kind, and every kind found."""
    view, wide = _view_wide(text)
    hits = _findings(view, wide=wide)
    if not hits:
        return [], set()
    # findings hold view positions: map them back only now that there is something to replace
    segments = None if view is text else _segments(text)
    if segments is not None:
        starts = [segment[0] for segment in segments]
        hits = [(*_to_text(segments, starts, start, end), kind) for start, end, kind in hits]
    return _merged(hits), {kind for _, _, kind in hits}


def _merged(hits):
    """Overlapping ``(start, end, kind)`` hits merged, each keeping its most specific kind."""
    hits.sort(key=lambda h: (h[0], h[2] in _GENERIC, -h[1]))
    spans = []
    for start, end, kind in hits:
        if spans and start < spans[-1][1]:
            last = spans[-1]
            if end > last[1]:
                spans[-1] = (last[0], end, last[2])
            continue
        spans.append((start, end, kind))
    return spans


# the shortest a redaction leaves a text that had anything to redact: one label of a
# one-character kind (every span becomes a label, the rest of the text stays)
SHORTEST_LABEL = secret_gate.SHORTEST_LABEL


def _replace_spans(text, spans):
    pieces, cursor = [], 0
    for start, end, kind in spans:
        pieces.append(text[cursor:start])
        pieces.append(f"[REDACTED:{kind}]")
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _redact(text):
    """Return ``(redacted_text, kinds)``: every finding replaced by ``[REDACTED:<kind>]``.

    Overlapping findings collapse into one replacement labelled with the most specific kind.
    Findings come from the normalized view and replace the original characters they cover
    (:func:`_segments` maps them back); a finding of the percent-decoded text replaces the
    escapes that encode it (:func:`_percent_segments`).
    """
    if not text:
        return text, []
    spans, kinds = _spans(text)
    if spans:
        text = _replace_spans(text, spans)
    for _ in range(_PERCENT_ROUNDS):  # the shallowest decoded form with a finding, replaced in the text
        layers, decoded = [], text
        while len(layers) < _PERCENT_ROUNDS and _percent_decoded(decoded) is not None:
            decoded, segments = _percent_segments(decoded)
            layers.append(segments)
            spans, found = _spans(decoded)
            if spans:
                break
        else:
            break
        for segments in reversed(layers):  # each layer's spans back to the one it decodes
            starts = [segment[0] for segment in segments]
            spans = _merged([(*_to_text(segments, starts, start, end), kind) for start, end, kind in spans])
        text = _replace_spans(text, spans)
        kinds |= found
    return text, sorted(kinds)
