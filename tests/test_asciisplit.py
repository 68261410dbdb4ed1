"""The pure-Python backend's fast pre-tokenizing (pybpe/_asciisplit.py):
each `re` twin in patterns.ASCII_TWINS finds its original's pieces on ASCII
text, and cut() -- twin on ASCII stretches, `regex` around non-ASCII ones --
finds exactly what `regex` alone finds, on generated and real text."""
import itertools
import re

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pybpe import _asciisplit, patterns
from conftest import shakespeare

ORIGINALS = sorted(patterns.ASCII_TWINS)
PAIRS = [(regex.compile(p), re.compile(patterns.ASCII_TWINS[p], re.ASCII)) for p in ORIGINALS]
_NAMES = {patterns.GPT2: "gpt2", patterns.GPT2_POSSESSIVE: "gpt2_possessive", patterns.CL100K: "cl100k",
          patterns.O200K: "o200k"}
IDS = [_NAMES[p] for p in ORIGINALS]

# ASCII strings each pattern treats specially: contractions in every case,
# whitespace runs before text and at the end, CR/LF runs, "/" after
# punctuation (o200k), digit runs longer than 3, case changes (o200k).
_ASCII_TRICKY = ["'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'LL", "'d", "'x", "''", "don't", "I'M",
                 " ", "  ", "\t", "\n", "\r\n", "\r", " \n", "\n ", "  \n\n", " \r\n ", "\x0b", "\x0c", "\x1c",
                 "!", "!!", "!\n", "!\n/", "a/b", "://", "...", "12345", "1", " 1", "x1y", "HTTPServer",
                 "helloWorld", "ABC", "abc", "Ab", "aB", "_", "$", "\x00", "\x7f", "~", "a b", "x"]
_ascii_text = st.lists(st.one_of(st.text(st.characters(max_codepoint=127), max_size=6),
                                 st.sampled_from(_ASCII_TRICKY)), max_size=20).map("".join)


@pytest.mark.parametrize("original,twin", PAIRS, ids=IDS)
@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_ascii_text)
def test_twin_finds_the_same_pieces_on_ascii(original, twin, text):
    assert twin.findall(text) == original.findall(text)


@pytest.mark.parametrize("original,twin", PAIRS, ids=IDS)
def test_twin_on_every_short_string(original, twin):
    # Every string of up to 4 characters over an alphabet that touches every
    # class and quantifier of the patterns.
    alphabet = " \t\n\r'sSdlLveEaA1/!_"
    for n in range(5):
        for chars in itertools.product(alphabet, repeat=n):
            text = "".join(chars)
            assert twin.findall(text) == original.findall(text), repr(text)


# Text with non-ASCII characters anywhere, and many newlines (the places
# cut() may end a stretch): letters, marks, non-ASCII spaces and digits,
# the characters that fold to ASCII under (?i) (long s, Kelvin sign).
_NON_ASCII = ["é", "æ", "漢字", "\u0301", "\u00a0", "\u3000", "\u2028", "\x85", "ſ", "\u212a", "٣", "😀", "Ω"]
_mixed_text = st.lists(st.one_of(st.sampled_from(_ASCII_TRICKY + _NON_ASCII + ["\n", "a\nb", ".\nX", "x\n1"]),
                                 st.text(st.characters(max_codepoint=0x3000, exclude_categories=("Cs",)), max_size=4)),
                       max_size=30).map("".join)


@pytest.mark.parametrize("original,twin", PAIRS, ids=IDS)
@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_mixed_text)
def test_cut_equals_regex_alone(original, twin, text):
    assert _asciisplit.cut(text, twin, original.findall) == original.findall(text)


@pytest.mark.parametrize("original,twin", PAIRS, ids=IDS)
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_mixed_text, block=st.integers(1, 9))
def test_cut_with_small_blocks(original, twin, text, block):
    # Non-ASCII runs that straddle the blocks cut() checks them in.
    old = _asciisplit._BLOCK
    _asciisplit._BLOCK = block
    try:
        assert _asciisplit.cut(text, twin, original.findall) == original.findall(text)
    finally:
        _asciisplit._BLOCK = old


@pytest.mark.parametrize("original,twin", PAIRS, ids=IDS)
def test_cut_at_the_edges(original, twin):
    for text in ["é", "é\nA", "a\né", "é\n\nA", "x\né\ny\nb", "ab\nc\né", "é\nab\nc", "a.\n/é", "!\nA\nB\né\nC",
                 "\n\né", "x\n" * 5 + "é" + "y\n" * 5, "Ωmega\nAlpha\nbeta é\nGamma"]:
        assert _asciisplit.cut(text, twin, original.findall) == original.findall(text), repr(text)


@pytest.mark.parametrize("original,twin", PAIRS, ids=IDS)
def test_cut_on_shakespeare(original, twin):
    # Mostly ASCII with a few "æ": nearly all of it goes to the twin.
    text = shakespeare()[:2_000_000]
    assert not text.isascii()
    assert _asciisplit.cut(text, twin, original.findall) == original.findall(text)
