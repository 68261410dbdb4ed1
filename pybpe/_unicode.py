"""Which Unicode the pre-tokenizers see: tiktoken's, exactly, for the presets.

The gpt2, cl100k and o200k patterns sort characters into seven classes:
whitespace (\\s), numbers (\\p{N}), upper (\\p{Lu} and \\p{Lt}), lower
(\\p{Ll}), caseless letters (\\p{Lm} and \\p{Lo}), marks (\\p{M}) and the rest.
Which code point is in which class depends on the Unicode version of the
engine: tiktoken's Rust regex has its own tables (Unicode 16.0 in tiktoken
0.14), the `regex` module its own (Unicode 17.0 in regex 2026.11), and about
17,500 code points differ -- letters assigned since, which tiktoken sees as
"other".  "Same IDs as tiktoken" holds only if pybpe sorts every code point
as tiktoken does, so the presets never use the `regex` module's tables:

- csrc/gen_unicode_tables.py reads the classes off tiktoken itself and
  writes them twice, as csrc/unicode_tables.inc (the C scanners) and as
  pybpe/_unicode_data.py (this module).
- The Python backend still runs the `regex` module (nothing in pure Python
  is faster), on a stand-in text when it has to: every code point whose
  class differs between the `regex` module at hand and tiktoken is replaced
  by a representative of its tiktoken class (same length, so the pieces'
  offsets are the original's), see split().  Which code points differ is
  worked out once per process on first use (about 0.1 s), so any version of
  the `regex` module gives tiktoken's pieces.

Patterns other than the presets are the `regex` module's business and use its
tables.  Trained tokenizers record the version their pre-tokenizer used
(unicode_version()); pybpe.load warns when it differs from the running one.

Surrogates are the other half of "which characters": fix_surrogates() is the
one rule every byte-level path applies before text becomes UTF-8.
"""
import functools
import itertools
import re
import struct
import unicodedata
from array import array

import regex

from . import _asciisplit, patterns

try:  # optional, built beside the cffi module (csrc/pyext/utf8.c)
    from ._utf8 import joined as _joined_of, utf8 as _utf8_of
except ImportError:
    _joined_of = _utf8_of = None

# The classes, in the order of their numbers in the generated tables (0 is
# "other": none of these).  Each pattern reads the same in tiktoken's engine
# and in the `regex` module; they are disjoint.
CLASSES = [
    ("PT_SPACE", r"\s"),
    ("PT_NUMBER", r"\p{N}"),
    ("PT_UPPER", r"[\p{Lu}\p{Lt}]"),
    ("PT_LOWER", r"\p{Ll}"),
    ("PT_CASELESS", r"[\p{Lm}\p{Lo}]"),
    ("PT_MARK", r"\p{M}"),
]
NAMES = ["PT_OTHER"] + [name for name, _ in CLASSES]  # name -> value = index

# A code point first assigned in each Unicode version: an engine's tables are
# of the newest version whose code point it sees as assigned (not \p{Cn}).
PROBES = [("17.0", 0x1E6C0), ("16.0", 0x1C89), ("15.1", 0x2FFC), ("15.0", 0x1E030), ("14.0", 0x061D),
          ("13.0", 0x08BE), ("12.1", 0x32FF), ("12.0", 0x0C77)]

# Stand-ins, one per class: characters every Unicode version since 1.1 puts
# in that class, with no part in any preset beyond their class (not \r, \n,
# space, "'" or "/", and no case-insensitive match for the letters of the
# contractions 's 't 're 've 'm 'll 'd).  Checked when the table is built.
_STAND_INS = ["\u00a7", "\u2003", "\u0660", "\u00c0", "\u00e0", "\u05d0", "\u0300"]

# Astral code points that differ are found with a few spans around them (see
# _Differences): sre tests a character above U+FFFF against each range of a
# class in turn, so a class of many ranges would cost more than the split.
_ASTRAL_SPANS = 4


