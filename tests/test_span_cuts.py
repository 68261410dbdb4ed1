"""Long pieces cut where no token occurrence spans the cut (csrc/ranks_merge.c, bpe__ranks_merge_cut).

The C core cuts a long piece (17-4,096 bytes, or from 6 bytes when it ends
in a character of three bytes) at places p that no
occurrence of a vocabulary token inside the piece covers -- no token
piece[i:j] of two bytes or more with i < p < j -- merges the units between
cuts on their own (through the piece cache) and joins their IDs.  Exact
because every part merging ever forms is a token occurring at its place, so
no merge crosses such a p.  Under o200k most CJK character boundaries are
such places, though nearly every pair of CJK bytes occurs in some token.
(gpt2 takes the special case of two bytes no token holds side by side,
cheaper and enough there, and so does cl100k but for pieces that end in a
character of three bytes; small dense vocabularies, like the random ones
here, and o200k take the general rule.)

Each input here is compared with merging that takes no cut: tiktoken's
encode_single_piece for the shipped vocabularies, a literal rescan for
random small ones.  Inputs: CJK text, random bytes, and strings glued from
fragments of real tokens (so that tokens end and begin right at, one byte
before and one byte after each other).  A model of the rule in Python checks
that the cuts happen and that the units are what the piece cache is asked.
"""
import glob
import os
import random
import sysconfig

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pybpe
from pybpe import core as backends
from pybpe.encoding import Encoding

from conftest import naive_merge, offline_tiktoken

needs_c = pytest.mark.skipif("c" not in backends.available(), reason="the C backend is not built")
BACKENDS = backends.available()
SHIPPED = ["gpt2", "cl100k_base", "o200k_base"]

CJK = ("東京特許許可局長今日急遽休暇許可拒否。吾輩は猫である。名前はまだ無い。"
       "我们的祖先在这片土地上生活了几千年，创造了灿烂的文化。"
       "한국어 문장도 조금 섞어 봅니다。それから日本語の文章がまた続きます。")


def _cjk_text():
    """CPython's Chinese and Japanese test texts (what the benchmark's cjk
    corpus is made of) when the standard library ships them, and CJK."""
    parts = [CJK * 4]
    folder = os.path.join(sysconfig.get_paths()["stdlib"], "test", "cjkencodings")
    for path in sorted(glob.glob(os.path.join(folder, "*-utf8.txt"))):
        if os.path.basename(path).startswith(("big5", "euc_j", "gb", "hz", "iso2022_jp", "shift")):
            with open(path, encoding="utf-8") as f:
                parts.append(f.read())
    return "".join(parts)


def span_cuts(piece, tokens, longest):
    """The places 0 < p < len(piece) that no token piece[i:j] (j - i >= 2,
    i < p < j) spans: the rule, literally."""
    spanned = [False] * (len(piece) + 1)
    for i in range(len(piece)):
        for j in range(i + 2, min(len(piece), i + longest) + 1):
            if piece[i:j] in tokens:
                for p in range(i + 1, j):
                    spanned[p] = True
    return [p for p in range(1, len(piece)) if not spanned[p]]


_VOCAB = {}


def _vocab(name):
    if name not in _VOCAB:
        ranks = pybpe.get_encoding(name).mergeable_ranks
        _VOCAB[name] = (set(ranks), max(map(len, ranks)), sorted(ranks, key=ranks.get))
    return _VOCAB[name]


def _fragment_pieces(rng, tokens, count):
    """Pieces of 17-200 bytes glued from fragments of real multi-byte tokens:
    whole tokens, their heads and tails, a byte off either way."""
    multi = [t for t in tokens if len(t) >= 2]
    cjkish = [t for t in multi if t[0] >= 0xC0 or t[-1] >= 0x80]
    out = []
    for _ in range(count):
        piece = b""
        target = rng.randint(17, 200)
        while len(piece) < target:
            t = rng.choice(cjkish if cjkish and rng.random() < 0.6 else multi)
            a = rng.randrange(len(t))
            b = rng.randint(a + 1, len(t))
            piece += rng.choice((t, t[a:], t[:b], t[a:b]))
        out.append(piece)
    return out


