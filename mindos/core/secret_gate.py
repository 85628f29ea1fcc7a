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

``GROUPS`` restates the detectors' literal groups in detector order; a test holds it equal
to what :func:`mindos.core.secrets._detectors` builds, so the two cannot drift apart.
"""

SHORTEST_LABEL = len("[REDACTED:x]")  # the shortest redaction label (see secrets.redact)
SHORT = 4096  # the longest text whose literals the detector checks exactly (secrets._SHORT)

_HTTPS, _FAMILIES = ("https://",), ("pass", "pwd", "secret", "token", "key", "credential")
# each detector's literal groups (its gates, then its needs), in detector order
GROUPS = (
    (("-----begin",),),                                                                 # private_key
    (("akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa"),),  # aws_access_key
    (("aws",),),                                                                        # aws_secret_key
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),),                         # github_token
    (("glpat-",),),                                                                     # gitlab_token
    (("sk-ant-",),),                                                                    # anthropic_key
    (("sk-",),),                                                                        # openai_key (prefixed)
    (("sk-",),),                                                                        # openai_key
    (("xox", "xapp-"),),                                                                # slack_token
    (_HTTPS,),                                                                          # slack_webhook
    (("aiza",),),                                                                       # google_api_key
    (("gocspx-",),),                                                                    # google_oauth_secret
    (("sk_", "rk_", "whsec_"),),                                                        # stripe_key
    (("npm_",),),                                                                       # npm_token
    (("pypi-age",),),                                                                   # pypi_token
    (("hf_",),),                                                                        # huggingface_token
    (("sg.",),),                                                                        # sendgrid_key
    (("sk",),),                                                                         # twilio_key
    ((":aa",),),                                                                        # telegram_bot_token
    (("_v1_",),),                                                                       # digitalocean_token
    (("shp",),),                                                                        # shopify_token
    (("eyj",),),                                                                        # jwt
    ((".",),),                                                                          # discord_token
    (_HTTPS, ("discord",)),                                                             # discord_webhook
    (("key-",),),                                                                       # mailgun_key
    (("://",),),                                                                        # connection_string
    (("bearer", "authorization"),),                                                     # bearer_token
    (("authorization",),),                                                              # basic_auth
    (("cookie",),),                                                                     # session_cookie
    (("curl",),),                                                                       # cli_password (curl)
    (("mysql", "mariadb"),),                                                            # cli_password (mysql)
    (("sshpass",),),                                                                    # cli_password (sshpass)
    (("redis-cli",),),                                                                  # cli_password (redis-cli)
    (("pass", "pwd"),),                                                                 # password_assignment
    (("--",), ("pass", "token", "secret", "api-key")),                                  # cli_flag
    (("</",), _FAMILIES),                                                               # xml_element
    ((":", "="), _FAMILIES),                                                            # assignment
)
_TWILIO, _DISCORD = 17, 22  # (indexes in GROUPS; the test checks their kinds)


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
# each literal filed under its rarest character (in prose, ids and timestamps): a text can
# hold a literal only when it holds that character, so a string looks only for the literals
# filed under the characters it holds (a test checks every literal is filed once, under one
# of its own characters)
_BY_CHAR = {'s': ('asia',), 'r': ('aroa',), 'd': ('aida',), 'c': ('acca', 'discord', 'secret', 'credential'),
            'u': ('curl',), '-': ('redis-cli', '--'), ':': (':aa', ':'), '.': ('.',),
            'p': ('aipa', 'anpa', 'shp', 'sshpass', 'pass'), 'g': ('agpa', 'glpat-', 'sg.'), 'w': ('aws', 'pwd'),
            'y': ('pypi-age',), 'b': ('-----begin', 'abia', 'bearer', 'mariadb'), 'v': ('anva',),
            '_': ('ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_', 'whsec_', 'npm_', 'hf_', '_v1_'),
            'k': ('akia', 'sk-ant-', 'sk-', 'sk_', 'rk_', 'sk', 'key-', 'cookie', 'token', 'api-key', 'key'),
            'x': ('xox', 'xapp-', 'gocspx-'), 'j': ('eyj',), 'q': ('mysql',), 'z': ('aiza', 'authorization'),
            '/': ('https://', '://'), '<': ('</',), '=': ('=',)}
_RAREST = frozenset(_BY_CHAR)
del _index, _groups, _group, _literal


def clean(text):
    """True when ``text`` surely holds no finding (``scan(text)`` is ``[]``); False means
    the detector has to decide.  A few microseconds for a short plain text."""
    if not text:
        return True
    if len(text) > SHORT or not text.isascii() or "%" in text:
        return False
    folded = text.lower()
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
