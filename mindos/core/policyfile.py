"""The strict policy-file parser: a documented subset of YAML, read fail-closed.

Policies are a handful of flat switches, so the format is one ``key: value`` per line,
values ``true``/``false``, decimal integers, bare or quoted strings, ``#`` comments and
blank lines, parsed here without any YAML library.  Anything else -- nesting, lists, flow
collections, anchors, tags, block scalars, document markers, duplicate or unknown keys,
wrong value types, tabs, ambiguous bare words such as ``yes`` -- is refused with the file
and line named.  A file that cannot be read exactly never silently means "no policy".

The only whitespace is the ASCII space.  Every other control character (C0, DEL, C1) and
every other Unicode whitespace character (NBSP, ideographic and em spaces, line separators,
...) is refused with its code point and column, wherever it appears -- even in a comment:
``str.strip`` would quietly eat ``true\\x0c`` or ``\\u2003true`` into ``true``, so a file whose
bytes differ from what a reviewer sees would still parse as the policy they approved.

Callers pass the schema: ``{key: bool | int | str | range}`` (strings must be tags; integers
run 1..100000; a ``range`` admits exactly its integers, e.g. ``range(0, 4)`` for a tier).  Project policies and repair policies share this one parser.  Parsed files are
cached per process by path and (mtime, ctime, size, inode), so an edit takes effect on the
next call.
"""

import os
import re

from mindos.core import validate
from mindos.errors import InvalidInput, Refused

MAX_POLICY_BYTES = 65536
_cache = {}
_patterns = None  # compiled on first parse: most calls find no policy file and never need them
_BARE_START_FORBIDDEN = set("[]{}&*!|>'\"%@`,?:-#")


def _compiled():
    """(line, non-printable, integer, ambiguous) regexes, compiled once per process on first use."""
    global _patterns
    if _patterns is None:
        _patterns = (
            re.compile(r"([a-z_][a-z0-9_]*):(?:[ ]+(.*))?\Z"),
            # anything but printable ASCII: a candidate for the invisible-character check
            re.compile(r"[^ -~]"),
            re.compile(r"-?(?:0|[1-9][0-9]*)\Z"),
            # bare words YAML 1.1/1.2 would read as booleans, nulls or numbers: ambiguous, so refused
            re.compile(
                r"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False|FALSE|null|Null"
                r"|NULL|~|[-+]?(?:\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN|[-+]?[0-9][0-9_.eExXoObB:+-]*)\Z"
            ),
        )
    return _patterns


class _Problem(Exception):
    pass


def _invisible(line):
    """Raise _Problem for the first control character or non-space whitespace in ``line``."""
    for match in _compiled()[1].finditer(line):
        char = match.group()
        code = ord(char)
        where = f"U+{code:04X} at column {match.start() + 1}"
        if code < 0x20 or 0x7F <= code <= 0x9F:
            raise _Problem(f"control characters are not allowed ({where})")
        if char.isspace():
            raise _Problem(f"non-ASCII whitespace is not allowed ({where}); use plain spaces")


def _scalar(raw):
    """Parse one value (comment already allowed after it); return a Python value."""
    text = raw.strip(" ")
    if not text:
        raise _Problem("missing value (nested mappings are not supported)")
    if text[0] in "\"'":
        quote = text[0]
        if quote == '"':
            end = text.find('"', 1)
            if end < 0:
                raise _Problem("unterminated double-quoted string")
            value = text[1:end]
            if "\\" in value:
                raise _Problem("backslash escapes are not supported in quoted strings")
        else:
            value, pos = [], 1
            while True:
                end = text.find("'", pos)
                if end < 0:
                    raise _Problem("unterminated single-quoted string")
                value.append(text[pos:end])
                if text[end + 1:end + 2] == "'":  # '' is an escaped quote
                    value.append("'")
                    pos = end + 2
                    continue
                break
            value = "".join(value)
        rest = text[end + 1:]
        if rest.strip() and not re.match(r"[ ]+#", rest):
            raise _Problem("unexpected text after quoted string")
        return value
    # bare value: a comment needs whitespace before '#'
    match = re.search(r"[ ]+#", text)
    if match:
        text = text[: match.start()]
    text = text.rstrip(" ")
    if text == "true":
        return True
    if text == "false":
        return False
    _line, _unprintable, integer, ambiguous = _compiled()
    if integer.match(text):
        return int(text)
    if text[0] in _BARE_START_FORBIDDEN:
        raise _Problem(f"unsupported YAML syntax {text[:20]!r} (lists, flow collections, anchors, aliases, tags"
                       " and block scalars are not part of the policy subset)")
    if ": " in text or text.endswith(":"):
        raise _Problem("nested mappings are not supported")
    if ambiguous.match(text):
        raise _Problem(f"ambiguous bare value {text[:20]!r}; quote it or use true/false or a plain integer")
    return text


