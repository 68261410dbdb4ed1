"""pybpe._utf8 (csrc/pyext/utf8.c): a str as UTF-8 under tiktoken's rule for
surrogates, the same bytes as fix_surrogates(text).encode("utf-8") for every
text, each way it can take -- its own loop with the vector step (mode 1)
and without it (mode 2), the way through the text's Latin-1 (mode 3), and
its choice (mode 0) by the kind of str, which takes Latin-1 for one byte per
character and leaves two to str.encode.  The texts cover every kind of str CPython
stores (ASCII, one byte, two, four per character), surrogates paired and
alone at the edges of the sixteen-character blocks and of the chunks long
texts are converted in, and the encoders' own use of it on long texts.
Skips where the module is not built (PYBPE_NO_EXTENSION=1).
"""
import ctypes
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pybpe import _unicode
from pybpe.registry import get_encoding

from conftest import offline_tiktoken

_utf8 = pytest.importorskip("pybpe._utf8", reason="pybpe._utf8 is not built")

MODES = (0, 1, 2, 3)
CHUNK = 1 << 20  # utf8.c's UTF8_CHUNK


def expected(text):
    return _unicode.fix_surrogates(text).encode("utf-8")


def assert_all_modes(text):
    want = expected(text)
    for mode in MODES:
        assert _utf8.utf8(text, mode) == want, mode


_chars = st.characters(exclude_categories=())  # every category, surrogates included
_pieces = st.one_of(
    st.text(st.characters(max_codepoint=0x7F), max_size=40),     # ASCII runs, often a block or more
    st.text(_chars, max_size=6),
    st.sampled_from(["\ud83d\ude00", "\ud800", "\udc00", "\ud800\ud800\udc00", "\U0010ffff", "æ", "\u2014",
                     "漢字", "\x00", "\x7f\x80"]),
)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.lists(_pieces, max_size=20).map("".join))
def test_generated_text(text):
    assert_all_modes(text)


@pytest.mark.parametrize("text", ["", "a", "æ", "\u20ac", "😀", "\ud800", "\udc00", "\ud83d\ude00",
                                  "\udc00\ud800", "\ud800\ud800\udc00x", "a\ud83d\ude00b\udc00"])
def test_short_texts(text):
    assert_all_modes(text)


def test_every_kind_of_str():
    # ASCII, one byte per character (Latin-1), two (the BMP), four (astral),
    # long enough for many blocks, with one odd character at varying places.
    base = "The quick brown fox jumps over the lazy dog. " * 200
    for odd in ["æ", "\u00ff", "\u0100", "\u07ff", "\u0800", "\uffff", "\U00010000", "\U0010ffff"]:
        for at in (0, 1, 15, 16, 17, 31, 32, len(base) // 2, len(base) - 1):
            assert_all_modes(base[:at] + odd + base[at:])


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.text(st.characters(max_codepoint=0xFF), max_size=80))
def test_latin1_text(text):
    # One byte per character: mode 0 and 3 go through its Latin-1, eight
    # bytes a step where they are ASCII.
    assert_all_modes(text)


@pytest.mark.parametrize("odd", ["\x80", "\xe6", "\xff"])
def test_latin1_at_every_place_of_a_word(odd):
    for before in range(18):
        for after in range(10):
            assert_all_modes("a" * before + odd + "b" * after)
            assert_all_modes(odd * before + "c" * after)


def test_kind_is_read_from_the_size():
    # utf8's mode 0 picks its way by the kind CPython stores the str in,
    # read from str.__sizeof__; anything it cannot read is 0.  Each str is
    # made here, two characters or more: a one-character str may be a shared
    # object (CPython's Latin-1 singletons, an interned constant) whose UTF-8
    # some other code already asked for, and then 0 is the right answer.
    for n in (2, 7, 100, 5000):
        assert _utf8.kind("\xe6" * n) == 1
        assert _utf8.kind("a" * (n - 1) + "\xff") == 1
        assert _utf8.kind("a" * (n - 1) + "\u0100") == 2
        assert _utf8.kind("\u4e2d" * n) == 2
        assert _utf8.kind("a" * (n - 1) + "\U0001f600") == 4
        assert _utf8.kind("a" * n) == 0  # ASCII has a header of its own

    class Text(str):
        pass

    assert _utf8.kind(Text("\xe6" * 100)) == 0


