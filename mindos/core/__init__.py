"""The leaves every dimension builds on: the clock, validation, canonical JSON and hashes,
sealed documents, atomic writes, the secret guard, text tokens, the home and policy files;
and :func:`load_module`, which imports a module named at run time (a registry entry)."""


def load_module(name):
    """Import module ``name`` (a dotted path) and return it: what ``importlib.import_module``
    does for an absolute name, without loading importlib (costly to import) for the one
    registry lookup a call makes."""
    import sys

    __import__(name)
    return sys.modules[name]