def _pieces(name, seed):
    tokens, _, ordered = _vocab(name)
    rng = random.Random(seed)
    text = _cjk_text().encode()
    out = []
    for _ in range(150):  # CJK text, cut anywhere (also inside a character)
        start = rng.randrange(len(text))
        out.append(text[start:start + rng.randint(17, 300)])
    for _ in range(100):  # CJK characters, random
        span = rng.choice(((0x4E00, 0x9FFF), (0x3040, 0x30FF), (0xAC00, 0xD7A3)))
        out.append("".join(chr(rng.randrange(*span)) for _ in range(rng.randint(6, 80))).encode())
    for _ in range(100):  # random bytes, and random bytes of a few kinds
        alphabet = rng.choice((range(256), range(0x80, 0x100), b"\xe3\x81\x82\x83\xe4\xb8\x80"))
        out.append(bytes(rng.choice(alphabet) for _ in range(rng.randint(17, 300))))
    out += _fragment_pieces(rng, ordered, 250)
    return out


@needs_c
@pytest.mark.parametrize("name", SHIPPED)
def test_cut_pieces_merge_as_whole_pieces(name):
    for seed in range(4):
        _assert_merged_as_tiktoken(name, _pieces(name, seed))


def _assert_merged_as_tiktoken(name, pieces):
    # The C's IDs of each piece alone, and of all of them in one call (so
    # that units meet in the call's piece cache), are tiktoken's.
    tik = offline_tiktoken(name)._core_bpe.encode_single_piece
    table = pybpe.get_encoding(name, backend="c")._table
    for piece in pieces:
        assert table.encode_piece(piece) == tik(piece), (name, piece)
    ids = table._encode(b"".join(pieces), _lengths(pieces), False)
    assert ids == [i for p in pieces for i in tik(p)], name


def _lengths(pieces):
    from pybpe.core.native.ranks import _u32
    return _u32([len(p) for p in pieces])


@pytest.mark.parametrize("name", SHIPPED)
def test_python_backend_agrees_on_the_same_pieces(name):
    # The no-extension path: the Python twin takes no cut, so it is one more
    # oracle, and it must give tiktoken's IDs too.
    tik = offline_tiktoken(name)._core_bpe.encode_single_piece
    table = pybpe.get_encoding(name, backend="python")._table
    for piece in _pieces(name, 11)[::5]:
        assert table.encode_piece(piece) == tik(piece), (name, piece)


@pytest.mark.parametrize("name", SHIPPED)
def test_the_rule_cuts_cjk(name):
    # The rule is worth having: most character boundaries of the CJK text are
    # cuts under every shipped vocabulary (o200k ~65%, where no byte pair of
    # two CJK characters is unheld).
    tokens, longest, _ = _vocab(name)
    text = _cjk_text()
    rng = random.Random(3)
    bounds = cuts = 0
    for _ in range(200):
        start = rng.randrange(len(text) - 60)
        piece = text[start:start + 40].encode()
        starts = {k for k in range(1, len(piece)) if piece[k] & 0xC0 != 0x80}
        bounds += len(starts)
        cuts += len(starts & set(span_cuts(piece, tokens, longest)))
    assert cuts > bounds // 2, (cuts, bounds)


