"""The one exception type that reaches the user as a one-line message and exit status 2."""


class UserError(Exception):
    """Bad input or an impossible request: a malformed model, an unsupported op, an infeasible cap."""


def did_you_mean(word: str, choices) -> str:
    """" (did you mean 'x'?)" for the choice closest to a mistyped name, or "" when none is close."""
    import difflib
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
