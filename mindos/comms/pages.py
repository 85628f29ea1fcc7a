"""Revisioned pages and the trusted-editor list.

The words a wake carries and the instruction layers of a bundle live in this database as
pages (the equivalent of the wiki pages the wake spec names).  A page is never edited in
place: every save is a new revision naming its editor, and readers take the newest revision
saved by an editor on the trusted list, so an untrusted edit is kept (and shown) but never
sent to an agent.
"""

from mindos.core import clock, validate
from mindos.errors import InvalidInput, NotFound
from mindos.store import db, guard, ledger

MAX_PAGE = 200_000
# how many trusted revisions a reader walks back looking for a usable one
REVISION_WINDOW = 20

WAKE_TEXTS = "Moods/Wake texts"
DIALS = "Moods/Dials"
INSTRUCTIONS = "Moods/Instructions"
GENERAL_ORDERS = "GeneralOrders"


def page_name(value, flag="page"):
    """A page name: 1-128 printable characters (no tab or other control character), no
    leading/trailing space."""
    if not isinstance(value, str) or not value.strip() or len(value) > 128 or value != value.strip():
        raise InvalidInput(f"invalid {flag}: {validate.shown(value)} (use 1-128 printable characters)")
    if not value.isprintable():  # a tab, a line break, an escape: a name must be typed and shown as it is
        raise InvalidInput(f"invalid {flag}: {validate.shown(value)} contains a control character; a page name is"
                           " 1-128 printable characters")
    return validate.line(value, flag, required=True, max_len=128)


def save(conn, name, body, *, editor, note=""):
    """Save a new revision of page ``name`` by ``editor``; return the revision record."""
    name = page_name(name)
    editor = validate.agent(editor, "--editor")
    body = validate.text(body, "page text", required=True, max_len=MAX_PAGE)
    note = validate.line(note, "--note", max_len=500)
    now = clock.now_iso()
    with db.write(conn):
        guard.check(conn, "mood_page", "-", {"page": name, "text": body, "note": note})
        conn.execute("INSERT OR IGNORE INTO mood_pages(name, created_at) VALUES (?, ?)", (name, now))
        cursor = conn.execute(
            "INSERT INTO mood_page_revisions(page, editor, body, note, created_at) VALUES (?, ?, ?, ?, ?)",
            (name, editor, body, note, now))
        revision = cursor.lastrowid
        trusted = is_trusted(conn, editor)
        ledger.append_event(conn, "mood_page", name, "mood_page_saved",
                            {"revision": revision, "editor": editor, "trusted": trusted, "chars": len(body)})
    return {"page": name, "revision": revision, "editor": editor, "trusted": trusted, "created_at": now}


def show(conn, name, *, revision=None, history=False):
    """The page's revisions: the one in use (newest trusted), the newest, or one by id."""
    name = page_name(name)
    if conn.execute("SELECT 1 FROM mood_pages WHERE name = ?", (name,)).fetchone() is None:
        raise NotFound(f"no page named {validate.shown(name)}")
    rows = conn.execute(
        "SELECT r.id, r.editor, r.body, r.note, r.created_at, coalesce(e.trusted, 0) AS trusted"
        " FROM mood_page_revisions r LEFT JOIN mood_editors e ON e.name = r.editor"
        " WHERE r.page = ? ORDER BY r.id DESC", (name,)).fetchall()
    revisions = [_revision(row) for row in rows]
    in_use = next((r for r in revisions if r["trusted"]), None)
    result = {"page": name, "revisions": len(revisions), "in_use": in_use["revision"] if in_use else None}
    if revision is not None:
        chosen = next((r for r in revisions if r["revision"] == revision), None)
        if chosen is None:
            raise NotFound(f"page {validate.shown(name)} has no revision {revision}")
        result["revision"] = chosen
    else:
        result["revision"] = in_use or revisions[0]
    if history:
        result["history"] = [{k: v for k, v in r.items() if k != "body"} for r in revisions]
    return result


def _revision(row):
    return {"revision": row["id"], "editor": row["editor"], "body": row["body"], "note": row["note"],
            "created_at": row["created_at"], "trusted": bool(row["trusted"])}


def trusted_revisions(conn, name, limit=REVISION_WINDOW):
    """Newest-first ``[(revision id, body)]`` saved by trusted editors (one query)."""
    return [(row[0], row[1]) for row in conn.execute(
        "SELECT r.id, r.body FROM mood_page_revisions r JOIN mood_editors e ON e.name = r.editor AND e.trusted = 1"
        " WHERE r.page = ? ORDER BY r.id DESC LIMIT ?", (name, limit))]


def is_trusted(conn, editor):
    """True when ``editor`` is on the trusted-editor list."""
    row = conn.execute("SELECT trusted FROM mood_editors WHERE name = ?", (editor,)).fetchone()
    return bool(row and row[0])


def set_trust(conn, editor, trusted):
    """Put ``editor`` on (or take it off) the trusted-editor list; return the entry."""
    editor = validate.agent(editor, "editor")
    now = clock.now_iso()
    with db.write(conn):
        conn.execute(
            "INSERT INTO mood_editors(name, trusted, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT(name) DO UPDATE SET trusted = excluded.trusted, updated_at = excluded.updated_at",
            (editor, int(trusted), now))
        ledger.append_event(conn, "mood_editor", editor, "mood_editor_trusted" if trusted else "mood_editor_untrusted")
    return {"editor": editor, "trusted": bool(trusted), "updated_at": now}


def listing(conn):
    """Every page with its revision count and the revision in use, plus the editor list."""
    pages = [{"page": row[0], "revisions": row[1], "in_use": row[2]} for row in conn.execute(
        "SELECT p.name, count(r.id),"
        " (SELECT max(r2.id) FROM mood_page_revisions r2 JOIN mood_editors e ON e.name = r2.editor AND e.trusted = 1"
        "  WHERE r2.page = p.name)"
        " FROM mood_pages p LEFT JOIN mood_page_revisions r ON r.page = p.name GROUP BY p.name ORDER BY p.name")]
    editors = [{"editor": row[0], "trusted": bool(row[1])}
               for row in conn.execute("SELECT name, trusted FROM mood_editors ORDER BY name")]
    return {"pages": pages, "editors": editors}
