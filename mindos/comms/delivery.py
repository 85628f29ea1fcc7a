"""Handing a wake to an agent's command, and reading its reply.

The agent's configured command (an argv list, never a shell line) gets the wake on stdin,
the turn's tools in its environment (``MOOD_WAKE_TOOLS=full`` or ``look-only``), and a
timeout.  Its stdout is the reply.  Whatever the command does -- hang, crash, exit non-zero,
print bytes that are not text -- :func:`run` returns an outcome and never raises, so one
agent can never stop a tick.  The command runs in its own process group, so a timeout kills
whatever it started too.

:func:`parse_reply` reads a reply: ``<silent>why</silent>`` (nothing posted), a take
(``<take to="..."/>`` alone), or words to post.  A reply that ends with a control tag after
other words is posted as written and flagged ``nearmiss`` (the tag is not acted on).

When the harness's tool-loop guard ends a turn, the runner says so on the last line of its
stdout: ``<loop-guard why="the guard's own words"/>``.  The line is taken off the reply and
recorded with the wake (``loop_guard``); the agent's next wake in the Mood opens with it.
"""

import os
import re
import signal
import subprocess
import time

MAX_REPLY = 32768
MAX_DETAIL = 300

_SILENT = re.compile(r"\A<silent>(.*?)</silent>\Z", re.DOTALL)
_TAKE = re.compile(r'\A<take\s+to\s*=\s*"([^"]{0,500})"\s*/>\Z')
_TRAILING_TAG = re.compile(r'(<silent>.*?</silent>|<take\s+to\s*=\s*"[^"]*"\s*/>)\s*\Z', re.DOTALL)
_LOOP_GUARD = re.compile(r'\s*<loop-guard\s+why\s*=\s*"([^"]{0,500})"\s*/>\s*\Z')
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean(data):
    """Bytes from a command as text: undecodable bytes replaced, control characters dropped."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    return _CONTROL.sub("", text).replace("\r\n", "\n").strip()


def parse_reply(text):
    """``{"outcome": "empty" | "silent" | "took" | "replied", ...}`` for a cleaned reply, with
    ``loop_guard`` (the guard's words) when the tool-loop guard ended the turn."""
    guard = _LOOP_GUARD.search(text or "")
    if guard:
        result = parse_reply(text[:guard.start()].strip())
        result["loop_guard"] = guard.group(1).strip()[:MAX_DETAIL] or "no reason given"
        return result
    if not text:
        return {"outcome": "empty"}
    match = _SILENT.match(text)
    if match:
        return {"outcome": "silent", "why": match.group(1).strip()[:MAX_DETAIL]}
    match = _TAKE.match(text)
    if match:
        return {"outcome": "took", "to": match.group(1).strip()}
    result = {"outcome": "replied", "text": text[:MAX_REPLY]}
    if len(text) > MAX_REPLY:
        result["truncated"] = len(text)
    if _TRAILING_TAG.search(text):
        result["nearmiss"] = True
    return result


def run(argv, wake_text, *, env=None, timeout=600):
    """Run ``argv`` with the wake on stdin; return ``{"outcome", "seconds", ...}``, never raising.

    Outcomes: those of :func:`parse_reply`, or ``failed`` (could not start, exited non-zero)
    and ``timeout`` (killed after ``timeout`` seconds).
    """
    if not argv:
        return {"outcome": "failed", "detail": "no command", "seconds": 0.0}
    environment = dict(os.environ)
    environment.update(env or {})
    started = time.monotonic()
    try:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=environment, start_new_session=True)
    except (OSError, ValueError, TypeError) as exc:
        return {"outcome": "failed", "detail": f"could not start: {exc}"[:MAX_DETAIL], "seconds": 0.0}
    try:
        out, err = process.communicate(wake_text.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(process)
        return {"outcome": "timeout", "detail": f"no reply within {timeout}s",
                "seconds": round(time.monotonic() - started, 3)}
    except OSError as exc:  # e.g. the command closed stdin early and the pipe broke
        _kill(process)
        return {"outcome": "failed", "detail": f"pipe: {exc}"[:MAX_DETAIL],
                "seconds": round(time.monotonic() - started, 3)}
    seconds = round(time.monotonic() - started, 3)
    if process.returncode != 0:
        tail = clean(err or b"").splitlines()[-1:] or [""]
        return {"outcome": "failed", "detail": f"exit {process.returncode}: {tail[0]}"[:MAX_DETAIL],
                "seconds": seconds}
    result = parse_reply(clean(out or b""))
    result["seconds"] = seconds
    return result


def _kill(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (OSError, ProcessLookupError):
        try:
            process.kill()
        except OSError:
            pass
    try:
        process.communicate(timeout=5)
    except (subprocess.TimeoutExpired, OSError):
        pass
