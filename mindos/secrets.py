"""The secret guard: the privacy boundary for shared memory.

Credentials never enter shared memory.  Every write path that stores agent text (note,
supersede-note, handoff) passes its fields through :func:`guard`, which runs the shape
detectors below and either refuses the write (``secret_blocked``), stores a redacted copy
(``secret_redacted``) or, on an explicit override, stores it verbatim (``secret_allowed``).

Design decisions
  * Kind-only reporting.  A finding is named by its pattern kind (``aws_access_key``,
    ``password_assignment``, ...), never by its value: :func:`scan` returns kinds only, and
    errors, outputs and audit payloads carry kinds and field names, nothing else.
  * Specific shapes over entropy guesses.  Vendor tokens have fixed prefixes and lengths
    (``AKIA``, ``ghp_``, ``sk-``, ``xoxb-``, ``AIza``, ``npm_``, ``pypi-``, JWT's
    ``eyJ..eyJ..``); those are matched exactly.  The generic shapes (``password: ...``,
    ``api_key=...``, ``Bearer ...``) require a digit in the value, skip placeholders
    (``${VAR}``, ``<token>``, ``****``) and code (``token_hex(32)``), and only fire when the
    key *ends* in a credential word, so ``password_min_length=12``, ``max_tokens=4096``,
    "fencing token: lease_epoch chain" and "password policy" pass.
  * Overlaps resolve to the most specific kind when redacting (``api_key=sk-...`` is
    replaced as ``openai_key``), while :func:`scan` reports every kind that fired.
  * Patterns compile on first use, so commands that never store text never pay for them.

Interface (stable; handoffs and context packs call it):
  * ``scan(text) -> list[str]``: sorted unique finding kinds.
  * ``redact(text) -> (str, list[str])``: each finding replaced by ``[REDACTED:<kind>]``.
  * ``guard(conn, entity_type, entity_id, fields, *, redact=False, allow_secret=False)
    -> (fields, outcome)``: call inside ``db.write``; see its docstring.
"""

import re

from mindos import db
from mindos.errors import InvalidInput, Refused

# Kinds whose match is a structural shape rather than a vendor prefix; when spans overlap,
# a specific kind wins the redaction label.
_GENERIC = frozenset({"password_assignment", "api_key_assignment", "bearer_token", "basic_auth",
                      "connection_string"})

_PATTERNS = None
_PLACEHOLDER = _SKIP_KEY = _PASSWORD_WORD = _NUMBER = _TRIGGER = None


def _specific(kind, pattern, flags=0):
    return kind, re.compile(pattern, flags), None


