"""pybpe.Encoding against tiktoken: same IDs, on every backend.

Layers: hand-checkable toy vocabularies; tiktoken's published vectors; full
Shakespeare and hypothesis text over every Unicode category compared with
tiktoken (built offline from the same shipped rank files -- never
tiktoken.get_encoding, which downloads); round trips; the heap/linear
threshold; degenerate and huge inputs, timed at n and 4n to catch quadratic
behaviour.  Tests that need tiktoken skip when it is not installed.
"""
import os
import pickle
import random
import string
import time

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pybpe
from pybpe import _unicode, patterns, specials
from pybpe import core as backends
from pybpe.core.spec import merge
from pybpe.encoding import Encoding
from pybpe.registry import get_encoding, list_encoding_names
from conftest import offline_tiktoken, shakespeare

BACKENDS = backends.available()
DATA = os.path.join(os.path.dirname(os.path.abspath(pybpe.__file__)), "data")  # the installed package's rank files
NAMES = ["gpt2", "cl100k_base"]
PATTERNS = {"gpt2": patterns.GPT2, "cl100k_base": patterns.CL100K}


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def toy(backend, **kwargs):
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"abc": 257, b"aa": 258, b"aaaa": 259})
    kwargs.setdefault("special_tokens", {"<|end|>": 300, "<|end|>x": 301})
    return Encoding("toy", pat_str=r"\w+|\W", mergeable_ranks=ranks, backend=backend, **kwargs)


# -- hand-checkable ----------------------------------------------------------------

def test_toy_known_answers(backend):
    enc = toy(backend)
    assert enc.encode("abc") == [257]                       # whole piece
    assert enc.encode("abcab") == [257, 256]              # ab c ab -> ab c ab -> abc ab
    assert enc.encode("aaaaaaa") == [259, 258, 97]        # leftmost first: aa aa aa a -> aaaa aa a
    assert enc.encode("a b") == [97, 32, 98]
    assert enc.decode([259, 258, 97]) == "aaaaaaa"
    assert enc.n_vocab == 302 and enc.max_token_value == 301


def test_tiktoken_rule_merges_bytes_that_are_not_tokens(backend):
    # tiktoken merges byte ranges: "ab" may be a token while "a" is not.
    enc = Encoding("t", pat_str=r"\w+", mergeable_ranks={b"ab": 0, b"b": 1}, special_tokens={}, backend=backend)
    assert enc.encode("abab") == [0, 0]
    assert enc.encode("abb") == [0, 1]
    with pytest.raises(ValueError):
        enc.encode("ba")  # the "a" is left alone and has no token


def test_merge_list_semantics_differ_from_ranks(backend):
    # a b c, bc=3, ab=4, abc=5; the merge list knows (b,c) then (a,b) only.
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5}
    tik = Encoding("r", pat_str=r"\w+", mergeable_ranks=ranks, special_tokens={}, backend=backend,
                   lookup_whole_piece=False)
    lst = Encoding("m", pat_str=r"\w+", mergeable_ranks=ranks, special_tokens={}, backend=backend,
                   merges=[(1, 2), (0, 1)])
    assert tik.encode("abc") == [5]     # bc first, then a+bc is the token abc
    assert lst.encode("abc") == [0, 3]  # bc first, then (a, bc) is not a merge
    assert lst.encode("abab") == [4, 4]
    with pytest.raises(ValueError, match="twice"):
        Encoding("m", pat_str=r"\w+", mergeable_ranks=ranks, special_tokens={}, merges=[(1, 2), (1, 2)])
    with pytest.raises(ValueError, match="not a token"):
        Encoding("m", pat_str=r"\w+", mergeable_ranks=ranks, special_tokens={}, merges=[(2, 0)])


def test_constructor_validation():
    ranks = {b"a": 0, b"b": 1}
    with pytest.raises(ValueError, match="two tokens"):
        Encoding("x", pat_str=".", mergeable_ranks={b"a": 0, b"b": 0}, special_tokens={})
    with pytest.raises(TypeError):
        Encoding("x", pat_str=".", mergeable_ranks={"a": 0}, special_tokens={})
    with pytest.raises(ValueError, match="explicit_n_vocab"):
        Encoding("x", pat_str=".", mergeable_ranks=ranks, special_tokens={}, explicit_n_vocab=5)
    with pytest.raises(ValueError, match="backend"):
        Encoding("x", pat_str=".", mergeable_ranks=ranks, special_tokens={}, backend="rust")