@needs_c
@pytest.mark.parametrize("name", SHIPPED)
def test_new_sentences_of_known_units_merge_nothing_new(name):
    # The units are what the piece cache is asked about: sentences glued
    # from units already seen merge no unit again.
    tokens, longest, _ = _vocab(name)
    tk = offline_tiktoken(name)
    base = pybpe.get_encoding(name, backend="c")
    enc = Encoding(name, pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks,
                   special_tokens=base.special_tokens, backend="c", piece_cache=16 << 20)
    rng = random.Random(5)
    common = "的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自之年过发后作里"
    first = ["".join(rng.choice(common) for _ in range(rng.randint(8, 40))) for _ in range(200)]
    seen = set()
    for s in first:
        b = s.encode()
        ks = [0] + span_cuts(b, tokens, longest) + [len(b)]
        seen.update(b[x:y] for x, y in zip(ks, ks[1:]))
    new, novel = [], set()
    while len(new) < 200:
        a, b = (s.encode() for s in rng.sample(first, 2))
        glued = a[:rng.randrange(3, len(a), 3)] + b[rng.randrange(0, len(b) - 3, 3):]
        if len(glued) < 17:
            continue
        ks = [0] + span_cuts(glued, tokens, longest) + [len(glued)]
        units = {glued[x:y] for x, y in zip(ks, ks[1:])}
        new.append(glued.decode())
        novel |= units - seen
    text_a, text_b = "。".join(first), "。".join(new)
    assert enc.encode_ordinary(text_a) == tk.encode_ordinary(text_a)
    cache = enc._caches[0]
    before = enc._table.cache_info(cache)
    assert enc.encode_ordinary(text_b) == tk.encode_ordinary(text_b)
    after = enc._table.cache_info(cache)
    assert after["merges"] > before["merges"]  # the sentences are new
    # cut: units were merged (cl100k's CJK takes the span rule since
    # 2026-12-06, whose finer cuts leave fewer distinct units: 139 here,
    # 150-odd with the byte-pair rule)
    assert before["unit_merges"] > {"gpt2": 40, "cl100k_base": 100, "o200k_base": 300}[name]
    # Their units are not new: only units not seen before are merged.  (The
    # C may cut less than the rule -- gpt2 and cl100k cut only between bytes
    # no token holds side by side, o200k's filter may take a string for a
    # token -- so a few units straddle a join.)
    slack = 25 if name == "o200k_base" else len(new)  # (a unit across each join)
    assert after["unit_merges"] - before["unit_merges"] <= len(novel) + slack, (before, after, len(novel))


def _short_wide_pieces(rng):
    """Pieces of 4-18 bytes around RK_CUT_MIN_WIDE (6) and RK_CUT_MIN (17):
    runs of CJK, kana, Hangul and Devanagari characters (three bytes each,
    Devanagari with its marks), some behind a space or an ASCII letter, some
    cut inside a character at either end, some ending in a two- or four-byte
    character instead (those stay whole below 17 bytes)."""
    spans = ((0x4E00, 0x9FFF), (0x3040, 0x30FF), (0xAC00, 0xD7A3), (0x0900, 0x097F))
    common = "的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得"
    out = []
    for _ in range(400):
        kind = rng.randrange(4)
        if kind == 0:
            chars = "".join(rng.choice(common) for _ in range(rng.randint(2, 6)))
        else:
            span = rng.choice(spans)
            chars = "".join(chr(rng.randrange(*span)) for _ in range(rng.randint(2, 6)))
        prefix = rng.choice(("", "", " ", "x", "\u00e9"))
        suffix = rng.choice(("", "", "", "\u00e9", "\U0001F600"))
        piece = (prefix + chars + suffix).encode()
        cut = rng.random()
        if cut < 0.15:
            piece = piece[1:]  # starts inside a character
        elif cut < 0.3:
            piece = piece[:-1]  # ends inside one
        if 4 <= len(piece) <= 18:
            out.append(piece)
    return out


@needs_c
@pytest.mark.parametrize("name", SHIPPED)
def test_short_pieces_of_three_byte_characters(name):
    # Pieces of 6-16 bytes that end in a character of three bytes are cut
    # too (ranks_merge.c, RK_CUT_MIN_WIDE): each alone, and all in one call,
    # give merging's IDs.
    pieces = _short_wide_pieces(random.Random(17))
    assert sum(6 <= len(p) < 17 and p[-3] >= 0xE0 for p in pieces) > 150
    _assert_merged_as_tiktoken(name, pieces)


