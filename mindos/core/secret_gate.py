"""The secret detector's front gate: which texts surely hold no finding, decided without it.

Every call that stores or packs text scans it (:mod:`mindos.core.secrets`), and nearly all of
that text is plain: a title, a note, a date.  Loading the detector and building its detectors
costs a process about 7.6M instructions (see bench/NOTES.md), more than the rest of a write.
This module answers the common case from the detectors' literals alone, so a clean text
never loads the detector at all.

What it decides is exactly what the detector's own first step decides for a short text
(:func:`mindos.core.secrets._findings`): a detector can report only when the folded text
holds a literal of each of its groups (``gates`` and ``needs``), and a text in which no
detector passes that has no finding.  The gate reads the same view the detector reads only
where that is the text itself: ASCII (its own view; its fold is ``lower()``), without a
percent sign (no escapes to decode), at most ``SHORT`` characters (where the detector
checks its literals exactly).  Any other text goes to the detector.

Two detectors open on literals common in prose, so the gate also applies the necessary
condition of their fast form: ``discord_token`` needs two dots seven characters apart (the
detector's own precheck, :func:`dots_seven_apart`), and ``twilio_key``, whose case-sensitive
regex opens on ``SK``, needs that spelling (its folded literal ``sk`` is in "task").

``LITERALS`` is the one declaration of the detectors' literals: the detector builds its gates
and needs from it (and refuses to build when the two disagree), so they cannot drift apart.
"""

SHORTEST_LABEL = len("[REDACTED:x]")  # the shortest redaction label (see secrets.redact)
SHORT = 4096  # the longest text whose literals the detector checks exactly (secrets._SHORT)

_HTTPS = ("https://",)
# the word families of the generic key = value shapes (the detector's word walk reads them)
FAMILIES = ("pass", "pwd", "secret", "token", "key", "credential")
# THE declaration of every detector's literals, in detector order: ``(kind, gates, needs)``,
# each a tuple of literal groups (lowercase, as the folded text holds them).  The detector
# (mindos.core.secrets._detectors) takes its gates and needs from here and refuses to build
# when its detectors and these rows disagree in number or kind, so a literal lives here only.
# ``gates`` are checked exactly in any text; ``needs`` exactly in a short one and by their
# characters in a long one (see secrets._Present).
LITERALS = (
    ("private_key", (), (("-----begin",),)),
    ("aws_access_key", (), (("akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa"),)),
    ("aws_secret_key", (), (("aws",),)),
    ("github_token", (), (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),)),
    ("gitlab_token", (), (("glpat-",),)),
    ("anthropic_key", (), (("sk-ant-",),)),
    ("openai_key", (), (("sk-",),)),  # (prefixed project, service and admin keys)
    ("openai_key", (), (("sk-",),)),
    ("slack_token", (), (("xox", "xapp-"),)),
    ("slack_webhook", (), (_HTTPS,)),
    ("google_api_key", (), (("aiza",),)),
    ("google_oauth_secret", (), (("gocspx-",),)),
    ("stripe_key", (), (("sk_", "rk_", "whsec_"),)),
    ("npm_token", (), (("npm_",),)),
    ("pypi_token", (), (("pypi-age",),)),
    ("huggingface_token", (), (("hf_",),)),
    ("sendgrid_key", (), (("sg.",),)),
    ("twilio_key", (), (("sk",),)),
    ("telegram_bot_token", (), ((":aa",),)),
    ("digitalocean_token", (), (("_v1_",),)),
    ("shopify_token", (), (("shp",),)),
    ("jwt", (), (("eyj",),)),
    ("discord_token", (), ((".",),)),
    ("discord_webhook", (), (_HTTPS, ("discord",))),
    ("mailgun_key", (), (("key-",),)),
    ("connection_string", (), (("://",),)),
    ("bearer_token", (), (("bearer", "authorization"),)),
    ("basic_auth", (), (("authorization",),)),
    ("session_cookie", (), (("cookie",),)),
    ("cli_password", (("curl",),), ()),  # (a command-line password counts only on its tool's line)
    ("cli_password", (("mysql", "mariadb"),), ()),
    ("cli_password", (("sshpass",),), ()),
    ("cli_password", (("redis-cli",),), ()),
    ("password_assignment", (), (("pass", "pwd"),)),
    ("cli_flag", (("--",), ("pass", "token", "secret", "api-key")), ()),
    ("xml_element", (("</",),), (FAMILIES,)),
    ("assignment", (), ((":", "="), FAMILIES)),
)
# each detector's literal groups (its gates, then its needs), in detector order
GROUPS = tuple(gates + needs for _, gates, needs in LITERALS)
_KINDS = tuple(kind for kind, _, _ in LITERALS)
_TWILIO, _DISCORD = _KINDS.index("twilio_key"), _KINDS.index("discord_token")


