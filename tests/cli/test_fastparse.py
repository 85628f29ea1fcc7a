"""mindos.cli.fastparse reads a call exactly as argparse would, or leaves it to argparse.

argparse is the oracle: for every command of every door, the calls fastparse reads must
give the namespace argparse gives (same keys, same order, same values), and every call
argparse refuses must be declined.  The plain shapes agents use must actually be read (or
the fast path would quietly never run)."""

import argparse
import contextlib
import io
import random

import pytest

from mindos.cli import doors, fastparse, parsers, spec
from mindos.errors import MindosError

SAMPLES = ("t-1a2b3c4d", "3", "2026-01-02T03:04:05Z", "0.5", "codex", "P", "note text", "a.b", "x")


def _commands():
    for door in doors.DOORS.values():
        for name in doors.commands(door):
            yield door, name


def _oracle(parser, argv):
    """argparse's namespace for ``argv``, or None when it refuses (or prints help)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return parser.parse_args(argv)
    except (SystemExit, MindosError):
        return None


def _sample(argument):
    """A value argparse accepts for the declared ``argument`` (its type, then its choices), or None."""
    for text in ([str(choice) for choice in argument.choices] if argument.choices else SAMPLES):
        try:
            value = text if argument.type is None else argument.type(text)
        except (ValueError, TypeError, argparse.ArgumentTypeError, MindosError):
            continue
        if argument.choices is None or value in argument.choices:
            return text
    return None


def _shape(command):
    """(positional arguments, optional arguments, whether fastparse models this declaration)."""
    positionals = [argument for argument in command.arguments if argument.positional]
    optionals = [argument for argument in command.arguments if not argument.positional]
    modelled = (command.subcommands is None and all(argument.nargs is None for argument in command.arguments)
                and all(flag.startswith("--") for argument in optionals for flag in argument.flags))
    return positionals, optionals, modelled


def _canonical(command, positionals, optionals):
    """The plainest call argparse accepts: every positional, then the required flags (the
    first flag of each required exclusive group), each with a sample value."""
    argv = []
    for argument in positionals:
        value = _sample(argument)
        if value is None:
            return None
        argv.append(value)
    covered = set()
    for argument in optionals:
        group = argument.group
        needed = argument.required or (group is not None and group.required and id(group) not in covered)
        if not needed:
            continue
        if group is not None:
            covered.add(id(group))
        argv.append(argument.flags[0])
        if not argument.switch:
            value = _sample(argument)
            if value is None:
                return None
            argv.append(value)
    return argv


def _variants(base, optionals):
    """The canonical call with each optional flag added in the shapes agents use."""
    yield base
    for argument in optionals:
        flag = argument.flags[-1]
        if argument.switch:
            yield [*base, flag]
            yield [flag, *base]
            continue
        value = _sample(argument)
        if value is None:
            continue
        yield [*base, flag, value]
        yield [flag, value, *base]
        yield [*base, f"{flag}={value}"]
        yield [*base, flag, value, flag, value]
        yield [*base, flag, ""]


@pytest.mark.parametrize("door,name", list(_commands()), ids=lambda item: getattr(item, "script", item))
def test_fastparse_reads_plain_calls_as_argparse_does(door, name):
    parser = parsers.command_parser(door, door.script, name)
    command = parser.mindos_command
    positionals, optionals, modelled = _shape(command)
    base = _canonical(command, positionals, optionals)
    if not modelled:  # nested subcommands, nargs, short flags: always argparse's
        assert all(fastparse.parse(door, door.script, name, argv) is None for argv in ([], base or [], ["x"]))
        return
    if base is None:
        pytest.skip("no sample value argparse accepts for a required argument")
    assert _oracle(parser, base) is not None, base
    read = 0
    for argv in _variants(base, optionals):
        fast = fastparse.parse(door, door.script, name, list(argv))
        expected = _oracle(parser, list(argv))
        if fast is None:
            continue
        read += 1
        assert expected is not None, f"fastparse read a call argparse refuses: {argv}"
        assert list(vars(fast).items()) == list(vars(expected).items()), argv
    assert fastparse.parse(door, door.script, name, list(base)) is not None, f"the plain call was declined: {base}"
    assert read


@pytest.mark.parametrize("door,name", list(_commands()), ids=lambda item: getattr(item, "script", item))
def test_fastparse_never_reads_a_call_otherwise_than_argparse(door, name):
    """Random calls mixing declared flags, values, positionals and the shapes fastparse must
    leave to argparse (help, --, short and unknown flags, negative numbers, missing values):
    whatever fastparse reads, argparse reads the same way."""
    parser = parsers.command_parser(door, door.script, name)
    positionals, optionals, _ = _shape(parser.mindos_command)
    flags = [flag for argument in optionals for flag in argument.flags]
    values = [text for text in (_sample(argument) for argument in positionals + optionals) if text is not None]
    pool = flags * 2 + values * 2 + ["", "-h", "--help", "--", "-x", "--nope", "-5", "-", "--=x", "x=y", "nan", "-1.5"]
    pool += [f"{flag}={value}" for flag in flags[:6] for value in values[:2]] + [f"{flag}=" for flag in flags[:3]]
    rng = random.Random(f"{door.script} {name}")
    for _ in range(80):
        argv = [rng.choice(pool) for _ in range(rng.randint(0, 7))]
        fast = fastparse.parse(door, door.script, name, list(argv))
        if fast is None:
            continue
        expected = _oracle(parser, list(argv))
        assert expected is not None, f"fastparse read a call argparse refuses: {argv}"
        assert list(vars(fast).items()) == list(vars(expected).items()), argv


@pytest.mark.parametrize("argv", [
    ["t-1", "--agent"],                        # a flag without its value
    ["t-1", "--agent", "--budget", "5"],      # a flag where the value should be
    ["t-1", "--agent", "a", "--budget", "x"],  # a type error
    ["t-1", "--agent", "a", "--related-scope", "galaxy"],  # not a choice
    ["--agent", "a"],                          # the positional missing
    ["t-1", "t-2", "--agent", "a"],            # an extra positional
    ["t-1", "--agent", "a", "--rerank=yes"],   # a value for a switch
    ["t-1", "--agent", "a", "--bud", "5"],     # a prefix of a flag: never taken as the flag
    ["t-1", "--agent", "a", "-h"],
    ["--", "t-1", "--agent", "a"],
    ["t-1", "--agent", "-a"],                  # a value starting with '-'
])
def test_what_argparse_must_read_is_declined(argv):
    assert fastparse.parse(doors.AUTOPILOT, "autopilot.py", "recall", argv) is None


def test_declined_calls_still_get_argparse_messages(cli):
    rc, _, err = cli("autopilot", "recall", "t-1", "--agent", "a", "--related-scope", "galaxy")
    assert rc == 2 and "invalid choice: 'galaxy'" in err and err.count("\n") == 1
    rc, out, _ = cli("autopilot", "recall", "--help")
    assert rc == 0 and "--related-semantic" in out


def test_a_plain_recall_reads_its_flags_typed_and_defaulted():
    args = fastparse.parse(doors.AUTOPILOT, "autopilot.py", "recall",
                           ["t-1", "--agent=codex", "--budget", "6000", "--rerank", "--pinned-boost", "0.25"])
    assert (args.task_id, args.agent, args.budget, args.rerank, args.pinned_boost) == ("t-1", "codex", 6000, True, 0.25)
    assert args.related is None and args.command == "recall" and callable(args.handler)


def test_a_string_default_goes_through_the_type_as_argparse_does():
    # no command declares one today; a future one must still read as argparse reads it
    def declare(p):
        p.add_argument("--every", type=int, default="7")
        p.add_argument("--then", type=int, default="8")
        p.add_argument("--label", default="plain")
        p.set_defaults(handler=len)

    reference = argparse.ArgumentParser()
    declare(reference)
    recorded = spec.Command("every")
    declare(recorded)
    for argv in ([], ["--then", "2"], ["--every=3", "--label", "x"]):
        assert vars(fastparse._read(recorded, argv)) == vars(reference.parse_args(argv))
    assert fastparse._read(recorded, []).every == 7  # converted, not the text "7"
