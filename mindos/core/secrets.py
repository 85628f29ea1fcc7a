"""The credential detector and redactor: pure functions, no database.

Credentials never enter shared memory.  Every write path that stores agent text (note,
supersede-note, handoff) passes its fields through :func:`guard`, which runs the shape
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
  * Patterns compile on first use, so commands that never store text never pay for them.

Interface (stable; handoffs and context packs call it):
  * ``scan(text) -> list[str]``: sorted unique finding kinds.
  * ``redact(text) -> (str, list[str])``: each finding replaced by ``[REDACTED:<kind>]``.
  * ``guard(conn, entity_type, entity_id, fields, *, redact=False, allow_secret=False)
    -> (fields, outcome)``: call inside ``db.write``; see its docstring.
  * ``guard_record(conn, entity_type, entity_id, fields, identities, *, redact, allow_secret)``:
    the same plus agent-name fields (note source, handoff agents), which are refused
    outright when credential-shaped: an id can be neither redacted nor allowed.
"""

import re


# Kinds whose match is a structural shape rather than a vendor prefix; when spans overlap,
# a specific kind wins the redaction label.
_GENERIC = frozenset({"password_assignment", "api_key_assignment", "bearer_token", "basic_auth",
                      "connection_string", "cli_password", "session_cookie"})

_PATTERNS = None
_PLACEHOLDER = _SKIP_KEY = _PASSWORD_WORD = _NUMBER = _BARE_PASS = _SESSION_COOKIE = _LABEL = None
# Command-line credentials only count on a line that runs the tool they belong to
# (``-u user:pw`` means a password to curl, a uid to docker).
_COMMANDS = {
    "curl": r"(?<![\w-])curl(?![\w-])",
    "mysql": r"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)(?![\w-])",
    "sshpass": r"(?<![\w-])sshpass(?![\w-])",
    "redis-cli": r"(?<![\w-])redis-cli(?![\w-])",
}
_COMMAND_RES = {}


# One cheap pass first: text without any detector's anchor cannot match any detector (keep
# in step with the patterns; the measured corpus test catches a gap).  Plain substring tests
# on the lowered text run at memory speed (about 2 ms for 64 KiB), where one case-insensitive
# alternation regex took ~100 ms; only the two case-sensitive anchors need a look of their own.
_ANCHORS = (
    "-----begin", "akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa",
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "sk-", "xox", "xapp-", "hooks.slack",
    "aiza", "gocspx-", "sk_", "rk_", "whsec_", "npm_", "pypi-", "hf_", "sg.", ":aa", "_v1_", "shp", "eyj", "://",
    "bearer", "authorization", "pass", "pwd", "secret", "token", "key", "credential", "curl", "mysql", "mariadb",
    "redis-cli", "cookie",
)
_DISCORD_ANCHOR = None


def _triggered(text):
    """True when ``text`` holds an anchor of some detector (False: no detector can match)."""
    global _DISCORD_ANCHOR
    lowered = text.lower()
    if any(anchor in lowered for anchor in _ANCHORS):
        return True
    if "SK" in text:  # Twilio's SK + 32 hex is case-sensitive
        return True
    if _DISCORD_ANCHOR is None:
        # the token's middle: opening on a literal dot lets the engine skip ahead quickly
        _DISCORD_ANCHOR = re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}")
    return _DISCORD_ANCHOR.search(text) is not None


def _unlabelled(val):
    """``val`` without its well-formed ``[REDACTED:<kind>]`` placeholders (what the value checks judge)."""
    # a dangling "[REDACTED:" (no kind, no closing bracket) is text like any other
    return _LABEL.sub("", val).replace("[REDACTED:", "") if "[REDACTED:" in val else val


def _specific(kind, pattern, flags=0):
    return kind, re.compile(pattern, flags), None