def dots_seven_apart(text):
    """Whether ``text`` has two dots seven characters apart (``.xxxxxx.``): what a Discord
    token's fast form opens on, found without compiling it (most prose has dots, few so)."""
    at = text.find(".")
    while at != -1:
        if text[at + 7:at + 8] == ".":
            return True
        at = text.find(".", at + 1)
    return False


# a necessary condition of a detector's fast form, read on the text itself (see the docstring)
PRECHECKS = {_TWILIO: lambda text: "SK" in text, _DISCORD: dots_seven_apart}
# literal -> the indexes of the detectors whose groups hold it
_OPENED_BY = {}
for _index, _groups in enumerate(GROUPS):
    for _group in _groups:
        for _literal in _group:
            _OPENED_BY.setdefault(_literal, []).append(_index)
_LITERALS = tuple(_OPENED_BY)
# How the gate looks at a text longer than ``_FEW`` characters (a shorter one: see ``_BY_CHAR``
# below).  Most detectors open on one group of literals and have no precheck: a text holding
# any of those literals goes to the detector, so the gate looks for them one by one and stops
# at the first.  ``_ALONE`` lists the shortest of them (a longer one holds a
# shorter one: "sk-ant-" holds "sk-", so looking for "sk-" finds both); those holding a
# character prose seldom holds are filed under it (``_ALONE_BY_CHAR``: a text without "_"
# skips the twelve underscore prefixes at once).  The tables are written out (deriving the
# shortest costs an import more than the tables save); ``_ALONE_COVERED`` names the longer
# literals left out, and a test holds the tables equal to their derivation.  Should the
# declaration above gain or lose such a literal without the tables following, the import
# looks for every one of them instead (slower, never a missed finding).
_ALONE = ("akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa", "aws", "xox", "aiza",
          "shp", "eyj", "bearer", "authorization", "cookie", "curl", "mysql", "mariadb", "pass", "pwd", "sg.")
_ALONE_BY_CHAR = (("-", ("-----begin", "glpat-", "sk-", "xapp-", "gocspx-", "pypi-age", "key-", "redis-cli")),
                  ("_", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk_", "rk_", "whsec_", "npm_",
                         "hf_", "_v1_")),
                  (":", (":aa", "://")))
_ALONE_COVERED = ("https://", "sk-ant-", "sshpass")
# A short text (an id, a name, a time) holds few characters: there the gate looks only for
# the literals filed under a character it holds, each literal (of every detector) filed under
# its rarest character.  The filing is written out (deriving it costs an import 30
# microseconds); ``_RARITY`` ranks the characters, rarest first, and a test holds each literal
# filed under its rarest.  A literal declared above but not filed here is filed as the import
# runs (a missing entry costs that time, never a finding).
_FEW = 16
_RARITY = "=zxk<jq_/ybw1fvu:mg-p.chtsdenlriao"
_BY_CHAR = {'s': ('asia',), 'r': ('aroa',), 'd': ('aida',), 'c': ('acca', 'discord', 'secret', 'credential'),
            'u': ('curl',), '-': ('redis-cli', '--'), ':': (':aa', ':'), '.': ('.',),
            'p': ('aipa', 'anpa', 'shp', 'sshpass', 'pass'), 'g': ('agpa', 'glpat-', 'sg.'), 'w': ('aws', 'pwd'),
            'y': ('pypi-age',), 'b': ('-----begin', 'abia', 'bearer', 'mariadb'), 'v': ('anva',),
            '_': ('ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_', 'whsec_', 'npm_', 'hf_', '_v1_'),
            'k': ('akia', 'sk-ant-', 'sk-', 'sk_', 'rk_', 'sk', 'key-', 'cookie', 'token', 'api-key', 'key'),
            'x': ('xox', 'xapp-', 'gocspx-'), 'j': ('eyj',), 'q': ('mysql',), 'z': ('aiza', 'authorization'),
            '/': ('https://', '://'), '<': ('</',), '=': ('=',)}
for _literal in _OPENED_BY.keys() - set().union(*_BY_CHAR.values()):
    _char = min(_literal, key=_RARITY.find)
    _BY_CHAR[_char] = _BY_CHAR.get(_char, ()) + (_literal,)
