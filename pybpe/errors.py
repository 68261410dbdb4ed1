"""pybpe's exceptions.

Only one is pybpe's own: FormatError, for vocabulary and model files that are
corrupt, truncated or hostile.  It is a ValueError, so code that already
catches ValueError keeps working; its message names the file and the problem.
"""


class FormatError(ValueError):
    """A vocabulary or model file could not be read: the message says which and why."""
