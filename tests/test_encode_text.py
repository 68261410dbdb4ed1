"""Merger.encode_text (encode_text.c's bpe_encode_text and its pybpe.core.spec twin): the one-call
path BPETokenizer.encode takes for the str.split() and whole-text pre-tokenizers.

Checked three ways on every flavour that path serves: the C core, the Python core
and the per-word path the tokenizer used before (flavour.split, flavour.units,
Merger.encode_words), on text over all code points -- every str.split()
whitespace character, NUL, lone surrogates, characters the vocabulary lacks.
"""
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pybpe
from pybpe import core as backends
from pybpe.tokenizer import _ONE_CALL_MIN_CHARS

from conftest import make_tokenizer

BACKENDS = backends.available()
HYPOTHESIS = dict(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))

# Every character str.split() cuts at.
SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
assert len(SPACES) == 29

CORPUS = ["low low lower newest widest", "naïve café\u3000déjà vu", "\ud800x \udfffy \x00z",
          "the quick brown fox", "l\u2028o\u00a0w\x1cer", "ÉCOLE Ünïcode 😀 😀x"]

FLAVOURS = {
    "chapter": {},
    "symbol": dict(end_of_word="symbol"),
    "symbol-marker": dict(end_of_word="symbol", marker="§"),
    "suffix-multibyte": dict(marker="\u2581"),
    "plain-chars": dict(end_of_word=None),
    "whole-text": dict(pretokenizer=None, end_of_word=None),
    "whole-text-suffix": dict(pretokenizer=None),
    "whole-text-symbol": dict(pretokenizer=None, end_of_word="symbol"),
    "lowercase": dict(lowercase=True),
    "bytes-split": dict(byte_level=True, pretokenizer="whitespace"),
    "bytes-whole": dict(byte_level=True, pretokenizer=None),
}

_TRAINED = {}


def trained(flavour, backend):
    key = (flavour, backend)
    if key not in _TRAINED:
        tok = make_tokenizer(vocab_size=330 if "bytes" in flavour else 90, backend=backend,
                             **FLAVOURS[flavour])
        tok.train(CORPUS * 3)
        _TRAINED[key] = tok
    return _TRAINED[key]


def per_word(tok, text):
    """What BPETokenizer.encode returned before encode_text: one row of initial
    symbols per word, Merger.encode_words, NO_SYMBOL -> 0."""
    words = tok.flavour.split(text)
    out = []
    for ids in tok._encode_words(tok._state, words):
        out += ids
    return out


def one_call(tok, text):
    """Merger.encode_text as BPETokenizer._encode_ordinary calls it."""
    flavour, state = tok.flavour, tok._state
    return state.merger.encode_text(state.symtab, state.units, flavour.marker, 0, flavour.prepare(text),
                                    split=flavour.pretokenizer == "whitespace")


def check(flavour, text):
    results = {}
    for backend in BACKENDS:
        tok = trained(flavour, backend)
        results[backend] = one_call(tok, text)
        expected = per_word(tok, text)
        assert results[backend] == expected, (flavour, backend, text)
        assert tok.encode(text) == expected
        if backend == "c":  # through the tokenizer's one-call path too
            assert tok.encode(text * (_ONE_CALL_MIN_CHARS // max(len(text), 1) + 1)) == \
                per_word(tok, text * (_ONE_CALL_MIN_CHARS // max(len(text), 1) + 1))
    first = results[BACKENDS[0]]
    assert all(r == first for r in results.values()), (flavour, text)
    return first


chars = st.one_of(
    st.sampled_from(SPACES + ["\x00", "\ud800", "\udbff", "\udc00", "\udfff", "l", "o", "w", "é", "😀"]),
    st.characters(min_codepoint=0, max_codepoint=sys.maxunicode, blacklist_categories=()),
)
texts = st.text(alphabet=chars, max_size=60)


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
@settings(**HYPOTHESIS)
@given(text=texts)
def test_encode_text_matches_python_and_per_word_path(flavour, text):
    check(flavour, text)


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_fixed_cases(flavour):
    for text in ["", " ", "low", " low  lower\tnewest\n", "".join(SPACES), "".join(SPACES) + "x",
                 "x" + "".join(SPACES) + "y", "\x00", "\ud800\udc00", "😀 😀 😀x zzz ≠",
                 "low " * 50, "l" * 200, "LoW LOWER"]:
        check(flavour, text)


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_unknown_characters_become_unk(flavour):
    if "bytes" in flavour:
        pytest.skip("byte level has every byte")
    ids = check(flavour, "\u4e00\u4e01 \U0001f600\u4e00")
    assert 0 in ids


@pytest.mark.parametrize("backend", BACKENDS)
def test_core_arguments(backend):
    core = backends.get(backend)
    symtab = core.SymbolTable([b"<UNK>", b"a", b"b", b"a "])
    merger = core.Merger([(1, 2, symtab.intern(b"ab"))])
    assert merger.encode_text(symtab, "suffix", " ", 0, "aba ab") == [4, 3, 1, 0]
    assert merger.encode_text(symtab, "chars", None, 7, "ab c", split=False) == [4, 7, 7]
    assert merger.encode_text(symtab, "symbol", "a", 9, "b b") == [2, 1, 2, 1]
    assert merger.encode_text(symtab, "bytes", None, 0, "ab") == [4]
    assert merger.encode_text(symtab, "symbol", "x", 5, "", split=False) == []
    assert merger.encode_text(symtab, "symbol", "x", 5, " ") == []
    with pytest.raises(ValueError):
        merger.encode_text(symtab, "words", None, 0, "a")
    with pytest.raises(ValueError):
        merger.encode_text(symtab, "suffix", "", 0, "a")
    with pytest.raises((TypeError, ValueError)):
        merger.encode_text(symtab, "chars", None, -1, "a")
    with pytest.raises(TypeError):
        merger.encode_text(symtab, "chars", None, 0, b"a")
    with pytest.raises(TypeError):
        merger.encode_text(object(), "chars", None, 0, "a")


def test_symbol_mode_output_bound_is_tight():
    # One-character words separated by one space: the most markers per character.
    for n in range(0, 12):
        text = " ".join("a" * n) if n else ""
        for t in (text, " " + text, text + " ", "a " * n):
            check("symbol", t)
            check("whole-text-symbol", t)


@pytest.mark.skipif("c" not in BACKENDS, reason="the C backend is not built")
def test_long_word_and_repeated_words_are_fast():
    tok = trained("chapter", "c")
    word = ("lowerwidest" * 100_000)[:1_000_000]
    t0 = time.perf_counter()
    ids = tok.encode(word)
    assert time.perf_counter() - t0 < 5.0
    assert tok.decode(ids) == word
    text = "low lower newest widest the quick brown fox\n" * (1_000_000 // 44)
    t0 = time.perf_counter()
    ids = tok.encode(text)
    assert time.perf_counter() - t0 < 2.0
    assert ids == per_word(tok, text)
    whole = trained("whole-text", "c")
    t0 = time.perf_counter()
    ids = whole.encode(word)
    assert time.perf_counter() - t0 < 5.0
    assert whole.decode(ids) == word