# -- tiktoken's published vectors ----------------------------------------------------

def test_hello_world(backend):
    assert get_encoding("gpt2", backend=backend).encode("hello world") == [31373, 995]
    assert get_encoding("cl100k_base", backend=backend).encode("hello world") == [15339, 1917]
    assert get_encoding("r50k_base", backend=backend).encode("hello world") == [31373, 995]


def test_repeated_digits(backend):
    enc = get_encoding("gpt2", backend=backend)
    expected = [[15], [405], [830], [2388], [20483], [10535], [24598], [8269], [10535, 830], [8269, 405],
                [8269, 830], [8269, 2388], [8269, 20483], [8269, 10535], [8269, 24598], [25645],
                [8269, 10535, 830]]
    assert [enc.encode("0" * i) for i in range(1, 18)] == expected


def test_simple_cl100k(backend):
    enc = get_encoding("cl100k_base", backend=backend)
    assert enc.encode(" \x850") == [220, 126, 227, 15]
    assert enc.encode("👍") == [9468, 239, 235]
    assert enc.decode_with_offsets(enc.encode("hi é!")) == ("hi é!", [0, 2, 4])


def test_special_tokens(backend):
    enc = get_encoding("gpt2", backend=backend)
    text = "hello <|endoftext|>"
    with pytest.raises(ValueError, match="disallowed special token '<\\|endoftext\\|>'"):
        enc.encode(text)
    assert enc.encode(text, allowed_special="all") == [31373, 220, 50256]
    assert enc.encode(text, allowed_special={"<|endoftext|>"}) == [31373, 220, 50256]
    assert enc.encode(text, disallowed_special=()) == [31373, 1279, 91, 437, 1659, 5239, 91, 29]
    assert enc.encode_ordinary(text) == [31373, 1279, 91, 437, 1659, 5239, 91, 29]
    # a custom disallowed string raises even though it is not a special token
    with pytest.raises(ValueError):
        enc.encode("say hello", disallowed_special={"hello"})
    assert enc.encode_single_token("<|endoftext|>") == 50256 == enc.eot_token
    assert enc.special_tokens_set == {"<|endoftext|>"}
    assert enc.is_special_token(50256) and not enc.is_special_token(0)
    cl = get_encoding("cl100k_base", backend=backend)
    mixed = "<|fim_prefix|>a<|endoftext|>b<|endofprompt|>"
    assert cl.encode(mixed, allowed_special={"<|fim_prefix|>"}, disallowed_special=()) == \
        [100258] + cl.encode_ordinary("a<|endoftext|>b<|endofprompt|>")
    with pytest.raises(ValueError, match="endoftext"):
        cl.encode(mixed, allowed_special={"<|fim_prefix|>"})


@pytest.mark.parametrize("method", ["encode", "encode_to_numpy"])
def test_disallowed_tokens_are_found_past_their_first_characters(backend, method):
    # check_disallowed skips the search when no token's first character is in
    # the text; a first character alone, or a token at the very end, must not
    # fool it, and the leftmost token is the one named.
    if method == "encode_to_numpy":
        pytest.importorskip("numpy")
    enc = get_encoding("cl100k_base", backend=backend)
    encode = getattr(enc, method)
    assert list(encode("a < b and c <| d")) == enc.encode_ordinary("a < b and c <| d")
    for text, token in [("x" * 5000 + "<|endofprompt|>", "endofprompt"),
                        ("<|fim_suffix|> then <|endoftext|>", "fim_suffix"),
                        ("é<|endoftext|>", "endoftext")]:
        with pytest.raises(ValueError, match=token):
            encode(text)
    for firsts in (["<x>", "[y]", "{z}"], ["a1", "b2", "c3", "d4", "e5"]):  # few and many first characters
        for bad in firsts:
            with pytest.raises(ValueError, match=regex.escape(bad)):
                encode("text " + bad + " more", disallowed_special=set(firsts))
        assert list(encode("text only", disallowed_special={"<x>"})) == enc.encode_ordinary("text only")



