"""What a look costs, and the shared daily dollar budget.

Costs are estimated from the tokens a wake makes the agent read (its text plus its bundle,
about four characters a token): a cold read, about $1.25 per 200k tokens, unless the agent
had a wake in the same Mood within the hour (warm, about $0.15 per 200k: the middle of the
spec's $0.10-0.20).  A screen call with a configured screen command costs about $0.004; the
built-in screen costs nothing.

Every estimate lands in ``mood_budget``.  Screens and unasked looks (consider, quiet,
arrival) draw on the daily budget; mentions and the crosstalk look after a mention's turn are
recorded ``exempt`` and never refused for budget.  A day is a UTC calendar day of the one
clock.
"""

from mindos.core import clock

COLD_USD_PER_TOKEN = 1.25 / 200_000
WARM_USD_PER_TOKEN = 0.15 / 200_000
SCREEN_USD = 0.004
WARM_SECONDS = 3600
EXEMPT_KINDS = ("mention", "crosstalk")


def tokens(text):
    """Estimated tokens of ``text`` (four characters a token, rounded up)."""
    return (len(text) + 3) // 4


def is_warm(last_wake_at, now_text):
    """True when the agent's last wake in this Mood was within the hour."""
    return bool(last_wake_at) and clock.seconds_between(last_wake_at, now_text) < WARM_SECONDS


def estimate(token_count, warm):
    """Dollars for reading ``token_count`` tokens, cold or warm (rounded to 1/10000 cent)."""
    rate = WARM_USD_PER_TOKEN if warm else COLD_USD_PER_TOKEN
    return round(token_count * rate, 6)


def day(now_text=None):
    """The budget day of an instant (its UTC date)."""
    return (now_text or clock.now_iso())[:10]


def spent_today(conn, now_text=None):
    """Dollars drawn on today's budget so far (one query)."""
    return conn.execute("SELECT coalesce(sum(usd), 0) FROM mood_budget WHERE day = ? AND exempt = 0",
                        (day(now_text),)).fetchone()[0]


def record(conn, kind, mood_id, agent, usd, *, token_count=0, warm=False, wake_id=None):
    """Add one budget line inside the caller's write; mentions and crosstalk are exempt."""
    now = clock.now_iso()
    conn.execute(
        "INSERT INTO mood_budget(day, kind, mood_id, agent, wake_id, tokens, warm, usd, exempt, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (day(now), kind, mood_id, agent, wake_id, token_count, int(warm), usd, int(kind in EXEMPT_KINDS), now))


def summary(conn, now_text=None):
    """Today's budget lines by kind: ``{"day", "spent_usd", "exempt_usd", "by_kind"}``."""
    today = day(now_text)
    by_kind = {row[0]: {"usd": round(row[1], 6), "count": row[2]} for row in conn.execute(
        "SELECT kind, sum(usd), count(*) FROM mood_budget WHERE day = ? GROUP BY kind ORDER BY kind", (today,))}
    spent = sum(v["usd"] for k, v in by_kind.items() if k not in EXEMPT_KINDS)
    exempt = sum(v["usd"] for k, v in by_kind.items() if k in EXEMPT_KINDS)
    return {"day": today, "spent_usd": round(spent, 6), "exempt_usd": round(exempt, 6), "by_kind": by_kind}
