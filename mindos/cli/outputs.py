"""How a command declares the shape of what it prints, for ``protocol``.

Each CLI module keeps ``OUTPUTS = {"command": "<shape>", ...}`` beside its ``COMMANDS``:
plain strings, so a call pays nothing for them (only ``protocol`` parses them).  A shape is

  * ``{a b ?c}``: a JSON object with top-level keys ``a`` and ``b`` always, ``c`` only under
    the flag or the state that asks for it; ``...`` inside means more keys may appear (a
    registry of counters, such as ``metrics``);
  * ``[{a b ?c}]``: a JSON array of such objects; ``[]``: an array of plain values;
  * ``text``: text for people;
  * ``<shape> | --flag <shape>``: what a flag switches the output to (``text | --json {a}``,
    ``{a} | --text text``, ``text | --format=json {a}`` for a flag's value);
  * ``@task`` inside braces stands for every key of a task row (:data:`FRAGMENTS`);
  * a dict ``{"create": "<shape>", ...}``: a command with nested actions (``mood create``).

``tests/cli/test_protocol.py`` requires a shape for every command of every door and runs a
session of real calls, checking each output against the shape its command declares.
"""

# keys shared by many shapes, written once
FRAGMENTS = {
    "task": "blocked_reason branch correction_of created_at description due_at id lease_epoch lease_expires_at lease_owner"
            " next_action not_before owner pr_url priority project recall_digest recap recover_after requires_receipts"
            " retry_count status tags title updated_at worktree",
    "handoff": "ack_recall_digest acked_at acked_by commit_ref constraints created_at decisions evidence files"
               " from_agent id live next_actions objective payload_hash recall_digest risks status superseded_at"
               " superseded_by supersedes task_id to_agent",
    "note": "content created_at expired expires_at id kind pinned source superseded_at superseded_by supersedes"
            " task_id",
    "memory": "content created_at engine id kind live project retracted_at source superseded_by tags",
    "fact": "created_at id object predicate retract_reason retracted_at source subject task_id valid_from valid_until",
}


def parse(shape):
    """The data form of a declared shape (see the module docstring); ValueError when malformed."""
    if isinstance(shape, dict):
        return {"type": "by_action", "actions": {name: parse(each) for name, each in shape.items()}}
    text = " ".join(shape.split())
    if " | " in text:
        first, *others = text.split(" | ")
        parsed = parse(first)
        parsed["variants"] = []
        for other in others:
            flag, _, rest = other.partition(" ")
            if not flag.startswith("--") or not rest:
                raise ValueError(f"malformed shape {shape!r}")
            parsed["variants"].append({"flag": flag, "shape": parse(rest)})
        return parsed
    if text == "text":
        return {"type": "text"}
    if text == "[]":
        return {"type": "array", "item_keys": [], "optional": [], "open": False}
    if text.startswith("[") and text.endswith("]"):
        inner = _keys(text[1:-1], shape)
        return {"type": "array", "item_keys": inner["keys"], "optional": inner["optional"], "open": inner["open"]}
    inner = _keys(text, shape)
    return {"type": "object", **inner}


def _keys(text, shape):
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"malformed shape {shape!r}")
    keys, optional, open_ = set(), set(), False
    for word in text[1:-1].split():
        if word == "...":
            open_ = True
        elif word.startswith("@"):
            keys.update(FRAGMENTS[word[1:]].split())
        elif word.startswith("?"):
            optional.add(word[1:])
        else:
            keys.add(word)
    return {"keys": sorted(keys), "optional": sorted(optional - keys), "open": open_}


def chosen(shape, argv):
    """The shape a call prints: the variant whose flag (``--json``, or ``--format=json`` for a
    value) is in ``argv``, else the default."""
    for variant in shape.get("variants", ()):
        flag, _, value = variant["flag"].partition("=")
        if (flag in argv and not value) or f"{flag}={value}" in argv or any(
                a == flag and b == value for a, b in zip(argv, argv[1:])):
            return variant["shape"]
    return shape


def problems(shape, output):
    """What in ``output`` (a command's parsed stdout) disagrees with the parsed ``shape``:
    a list of one-line descriptions (empty when it fits)."""
    kind = shape["type"]
    if kind == "text":
        return [] if isinstance(output, str) else ["declared text, printed JSON"]
    if kind == "object":
        if not isinstance(output, dict):
            return [f"declared an object, printed {type(output).__name__}"]
        return _compare(set(output), shape["keys"], shape["optional"], shape["open"])
    if kind == "array":
        if not isinstance(output, list):
            return [f"declared an array, printed {type(output).__name__}"]
        found = []
        for item in output:
            if shape["item_keys"] or shape["optional"]:
                if not isinstance(item, dict):
                    return [f"declared an array of objects, found {type(item).__name__}"]
                found += _compare(set(item), shape["item_keys"], shape["optional"], shape["open"])
        return sorted(set(found))
    return [f"cannot check a {kind} shape directly"]


def _compare(present, keys, optional, open_):
    missing = sorted(set(keys) - present)
    extra = [] if open_ else sorted(present - set(keys) - set(optional))
    return ([f"missing key {key}" for key in missing]) + ([f"undeclared key {key}" for key in extra])