def test_kind_does_not_lean_on_a_shared_str():
    # The layout is measured on a str made for the purpose, not on the shared
    # one-character "\xe9", whose UTF-8 any code may have asked for.
    _cache_utf8(chr(0xE9))
    _cache_utf8("\xe9\xe9")  # a constant: not the str kind() makes
    assert _utf8.kind("\xe9" * 50) == 1
    assert _utf8.kind("\u0100" * 50) == 2


def _cache_utf8(text):
    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    as_utf8.restype, as_utf8.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_void_p]
    as_utf8(text, None)


def test_a_str_holding_its_own_utf8_still_encodes():
    # A str whose UTF-8 CPython keeps inside it (PyUnicode_AsUTF8AndSize,
    # which the PyO3-built peers call) is larger than its kind says: the
    # guess gives up, and the bytes are still right.
    for text in ("\xe6" * 3000 + "x", "\u2014" * 3000, "\U0001f600" * 3000):
        _cache_utf8(text)
        assert _utf8.kind(text) == 0
        assert_all_modes(text)


@pytest.mark.parametrize("at", range(12, 21))
def test_surrogates_at_the_edge_of_a_block(at):
    # Blocks of sixteen characters: a pair split across two blocks, a lone
    # one at either end of a block, a pair ending the text.
    ascii_text = "x" * 40
    for s in ["\ud83d\ude00", "\ud800", "\udc00", "\ud800\ud800\udc00", "\udbff\udfff"]:
        assert_all_modes(ascii_text[:at] + s + ascii_text[at:])
        assert_all_modes(ascii_text[:at] + s)


@pytest.mark.parametrize("offset", [-2, -1, 0, 1])
def test_a_pair_across_chunks(offset):
    # Texts longer than a chunk are converted a chunk at a time: a pair whose
    # high half ends a chunk is taken whole by the next one; a lone high
    # surrogate there still becomes U+FFFD.
    text = "a" * (CHUNK + offset) + "\ud83d\ude00" + "b" * 100 + "\ud800" + "é" * 50
    assert_all_modes(text)
    lone = "a" * (CHUNK - 1) + "\ud800" + "a" * 10
    assert_all_modes(lone)


def test_long_mixed_text_in_chunks():
    rng = random.Random(13)
    alphabet = ["a", "b", " ", "\n", "æ", "\u0416", "\u4e2d", "\U0001f600", "\ud800", "\udc00"]
    weights = [40, 30, 20, 5, 2, 1, 1, 1, 0.2, 0.2]
    text = "".join(rng.choices(alphabet, weights, k=2 * CHUNK + 12345))
    assert_all_modes(text)


def test_text_mostly_beyond_ascii_goes_to_str_encode_and_surrogates_still_work():
    # Mode 0 hands text mostly beyond ASCII to str.encode, which refuses
    # surrogates: the module's own loop then does it, by the same rule.
    cjk = "漢字かなカナ한국어" * 2000
    assert _utf8.utf8(cjk) == cjk.encode("utf-8")
    with_surrogates = cjk + "\ud83d\ude00" + cjk + "\udc00"
    assert_all_modes(with_surrogates)


def test_str_subclasses_and_errors():
    class Text(str):
        pass

    assert _utf8.utf8(Text("æ" * 3000)) == ("æ" * 3000).encode("utf-8")
    with pytest.raises(TypeError):
        _utf8.utf8(b"bytes")
    with pytest.raises(ValueError, match="mode"):
        _utf8.utf8("text", 4)
    with pytest.raises(TypeError):
        _utf8.kind(b"bytes")