def _outcome(fn, text, **kwargs):
    # fn(text, **kwargs) as a list of IDs, or the message of its ValueError.
    try:
        return list(fn(text, **kwargs))
    except ValueError as e:
        return str(e)


@pytest.mark.parametrize("method", ["encode", "encode_to_numpy"])
def test_default_special_check_is_the_explicit_one(backend, method):
    # The default arguments (none allowed, every special token disallowed)
    # take Encoding._check_no_specials, with its sets made once; the same
    # sets passed explicitly (a tuple and a set) take the general path.  Same
    # IDs or the same error on texts built of the tokens, their pieces and
    # near misses, for the shipped encodings, one whose tokens start with
    # different characters, and one with no special tokens.
    if method == "encode_to_numpy":
        pytest.importorskip("numpy")
    gpt2 = get_encoding("gpt2", backend=backend)
    odd = Encoding("odd", pat_str=gpt2.pat_str, mergeable_ranks=gpt2.mergeable_ranks,
                   special_tokens={"<a>": 50257, "[b]": 50258, "é|": 50259}, backend=backend)
    bare = Encoding("bare", pat_str=gpt2.pat_str, mergeable_ranks=gpt2.mergeable_ranks, special_tokens={},
                    backend=backend)
    encodings = [gpt2, get_encoding("cl100k_base", backend=backend), odd, bare]
    rng = random.Random(77)
    raised = 0
    for enc in encodings:
        fn = getattr(enc, method)
        tokens = sorted(enc.special_tokens_set) or ["<|endoftext|>"]
        bits = ["a", " ", "é", "漢", "<", "|", "<|", "[", "x" * 30] + [t[:-1] for t in tokens] + [t[1:] for t in tokens]
        texts = ["", "plain text", tokens[0], "<" + tokens[-1]]
        for _ in range(150):
            parts = [rng.choice(bits) for _ in range(rng.randrange(0, 10))]
            if rng.random() < 0.3:
                parts.insert(rng.randrange(len(parts) + 1), rng.choice(tokens))
            texts.append("".join(parts))
        for text in texts:
            want = _outcome(fn, text, allowed_special=(), disallowed_special=tuple(enc.special_tokens_set))
            assert _outcome(fn, text) == want, (enc.name, text)
            assert _outcome(fn, text, allowed_special=set(), disallowed_special="all") == want
            raised += isinstance(want, str)
    assert raised > 50


def _plain_check(text, disallowed):
    # check_disallowed without its shortcuts: the regex search alone.
    match = specials.special_regex(disallowed).search(text) if disallowed else None
    return match.group() if match else None


def _check_result(text, disallowed):
    try:
        specials.check_disallowed(text, disallowed)
    except ValueError as e:
        return str(e)
    return None


@pytest.mark.parametrize("tokens", [
    ("<|endoftext|>",),
    ("<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>"),
    ("<|endoftext|>", "<|endofprompt|>"),
    ("<a>", "<a><b>"), ("ab", "b|"), ("||", "|x"), ("é|", "é|é"), ("x",)])
def test_check_disallowed_shortcuts_are_exact(tokens):
    # check_disallowed skips the regex when no token's first character is in
    # the text, or when no occurrence of a rare character of the tokens'
    # common prefix (found by memchr, at most _ANCHOR_HITS of them per
    # anchor) lies where that prefix would hold it.  Against the plain
    # search on random texts built from the tokens' pieces: anchors alone,
    # prefixes, near misses, whole tokens, Unicode, and runs of anchors
    # beyond the cap before the one real token.
    disallowed = frozenset(tokens)
    rng = random.Random(1913 + len(tokens))
    prefix = os.path.commonprefix(sorted(tokens))
    bits = ["a", " ", "\n", "é", "漢", "<", ">", "|", "<|", "|>", prefix, prefix[:-1], prefix[1:],
            "x" * 40] + [t[:-1] for t in tokens] + [t[1:] for t in tokens]
    cap = specials._ANCHOR_HITS
    texts = ["", tokens[0], "|" * (cap + 3) + tokens[-1], "<" * (cap + 3) + "|" * (cap + 3) + tokens[0],
             "|" * (cap - 1) + tokens[0], "<" * cap + "|" * cap, prefix * (cap + 5)]
    for _ in range(400):
        parts = [rng.choice(bits) for _ in range(rng.randrange(0, 12))]
        if rng.random() < 0.3:
            parts.insert(rng.randrange(len(parts) + 1), rng.choice(tokens))
        if rng.random() < 0.2:
            parts.insert(rng.randrange(len(parts) + 1), rng.choice("|<") * rng.randrange(cap - 2, cap + 3))
        texts.append("".join(parts))
    found = 0
    for text in texts:
        want = _plain_check(text, disallowed)
        got = _check_result(text, disallowed)
        assert (got is None) == (want is None), (tokens, text[:80])
        if want is not None:
            found += 1
            assert repr(want) in got
    assert 0 < found < len(texts)


