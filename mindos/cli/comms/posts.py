"""``mood_poller.py post / posts / typing / arrive``: what is said in a Mood and the signals around it."""

import sys

from mindos.cli import flags, make_parser
from mindos.comms import posts
from mindos.errors import InvalidInput


def add_post(sub):
    p = make_parser(sub, "post",
                    "mood_poller.py post infra --author justin --via ssh '@re can you check step 4?'")
    p.add_argument("mood")
    p.add_argument("text", help="the post's words ('-' reads them from stdin)")
    p.add_argument("--author", required=True)
    p.add_argument("--via", required=True, choices=("ssh", "web", "terminal", "handoff", "agent"),
                   help="how it was sent: ssh (signed in with an SSH key), web, terminal, handoff, agent")
    p.add_argument("--full-tools", action="store_true", help="an agent's post sent with full tools")
    flags.redact(p, "post a [REDACTED:<kind>] copy of credential-shaped text")
    flags.allow_secret(p, "post credential-shaped text as is (audited)")
    p.add_argument("--reply-to", type=flags.integer, metavar="POST_ID",
                   help="the post (in this Mood) this one answers; a person's explicit reply is the only post "
                        "besides the agent's own that answers a mention")
    p.add_argument("--to", dest="to_agent", default="", metavar="AGENT",
                   help="with --via handoff: the agent the handoff is addressed to (it wakes at once)")
    p.set_defaults(handler=cmd_post)


def cmd_post(conn, args):
    text = args.text
    if text == "-":
        try:
            text = sys.stdin.read()
        except UnicodeDecodeError:
            raise InvalidInput("invalid post text: stdin is not valid UTF-8") from None
    return posts.add(conn, args.mood, args.author, text, via=args.via, full_tools=args.full_tools,
                     redact=args.redact, allow_secret=args.allow_secret, reply_to=args.reply_to,
                     to_agent=args.to_agent)


def add_react(sub):
    p = make_parser(sub, "react",
                    "mood_poller.py react infra 12 +1 --who alice")
    p.add_argument("mood")
    p.add_argument("post_id", type=flags.integer)
    p.add_argument("reaction", help="one word or emoji, at most 32 characters, no spaces")
    p.add_argument("--who", required=True, help="who reacted")
    p.set_defaults(handler=cmd_react)


def cmd_react(conn, args):
    return posts.react(conn, args.mood, args.post_id, args.who, args.reaction)


def add_posts(sub):
    p = make_parser(sub, "posts",
                    "mood_poller.py posts infra --limit 20")
    p.add_argument("mood")
    flags.limit(p, default=50, help=None)
    p.set_defaults(handler=cmd_posts)


def cmd_posts(conn, args):
    return {"posts": posts.recent(conn, args.mood, limit=args.limit)}


def add_typing(sub):
    p = make_parser(sub, "typing",
                    "mood_poller.py typing infra justin --seconds 30")
    p.add_argument("mood")
    p.add_argument("who")
    p.add_argument("--seconds", type=flags.integer, help="how long the signal lasts (typing 30, at work 900 by default)")
    p.add_argument("--at-work", action="store_true", help="an at-work signal instead of typing")
    p.add_argument("--stop", action="store_true", help="clear the signal now")
    p.set_defaults(handler=cmd_typing)


def cmd_typing(conn, args):
    return posts.signal(conn, args.mood, args.who, kind="at-work" if args.at_work else "typing",
                        seconds=args.seconds, stop=args.stop)


def add_arrive(sub):
    p = make_parser(sub, "arrive",
                    "mood_poller.py arrive infra justin --via ssh")
    p.add_argument("mood")
    p.add_argument("who")
    p.add_argument("--via", default="ssh", choices=("ssh", "web", "terminal", "handoff", "agent"))
    p.set_defaults(handler=cmd_arrive)


def cmd_arrive(conn, args):
    return posts.arrive(conn, args.mood, args.who, via=args.via)


COMMANDS = {"post": add_post, "react": add_react, "posts": add_posts, "typing": add_typing, "arrive": add_arrive}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "post": "{author body created_at full_tools id kind mood reply_to to_agent via}",
    "react": "{changed created_at mood post reaction who}",
    "posts": "{posts}",
    "typing": "{kind mood until who}",
    "arrive": "{arrival created_at mood via who}",
}
