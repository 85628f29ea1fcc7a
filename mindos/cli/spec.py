"""The declaration model: what a command is and which arguments it takes, as plain data.

Every command is declared once, by its CLI module's ``add_<name>(sub)``, against a
:class:`Command`; the three readers are built from that declaration and nothing else:

  * argparse, for ``--help``, ``--version`` and usage errors (:func:`mindos.cli.parsers.fill`
    adds one argparse argument per :class:`Argument`, in declaration order);
  * the plain reader of the common calls (:mod:`mindos.cli.fastparse`);
  * the MCP tool input schemas (:mod:`mindos.mcp.tools`) and the ``protocol`` catalogue
    (:mod:`mindos.cli.protocol`).

Design decisions
  * **The declaring vocabulary is argparse's** (``add_argument``, ``set_defaults``,
    ``add_mutually_exclusive_group``, ``add_subparsers``/``add_parser``, ``get_default``),
    so a command module reads like any argparse program; what is recorded is data
    (:class:`Argument`, :class:`Group`, :class:`Subcommands`), never an argparse object, and
    readers never look inside argparse.
  * **Defaults are resolved the way argparse resolves them**: an argument without its own
    default takes the parser's ``set_defaults`` value for its dest (else ``False`` for a
    switch, ``None`` otherwise), and a later ``set_defaults`` updates it.
  * **Plain classes with ``__slots__``**, not ``dataclasses``: this module is read on every
    call, and importing ``dataclasses`` (inspect, ast, ...) would cost more than the whole
    declaration.
  * ``shared``: the name of the :mod:`mindos.cli.flags` helper that declared an argument
    (None when declared by hand); a test forbids hand-declared copies of the shared flags.
"""

KINDS = ("store", "store_true", "store_false", "append", "help", "version")
_UNSET = object()
_SWITCH_DEFAULTS = {"store_true": False, "store_false": True}


class Argument:
    """One argument.  ``flags``: its option strings (``("--owner",)``), or ``(dest,)`` for a
    positional; ``kind``: one of :data:`KINDS`; ``default``: resolved as argparse would;
    ``hidden``: accepted but left out of ``--help``."""

    __slots__ = ("flags", "dest", "kind", "type", "choices", "default", "required", "help", "metavar", "nargs",
                 "hidden", "version", "group", "shared")

    def __init__(self, flags, dest, kind="store", type=None, choices=None, default=None,  # noqa: A002
                 required=False, help=None, metavar=None, nargs=None, hidden=False, version=None):  # noqa: A002
        self.flags, self.dest, self.kind, self.type, self.choices = flags, dest, kind, type, choices
        self.default, self.required, self.help, self.metavar, self.nargs = default, required, help, metavar, nargs
        self.hidden, self.version, self.group, self.shared = hidden, version, None, None

    @property
    def positional(self):
        return not self.flags[0].startswith("-")

    @property
    def switch(self):
        return self.kind in ("store_true", "store_false")

    @property
    def repeatable(self):
        return self.kind == "append" or self.nargs in ("*", "+")

    @property
    def must(self):
        """Whether the call must give it (a positional unless its nargs is optional)."""
        return self.nargs not in ("?", "*") if self.positional else bool(self.required)

    @property
    def name(self):
        """How people name it: its first flag (a positional: its dest)."""
        return self.flags[0]


def json_type(kind):
    """The JSON type of an argument's ``type`` (by name: ``int`` and ``flags.integer`` alike),
    as the MCP tool schemas and ``protocol`` publish it."""
    name = getattr(kind, "__name__", None)
    return {"int": "integer", "integer": "integer", "float": "number", "number": "number"}.get(name, "string")


# the implicit -h/--help every parser has
HELP = Argument(("-h", "--help"), "help", kind="help", help="show this help message and exit")


class Group:
    """A mutually exclusive group of arguments (one at most; one exactly when ``required``)."""

    __slots__ = ("command", "required", "arguments")

    def __init__(self, command, required=False):
        self.command, self.required, self.arguments = command, required, []

    def add_argument(self, *names, **kwargs):
        argument = self.command.add_argument(*names, **kwargs)
        argument.group = self
        self.arguments.append(argument)
        return argument


class Subcommands:
    """Nested actions of a command (``mood create``, ``mood list`` ...): ``options`` are the
    ``add_subparsers`` keywords (dest, metavar, required ...); ``choices`` ``{name: Command}``."""

    __slots__ = ("dest", "required", "options", "choices")

    def __init__(self, options):
        options.pop("parser_class", None)  # argparse's concern: the builder chooses its parser
        self.options, self.dest, self.required = options, options.get("dest"), bool(options.get("required"))
        self.choices = {}

    def add_parser(self, name, help=None, **options):  # noqa: A002 - argparse's keyword
        command = Command(name, help, options)
        self.choices[name] = command
        return command


class Command:
    """One command (or nested action): ``name``; ``summary`` (its line in the door's list);
    ``options``: the parser keywords (prog, description ...); ``arguments`` in declaration
    order; ``groups``; ``defaults`` (every ``set_defaults`` value: handler, needs_db ...);
    ``subcommands`` (a :class:`Subcommands`, or None)."""

    __slots__ = ("name", "summary", "options", "arguments", "groups", "defaults", "subcommands", "by_flag")

    def __init__(self, name, summary=None, options=None):
        self.name, self.summary, self.options = name, summary, options or {}
        self.arguments, self.groups, self.defaults, self.subcommands, self.by_flag = [], [], {}, None, {}

    @property
    def prog(self):
        return self.options.get("prog")

    @property
    def description(self):
        return self.options.get("description")

    @property
    def positionals(self):
        return [argument for argument in self.arguments if argument.positional]

    def add_argument(self, *names, action=None, type=None, choices=None, default=_UNSET,  # noqa: A002
                     required=None, dest=None, help=None, metavar=None, nargs=None, hidden=False,  # noqa: A002
                     version=None):
        kind = action or "store"
        if kind not in KINDS or not names:
            raise ValueError(f"{self.name}: cannot declare {names!r} with action {action!r}")
        if names[0].startswith("-"):
            dest = dest or next((name for name in names if name.startswith("--")), names[0]).lstrip("-").replace("-", "_")
        else:
            if len(names) != 1 or dest is not None:
                raise ValueError(f"{self.name}: a positional is named once: {names!r}")
            dest = names[0]
        if default is _UNSET:
            default = self.defaults.get(dest, _SWITCH_DEFAULTS.get(kind))
        argument = Argument(names, dest, kind, type, choices, default, bool(required), help, metavar, nargs,
                            hidden, version)
        self.arguments.append(argument)
        for name in names:
            if name.startswith("-"):
                self.by_flag[name] = argument
        return argument

    def add_mutually_exclusive_group(self, required=False):
        group = Group(self, required)
        self.groups.append(group)
        return group

    def set_defaults(self, **values):
        self.defaults.update(values)
        for argument in self.arguments:
            if argument.dest in values:
                argument.default = values[argument.dest]

    def get_default(self, dest):
        for argument in self.arguments:
            if argument.dest == dest and argument.default is not None:
                return argument.default
        return self.defaults.get(dest)

    def add_subparsers(self, **options):
        self.subcommands = Subcommands(options)
        return self.subcommands