def test_special_tokens_match_tiktoken(backend):
    tk = offline_tiktoken("cl100k_base")
    enc = get_encoding("cl100k_base", backend=backend)
    text = "x<|fim_prefix|><|fim_prefix|>y <|endoftext|>\n<|endofprompt|><|fim_suffix|"
    for allowed in ("all", {"<|endoftext|>"}, set()):
        assert enc.encode(text, allowed_special=allowed, disallowed_special=()) == \
            tk.encode(text, allowed_special=allowed, disallowed_special=())
    with pytest.raises(ValueError):
        tk.encode(text)
    with pytest.raises(ValueError):
        enc.encode(text)


def test_overlapping_special_tokens_longest_wins(backend):
    enc = toy(backend)
    assert enc.encode("<|end|>x", allowed_special="all") == [301]
    assert enc.encode("<|end|>y", allowed_special={"<|end|>"}) == [300, 121]


def test_token_byte_values_is_a_new_sorted_list_each_call():
    # Kept sorted after the first call, handed out as a copy: a caller's
    # changes to one list never reach the next.
    for name in ("gpt2", "cl100k_base"):
        enc = get_encoding(name)
        first = enc.token_byte_values()
        assert first == sorted(enc._mergeable_ranks) and len(first) == len(enc._mergeable_ranks)
        first.clear()
        again = enc.token_byte_values()
        assert again == sorted(enc._mergeable_ranks) and again is not enc.token_byte_values()


def test_attributes():
    g = get_encoding("gpt2")
    c = get_encoding("cl100k_base")
    assert (g.name, g.n_vocab, g.max_token_value, g.eot_token) == ("gpt2", 50257, 50256, 50256)
    assert (c.name, c.n_vocab, c.max_token_value, c.eot_token) == ("cl100k_base", 100277, 100276, 100257)
    assert len(g.token_byte_values()) == 50256 and g.token_byte_values()[0] == b"\x00"
    assert c.decode_single_token_bytes(15339) == b"hello"
    assert c.decode_tokens_bytes([15339, 1917]) == [b"hello", b" world"]
    assert repr(g) == "<Encoding 'gpt2'>"
    with pytest.raises(KeyError):
        g.decode_single_token_bytes(10**6)
    with pytest.raises(KeyError):
        g.decode([10**6])
    with pytest.raises(TypeError):
        g.encode(b"bytes")
    with pytest.raises(KeyError):
        toy("python", special_tokens={}).eot_token


def test_batch_and_pickle(backend):
    enc = get_encoding("gpt2", backend=backend)
    texts = ["hello world", "goodbye world", "", "<|endoftext|> x"] * 20
    assert enc.encode_ordinary_batch(texts, num_threads=4) == [enc.encode_ordinary(t) for t in texts]
    assert enc.encode_batch(texts, allowed_special="all") == [enc.encode(t, allowed_special="all") for t in texts]
    with pytest.raises(ValueError):
        enc.encode_batch(texts)
    ids = enc.encode_ordinary_batch(texts)
    assert enc.decode_batch(ids) == texts
    assert enc.decode_bytes_batch(ids) == [t.encode() for t in texts]
    clone = pickle.loads(pickle.dumps(enc))
    assert clone.encode("hello world") == [31373, 995] and clone.backend == enc.backend


def test_decode_replaces_partial_characters():
    enc = get_encoding("cl100k_base")
    ids = enc.encode("👍")
    assert enc.decode(ids[:1]) == "\ufffd"
    assert enc.decode_bytes(ids[:1]) == "👍".encode()[:2] or enc.decode_bytes(ids[:1]) == b"\xf0\x9f"
    with pytest.raises(UnicodeDecodeError):
        enc.decode(ids[:1], errors="strict")


