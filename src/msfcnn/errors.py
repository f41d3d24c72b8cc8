"""The one exception type that reaches the user as a one-line message and exit status 2."""


class UserError(Exception):
    """Bad input or an impossible request: a malformed model, an unsupported op, an infeasible cap."""
