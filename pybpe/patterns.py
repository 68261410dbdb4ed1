"""The published pre-tokenizer patterns of OpenAI's byte-level encodings.

A byte-level BPE first cuts text into pieces with one of these regular
expressions (they need the `regex` module: `\\p{L}`, possessive `++`), then
merges bytes inside each piece only.  The strings here are copied verbatim from
their publications, because a pattern that is "equivalent" is a pattern whose
equivalence must be proved; this module holds data only, no matching code.

    >>> import regex
    >>> regex.findall(GPT2, "Hello world's 2024!!")
    ['Hello', ' world', "'s", ' 2024', '!!']
    >>> regex.findall(CL100K, "Hello world's 2024!!")
    ['Hello', ' world', "'s", ' ', '202', '4', '!!']
"""

# GPT-2, as listed in shared/data/README.md and in older tiktoken releases
# (r50k_base and p50k_base use the same one).  GPT-2's own encoder.py spells
# the contractions out ('s|'t|'re|...); this grouping matches the same texts.
# Newer tiktoken releases ship a possessive rewrite of it that is faster in
# Rust's fancy-regex (GPT2_POSSESSIVE below); in the Python `regex` module the
# original is the faster of the two (about 4.8 versus 4.1 MB/s on
# Shakespeare), and both split every text identically -- the test suite checks
# that on Shakespeare and on generated text.
GPT2 = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# tiktoken >= 0.8's spelling of GPT2 (tiktoken_ext/openai_public.py,
# r50k_pat_str).  Kept for users who want tiktoken's exact current string.
GPT2_POSSESSIVE = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

# cl100k_base (GPT-3.5 / GPT-4).
CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

# o200k_base (GPT-4o), from tiktoken_ext/openai_public.py: seven alternatives
# joined with "|".  Letters are split at lower->upper case changes, and the
# contraction suffixes ride on the word before them.
O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# ASCII twins for the standard library's `re`, which is about twice as fast
# as `regex` here (the pure-Python backend uses them through
# pybpe/_asciisplit.py).  On ASCII text each finds exactly the pieces of its
# original: there \p{L} is [A-Za-z], \p{Lu} [A-Z], \p{Ll} [a-z], \p{N}
# [0-9], \p{Lt} \p{Lm} \p{Lo} \p{M} are empty and \s is the same six
# characters (compiled with re.ASCII).  cl100k loses its possessive
# quantifiers (re has them only from Python 3.11): each one either ends its
# alternative or is followed by something the possessed characters cannot
# start, so backtracking into it never finds another match; and \s++$
# (whitespace that runs to the very end) becomes \s+\Z.  This is an argument,
# so the tests also check every twin against its original.
GPT2_ASCII = r"""'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+"""
CL100K_ASCII = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]{1,3}| ?[^\sA-Za-z0-9]+[\r\n]*|"""
    r"""\s+\Z|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_ASCII = "|".join(
    [
        r"""[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[0-9]{1,3}""",
        r""" ?[^\sA-Za-z0-9]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
ASCII_TWINS = {GPT2: GPT2_ASCII, GPT2_POSSESSIVE: GPT2_ASCII, CL100K: CL100K_ASCII, O200K: O200K_ASCII}

# "No pre-tokenizer": the whole text is one piece (minbpe's BasicTokenizer,
# HF's ByteLevel with use_regex=false).  Use it as pat_str for such encodings.
WHOLE_TEXT = r"[\s\S]+"

# The names BPETokenizer(byte_level=True, pretokenizer=...) accepts.
PRESETS = {
    "gpt2": GPT2,
    "r50k_base": GPT2,
    "p50k_base": GPT2,
    "p50k_edit": GPT2,
    "cl100k": CL100K,
    "cl100k_base": CL100K,
    "o200k": O200K,
    "o200k_base": O200K,
    "o200k_harmony": O200K,
}


def resolve(pattern):
    """A preset name -> its pattern string; any other string is returned as is.

        >>> resolve("cl100k") == CL100K
        True
        >>> resolve(r"\\w+|\\W")
        '\\\\w+|\\\\W'
    """
    if not isinstance(pattern, str):
        raise TypeError("pattern must be a str (a preset name or a regex), not %s" % type(pattern).__name__)
    return PRESETS.get(pattern, pattern)
