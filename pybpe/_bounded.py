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

Compiling is not free either, and `regex.compile` takes no timeout: it
expands counted repetitions, so `x{4294967294}` (14 characters) runs out of
memory and `(?:x{65535}){65535}` runs for hours.  check_pattern therefore
refuses, before compiling, a pattern from a file that is longer than
PATTERN_MAX_CHARS or whose counted repetitions ({m}, {m,n}, {m,}) multiply
to more than PATTERN_MAX_REPEAT (all of them, nested or not: a bound that
over-counts is safe).  The published patterns use {1,3}.

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

# What a pattern from a file may hold (see check_pattern): compiling one at
# these bounds takes well under a second.
PATTERN_MAX_CHARS = 100_000
PATTERN_MAX_REPEAT = 100_000

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


# A counted repetition: {m}, {m,}, {,n} or {m,n}.
_COUNTED = regex.compile(r"\{(\d*)(?:,(\d*))?\}")


def check_pattern(pattern):
    r"""ValueError when a pattern from a file is too costly to compile (see
    the module docstring); nothing otherwise.  Escaped characters are skipped,
    so a literal \{99999} counts nothing.

        >>> check_pattern(r"\p{N}{1,3}| ?\p{L}+")
        >>> check_pattern(r"x{4294967294}")
        Traceback (most recent call last):
        ...
        ValueError: its counted repetitions multiply to more than 100000 (x{4294967294}): compiling it would take too long
    """
    if len(pattern) > PATTERN_MAX_CHARS:
        raise ValueError("it has %d characters, more than the %d allowed for a pattern read from a file"
                         % (len(pattern), PATTERN_MAX_CHARS))
    product, i = 1, 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2  # an escape: \{ is a brace, \p{L} a property (its {L} has no digits)
            continue
        found = _COUNTED.match(pattern, i) if pattern[i] == "{" else None
        if found and (found.group(1) or found.group(2)):
            product *= max(int(found.group(1) or 0), int(found.group(2) or 0), 1)
            if product > PATTERN_MAX_REPEAT:
                raise ValueError("its counted repetitions multiply to more than %d (%s): compiling it would "
                                 "take too long" % (PATTERN_MAX_REPEAT, _short(pattern)))
            i = found.end()
            continue
        i += 1
