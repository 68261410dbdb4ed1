"""Pre-tokenizer patterns between the regex module's dialect and Oniguruma's.

A tokenizer.json's Split pattern is run by Hugging Face `tokenizers` with
Oniguruma (Ruby syntax); pybpe runs patterns with the `regex` module.  The two
spell a few things alike and read them otherwise:

| spelling   | Oniguruma                             | regex module                  |
| ---------- | ------------------------------------- | ----------------------------- |
| X{n,m}+    | (X{n,m})+: runs of X{n,m}             | X{n,m}, possessive            |
| ^ and $    | at every line                         | at the start / the end (or before a final newline) |
| \\Z         | the end, or before a final newline    | the end only                  |
| \\w, \\W     | ² ³ ¹ ¼ ½ ¾ are word characters, the zero-width joiners not | the other way round |

from_oniguruma rewrites a pattern read from a tokenizer.json so that the
regex module cuts as Oniguruma does; to_oniguruma rewrites one of pybpe's
for a tokenizer.json, so that Oniguruma cuts as the regex module does.  Both
walk the pattern atom by atom (a character, an escape, a character class)
and leave everything else alone: a group before {n,m}+, \\W inside a class,
inline flags.  Neither can make the two engines' Unicode tables agree
(their versions differ; docs/limits.md).  load_hf_tokenizer and
dump_hf_tokenizer (pybpe/formats.py) use them; tests/test_formats.py checks
both against `tokenizers` itself.

    >>> from_oniguruma(r"\\p{N}{1,3}+|x$")
    '(?:\\\\p{N}{1,3})+|x(?m:$)'
    >>> to_oniguruma(r"\\d{1,2}+|^x")
    '(?>\\\\d{1,2})|\\\\Ax'
"""
import re

# Oniguruma's \w holds these (Latin-1's superscript digits and fractions);
# the regex module's does not.  The regex module's holds the zero-width
# non-joiner and joiner (Unicode's Join_Control); Oniguruma's does not.
# (Measured over every code point assigned by Unicode 14, against tokenizers.)
WORD_EXTRA = "\u00b2\u00b3\u00b9\u00bc\u00bd\u00be"
WORD_JOINERS = "\u200c\u200d"

_INTERVAL = re.compile(r"\{\d+(?:,\d*)?\}")

# Atom -> what the regex module must read for Oniguruma's atom (\\w, \\W and
# classes with \\w: _word).
_FROM = {"^": "(?m:^)", "$": "(?m:$)", "\\Z": "(?=\\n?\\Z)"}

# Atom -> what Oniguruma must read for the regex module's atom.
_TO = {"^": "\\A", "$": "(?=\\n?\\z)", "\\Z": "\\z"}

# from_oniguruma's own spellings, read back as the atoms they stand for.
_BACK = {"(?m:^)": "^", "(?m:$)": "$", "(?=\\n?\\Z)": "\\Z"}


def _atoms(pattern):
    """The pattern cut into atoms: a character, an escape (\\p{..} whole),
    or a character class (nested classes and escapes inside it whole)."""
    i, n = 0, len(pattern)
    while i < n:
        start = i
        if pattern[i] == "\\":
            i += 2
            if pattern[i - 1:i] in ("p", "P") and pattern[i:i + 1] == "{":
                i = pattern.find("}", i) + 1 or n
        elif pattern[i] == "[":
            i += 1
            if pattern[i:i + 1] == "^":
                i += 1
            if pattern[i:i + 1] == "]":
                i += 1  # a ']' first is a member
            depth = 1
            while i < n and depth:
                if pattern[i] == "\\":
                    i += 1
                elif pattern[i] == "[":
                    depth += 1
                elif pattern[i] == "]":
                    depth -= 1
                i += 1
        else:
            i += 1
        yield pattern[start:i], i


def _has_word(cls):
    # Whether character class `cls` holds \w itself (not an escaped backslash before a w).
    return any(atom == "\\w" for atom, _ in _atoms(cls[1:-1]))


def _rewrite(pattern, atom_of, interval_of):
    out, skip_to = [], 0
    for atom, end in _atoms(pattern):
        if end <= skip_to:
            continue
        written = atom_of(atom)
        interval = _INTERVAL.match(pattern, end)
        if atom not in ("(", "|", ")") and interval and pattern[interval.end():interval.end() + 1] == "+":
            written = interval_of(written, interval.group())
            skip_to = interval.end() + 1
        out.append(written)
    return "".join(out)


def _word(atom, add, remove):
    """\\w, \\W or a class holding \\w as one engine reads it, spelled for the
    other, whose \\w lacks the characters `add` and holds `remove` besides:
    `add` joins each \\w, and a lookahead or an alternative takes `remove`
    out again (unless the class names a character itself).  A round trip
    through both spellings changes the text once, never the meaning."""
    if atom == "\\w":
        atom = "[\\w]"
    elif atom == "\\W":
        atom = "[^\\w]"
    elif not (atom.startswith("[") and _has_word(atom)):
        return None
    head = "[^" if atom.startswith("[^") else "["
    absent = "".join(c for c in add if c not in atom)  # (so that a round trip does not grow the class)
    cls = head + "".join(a + absent if a == "\\w" else a for a, _ in _atoms(atom[len(head):-1])) + "]"
    missing = "".join(c for c in remove if c not in atom)
    if not missing:
        return cls
    if cls.startswith("[^"):
        return "(?:[%s]|%s)" % (missing, cls)
    return "(?:(?![%s])%s)" % (missing, cls)


def from_oniguruma(pattern):
    """`pattern`, read by Oniguruma, spelled for the regex module."""
    def atom_of(atom):
        word = _word(atom, WORD_EXTRA, WORD_JOINERS)
        return word if word is not None else _FROM.get(atom, atom)
    return _rewrite(pattern, atom_of, lambda atom, interval: "(?:%s%s)+" % (atom, interval))


def to_oniguruma(pattern):
    """`pattern`, read by the regex module, spelled for Oniguruma.  cl100k's
    \\p{N}{1,3}+ becomes \\p{N}{1,3} (what HF's own files say: the + ends its
    alternative, so nothing could backtrack into it), other X{n,m}+ an
    atomic (?>X{n,m})."""
    pattern = pattern.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
    for spelling, atom in _BACK.items():  # from_oniguruma's spellings mean Oniguruma's own atoms
        pattern = pattern.replace(spelling, "\U0010ffff%s\U0010ffff" % atom)

    def atom_of(atom):
        word = _word(atom, WORD_JOINERS, WORD_EXTRA)
        return word if word is not None else _TO.get(atom, atom)
    parts = pattern.split("\U0010ffff")
    # Even parts are the regex module's; odd ones Oniguruma's atoms, kept.
    return "".join(part if k % 2 else _rewrite(part, atom_of, lambda atom, interval: "(?>%s%s)" % (atom, interval))
                   for k, part in enumerate(parts))
