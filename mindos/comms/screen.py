"""The screen in front of an unasked wake.

A screen may only dismiss what is plainly not for the agent; everything else passes,
including anything it is not sure of.  A configured ``screen_command`` (the pluggable
screen: a small toolless model, say) gets a JSON request on stdin and answers ``dismiss`` or
``pass`` as the first word of its stdout; any other answer, a crash or a timeout passes.
Without one, the built-in screen dismisses only plain small talk: every post short, with no
question, no mention, no link or code, and made of greeting / thanks / acknowledgement words.
"""

import json
import re

from mindos.comms import delivery

SCREEN_TIMEOUT = 30
# greetings, thanks and laughter only: "yes", "no", "sure" can be answers, so they pass
SMALL_TALK = frozenset("""
hi hey hello hiya yo morning evening night gm gn good bye goodbye cya later see you all folks everyone
thanks thank thx ty cheers cool nice great lol lmao haha hah heh brb afk welcome congrats congratulations
awesome sweet
""".split())
_WORD = re.compile(r"[a-z']+")
_NOT_SMALL = re.compile(r"[?@`/\\{}<>\[\]#$=]|https?:|\d")
MAX_SMALL_WORDS = 6


def small_talk(text):
    """True when ``text`` is plainly small talk (the built-in screen's only dismissal)."""
    lowered = (text or "").lower().strip()
    if not lowered or _NOT_SMALL.search(lowered):
        return False
    words = _WORD.findall(lowered)
    return 0 < len(words) <= MAX_SMALL_WORDS and all(word.strip("'") in SMALL_TALK for word in words)


def builtin(posts):
    """The built-in verdict: dismiss only when every post is small talk."""
    if posts and all(small_talk(post["body"]) for post in posts):
        return {"verdict": "dismiss", "by": "builtin", "why": "small talk"}
    return {"verdict": "pass", "by": "builtin"}


def run(argv, request):
    """Ask the screen command; return ``{"verdict", "by": "command", ...}`` (pass unless it
    plainly says dismiss)."""
    result = delivery.run(list(argv), json.dumps(request, sort_keys=True), timeout=SCREEN_TIMEOUT)
    words = (result.get("text") or "").split()
    if result["outcome"] == "replied" and words and words[0].lower().strip(".:") == "dismiss":
        return {"verdict": "dismiss", "by": "command", "why": " ".join(words[1:])[:200]}
    answer = {"verdict": "pass", "by": "command"}
    if result["outcome"] not in ("replied",):
        answer["screen_outcome"] = result["outcome"]
    return answer
