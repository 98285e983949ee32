"""Errors that are the user's to fix, not the program's.

The CLI prints a `UserError` as one line on stderr and exits with status 2;
anything else is an internal error (status 1, traceback only with --debug).
"""


class UserError(Exception):
    """A mistake in input the user controls: a scenario, a mapping, a flag.

    The message is a single line, usually `FILE:LINE: key 'a.b': message`.
    """


class ScenarioError(UserError):
    """A scenario file cannot be loaded: YAML syntax, unknown or mistyped key,
    missing key or file, unknown kind."""


class CalibrationDisciplineError(UserError):
    """A fit asked for a reference row it may not use (a `predict` row or an
    unknown id). Raised by `routertwin.validation.calibration.CalibrationData`."""


class MappingError(UserError):
    """A validation mapping (validation/mapping/<study>.yaml) or the reference
    table is wrong: unknown row id, missing tolerance or reason, bad key."""