def _patterns():
    """Compile the detectors once: ``[(kind, regex, value_check)]``.

    A regex with a ``val`` group redacts just that group; otherwise the whole match.  A
    ``body`` group is what the value check inspects when it differs from the span.
    """
    global _PATTERNS, _PLACEHOLDER, _SKIP_KEY, _PASSWORD_WORD, _NUMBER, _TRIGGER
    if _PATTERNS is not None:
        return _PATTERNS
    # one cheap pass first: text without any detector's anchor cannot match any detector
    # (keep in step with the patterns below; the measured corpus test catches a gap)
    _TRIGGER = re.compile(
        r"(?i)-----BEGIN|A[KS]IA|AB[I]A|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|gh[pousr]_|github_pat_|glpat-|sk-|xox"
        r"|hooks\.slack|AIza|GOCSPX-|[sr]k_|whsec_|npm_|pypi-|hf_|SG\.|SK[0-9a-f]|:AA|_v1_|shp|eyJ|://|bearer"
        r"|authorization|pass|pwd|secret|token|key|credential"
    )
    _PLACEHOLDER = re.compile(
        r"(?i)(?:[$%{<\[*]|\.\.\.|x{4,}|(?:your|my|the)[_-]|redacted|changeme|example|placeholder|dummy)"
    )
    _SKIP_KEY = re.compile(r"(?i)(?:page|next|cursor|continuation|pagination|sync|csrf_?)[_.-]?tokens?$|"
                           r"(?:max|min|num|total|count|n)[_.-]?tokens?$")
    _PASSWORD_WORD = re.compile(r"(?i)(?:password|passwd|passphrase|pwd)$")
    # a plain number with a unit suffix ("12ms", "4.5k") is configuration, not a credential
    _NUMBER = re.compile(r"[\d.,:]+[a-zA-Z%]{0,3}")
    cred_key = (r"(?:password|passwd|passphrase|pwd|secret[_-]?key[_-]?base|secret|token"
                r"|api[_-]?key|apikey|api[_-]?secret"
                r"|secret[_-]?key|access[_-]?key|private[_-]?key|signing[_-]?key|encryption[_-]?key"
                r"|master[_-]?key|account[_-]?key|auth[_-]?key|credentials?)")
    value = r"(?:\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'|(?P<bare>[^\s\"'`,;()]{1,512}))"
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
        ("openai_key", re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?"
                                  r"(?P<body>[A-Za-z0-9_-]{20,})"), "mixed"),
        _specific("slack_token", r"(?<![A-Za-z0-9])xox[abeoprs]-[A-Za-z0-9-]{10,}"),
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
        ("connection_string",
         re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,24}://[^\s:/@\"']{0,128}:(?P<val>[^\s@/\"']{1,256})@"
                    r"[A-Za-z0-9.\[\]_-]"), "password_url"),
        ("bearer_token",
         re.compile(r"(?i)(?:\bbearer\s+|\bauthorization[\"']?\s*[:=]\s*[\"']?token\s+)"
                    r"(?P<val>[A-Za-z0-9._~+/-]{16,}=*)"), "mixed"),
        ("basic_auth", re.compile(r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+(?P<val>[A-Za-z0-9+/]{8,}={0,2})"),
         "basic"),
        ("cli_flag",
         re.compile(r"(?i)(?<![A-Za-z0-9-])--(?P<key>(?:[a-z0-9]+-)*(?:password|passwd|token|secret|api-key))"
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
    val = match.group(group)
    key = match.group("key")
    if _SKIP_KEY.search(key):
        return None
    if val.startswith(("/", "~", "./", "../")) or "://" in val or _PLACEHOLDER.match(val):
        return None
    if "[REDACTED:" in val:
        return None
    if not _has_digit(val) or val.isdigit():
        return None
    if group == "bare" and _NUMBER.fullmatch(val):
        return None
    kind = "password_assignment" if _PASSWORD_WORD.search(key.replace("-", "_")) else "api_key_assignment"
    if kind == "password_assignment":
        if len(val) < 6:
            return None
    elif len(val) < 8 or not _has_alpha(val):
        return None
    return kind, match.start(group), match.end(group)


def _findings(text):
    """Every detector hit as ``(start, end, kind)``, unresolved (overlaps included)."""
    hits = []
    if not text:
        return hits
    patterns = _patterns()
    if not _TRIGGER.search(text):
        return hits
    for kind, regex, check in patterns:
        for match in regex.finditer(text):
            if check == "assignment":
                found = _assignment(match)
                if found:
                    hits.append((found[1], found[2], found[0]))
                continue
            span = match.span("val") if "val" in regex.groupindex else match.span()
            val = match.group("body") if "body" in regex.groupindex else text[span[0]:span[1]]
            if check == "mixed" and not (_has_digit(val) and _has_alpha(val)):
                continue
            if check == "password_url" and (_PLACEHOLDER.match(val) or val.lower() in
                                            ("password", "pass", "passwd", "pwd", "secret", "token")):
                continue
            if check == "basic" and not _is_basic_credential(val):
                continue
            hits.append((span[0], span[1], kind))
    if hits and "[REDACTED:" in text:
        hits = [hit for hit in hits if not _inside_label(text, hit)]
    return hits


def _inside_label(text, hit):
    """True when a hit touches an earlier redaction label (redacting twice changes nothing)."""
    start = text.find("[REDACTED:")
    while start != -1:
        end = text.find("]", start)
        end = len(text) if end == -1 else end + 1
        if hit[0] < end and start < hit[1]:
            return True
        start = text.find("[REDACTED:", end)
    return False


def _is_basic_credential(val):
    import binascii

    try:
        decoded = binascii.a2b_base64(val + "=" * (-len(val) % 4))
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _texts(value):
    if isinstance(value, str):
        return [value]
    return [item for item in (value or ()) if isinstance(item, str)]


def scan(text):
    """Return the sorted unique finding kinds in ``text`` (never the values)."""
    return sorted({kind for _, _, kind in _findings(text)})


def redact(text):
    """Return ``(redacted_text, kinds)``; see :func:`_redact`."""
    return _redact(text)


def _redact(text):
    """Return ``(redacted_text, kinds)``: every finding replaced by ``[REDACTED:<kind>]``.

    Overlapping findings collapse into one replacement labelled with the most specific kind.
    """
    hits = _findings(text)
    if not hits:
        return text, []
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


def guard(conn, entity_type, entity_id, fields, *, redact=False, allow_secret=False):
    """Enforce the privacy boundary on ``fields`` (name -> str or list of str); call inside ``db.write``.

    Returns ``(fields, outcome)``.  No findings: ``(fields, None)``.  Findings and no flag:
    records ``secret_blocked`` (kinds + field names) via ``db.append_refusal`` and raises
    Refused.  ``redact``: returns redacted copies and audits ``secret_redacted``;
    ``allow_secret``: returns the fields unchanged and audits ``secret_allowed``.  outcome is
    ``{"secret_kinds": [...], "secret_action": "redacted" | "allowed"}``.
    """
    if redact and allow_secret:
        raise InvalidInput("pass at most one of --redact and --allow-secret")
    kinds, flagged = _row_findings(fields)
    if not kinds:
        return fields, None
    payload = {"kinds": kinds, "fields": flagged}
    if not redact and not allow_secret:
        db.append_refusal(conn, entity_type, entity_id, "secret_blocked", payload)
        raise Refused(
            f"secret guard: refused to store credential-shaped content ({', '.join(kinds)}) in "
            f"{', '.join(flagged)}; pass --redact to store a [REDACTED:<kind>] copy or "
            "--allow-secret to store it verbatim (audited)"
        )
    if allow_secret:
        db.append_event(conn, entity_type, entity_id, "secret_allowed", payload)
        return fields, {"secret_kinds": kinds, "secret_action": "allowed"}
    cleaned = {}
    for name, value in fields.items():
        if isinstance(value, str):
            cleaned[name] = _redact(value)[0]
        elif value is None:
            cleaned[name] = value
        else:
            cleaned[name] = [_redact(item)[0] if isinstance(item, str) else item for item in value]
    db.append_event(conn, entity_type, entity_id, "secret_redacted", payload)
    return cleaned, {"secret_kinds": kinds, "secret_action": "redacted"}


def _row_findings(fields):
    kinds, names = set(), []
    for name, value in fields.items():
        hit = set()
        for text in _texts(value):
            hit.update(scan(text))
        if hit:
            kinds |= hit
            names.append(name)
    return sorted(kinds), sorted(names)


_HANDOFF_LISTS = ("evidence", "constraints", "decisions", "files", "next_actions", "risks")


def sweep(conn, *, include_all=False):
    """Read-only fleet sweep of live notes and handoffs (``include_all``: superseded rows too).

    Returns ``{"findings": [{"table", "id", "task_id", "kinds", "fields", "superseded"}],
    "findings_total", "by_kind", "notes_scanned", "handoffs_scanned", "include_superseded"}``.
    Findings name kinds and row ids only, never values.
    """
    import json

    live = "" if include_all else " WHERE superseded_by IS NULL"
    findings, by_kind, scanned = [], {}, {"notes": 0, "handoffs": 0}
    rows = conn.execute(f"SELECT id, task_id, content, superseded_by FROM notes{live} ORDER BY id")
    for row in rows:
        scanned["notes"] += 1
        kinds, names = _row_findings({"content": row["content"]})
        if kinds:
            findings.append({"table": "notes", "id": row["id"], "task_id": row["task_id"], "kinds": kinds,
                             "fields": names, "superseded": row["superseded_by"] is not None})
    columns = ", ".join(("objective", "status", "commit_ref", *_HANDOFF_LISTS))
    rows = conn.execute(f"SELECT id, task_id, superseded_by, {columns} FROM handoffs{live} ORDER BY id")
    for row in rows:
        scanned["handoffs"] += 1
        fields = {"objective": row["objective"], "status": row["status"], "commit_ref": row["commit_ref"]}
        for name in _HANDOFF_LISTS:
            try:
                value = json.loads(row[name] or "[]")
            except ValueError:
                value = row[name]  # a malformed legacy list is still text worth scanning
            fields[name] = value if isinstance(value, (str, list)) else str(value)
        kinds, names = _row_findings(fields)
        if kinds:
            findings.append({"table": "handoffs", "id": row["id"], "task_id": row["task_id"], "kinds": kinds,
                             "fields": names, "superseded": row["superseded_by"] is not None})
    for item in findings:
        for found in item["kinds"]:
            by_kind[found] = by_kind.get(found, 0) + 1
    return {"findings": findings, "findings_total": len(findings), "by_kind": by_kind,
            "notes_scanned": scanned["notes"], "handoffs_scanned": scanned["handoffs"],
            "include_superseded": bool(include_all)}


def metrics(conn):
    """Secret-guard counters for ``metrics`` (audit events by outcome)."""
    from mindos import audit

    return {
        "secrets_blocked_total": audit.count_action(conn, "secret_blocked"),
        "secrets_redacted_total": audit.count_action(conn, "secret_redacted"),
        "secrets_allowed_total": audit.count_action(conn, "secret_allowed"),
    }