def test_registry():
    assert list_encoding_names()[:7] == ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base",
                                         "o200k_base", "o200k_harmony"]
    assert get_encoding("gpt2") is get_encoding("gpt2")
    assert get_encoding("r50k_base").name == "r50k_base"
    with pytest.raises(ValueError, match="unknown encoding"):
        get_encoding("gpt5")


def test_registry_user_files(tmp_path, monkeypatch):
    from pybpe import registry

    monkeypatch.setattr(registry, "_cache", {})  # the files are looked for on first use only
    monkeypatch.delenv("PYBPE_O200K_BASE_FILE", raising=False)
    fake = tmp_path / "o200k_base.tiktoken"
    fake.write_bytes(b"YQ== 0\n")
    monkeypatch.setenv("PYBPE_TIKTOKEN_DIR", str(tmp_path))
    from pybpe.errors import FormatError
    with pytest.raises(FormatError, match="sha256"):
        get_encoding("o200k_base")
    monkeypatch.delenv("PYBPE_TIKTOKEN_DIR")
    with pytest.raises(FormatError, match="sha256"):
        get_encoding("p50k_base", path=os.path.join(DATA, "gpt2.tiktoken"))
    with pytest.raises(FileNotFoundError, match="absent.tiktoken"):
        get_encoding("cl100k_base", path=tmp_path / "absent.tiktoken")
    monkeypatch.setenv("PYBPE_CL100K_BASE_FILE", os.path.join(DATA, "cl100k_base.tiktoken"))
    assert get_encoding("cl100k_base", backend="python").encode("hello world") == [15339, 1917]


# -- surrogates: exactly tiktoken's fix-up ------------------------------------------

@pytest.mark.parametrize("text", ["\ud83d\ude00", "a\ud800b", "\udc00", "x\ud83dy\ude00z", "\ud800\ud800"])
def test_surrogates_like_tiktoken(backend, text):
    for name in NAMES:
        tk = offline_tiktoken(name)
        enc = get_encoding(name, backend=backend)
        assert enc.encode(text) == tk.encode(text)
        assert enc.encode_ordinary(text) == tk.encode_ordinary(text)
    cl = get_encoding("cl100k_base", backend=backend)
    assert cl.encode("\ud83d\ude00") == cl.encode("😀")      # a pair is the character it spells
    assert cl.encode("a\ud800b") == cl.encode("a\ufffdb")    # a lone one becomes U+FFFD


# -- parity with tiktoken on real and generated text -----------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_shakespeare_matches_tiktoken(backend, name):
    text = shakespeare()
    enc = get_encoding(name, backend=backend)
    ids = enc.encode_ordinary(text)
    assert ids == offline_tiktoken(name).encode_ordinary(text)
    assert enc.decode(ids) == text


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_shakespeare_backends_agree(name):
    if len(BACKENDS) < 2:
        pytest.skip("the C backend is not built")
    text = shakespeare()[:2_000_000]
    assert get_encoding(name, backend="c").encode_ordinary(text) == \
        get_encoding(name, backend="python").encode_ordinary(text)


# Every Unicode category, plus the troublemakers named in the spec.
_TRICKY = [
    "👩\u200d👩\u200d👧\u200d👦", "🏳️\u200d🌈", "e\u0301\u0302", "\u0915\u094d\u0937", "漢字かなカナ", "한국어",
    "שָׁלוֹם", "مرحبا", "\u200f\u200e", "\u00a0", "\u2028", "\u3000", "\x1c\x1d", "\x85", "\t\r\n", "\r\n\r\n",
    "٣٤", "۴۵", "߅", "३४", "৪", "੫", "૬", "୭", "௮", "౯", "๓", "１２３", "\x00", "'s", "'LL", "'Ve", " 's",
    "  ", "\n\n\n", "!!!", "...", "$1,000.50", "hello", "World", "ǅ", "ᾈ", "\U0001d400", "\ufeff", "\U0010ffff",
]
_chars = st.characters(exclude_categories=())  # every category, surrogates included
_text = st.lists(st.one_of(st.text(_chars, max_size=8), st.sampled_from(_TRICKY)), max_size=12).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_text)
def test_generated_text_matches_tiktoken(text):
    for name in NAMES:
        tk = offline_tiktoken(name)
        expected = tk.encode(text, disallowed_special=())
        for backend in BACKENDS:
            enc = get_encoding(name, backend=backend)
            assert enc.encode(text, disallowed_special=()) == expected
            assert enc.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all")
        if not regex.search(r"\p{Cs}", text):
            assert enc.decode_with_offsets(expected) == tk.decode_with_offsets(expected)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.text(st.characters(exclude_categories=("Cs",))) | _text.filter(lambda s: not regex.search(r"\p{Cs}", s)))