_RAREST = frozenset(_BY_CHAR)
# the other detectors (more than one group, or a precheck): ``(groups, precheck or None)``
_JOINT = []
_alone = set()
for _index, _groups in enumerate(GROUPS):
    if len(_groups) == 1 and _index not in PRECHECKS:
        _alone.update(_groups[0])
    else:
        _JOINT.append((_groups, PRECHECKS.get(_index)))
_JOINT = tuple(_JOINT)
if _alone != set(_ALONE).union(_ALONE_COVERED, *(literals for _, literals in _ALONE_BY_CHAR)):
    _ALONE, _ALONE_BY_CHAR = tuple(sorted(_alone)), ()
del _index, _groups, _group, _literal, _alone


# Short texts already cleared in this process: the ids, projects, sources and times every
# row of a pack repeats are looked at once, not once a row (bounded: a long-lived server
# forgets them all when the set is full).  Only a clean verdict is kept; it never changes.
_SEEN_CLEAN = set()
_SEEN_LONGEST, _SEEN_MAX = 64, 4096


def clean(text):
    """True when ``text`` surely holds no finding (``scan(text)`` is ``[]``); False means
    the detector has to decide.  A few microseconds for a short plain text."""
    if not text or text in _SEEN_CLEAN:
        return True
    if not _clean(text):
        return False
    if len(text) <= _SEEN_LONGEST:
        if len(_SEEN_CLEAN) >= _SEEN_MAX:
            _SEEN_CLEAN.clear()
        _SEEN_CLEAN.add(text)
    return True


def clean_each(texts):
    """``[clean(text) for text in texts]``, answered a run of texts at a time where it can be.

    Plain texts are joined (one newline apart, a character no literal holds) into runs of at
    most ``SHORT`` characters, and a run the gate clears clears every text in it: a text holds
    no literal its run does not, and a text passing a precheck makes its run pass it (the
    run's fold is its texts' folds joined, and it is ASCII without a percent sign when they
    are).  A run not cleared may still be clean text by text (a ``:`` in one and ``token`` in
    the next hold the run back, not either text), so its texts are looked at one by one, and
    so is every text after it: where texts hold literals between them, runs would only add
    looks.  A text that cannot join a run (not ASCII, a percent sign, too long, not a str)
    is answered alone, as :func:`clean` answers it."""
    verdicts = [None] * len(texts)
    run, size, batching = [], 0, True

    def settle(run):
        if len(run) > 1 and _clean("\n".join(texts[index] for index in run)):
            for index in run:
                verdicts[index] = True
            return True
        for index in run:
            verdicts[index] = clean(texts[index])
        return len(run) < 2

    for index, text in enumerate(texts):
        if type(text) is not str:
            verdicts[index] = False
        elif not batching or not text or text in _SEEN_CLEAN or len(text) > SHORT or not text.isascii() or "%" in text:
            verdicts[index] = clean(text)
        else:
            if size + len(text) + 1 > SHORT:
                batching = settle(run)
                run, size = [], 0
                if not batching:
                    verdicts[index] = clean(text)
                    continue
            run.append(index)
            size += len(text) + 1
    if run:
        settle(run)
    return verdicts


def _clean(text):
    """:func:`clean`'s verdict for a text it has not cleared before."""
    if len(text) > SHORT or not text.isascii() or "%" in text:
        return False
    folded = text.lower()
    if len(text) <= _FEW:
        return _clean_few(text, folded)
    for literal in _ALONE:
        if literal in folded:
            return False
    for char, literals in _ALONE_BY_CHAR:
        if char in folded:
            for literal in literals:
                if literal in folded:
                    return False
    for groups, check in _JOINT:  # a detector passes when each of its groups has a literal held
        for group in groups:
            for literal in group:
                if literal in folded:
                    break
            else:
                break  # a group with no literal held: this detector cannot report
        else:
            if check is None or check(text):
                return False
    return True


def _clean_few(text, folded):
    """:func:`clean` of a short text: the literals filed under the characters it holds, then
    each detector one of them opens (the same verdict, fewer looks where few characters are)."""
    held = set()
    for char in _RAREST.intersection(folded):
        for literal in _BY_CHAR[char]:
            if literal in folded:
                held.add(literal)
    for literal in held:
        for index in _OPENED_BY[literal]:
            groups = GROUPS[index]
            # (a detector of one group holds this literal in it; another needs each group held)
            if len(groups) == 1 or all(not held.isdisjoint(group) for group in groups):
                check = PRECHECKS.get(index)
                if check is None or check(text):
                    return False
    return True


def texts(value):
    """The strings of a field value (a str, or the strings of a list)."""
    if isinstance(value, str):
        return [value]
    return [item for item in (value or ()) if isinstance(item, str)]
