"""The one exception family core code raises.

Each error carries a one-line message in the spec's words.  ``mindos.cli`` is the only
place that turns them into exit codes: :class:`InvalidInput` is a usage problem (exit 2),
everything else is a refusal or a failed check (exit 1).
"""


class MindosError(Exception):
    """Base class: a clear, one-line reason something did not happen.

    ``code`` is the stable machine-readable name printed by ``--json-errors`` (the
    vocabulary is listed in the README); a raise site may pass a more specific one.
    """

    exit_code = 1
    code = "error"

    def __init__(self, message="", *, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code


class InvalidInput(MindosError):
    """A value failed validation (bad id, timestamp, priority, JSON, ...)."""

    exit_code = 2
    code = "invalid"


class NotFound(MindosError):
    """An id names nothing in this home."""

    code = "not_found"


class Refused(MindosError):
    """The request is well-formed but the rules do not allow it right now."""

    code = "refused"


class Conflict(Refused):
    """The state changed between check and write (a lost race, a duplicate id)."""

    code = "conflict"


class IntegrityError(MindosError):
    """Stored data failed an integrity check (hash chain, sealed file, schema skew)."""

    code = "integrity"
