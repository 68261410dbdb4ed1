"""Time-bounded matching for pre-tokenizer patterns read from files.

A regular expression in a model file or a tokenizer.json is input, and input
can be hostile: `(a|aa)+$` backtracks exponentially (2.2 s at 32 characters,
x7 for every 4 more).  The `regex` module can stop a match after a given time
(`timeout=`), so a pattern that did not come from pybpe itself is wrapped in a
BoundedPattern, whose findall / finditer pass a bound that grows with the
text: PATTERN_SECONDS plus PATTERN_SECONDS_PER_CHAR for every character, about
ten times what the published patterns need on any text.  Past it the match
stops with PatternTimeout, a TimeoutError naming the file the pattern came
from.  The published patterns (pybpe.patterns) are trusted and never wrapped:
their cost is linear, and most have C scanners anyway.  docs/limits.md lists
this limit with the others.

    >>> import regex
    >>> p = BoundedPattern(regex.compile(r"(a|aa)+$"), "evil.json")
    >>> p.findall("aaab")
    []
"""
import regex

from . import patterns
from .errors import PatternTimeout

# The bound of one matching call: this much, plus this much per character.
PATTERN_SECONDS = 1.0
PATTERN_SECONDS_PER_CHAR = 2e-6  # 2 s per million characters; regex does ~0.2

# Pattern strings that are trusted wherever they come from.
_TRUSTED = frozenset(list(patterns.PRESETS.values()) + [patterns.GPT2_POSSESSIVE, patterns.WHOLE_TEXT])


def is_trusted(pattern):
    """True for the published patterns pybpe ships (their cost is linear)."""
    return pattern in _TRUSTED


class BoundedPattern:
    """A compiled `regex` pattern whose matching calls stop after a time bound.

    `source` names where the pattern was read from (a file name); it is part
    of the PatternTimeout message.  `pattern` and `groups` are the compiled
    pattern's.
    """

    __slots__ = ("_compiled", "source", "pattern", "groups")

    def __init__(self, compiled, source):
        self._compiled = compiled
        self.source = source
        self.pattern = compiled.pattern
        self.groups = compiled.groups

    def _timeout(self, text):
        return PATTERN_SECONDS + PATTERN_SECONDS_PER_CHAR * len(text)

    def _fail(self, text, seconds):
        raise PatternTimeout(
            "%s: the pre-tokenizer pattern %r did not finish cutting a text of %d characters within "
            "%.1f s, the bound for patterns read from files (it probably backtracks exponentially; "
            "see docs/limits.md)" % (self.source, _short(self.pattern), len(text), seconds)) from None

    def findall(self, text):
        """The pattern's findall(text), within the time bound."""
        seconds = self._timeout(text)
        try:
            return self._compiled.findall(text, timeout=seconds)
        except TimeoutError:
            self._fail(text, seconds)

    def finditer(self, text):
        """The pattern's finditer(text), within the time bound (for all of it)."""
        seconds = self._timeout(text)
        try:
            yield from self._compiled.finditer(text, timeout=seconds)
        except TimeoutError:
            self._fail(text, seconds)


def _short(pattern, limit=80):
    return pattern if len(pattern) <= limit else pattern[:limit] + "..."


def compile_from_file(pattern, source):
    """`pattern` (read from file `source`) compiled: a plain compiled pattern
    when it is one of the published ones, else a BoundedPattern.  An invalid
    pattern raises regex.error, for the caller to report."""
    compiled = regex.compile(pattern)
    return compiled if is_trusted(pattern) else BoundedPattern(compiled, source)