def _check_type(key, value, keys):
    expected = keys[key]
    if expected is bool:
        if not isinstance(value, bool):
            raise _Problem(f"{key} must be true or false")
        return value
    if expected is int or isinstance(expected, range):
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Problem(f"{key} must be an integer")
        low, high = (1, 100000) if expected is int else (expected.start, expected.stop - 1)
        if not low <= value <= high:
            raise _Problem(f"{key} must be from {low} to {high}")
        return value
    if not isinstance(value, str):
        raise _Problem(f"{key} must be a string (quote it)")
    try:
        return validate.tag(value, key)
    except InvalidInput as exc:
        raise _Problem(str(exc)) from None


def parse(text, keys, source="<policy>"):
    """Parse policy text in the strict subset; return the dict of keys present.

    Raises Refused ``invalid policy <source>:<line>: <problem>``.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    policy, seen = {}, {}
    for number, line in enumerate(text.split("\n"), start=1):
        line = line[:-1] if line.endswith("\r") else line
        try:
            if "\t" in line:
                raise _Problem("tab characters are not allowed")
            _invisible(line)
            stripped = line.strip(" ")
            if not stripped or stripped.startswith("#"):
                continue
            if line[0] == " ":
                raise _Problem("indented line: nesting is not supported (flat 'key: value' lines only)")
            if stripped in ("---", "...") or stripped.startswith(("--- ", "%")):
                raise _Problem("document markers and directives are not supported")
            if stripped.startswith("- ") or stripped == "-":
                raise _Problem("lists are not supported")
            match = _compiled()[0].match(line.rstrip(" "))
            if not match:
                raise _Problem("expected 'key: value' (lowercase key, a colon, a space, a value)")
            key, raw = match.group(1), match.group(2) or ""
            if key not in keys:
                raise _Problem(f"unknown key {key!r} (known: {', '.join(sorted(keys))})")
            if key in seen:
                raise _Problem(f"duplicate key {key!r} (first set on line {seen[key]})")
            seen[key] = number
            policy[key] = _check_type(key, _scalar(raw), keys)
        except _Problem as problem:
            raise Refused(f"invalid policy {source}:{number}: {problem}") from None
    return policy


def load(path, keys):
    """The parsed policy file at ``path`` ({} when there is no such file).

    Cached per process by path + (mtime, ctime, size, inode); a malformed, oversized, unreadable or
    non-UTF-8 file raises Refused naming the file (fail closed).
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        _cache.pop(path, None)
        return {}
    except OSError as exc:
        raise Refused(f"invalid policy {path}: cannot read ({exc.strerror})") from None
    stamp = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
    cached = _cache.get(path)
    if cached and cached[0] == stamp:
        return dict(cached[1])
    if not os.path.isfile(path):
        raise Refused(f"invalid policy {path}: not a regular file")
    if info.st_size > MAX_POLICY_BYTES:
        raise Refused(f"invalid policy {path}: {info.st_size} bytes is over the limit of {MAX_POLICY_BYTES}")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_POLICY_BYTES + 1)
    except OSError as exc:
        raise Refused(f"invalid policy {path}: cannot read ({exc.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise Refused(f"invalid policy {path}:{line}: not valid UTF-8") from None
    policy = parse(text, keys, path)
    _cache[path] = (stamp, policy)
    return dict(policy)