def test_round_trip(text):
    for name in NAMES:
        for backend in BACKENDS:
            enc = get_encoding(name, backend=backend)
            ids = enc.encode_ordinary(text)
            assert enc.decode(ids) == text
            assert enc.decode_bytes(ids) == text.encode("utf-8")
            decoded, offsets = enc.decode_with_offsets(ids)
            assert decoded == text and len(offsets) == len(ids)


@settings(max_examples=200, deadline=None)
@given(text=_text)
def test_possessive_gpt2_pattern_splits_identically(text):
    assert regex.findall(patterns.GPT2, text) == regex.findall(patterns.GPT2_POSSESSIVE, text)


def test_possessive_gpt2_pattern_onshakespeare():
    text = shakespeare()[:1_000_000]
    assert regex.findall(patterns.GPT2, text) == regex.findall(patterns.GPT2_POSSESSIVE, text)


def test_patterns_presets():
    assert patterns.resolve("gpt2") == patterns.GPT2
    assert patterns.resolve("o200k") == patterns.O200K
    assert patterns.resolve(r"\w+") == r"\w+"
    assert regex.findall(patterns.O200K, "HelloWorld isn't 12345") == ["Hello", "World", " isn't", " ", "123", "45"]
    with pytest.raises(TypeError):
        patterns.resolve(None)


# -- merging: linear and heap paths agree, on both sides of the threshold -------------

_alphabet = [bytes([b]) for b in b"abc"]


@st.composite
def _vocab_and_piece(draw):
    # a random vocabulary over a, b, c and a long random piece
    extra = draw(st.lists(st.text("abc", min_size=2, max_size=6), max_size=40, unique=True))
    tokens = _alphabet + [t.encode() for t in extra]
    draw(st.randoms()).shuffle(tokens)
    n = draw(st.sampled_from([2, 50, 99, 100, 101, 300]))
    piece = draw(st.text("abc", min_size=n, max_size=n))
    return tokens, piece


@settings(max_examples=200, deadline=None)
@given(case=_vocab_and_piece())
def test_linear_and_heap_merges_agree(case):
    tokens, piece = case
    ranks = {t: i for i, t in enumerate(tokens)}

    def rule(a, b):
        r = ranks.get(a + b)
        return None if r is None else (r, a + b)

    parts = [bytes([b]) for b in piece.encode()]
    assert merge.merge_linear(parts, rule) == merge.merge_heap(parts, rule)
    expected = None
    for backend in BACKENDS:
        enc = Encoding("r", pat_str=r"[abc]+", mergeable_ranks=ranks, special_tokens={}, backend=backend,
                       lookup_whole_piece=False)
        ids = enc.encode(piece)
        assert b"".join(tokens[i] for i in ids) == piece.encode()
        expected = ids if expected is None else expected
        assert ids == expected
    tiktoken = pytest.importorskip("tiktoken")
    # tiktoken looks the whole piece up first: compare with that switched on
    tk = tiktoken.Encoding("r", pat_str=r"[abc]+", mergeable_ranks=ranks, special_tokens={})
    for backend in BACKENDS:
        enc = Encoding("r", pat_str=r"[abc]+", mergeable_ranks=ranks, special_tokens={}, backend=backend)
        assert enc.encode(piece) == tk.encode(piece)


def test_threshold_is_shared():
    assert merge.HEAP_THRESHOLD == backends.get("python").HEAP_THRESHOLD == 100
    if "c" in BACKENDS:
        assert backends.get("c").HEAP_THRESHOLD == merge.HEAP_THRESHOLD


# -- huge and degenerate inputs --------------------------------------------------------