def _patterns():
    """Compile the detectors once: ``[(kind, regex, value_check)]``.

    A regex with a ``val`` group redacts just that group; otherwise the whole match.  A
    ``body`` group is what the value check inspects when it differs from the span.  Checks:
    None (the shape is enough), "mixed" (digits and letters), "assignment" (key = value,
    see :func:`_assignment`), ``("password", command)`` (a password-shaped dq/sq/bare value,
    on a line running ``command`` unless None), "cookie" (:func:`_cookie_hits`), "basic",
    "discord" and "password_url".
    """
    global _PATTERNS, _PLACEHOLDER, _SKIP_KEY, _PASSWORD_WORD, _NUMBER, _BARE_PASS, _SESSION_COOKIE, _LABEL
    if _PATTERNS is not None:
        return _PATTERNS
    # only a complete, well-formed placeholder is exempt; a bare "[REDACTED:" prefix is not
    _LABEL = re.compile(r"\[REDACTED:[a-z0-9_]{1,48}\]")
    _PLACEHOLDER = re.compile(
        r"(?i)(?:[$%{<\[*]|\.\.\.|x{4,}|(?:your|my|the)[_-]|redacted|changeme|example|placeholder|dummy)"
    )
    _SKIP_KEY = re.compile(r"(?i)(?:page|next|cursor|continuation|pagination|sync|csrf_?)[_.-]?tokens?$|"
                           r"(?:max|min|num|total|count|n)[_.-]?tokens?$")
    _PASSWORD_WORD = re.compile(r"(?i)(?:password|passwd|passphrase|pwd|pass)$")
    # "pass" is a credential word only as a whole key or a key segment (DB_PASS, smtp.pass),
    # never as the tail of another word (bypass, compass)
    _BARE_PASS = re.compile(r"(?i)(?<![_.-])(?<=[A-Za-z0-9])pass$")
    _SESSION_COOKIE = re.compile(r"(?i)sess|sid|auth|token|jwt|remember")
    # a plain number with a unit suffix ("12ms", "4.5k") is configuration, not a credential
    _NUMBER = re.compile(r"[\d.,:]+[a-zA-Z%]{0,3}")
    cred_key = (r"(?:password|passwd|passphrase|pwd|secret[_-]?key[_-]?base|secret|token"
                r"|api[_-]?key|apikey|api[_-]?secret"
                r"|secret[_-]?key|access[_-]?key|private[_-]?key|signing[_-]?key|encryption[_-]?key"
                r"|master[_-]?key|account[_-]?key|auth[_-]?key|subscription[_-]?key|credentials?|pass)")
    value = r"(?:\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'|(?P<bare>[^\s\"'`,;()]{1,512}))"
    cli_value = r"(?:\"(?P<dq>[^\"\n]{1,256})\"|'(?P<sq>[^'\n]{1,256})'|(?P<bare>[^\s\"'`;|&()]{1,256}))"
    _PATTERNS = [
        _specific("private_key",
                  r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
                  r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:-]*)"),
        _specific("aws_access_key", r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA)"
                                    r"[A-Z0-9]{16}(?![A-Za-z0-9])"),
        ("aws_secret_key",
         re.compile(r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*(?:[:=]|=>)\s*[\"']?"
                    r"(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"), None),
        _specific("github_token", r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{50,})"
                                  r"(?![A-Za-z0-9_])"),
        _specific("gitlab_token", r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}"),
        _specific("anthropic_key", r"(?<![A-Za-z0-9_-])sk-ant-[a-z0-9]{2,10}-[A-Za-z0-9_-]{32,}"),
        # project/service/admin keys are specific by prefix; a plain sk- key must mix letters and
        # digits or carry OpenAI's T3BlbkFJ marker
        _specific("openai_key", r"(?<![A-Za-z0-9_-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"),
        ("openai_key", re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-|proj-|svcacct-|admin-)"
                                  r"(?P<body>[A-Za-z0-9_-]{20,})"), "openai"),
        _specific("slack_token", r"(?<![A-Za-z0-9])(?:xox[abeoprs]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{20,})"),
        _specific("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/-]{20,}"),
        _specific("google_api_key", r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
        _specific("google_oauth_secret", r"(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])"),
        _specific("stripe_key",
                  r"(?<![A-Za-z0-9_])(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[A-Za-z0-9]{24,})"),
        _specific("npm_token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
        _specific("pypi_token", r"(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,}"),
        _specific("huggingface_token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{34,}(?![A-Za-z0-9])"),
        _specific("sendgrid_key", r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}"),
        _specific("twilio_key", r"(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])"),
        _specific("telegram_bot_token", r"(?<![A-Za-z0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
        _specific("digitalocean_token", r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])"),
        _specific("shopify_token", r"(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])"),
        _specific("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
        # base64(user snowflake) . timestamp . HMAC: the first part must decode to the id's 17-20
        # digits (so it opens M[Tjz], N[DTjz] or O[DT])
        ("discord_token",
         re.compile(r"(?P<body>[MNO](?<![A-Za-z0-9_.-][MNO])[TDjz][A-Za-z0-9_-]{20,26})"
                    r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])"), "discord"),
        _specific("discord_webhook", r"https://(?:(?:canary|ptb)\.)?discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/"
                                     r"\d{17,20}/[A-Za-z0-9_-]{60,80}"),
        ("mailgun_key", re.compile(r"key-(?<![A-Za-z0-9_-]key-)(?P<body>[0-9a-z]{32})(?![A-Za-z0-9_-])"), "mixed"),
        ("connection_string",
         re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,24}://[^\s:/@\"']{0,128}:(?P<val>[^\s@/\"']{1,256})@"
                    r"[A-Za-z0-9.\[\]_-]"), "password_url"),
        ("bearer_token",
         re.compile(r"(?i)(?:\bbearer\s+|\bauthorization[\"']?\s*[:=]\s*[\"']?token\s+)"
                    r"(?P<val>[A-Za-z0-9._~+/-]{16,}=*)"), "bearer"),
        ("basic_auth", re.compile(r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+(?P<val>[A-Za-z0-9+/]{8,}={0,2})"),
         "basic"),
        # one match per Cookie header; _cookie_hits picks the session-like cookies out of it
        # (each regex opens on a literal and looks behind afterwards: the scan stays a fast search)
        ("session_cookie", re.compile(r"(?i)cookie(?<![A-Za-z0-9_]cookie)(?:[\"']?\s*[:=]|(?<=--cookie)\s)\s*[\"']?"
                                      r"(?P<val>[^\n\"']{1,4096})"), "cookie"),
        # curl -u/--user user:password, mysql -pPASSWORD, sshpass -p PASSWORD, redis-cli -a PASSWORD
        ("cli_password", re.compile(r"-(?<![\w-]-)(?:u|-user)(?:\s+|=)?[\"']?[^\s:\"'@]{1,128}:"
                                    r"(?P<bare>[^\s\"']{1,256})"), ("password", "curl")),
        ("cli_password", re.compile(r"-p(?<![\w-]-p)" + cli_value), ("password", "mysql")),
        ("cli_password", re.compile(r"-p(?<![\w-]-p)\s*" + cli_value), ("password", "sshpass")),
        ("cli_password", re.compile(r"-a(?<![\w-]-a)\s+" + cli_value), ("password", "redis-cli")),
        # prose: "the password is hunter2abc", "the admin password for staging was ..."
        ("password_assignment",
         re.compile(r"(?i)p(?<![A-Za-z0-9_]p)(?:assword|asswd|assphrase|wd)(?:\s+(?:for|of|on)\s+[^\s]{1,64})?"
                    r"\s+(?:is|was)(?:\s+(?:now|still|currently|just|set\s+to|changed\s+to))?\s+" + value),
         ("password", None)),
        ("cli_flag",
         re.compile(r"(?i)(?<![A-Za-z0-9-])--(?P<key>(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret|api-key))"
                    r"(?:=|\s+)" + value), "assignment"),
        ("xml_element",
         re.compile(r"(?i)<(?P<key>[A-Za-z0-9_.:-]{0,64}?" + cred_key + r")s?>(?P<bare>[^<\s]{1,512})</"),
         "assignment"),
        ("assignment",
         re.compile(r"(?i)(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z0-9_.-]{0,64}?" + cred_key + r")s?[\"']?"
                    r"\s*(?::=|=>|=|:)\s*" + value), "assignment"),
    ]
    return _PATTERNS


def _has_digit(text):
    return any(c.isdigit() for c in text)


def _has_alpha(text):
    return any(c.isalpha() for c in text)


def _assignment(match):
    """Classify a ``key = value`` match: returns (kind, start, end) or None."""
    groups = match.groupdict()
    group = next(name for name in ("dq", "sq", "bare") if groups.get(name) is not None)
    val = _unlabelled(match.group(group))
    key = match.group("key")
    if _SKIP_KEY.search(key) or _BARE_PASS.search(key):
        return None
    if not val or val.startswith(("/", "~", "./", "../")) or "://" in val or _PLACEHOLDER.match(val):
        return None
    if not _has_digit(val) or val.isdigit():
        return None
    if group == "bare" and _NUMBER.fullmatch(val):
        return None
    kind = "password_assignment" if _PASSWORD_WORD.search(key.replace("-", "_")) else "api_key_assignment"
    if kind == "password_assignment":
        # a lone "pass:" is also prose ("second pass: v2.1.3"): it needs a longer value
        if len(val) < (8 if key.lower() == "pass" else 6):
            return None
    elif len(val) < 8 or not _has_alpha(val):
        return None
    return kind, match.start(group), match.end(group)


def _password_value(match):
    """The ``(start, end)`` of a password-shaped value group, or None: it must mix in a digit,
    not be a bare number, a path, a URL, a placeholder or an earlier redaction label."""
    group = next(name for name in ("dq", "sq", "bare") if match.groupdict().get(name) is not None)
    val = _unlabelled(match.group(group))
    if len(val) < 6 or not _has_digit(val) or not _has_alpha(val) or _NUMBER.fullmatch(val):
        return None
    if val.startswith(("/", "~", "./", "../", "-")) or "://" in val or _PLACEHOLDER.match(val):
        return None
    return match.start(group), match.end(group)


def _runs_command(text, position, command, lines):
    """True when the line holding ``position`` invokes ``command`` before it (cached per line)."""
    start = text.rfind("\n", 0, position) + 1
    if (command, start) not in lines:
        regex = _COMMAND_RES.get(command)
        if regex is None:
            regex = _COMMAND_RES[command] = re.compile(_COMMANDS[command])
        end = text.find("\n", start)
        found = regex.search(text, start, len(text) if end == -1 else end)
        lines[(command, start)] = found.start() if found else None
    first = lines[(command, start)]
    return first is not None and first < position


def _cookie_hits(match):
    """Spans of session-like cookie values (name mentions sess/sid/auth/token/...; the value
    is 16+ characters mixing letters and digits) in one Cookie header match."""
    group = "val" if match.group("val") is not None else "flag"
    offset, header = match.start(group), match.group(group)
    spans, cursor = [], 0
    for pair in header.split(";"):
        name, equals, val = pair.partition("=")
        begin = offset + cursor + len(name) + 1
        cursor += len(pair) + 1
        val = _unlabelled(val.strip())
        name = name.strip()
        if not equals or not val or not _SESSION_COOKIE.search(name) or len(val) < 16:
            continue
        if not (_has_digit(val) and _has_alpha(val)) or _PLACEHOLDER.match(val):
            continue
        raw = pair.partition("=")[2].strip()
        first = begin + pair.partition("=")[2].find(raw)
        spans.append((first, first + len(raw)))
    return spans


def _is_snowflake(body):
    """True when a Discord token's first part is base64 of a 17-20 digit user id."""
    import binascii

    try:
        decoded = binascii.a2b_base64(body.replace("-", "+").replace("_", "/") + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.isdigit() and 17 <= len(decoded) <= 20


# Per-detector gates: literals (lowercase) every match of that detector contains, as groups
# that must each have one member in the lowercased text.  A necessary condition only, so a
# gate never changes what is found; it skips running a regex over text that cannot match it
# (the generic ``assignment`` shape alone costs about 1 us a character).  Kinds without an
# entry always run.  Keep each in step with its patterns: tests/core/test_secret_gates.py
# compares gated and ungated findings over the whole corpus.
_GATES = {
    "private_key": (("-----begin",),),
    "aws_access_key": (("akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa"),),
    "aws_secret_key": (("aws",),),
    "github_token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),),
    "gitlab_token": (("glpat-",),),
    "anthropic_key": (("sk-ant-",),),
    "openai_key": (("sk-",),),
    "slack_token": (("xox", "xapp-"),),
    "slack_webhook": (("hooks.slack.com",),),
    "google_api_key": (("aiza",),),
    "google_oauth_secret": (("gocspx-",),),
    "stripe_key": (("sk_", "rk_", "whsec_"),),
    "npm_token": (("npm_",),),
    "pypi_token": (("pypi-age",),),
    "huggingface_token": (("hf_",),),
    "sendgrid_key": (("sg.",),),
    "twilio_key": (("sk",),),
    "telegram_bot_token": ((":aa",),),
    "digitalocean_token": (("_v1_",),),
    "shopify_token": (("shp",),),
    "jwt": (("eyj",),),
    "discord_token": ((".",),),
    "discord_webhook": (("discord",),),
    "mailgun_key": (("key-",),),
    "connection_string": (("://",),),
    "bearer_token": (("bearer", "authorization"),),
    "basic_auth": (("authorization",),),
    "session_cookie": (("cookie",),),
    "password_assignment": (("pass", "pwd"),),
    "cli_flag": (("--",),),
    "xml_element": (("</",),),
    "assignment": ((":", "="), ("pass", "pwd", "secret", "token", "key", "credential")),
}
# cli_password detectors are gated by the tool their line must run
_COMMAND_GATES = {"curl": ("curl",), "mysql": ("mysql", "mariadb"), "sshpass": ("sshpass",),
                  "redis-cli": ("redis-cli",)}


# The generic assignment also needs its credential word right before the separator (the
# key's last word, an optional 's' and quote, spaces, then ':' or '='); searched
# case-sensitively in the lowercased text, which is an order of magnitude cheaper than the
# detector's own case-insensitive scan with its 64-character lazy key prefix.
_ASSIGNMENT_GATE = r"""(?:password|passwd|passphrase|pwd|base|secret|token|key|credentials?|pass)s?["']?\s*[:=]"""
_REGEX_GATES = {}


def _gated_out(kind, check, lowered):
    if kind == "cli_password" and isinstance(check, tuple) and check[1] in _COMMAND_GATES:
        gate = (_COMMAND_GATES[check[1]],)
    else:
        gate = _GATES.get(kind)
    if gate is not None and not all(any(literal in lowered for literal in group) for group in gate):
        return True
    if kind == "assignment":
        regex = _REGEX_GATES.get(kind)
        if regex is None:
            regex = _REGEX_GATES[kind] = re.compile(_ASSIGNMENT_GATE)
        return regex.search(lowered) is None
    return False


def _findings(text):
    """Every detector hit as ``(start, end, kind)``, unresolved (overlaps included)."""
    hits = []
    if not text or not _triggered(text):
        return hits
    patterns = _patterns()
    lines = {}
    lowered = text.lower()
    for kind, regex, check in patterns:
        if _gated_out(kind, check, lowered):
            continue
        for match in regex.finditer(text):
            if check == "assignment":
                found = _assignment(match)
                if found:
                    hits.append((found[1], found[2], found[0]))
                continue
            if check == "cookie":
                hits.extend((start, end, kind) for start, end in _cookie_hits(match))
                continue
            if isinstance(check, tuple):  # ("password", command or None)
                found = _password_value(match)
                if found and (check[1] is None or _runs_command(text, match.start(), check[1], lines)):
                    hits.append((found[0], found[1], kind))
                continue
            span = match.span("val") if "val" in regex.groupindex else match.span()
            val = match.group("body") if "body" in regex.groupindex else text[span[0]:span[1]]
            if check == "mixed" and not (_has_digit(val) and _has_alpha(val)):
                continue
            if check == "openai" and not ((_has_digit(val) and _has_alpha(val)) or "T3BlbkFJ" in val):
                continue
            if check == "bearer" and not _bearer_value(val):
                continue
            if check == "password_url" and (_PLACEHOLDER.match(val) or val.lower() in
                                            ("password", "pass", "passwd", "pwd", "secret", "token")):
                continue
            if check == "basic" and not _is_basic_credential(val):
                continue
            if check == "discord" and not _is_snowflake(val):
                continue
            hits.append((span[0], span[1], kind))
    if hits and "[REDACTED:" in text:
        labels = [match.span() for match in _LABEL.finditer(text)]
        hits = [hit for hit in hits if not any(start <= hit[0] and hit[1] <= end for start, end in labels)]
    return hits


def _bearer_value(val):
    """A bearer token value: mixed letters and digits, or (digit-free tokens exist) at least 20
    characters mixing cases or carrying token punctuation, and no placeholder."""
    if _PLACEHOLDER.match(val):
        return False
    if _has_digit(val) and _has_alpha(val):
        return True
    if len(val) < 20 or not _has_alpha(val):
        return False
    return (val.lower() != val and val.upper() != val) or any(c in val for c in "._~+/") or len(val) >= 32


# Unicode format characters (category Cf: zero-width space and joiners, word joiner, soft
# hyphen, bidi controls, BOM, tag characters, ...): invisible, so detection removes them
_FORMAT = None
_NON_ASCII = None


def _view(text):
    """The text detection reads: NFKC-normalized with format characters removed, so a key split
    by U+200B or written in fullwidth letters is still the key.

    Returns ``(view, segments)``; ``segments`` is None when the view is the text itself
    (always for ASCII), else ``[(view_start, text_start, text_len, view_len)]`` mapping view
    positions back to the text, so redaction replaces the original characters.
    """
    if text.isascii():
        return text, None
    global _FORMAT, _NON_ASCII
    import unicodedata  # lazy: only non-ASCII text is normalized

    if _FORMAT is None:
        _FORMAT = re.compile("[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
                             "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
                             "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
                             "\U000e0020-\U000e007f]")
        _NON_ASCII = re.compile(r"[^\x00-\x7f]+")
    if not _FORMAT.search(text) and unicodedata.is_normalized("NFKC", text):
        return text, None
    pieces, segments, cursor, out = [], [], 0, 0
    for run in _NON_ASCII.finditer(text):
        if run.start() > cursor:
            pieces.append(text[cursor:run.start()])
            segments.append((out, cursor, run.start() - cursor, run.start() - cursor))
            out += run.start() - cursor
        for offset, char in enumerate(run.group()):
            mapped = "" if _FORMAT.match(char) else unicodedata.normalize("NFKC", char)
            if mapped:
                pieces.append(mapped)
                segments.append((out, run.start() + offset, 1, len(mapped)))
                out += len(mapped)
        cursor = run.end()
    if cursor < len(text):
        pieces.append(text[cursor:])
        segments.append((out, cursor, len(text) - cursor, len(text) - cursor))
    return "".join(pieces), segments


def _to_text(segments, start, end):
    """Map a view span back to a span of the original text."""
    import bisect  # lazy: only normalized views need it

    starts = [segment[0] for segment in segments]
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


def _is_basic_credential(val):
    import binascii

    try:
        decoded = binascii.a2b_base64(val + "=" * (-len(val) % 4))
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def texts(value):
    """The strings of a field value (a str, or the strings of a list)."""
    if isinstance(value, str):
        return [value]
    return [item for item in (value or ()) if isinstance(item, str)]


def url_userinfo(text):
    """True when ``text`` holds a URL with userinfo (``https://user:token@host``, or a bare
    ``https://token@host``): in a field that is only ever a link, that is a credential."""
    if "://" not in text or "@" not in text:
        return False
    return re.search(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@]+@", text) is not None


def scan(text):
    """Return the sorted unique finding kinds in ``text`` (never the values); reads the
    normalized view (:func:`_view`)."""
    if not text:
        return []
    return sorted({kind for _, _, kind in _findings(_view(text)[0])})


def redact(text):
    """Return ``(redacted_text, kinds)``; see :func:`_redact`."""
    return _redact(text)


def _redact(text):
    """Return ``(redacted_text, kinds)``: every finding replaced by ``[REDACTED:<kind>]``.

    Overlapping findings collapse into one replacement labelled with the most specific kind.
    Findings come from the normalized view and replace the original characters they cover.
    """
    if not text:
        return text, []
    view, segments = _view(text)
    hits = _findings(view)
    if not hits:
        return text, []
    if segments is not None:
        hits = [(*_to_text(segments, start, end), kind) for start, end, kind in hits]
    hits.sort(key=lambda h: (h[0], h[2] in _GENERIC, -h[1]))
    spans = []
    for start, end, kind in hits:
        if spans and start < spans[-1][1]:
            last = spans[-1]
            if end > last[1]:
                spans[-1] = (last[0], end, last[2])
            continue
        spans.append((start, end, kind))
    pieces, cursor = [], 0
    for start, end, kind in spans:
        pieces.append(text[cursor:start])
        pieces.append(f"[REDACTED:{kind}]")
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), sorted({kind for _, _, kind in hits})