def test_unicode_utf8_takes_the_module_for_long_text_only():
    # pybpe._unicode.utf8 is every encoder's way from str to UTF-8: the
    # module for long text that is not all ASCII, str.encode otherwise.
    short = "æ" * (_unicode._UTF8_MODULE_MIN - 1)
    long = "æ" + "a" * _unicode._UTF8_MODULE_MIN + "\ud800"
    for text in (short, long, "a" * 5000):
        assert _unicode.utf8(text) == expected(text)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_long_text_with_surrogates_encodes_as_tiktoken(name):
    # Long enough to take the module inside Encoding: mostly ASCII, one
    # Latin-1 letter, a pair and lone surrogates.
    text = ("Thou art more lovely and more temperate. " * 120 + "æ \ud83d\ude00 \ud800x\udc00 "
            + "Rough winds do shake the darling buds of May. " * 60)
    tk = offline_tiktoken(name)
    enc = get_encoding(name)
    assert enc.encode_ordinary(text) == tk.encode_ordinary(text)
    assert enc.encode(text) == tk.encode(text)
    assert enc.encode_ordinary_batch([text, text[::-1]]) == tk.encode_ordinary_batch([text, text[::-1]])


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_long_text_with_surrogates_to_numpy(name):
    numpy = pytest.importorskip("numpy")
    text = "æ" + "Shall I compare thee to a summer's day? " * 100 + "\ud83d\ude00\udc00"
    ids = get_encoding(name).encode_to_numpy(text)
    assert ids.dtype == numpy.uint32
    assert ids.tolist() == offline_tiktoken(name).encode_ordinary(text)


# -- joined: a batch's texts in one call (encode_ordinary_batch) -------------------------------------

def _starts_list(starts):
    return list(memoryview(starts).cast("B").cast(_unicode._SIZE_T_CODE))


class _Str(str):
    pass


JOINED_TEXTS = ["", "a", "æ" * 3000, "x" * 5000, "\u2014" + "y" * 2100, "\U0001F600" * 2049,
                "a\ud800b", "\ud83d\ude00" * 1500 + "\udc00", _Str("sub"), "é" * 2047 + "\ud800"]


def test_joined_is_each_texts_utf8_end_to_end():
    # each text as utf8() makes it (short and long, every kind, surrogates
    # at the thresholds), in order, with where each ends
    data, starts = _utf8.joined(JOINED_TEXTS)
    parts = [expected(t) for t in JOINED_TEXTS]
    assert data == b"".join(parts)
    ends = [0]
    for part in parts:
        ends.append(ends[-1] + len(part))
    assert _starts_list(starts) == ends


@given(texts=st.lists(st.lists(_pieces, max_size=8).map("".join), max_size=12))
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
def test_joined_matches_the_python_way(texts):
    # the module and pybpe/_unicode.py's fallback give the same two buffers
    data, starts = _utf8.joined(texts)
    module, _unicode._joined_of = _unicode._joined_of, None
    try:
        want_data, want_starts = _unicode.joined(texts)
    finally:
        _unicode._joined_of = module
    assert data == want_data == b"".join(expected(t) for t in texts)
    assert _starts_list(starts) == _starts_list(want_starts)


@pytest.mark.parametrize("texts, index", [([1], 0), (["a", b"b"], 1), (["a", "b", None, 3], 2)])
def test_joined_names_the_first_item_that_is_no_str(texts, index):
    assert _utf8.joined(texts) == index
    assert _utf8.joined(tuple(texts)) == index


def test_joined_of_nothing_and_its_argument_checks():
    data, starts = _utf8.joined([])
    assert data == b"" and _starts_list(starts) == [0]
    with pytest.raises(TypeError):
        _utf8.joined(5)


def test_the_fallback_joins_the_same(monkeypatch):
    # pybpe._unicode.joined without the module (PYBPE_NO_EXTENSION's way)
    want = _utf8.joined(JOINED_TEXTS)
    monkeypatch.setattr(_unicode, "_joined_of", None)
    data, starts = _unicode.joined(JOINED_TEXTS)
    assert data == want[0] and _starts_list(starts) == _starts_list(want[1])
    assert _unicode.joined(["a", 2]) == 1


def test_batches_through_joined_equal_one_text_at_a_time():
    enc = get_encoding("cl100k_base", backend="c")
    want = [enc.encode_ordinary(t) for t in JOINED_TEXTS]
    for threads in (1, 2):
        assert enc.encode_ordinary_batch(JOINED_TEXTS, num_threads=threads) == want
        assert enc.encode_ordinary_batch(tuple(JOINED_TEXTS), num_threads=threads) == want
    for bad in (["a", b"b"], ["a", 3, None]):
        for threads in (1, 2):
            with pytest.raises(TypeError, match=r"text\[1\] must be a str"):
                enc.encode_ordinary_batch(bad, num_threads=threads)