def test_degenerate(backend):
    enc = get_encoding("gpt2", backend=backend)
    assert enc.encode("") == [] and enc.decode([]) == ""
    assert enc.encode("a") == [64]
    assert enc.encode("\x00") == [188]
    assert enc.decode(enc.encode("\x00" * 5)) == "\x00" * 5


def test_million_characters_like_tiktoken(backend):
    # tiktoken's own test_large_repeated, compared ID for ID
    text = "x" * 1_000_000
    for name in NAMES:
        enc = get_encoding(name, backend=backend)
        ids = enc.encode(text)
        assert enc.decode(ids) == text
        if backend == "c" or name == "gpt2":
            assert ids == offline_tiktoken(name).encode(text)


def _no_space_text(n):
    rng = random.Random(0)
    return "".join(rng.choice(string.ascii_letters) for _ in range(n))


def _seconds(enc, text):
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        enc.encode_ordinary(text)
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["repeated", "no_whitespace", "spaces"])
@pytest.mark.parametrize("name", NAMES)
def test_time_grows_linearly(backend, name, kind):
    # Quadratic merging would take 16x as long on 4x the input; n log n with
    # cache effects measures 4-6x.  The bound is loose on purpose: shared
    # machines are noisy, and an absolute limit would be flaky.
    n = 250_000 if backend == "c" else 50_000
    make = {"repeated": lambda k: "a" * k, "no_whitespace": _no_space_text, "spaces": lambda k: " " * k}[kind]
    enc = get_encoding(name, backend=backend)
    small, large = _seconds(enc, make(n)), _seconds(enc, make(4 * n))
    assert large < 10 * max(small, 0.005), (small, large)


# -- the C scanners cut exactly where the regex module does with tiktoken's classes --

def _c_split():
    if "c" not in BACKENDS:
        pytest.skip("the C backend is not built")
    return backends.get("c")


_scanner_text = st.lists(st.one_of(st.text(_chars, max_size=6), st.sampled_from(_TRICKY),
                                   st.sampled_from(list(" \t\n\r\x0b\x0c'sSlLvVeErRdDmMtTſ0١!.-\u3000\x85"))),
                         max_size=16).map("".join)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_scanner_text.filter(lambda s: not regex.search(r"\p{Cs}", s)))
def test_c_scanners_match_regex(text):
    cr = _c_split()
    assert cr.split(text, cr.PRESET_GPT2) == _unicode.split(regex.compile(patterns.GPT2), text)
    assert cr.split(text, cr.PRESET_CL100K) == _unicode.split(regex.compile(patterns.CL100K), text)


def test_c_scanners_onshakespeare():
    cr = _c_split()
    text = shakespeare()
    assert cr.split(text, cr.PRESET_GPT2) == _unicode.split(regex.compile(patterns.GPT2), text)
    assert cr.split(text, cr.PRESET_CL100K) == _unicode.split(regex.compile(patterns.CL100K), text)


def test_c_scanner_examples():
    cr = _c_split()
    assert cr.split("Hello world's  2024!!\n\n x", cr.PRESET_GPT2) == \
        ["Hello", " world", "'s", " ", " 2024", "!!", "\n\n", " x"]
    assert cr.split("I'LL 12345 ſ'ſ\r\n  \n y  ", cr.PRESET_CL100K) == \
        ["I", "'LL", " ", "123", "45", " ſ", "'ſ", "\r\n  \n", " y", "  "]


def test_regex_path_still_used_for_other_patterns(backend):
    # a spelling the C scanners do not know goes through the regex module
    enc = get_encoding("gpt2", backend=backend)
    alt = Encoding("alt", pat_str=patterns.GPT2 + "|(?!)", mergeable_ranks=enc.mergeable_ranks,
                   special_tokens={}, backend=backend)
    assert alt._preset is None
    text = "Hello world's  2024!!\n\n x" * 10
    assert alt.encode(text) == enc.encode(text)