@needs_c
@pytest.mark.parametrize("name", SHIPPED)
def test_short_cjk_pieces_are_cut_into_units(name):
    # Short CJK phrases (3-5 characters, each its own piece between full
    # stops) go to the units, where they used to be merged whole: a fresh
    # cache counts unit merges; and the IDs are tiktoken's.
    base = pybpe.get_encoding(name)
    enc = Encoding(name, pat_str=base.pat_str, mergeable_ranks=base.mergeable_ranks,
                   special_tokens=base.special_tokens, backend="c")
    rng = random.Random(4)
    common = "的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得"
    text = "。".join("".join(rng.choice(common) for _ in range(rng.randint(3, 5))) for _ in range(300))
    assert enc.encode_ordinary(text) == offline_tiktoken(name).encode_ordinary(text)
    cache = enc._caches[0]
    info = enc._table.cache_info(cache)
    assert info["merges"] > 0 and info["unit_merges"] > 0, info


# -- random small vocabularies: C against a literal rescan --------------------

@st.composite
def _vocab_and_piece(draw):
    letters = draw(st.sampled_from(["ab", "abc", "abcd"]))
    tokens = draw(st.lists(st.text(letters, min_size=2, max_size=6).map(str.encode),
                           min_size=1, max_size=20, unique=True))
    tokens = [c.encode() for c in letters] + [t for t in tokens if len(t) > 1]
    ranks = dict(zip(tokens, draw(st.permutations(range(len(tokens))))))
    piece = draw(st.text(letters, min_size=17, max_size=80)).encode()
    return ranks, piece


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_vocab_and_piece())
def test_random_vocab_pieces(case):
    ranks, piece = case
    want = [ranks[p] for p in naive_merge(piece, ranks)]  # the literal rescan: no cuts
    for backend in BACKENDS:
        enc = Encoding("toy", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={},
                       backend=backend)
        assert enc._table.encode_piece(piece) == want, backend


def test_walks_past_the_longest_token_bound():
    # bpe__ranks_merge_cut skips the walk from a place when the longest token
    # starting with its two bytes (span_longest, one byte each, 255 meaning
    # "255 or more") cannot end past where earlier walks reached.  Here a
    # token of 300 bytes starts with "ab" inside the reach of one of 273
    # starting a byte earlier: taking 255 for its length would skip that
    # walk and cut inside the 300 bytes merging forms.
    ranks = {b"a": 0, b"b": 1, b"c": 2}
    for k in range(299):  # ab, abc, abcc, ...: merging reaches ab + c * 298
        ranks[b"ab" + b"c" * k] = len(ranks)
    ranks[b"cab" + b"c" * 270] = len(ranks)  # in the vocabulary, never reached
    for piece in (b"cab" + b"c" * 300, b"ccab" + b"c" * 299 + b"ab", b"cab" + b"c" * 260 + b"cab" + b"c" * 300):
        want = [ranks[p] for p in naive_merge(piece, ranks)]
        assert max(map(len, naive_merge(piece, ranks))) >= 256
        for backend in BACKENDS:
            enc = Encoding("long", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={},
                           backend=backend)
            assert enc._table.encode_piece(piece) == want, (backend, piece[:8], len(piece))


@needs_c
@pytest.mark.parametrize("name", SHIPPED)
def test_pieces_that_walk_far(name):
    # A run of spaces is a prefix of a long token from every start (cl100k
    # and o200k: ~126 bytes walked per byte), so cutting stops partway and
    # the rest of the piece is one unit.
    tik = offline_tiktoken(name)._core_bpe.encode_single_piece
    table = pybpe.get_encoding(name, backend="c")._table
    head, tail = CJK[:30].encode(), CJK[40:70].encode()
    for n in (17, 60, 129, 300, 1000, 3000):
        for piece in (head + b" " * n + tail, b" " * n + head, head + b" " * n, head + b"a" * n + tail,
                      (head + b" " * 40) * (n // 40 + 1)):
            piece = piece[:4096]
            assert table.encode_piece(piece) == tik(piece), (name, n, piece[:50])