def fix_surrogates(text):
    """tiktoken's rule for a str UTF-8 cannot encode, used on every byte-level
    path: surrogate *pairs* become the character they spell, lone surrogates
    become U+FFFD.

        >>> fix_surrogates("a\\ud83d\\ude00b\\udc00")
        'a😀b�'
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


# Texts from this many characters on go to pybpe._utf8 (utf8 below).
_UTF8_MODULE_MIN = 2048


def utf8(text):
    """`text` as UTF-8 under fix_surrogates' rule, encoding it once: the
    encode that checks for surrogates is the result (fix_surrogates followed
    by .encode("utf-8") encoded non-ASCII text twice, ~2% of encoding 2 MB of
    Shakespeare with o200k).

    A long text that is not all ASCII goes to pybpe._utf8 where it is built
    (csrc/pyext/utf8.c): one such character makes CPython store the whole
    text a character per one, two or four bytes, and str.encode then walks
    it a character at a time.  That module picks the way by how the str is
    stored: a text of one byte per character (Shakespeare's "æ") by way of
    its Latin-1 copy, eight ASCII bytes a step (~0.1 ms per 0.5 MB against
    str.encode's ~0.2-0.3), two or four bytes per character by str.encode
    itself (its own loop is left for surrogates).  Short
    texts keep str.encode: below _UTF8_MODULE_MIN characters the module's
    look at the text (which way it takes) is a fifth of the whole where the
    text is mostly beyond ASCII, and a few hundred ns is all it could save.

        >>> utf8("a\\ud83d\\ude00b\\udc00") == "a😀b\\ufffd".encode("utf-8")
        True
    """
    if _utf8_of is not None and len(text) >= _UTF8_MODULE_MIN and not text.isascii():
        return _utf8_of(text)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return fix_surrogates(text).encode("utf-8")


# The array type code of C's size_t (what joined's starts hold).
_SIZE_T_CODE = next(code for code in "ILQ" if array(code).itemsize == struct.calcsize("N"))


def joined(texts):
    """(data, starts) for a list of str: each text's utf8() end to end in
    the bytes `data`, and `starts`, a buffer of n + 1 native size_t (0, then
    where each text ends), what the C encoders take for a batch.  When an
    item is not a str, its index (an int) instead, before any text is
    converted.  One call of pybpe._utf8 where it is built: 4,782 texts of
    200 characters of Shakespeare took ~0.04 us a text there, against ~0.25
    for the type check, utf8(), the join and the ends summed in Python.

        >>> data, starts = joined(["ab", "\u00e9"])
        >>> data, list(memoryview(starts).cast("B").cast(_SIZE_T_CODE))
        (b'ab\xc3\xa9', [0, 2, 4])
        >>> joined(["ab", b"cd"])
        1
    """
    if _joined_of is not None:
        return _joined_of(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            return i
    encoded = [utf8(text) for text in texts]
    return b"".join(encoded), array(_SIZE_T_CODE, [0, *itertools.accumulate(map(len, encoded))])


def engine_version(matches_unassigned):
    """The Unicode version of an engine, given a function telling whether it
    sees a character as unassigned (\\p{Cn})."""
    for version, cp in PROBES:
        if not matches_unassigned(chr(cp)):
            return version
    return "older than %s" % PROBES[-1][0]


def regex_version():
    """The Unicode version of the installed `regex` module's tables.

        >>> float(regex_version()) >= 12
        True
    """
    unassigned = regex.compile(r"\p{Cn}")
    return engine_version(lambda c: unassigned.match(c) is not None)


def tiktoken_version():
    """The Unicode version pybpe's preset tables follow (tiktoken's)."""
    from . import _unicode_data  # late: large generated tables, loaded only when asked for

    return _unicode_data.UNICODE_VERSION


def unicode_version(pattern):
    """The Unicode version a pre-tokenizer cuts words with: tiktoken's for
    the presets (patterns.ASCII_TWINS holds their exact strings), the `regex`
    module's for any other pattern, Python's for str.split() (pattern None)."""

    if pattern is None:
        return unicodedata.unidata_version
    if pattern in patterns.ASCII_TWINS:
        return tiktoken_version()
    return regex_version()


def all_code_points():
    """One str of every code point, U+0000 to U+10FFFF (surrogates too), so a
    character's index is its code point."""
    return array("I", range(0x110000)).tobytes().decode("utf-32-le", "surrogatepass")


def tiktoken_classes():
    """bytearray: the class number (index in NAMES) of every code point, as
    tiktoken sees it (from the generated pybpe/_unicode_data.py)."""
    from . import _unicode_data  # late: large generated tables, loaded only when asked for

    table = bytearray(0x110000)
    for first, last, cls in _unicode_data.RANGES:
        table[first:last + 1] = bytes([cls]) * (last - first + 1)
    return table


def regex_classes():
    """bytearray: the class number of every code point in the installed
    `regex` module (surrogates are "other" there too)."""
    text = all_code_points()
    table = bytearray(0x110000)
    for cls, (_, pattern) in enumerate(CLASSES, 1):
        for run in regex.finditer(pattern + "+", text):
            table[run.start():run.end()] = bytes([cls]) * (run.end() - run.start())
    return table


def _ranges(code_points):
    # Sorted code points -> [first, last] runs.
    runs = []
    for cp in code_points:
        if runs and runs[-1][1] == cp - 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    return runs


def _char_class(runs):
    # A regular-expression character class matching the runs (never empty:
    # an empty set becomes a class nothing matches).
    if not runs:
        return r"[^\s\S]"
    return "[" + "".join("\\U%08x-\\U%08x" % (a, b) for a, b in runs) + "]"


class _Differences:
    """The code points the installed `regex` module classes differently from
    tiktoken, a fast test for them, and the stand-in translation."""

    def __init__(self):
        ours, theirs = tiktoken_classes(), regex_classes()
        differ = []
        step = 4096
        for start in range(0, 0x110000, step):  # compare blocks, then their code points
            if ours[start:start + step] != theirs[start:start + step]:
                differ += [cp for cp in range(start, start + step) if ours[cp] != theirs[cp]]
        self.code_points = differ
        for cls, stand_in in enumerate(_STAND_INS):
            if ours[ord(stand_in)] != cls or theirs[ord(stand_in)] != cls:
                raise RuntimeError("stand-in U+%04X is not in class %s for both tiktoken and regex"
                                   % (ord(stand_in), NAMES[cls]))
        self.translation = {cp: _STAND_INS[ours[cp]] for cp in differ}
        runs = _ranges(differ)
        bmp = [r for r in runs if r[1] < 0x10000]
        astral = [r for r in runs if r[0] >= 0x10000]
        # Below U+10000 sre compiles a class to a bitmap: one lookup per
        # character (about 2.5 ns), so the exact set is used.  Above, it
        # tries range after range, so the astral runs are first tested as
        # a few spans (the smallest gaps between them closed), and only a
        # text with a character in a span is searched for the exact runs:
        # the astral characters real text is full of (emoji, CJK
        # extension B) are outside the spans today.
        spans = [list(r) for r in astral]
        while len(spans) > _ASTRAL_SPANS:
            k = min(range(len(spans) - 1), key=lambda i: spans[i + 1][0] - spans[i][1])
            spans[k:k + 2] = [[spans[k][0], spans[k + 1][1]]]
        self._bmp = re.compile(_char_class(bmp)).search
        self._any_astral = re.compile(_char_class([[0x10000, 0x10FFFF]])).search
        self._spans = re.compile(_char_class(spans)).search
        self._astral = re.compile(_char_class(astral)).search

    def found_in(self, text):
        """Whether text holds a code point whose class differs."""
        if self._bmp(text) is not None:
            return True
        first = self._any_astral(text)  # one range: cheap, and most text has no astral character
        if first is None:
            return False
        start = first.start()
        return self._spans(text, start) is not None and self._astral(text, start) is not None


@functools.lru_cache(maxsize=None)
def differences():
    """The _Differences of this process's `regex` module (built on first use)."""
    return _Differences()


def split(pattern, text):
    """pattern.findall(text) with tiktoken's character classes: `pattern` is
    a compiled preset (no capture groups).  Text without a code point whose
    class differs goes to the `regex` module as it is; otherwise the module
    runs on a stand-in text of the same length, and the pieces are cut from
    the original at the offsets found.

        >>> from pybpe import patterns
        >>> gpt2 = regex.compile(patterns.GPT2)
        >>> split(gpt2, "\\U0003d000's"), gpt2.findall("\\U0003d000's")
        (["\\U0003d000'", 's'], ['\\U0003d000', "'s"])
    """
    if text.isascii():
        return pattern.findall(text)
    found = differences()
    if not found.found_in(text):
        return pattern.findall(text)
    stand_in = text.translate(found.translation)
    return [text[m.start():m.end()] for m in pattern.finditer(stand_in)]


@functools.lru_cache(maxsize=None)
def preset_splitter(pattern_string):
    """For a preset's exact pattern string, a function text -> pieces giving
    tiktoken's pieces, fast: ASCII stretches go to the pattern's `re` twin
    (pybpe/_asciisplit.py), the rest to split().  None for any other string.
    """

    twin = patterns.ASCII_TWINS.get(pattern_string)
    if twin is None:
        return None
    ascii_pattern = re.compile(twin, re.ASCII)
    findall = functools.partial(split, regex.compile(pattern_string))
    return functools.partial(_asciisplit.cut, ascii_pattern=ascii_pattern, findall=findall)