def test_spec_byte_level_example_with_merge_list(backend):
    # SPEC section 1: byte level, no pre-tokenizer, "aaabdaaabac", three merges
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"aa": 256, b"aaa": 257, b"aaab": 258})
    enc = Encoding("minbpe", pat_str=patterns.WHOLE_TEXT, mergeable_ranks=ranks, special_tokens={},
                   merges=[(97, 97), (256, 97), (257, 98)], backend=backend)
    assert enc.encode("aaabdaaabac") == [258, 100, 258, 97, 99]
    assert enc.decode([258, 100, 258, 97, 99]) == "aaabdaaabac"
    assert enc.merges == [(97, 97), (256, 97), (257, 98)]


@settings(max_examples=150, deadline=None)
@given(case=_vocab_and_piece())
def test_merge_lists_agree_across_backends(case):
    # merge-list mode on random vocabularies, both sides of the heap threshold
    from pybpe.formats import merges_from_ranks

    tokens, piece = case
    ranks = {t: i for i, t in enumerate(tokens)}
    merges = merges_from_ranks(ranks)
    results = []
    for backend in BACKENDS:
        enc = Encoding("m", pat_str=r"[abc]+", mergeable_ranks=ranks, special_tokens={}, merges=merges,
                       backend=backend)
        ids = enc.encode(piece)
        assert b"".join(tokens[i] for i in ids) == piece.encode()
        results.append(ids)
    assert all(r == results[0] for r in results)


# -- a vocabulary without some one-byte tokens ------------------------------------

def _without_bytes(backend, missing, merges):
    # gpt2's pattern over the 256 bytes less `missing`, with "ab" (and "ab"
    # merged from a, b when `merges`): a text byte without a token is the
    # encoder's error, whichever path the text takes.
    ranks = {bytes([b]): b for b in range(256) if bytes([b]) not in missing}
    ranks[b"ab"] = 256
    return Encoding("gappy", pat_str=patterns.GPT2, mergeable_ranks=ranks, special_tokens={"<|end|>": 300},
                    merges=[(97, 98)] if merges else None, backend=backend)


@pytest.mark.parametrize("merges", [False, True])
def test_a_byte_without_a_token_is_one_error_naming_what_the_vocabulary_lacks(merges, tmp_path):
    # Found by fuzzing: the C backend said "encoding: invalid input (for
    # encoding: a byte of the text ...)", the Python one "a byte of the
    # text ..." or "byte b'Q' of the text ..." depending on the rule; a
    # GPT-2 vocab.json with a one-byte token deleted loads and then fails
    # only on texts with that byte, which the message should name.
    want = "a byte of the text has no token in this vocabulary (it has none for b'Q', b'z')"
    texts = ["Quick", "the zoo", "ab " * 9000 + "z", "x" * 20000 + "Q"]  # short (one call) and long
    for backend in BACKENDS:
        encs = [_without_bytes(backend, {b"Q", b"z"}, merges)]
        if merges:  # the same vocabulary through GPT-2's files
            vocab, merges_txt = tmp_path / ("v%s.json" % backend), tmp_path / ("m%s.txt" % backend)
            pybpe.formats.dump_gpt2_bpe(encs[0], vocab, merges_txt)
            encs.append(pybpe.formats.load_gpt2_bpe(vocab, merges_txt, backend=backend))
        for enc in encs:
            assert enc.encode("ab ab, xy!") == [256, 32, 256, 44, 32, 120, 121, 33]
            calls = [lambda t: enc.encode(t), enc.encode_ordinary, enc.encode_to_numpy,
                     lambda t: enc.encode_ordinary_batch([t, "ab"], num_threads=1),
                     lambda t: enc.encode_ordinary_batch(["ab"] * 40 + [t], num_threads=2),
                     lambda t: enc.encode_batch([t], num_threads=1)]
            for call in calls:
                for text in texts:
                    with pytest.raises(ValueError) as raised:
                        call(text)
                    assert str(raised.value) == want, (backend, text[:10])
            for call in [enc._encode_single_piece, enc.encode_with_unstable, enc._encode_only_native_bpe]:
                with pytest.raises(ValueError) as raised:
                    call("Quick")
                assert str(raised.value) == want, (backend, call)
            with pytest.raises(KeyError):  # as tiktoken: no such token
                enc.encode_single_token("Q")
    many = _without_bytes(BACKENDS[0], {bytes([b]) for b in range(128, 256)}, merges)
    with pytest.raises(ValueError, match=r"\(it has none for b'\\x80', b'\\x81', .* and 120 more\)$"):
        many.encode("é")
