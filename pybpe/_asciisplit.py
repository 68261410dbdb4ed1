"""Pre-tokenizing mostly-ASCII text with the standard library's `re`.

The pure-Python backend cuts text with the `regex` module, and on English
prose that is about 40% of its time.  `re` runs the ASCII twins of the gpt2,
cl100k and o200k patterns (pybpe.patterns.ASCII_TWINS) about twice as fast,
but only ASCII text may go to them.  So a text is cut into stretches: the
ones around non-ASCII characters go to `regex` with the original pattern,
the rest to `re`, and the pieces are joined in order.  (The non-ASCII
stretches go to a findall function: the presets pass pybpe._unicode.split,
which keeps tiktoken's character classes.)

A stretch may only end at a place where both patterns would have ended a
piece anyway and where neither looks across: just after a "\\n" that
follows a printable ASCII character (not a space) and just before an ASCII
letter or digit.  There, for all three patterns, the piece before ends with
that "\\n" (a lone newline, or punctuation that swallows trailing newlines),
the piece after starts with the letter or digit (no pattern lets a piece
start with "\\n" and go on into a letter, digit or "/"), and a pattern
looking ahead at the end of a stretch (`(?!\\S)`, `$`) decides the same way
whether it sees the letter or the end.  Shakespeare has such a place on most
lines.  The tests check the result against `regex` alone on generated text
with non-ASCII characters in every position.

    >>> import regex, re
    >>> from pybpe import patterns
    >>> text = "Hello, world!\\nCafé au lait\\nBye now"
    >>> cut(text, re.compile(patterns.GPT2_ASCII, re.ASCII), regex.compile(patterns.GPT2).findall)
    ['Hello', ',', ' world', '!', '\\n', 'Café', ' au', ' lait', '\\n', 'Bye', ' now']
"""
import re

_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_BLOCK = 1 << 16  # characters checked at a time for non-ASCII ones


def _non_ascii_runs(text, block):
    # The runs of non-ASCII characters, as matches.  str.isascii() on a
    # block is a fast C loop; the regex only searches blocks that fail it
    # (a run across a block boundary comes as two matches, which cut()
    # handles: the second starts inside the stretch made for the first).
    for start in range(0, len(text), block):
        if not text[start:start + block].isascii():
            yield from _NON_ASCII.finditer(text, start, start + block)


def _is_cut(text, p):
    # p is a safe place to end a stretch: text[p-2:p+1] is X "\n" Y with X
    # printable ASCII but not a space and Y an ASCII letter or digit.
    return (2 <= p < len(text) and text[p - 1] == "\n" and "!" <= text[p - 2] <= "~"
            and text[p].isascii() and text[p].isalnum())


def _cut_before(text, i, lo):
    # The last safe place in [lo, i], else lo.
    j = text.rfind("\n", lo, i)
    while j >= 0 and not _is_cut(text, j + 1):
        j = text.rfind("\n", lo, j)
    return j + 1 if j >= 0 and j + 1 <= i else lo


def _cut_after(text, i):
    # The first safe place at or after i, else the end of the text.
    j = text.find("\n", max(i - 1, 0))
    while j >= 0 and not _is_cut(text, j + 1):
        j = text.find("\n", j + 1)
    return j + 1 if j >= 0 else len(text)


def cut(text, ascii_pattern, findall):
    """The pieces findall(text) gives (findall: a pattern's findall, or
    pybpe._unicode.split for one), found with ascii_pattern (a compiled `re`
    twin of the pattern) wherever the text is ASCII."""
    if text.isascii():
        return ascii_pattern.findall(text)
    pieces = []
    done = 0  # text[:done] is cut
    for run in _non_ascii_runs(text, _BLOCK):
        if run.start() < done:
            continue  # inside the last non-ASCII stretch
        start = _cut_before(text, run.start(), done)
        end = _cut_after(text, run.end())
        pieces += ascii_pattern.findall(text, done, start)  # endpos: as if the text ended there
        pieces += findall(text[start:end])
        done = end
    pieces += ascii_pattern.findall(text, done)
    return pieces
