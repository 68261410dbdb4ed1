"""Long pieces merged exactly: runs of one byte, long letter runs, CJK.

The C core merges a long piece with shortcuts (csrc/merge.h: a run-length
state for repeated parts; issue 13 item 5).  Every shortcut must give what
tiktoken's byte_pair_merge gives -- the lowest rank of the concatenation,
leftmost among equals -- for any rank file, so each input here is compared
with an oracle that takes no shortcut:

  - the shipped vocabularies (gpt2, cl100k_base, o200k_base, p50k_base)
    against tiktoken itself (its encode_single_piece, built offline by
    conftest.offline_tiktoken);
  - hand-made rank files whose ranks are not in training order ("aaa"
    ranked before "aa", a run token ranked before its halves), where a
    shortcut that assumes a trained vocabulary would go wrong, against the
    plain heap of the Python spec (pybpe.core.spec.merge.merge_heap) and a
    literal rescan.

Both backends must give the same IDs (the Python twin has the run trick too).
"""
import random

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pybpe
from pybpe import core as backends
from pybpe.core.spec import merge as spec_merge

from conftest import naive_merge, offline_tiktoken

BACKENDS = backends.available()
FASTEST = BACKENDS[0]  # C when it is built; the Python twin (same tricks) without it
SHIPPED = ["gpt2", "cl100k_base", "o200k_base", "p50k_base"]

CJK = ("東京特許許可局長今日急遽休暇許可拒否。吾輩は猫である。名前はまだ無い。"
       "我们的祖先在这片土地上生活了几千年，创造了灿烂的文化。"
       "한국어 문장도 조금 섞어 봅니다。それから日本語の文章がまた続きます。")


def _table(name, backend):
    return pybpe.get_encoding(name, backend=backend)._table


def _tik(name):
    return offline_tiktoken(name)._core_bpe.encode_single_piece


# -- the shipped vocabularies against tiktoken ------------------------------

@pytest.mark.parametrize("name", SHIPPED)
def test_runs_of_every_length(name):
    # Parity and every small length matter: a run of k equal parts merges
    # pairwise, so the leftover part moves with k's parity at every level.
    table, tik = _table(name, FASTEST), _tik(name)
    for n in range(1, 2500):
        for b in (b"a", b" "):
            piece = b * n
            assert table.encode_piece(piece) == tik(piece), (name, b, n)


LENGTHS = sorted({1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 99, 100, 101,
                  127, 128, 129, 255, 256, 257, 511, 512, 513, 1000, 1023, 1024, 1025, 4095, 4097})


@pytest.mark.parametrize("name", SHIPPED)
def test_runs_of_every_byte(name):
    table, tik = _table(name, FASTEST), _tik(name)
    for value in range(256):
        b = bytes([value])
        for n in LENGTHS:
            piece = b * n
            assert table.encode_piece(piece) == tik(piece), (name, value, n)


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_very_long_runs_of_every_byte(name):
    table, tik = _table(name, FASTEST), _tik(name)
    rng = random.Random(name)
    for value in range(256):
        b = bytes([value])
        for n in (65_536, 65_537, rng.randrange(100_000, 300_001)):
            piece = b * n
            assert table.encode_piece(piece) == tik(piece), (name, value, n)


@pytest.mark.parametrize("name", SHIPPED)
def test_runs_between_other_bytes(name):
    # A different byte before or after the run: its pair with the run's
    # first (or last) merged part can win over the run's own merges.
    table, tik = _table(name, FASTEST), _tik(name)
    rng = random.Random(1)
    runs = [b"a", b" ", b"0", b"=", b"\n", b"-", b"x", b"\xe3"]
    sides = [b"", b"b", b" ", b"\n", b"ab", b"  ", b"aa", b"\xe3\x81", b"-", b"0"]
    for _ in range(1500):
        piece = rng.choice(sides) + rng.choice(runs) * rng.randrange(1, 700) + rng.choice(sides)
        assert table.encode_piece(piece) == tik(piece), (name, piece[:8], len(piece))


def _mixed_runs(rng, alphabet, total):
    out = []
    while sum(map(len, out)) < total:
        out.append(rng.choice(alphabet) * rng.choice((1, 1, 2, 3, 5, 8, 40, 300)))
    return b"".join(out)


@pytest.mark.parametrize("name", SHIPPED)
def test_long_mixed_pieces(name):
    table, tik = _table(name, FASTEST), _tik(name)
    rng = random.Random(2)
    letters = bytes(range(ord("a"), ord("z") + 1))
    cases = [bytes(rng.choice(letters) for _ in range(n)) for n in (100, 101, 1000, 20_000)]
    cases += [(CJK * 40).encode()[: 3 * n] for n in (40, 100, 333, 3000)]
    cases += [_mixed_runs(rng, [b"a", b"b", b"ab", b" ", b"aab", b"\n"], n) for n in (200, 5000, 50_000)]
    cases += [b"a" * 30_000 + bytes(rng.choice(letters) for _ in range(500)) + b"a" * 30_001]
    for piece in cases:
        assert table.encode_piece(piece) == tik(piece), (name, piece[:12], len(piece))


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_python_backend_gives_the_same_ids(name):
    if "python" not in BACKENDS or "c" not in BACKENDS:
        pytest.skip("needs both backends")
    c, py, tik = _table(name, "c"), _table(name, "python"), _tik(name)
    rng = random.Random(3)
    pieces = [b"a" * n for n in (99, 100, 101, 257, 4096, 30_001)]
    pieces += [b" " * 5000, b"b" + b" " * 777 + b"b", _mixed_runs(rng, [b"a", b"b", b"aa"], 3000)]
    pieces += [(CJK * 5).encode()]
    for piece in pieces:
        assert py.encode_piece(piece) == c.encode_piece(piece) == tik(piece), (name, piece[:8], len(piece))


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_a_million_long_pieces(name):
    # The three inputs of issue 13's acceptance line, whole, through the
    # pre-tokenizer (a million spaces under cl100k's \s+(?!\S)|\s+ too).
    # tiktoken's own regex overflows its stack on a million spaces under
    # gpt2's pattern, so the pieces come from the regex module (which the
    # C scanners are tested against) and each goes to tiktoken's merge.
    enc, tik = pybpe.get_encoding(name, backend=FASTEST), _tik(name)
    rng = random.Random(4)
    for text in ("a" * 1_000_000, " " * 1_000_001, "".join(rng.choice("abcdefghijklmnopqrstuvwxyz")
                                                          for _ in range(1_000_000))):
        want = [i for piece in regex.findall(enc._pat_str, text) for i in tik(piece.encode())]
        assert enc.encode_ordinary(text) == want, (name, text[:5])


# -- hand-made rank files: ranks not in training order ----------------------

def _oracle(piece, ranks):
    """The plain heap of the Python spec (no run trick), or the literal rescan
    for short pieces."""
    parts = [bytes([b]) for b in piece]
    if len(parts) <= 150:
        return [ranks[p] for p in naive_merge(piece, ranks)]

    def rule(a, b):
        r = ranks.get(a + b)
        return None if r is None else (r, a + b)
    return [ranks[p] for p in spec_merge.merge_heap(parts, rule)]


# Ranks chosen to break trained-order assumptions: "aaa" before "aa", "aaaa"
# before "aaa", a pair of runs ("aaab") before the run's own merges, a token
# that a run's left neighbour forms with the merged part ("baa") before "aa".
ODD_VOCABS = [
    {b"a": 0, b"b": 1, b" ": 2, b"aaa": 3, b"aa": 4, b"aaaa": 5, b"aaaaaa": 6},
    {b"a": 10, b"b": 11, b" ": 12, b"aaaa": 0, b"aa": 1, b"aaaaaaaa": 2, b"aaa": 3},
    {b"a": 0, b"b": 1, b" ": 2, b"baa": 3, b"aa": 4, b"aaaa": 5, b"aab": 6, b"aaaaaaaa": 7},
    {b"a": 0, b"b": 1, b" ": 2, b"aa": 3, b"aaa": 4, b"aaab": 5, b"aaaa": 6, b"ab": 7, b"aaaaa": 8},
    {b"a": 0, b"b": 1, b" ": 2, b"aa": 9, b"ab": 3, b"ba": 4, b"aab": 5, b"aaa": 6, b"baa": 7,
     b"aaaa": 8, b"  ": 10, b"    ": 11, b"   ": 1_000},
]


def _encoding(ranks, backend, merges=False):
    kwargs = {}
    if merges:
        # The merge-list rule over the same tokens: each token of two or more
        # bytes is made from its best split, in rank order.
        decoder = {v: k for k, v in ranks.items()}
        pairs = []
        for rank in sorted(decoder):
            token = decoder[rank]
            for s in range(1, len(token)):
                if token[:s] in ranks and token[s:] in ranks:
                    pairs.append((ranks[token[:s]], ranks[token[s:]]))
                    break
        kwargs["merges"] = pairs
    return pybpe.Encoding("odd", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={},
                          backend=backend, **kwargs)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("vocab", range(len(ODD_VOCABS)))
def test_odd_rank_order_runs(vocab, backend):
    ranks = ODD_VOCABS[vocab]
    table = _encoding(ranks, backend)._table
    for n in list(range(1, 400)) + [511, 512, 1000, 1001, 4097]:
        for piece in (b"a" * n, b"b" + b"a" * n, b"a" * n + b"b", b"ba" * (n // 2) + b"a" * n):
            assert table.encode_piece(piece) == _oracle(piece, ranks), (vocab, piece[:8], n)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tokens_longer_than_a_window(backend):
    # Long pieces without runs are merged in windows of a few dozen bytes
    # whose meeting parts are checked (csrc/ranks_merge.c: rk_merge_windows).
    # Here tokens double up to 128 bytes ("ab" * 64), so two neighbours no
    # longer fit a window: the C core must fall back to the heap, exactly.
    ranks = {b"a": 0, b"b": 1, b"c": 2}
    for k in range(1, 8):
        ranks[b"ab" * 2 ** (k - 1)] = 2 + k
    ranks[b"cab"] = 20
    table = _encoding(ranks, backend)._table
    for n in list(range(40, 300, 7)) + [1000, 1001]:
        for piece in (b"ab" * n, b"ab" * n + b"a", b"c" + b"ab" * n, b"abc" * n, b"ab" * n + b"c" + b"ab" * n):
            assert table.encode_piece(piece) == _oracle(piece, ranks), (piece[:8], len(piece))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vocab=st.sampled_from(range(len(ODD_VOCABS))),
       runs=st.lists(st.tuples(st.sampled_from([b"a", b"b", b" ", b"aa", b"ab"]),
                               st.integers(1, 200)), min_size=1, max_size=12))
def test_odd_rank_order_hypothesis(vocab, runs):
    ranks = ODD_VOCABS[vocab]
    piece = b"".join(s * k for s, k in runs)
    want = _oracle(piece, ranks)
    for backend in BACKENDS:
        assert _encoding(ranks, backend)._table.encode_piece(piece) == want, backend


@st.composite
def _random_vocab(draw):
    """Every single byte of {a, b, space}, then random strings over them with
    random distinct ranks: any order, a run token ranked before its halves."""
    tokens = draw(st.lists(st.text("ab ", min_size=2, max_size=9).map(str.encode),
                           min_size=1, max_size=14, unique=True))
    tokens = [b"a", b"b", b" "] + [t for t in tokens if len(t) > 1]
    ranks = draw(st.permutations(range(len(tokens))))
    return dict(zip(tokens, ranks))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranks=_random_vocab(), merges=st.booleans(),
       runs=st.lists(st.tuples(st.sampled_from([b"a", b"b", b" ", b"ab", b"aab"]),
                               st.integers(1, 300)), min_size=1, max_size=8))
def test_random_vocab_hypothesis(ranks, merges, runs):
    piece = b"".join(s * k for s, k in runs)
    if merges:
        enc = _encoding(ranks, "python", merges=True)
        # the merge-list rule: the Python spec's generic engine is the oracle
        want = spec_merge.merge_heap([ranks[bytes([b])] for b in piece], enc._table._rule)
        backends_to_check = BACKENDS
    else:
        # tiktoken's rule: a piece that is a token is that token, even where
        # merging its bytes would not reach it ({aaaa} without aa: "aaaa")
        want = [ranks[piece]] if piece in ranks else _oracle(piece, ranks)
        backends_to_check = BACKENDS
    for backend in backends_to_check:
        assert _encoding(ranks, backend, merges=merges)._table.encode_piece(piece) == want, backend


# -- windows: where they end, and many random long pieces ------------------

@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_random_letters_many_seeds(name):
    # Long pieces without runs go to the windows (csrc/ranks_merge.c:
    # rk_merge_windows), which end where a part is least likely to straddle
    # the cut (rk_window_end): every seed and length moves the cuts.
    table, tik = _table(name, FASTEST), _tik(name)
    alphabets = ["abcdefghijklmnopqrstuvwxyz", "etaoinshr", "ab", "qxzjkv", "abcdefghijklmnopqrstuvwxyz"
                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    for seed in range(60):
        rng = random.Random(seed)
        letters = alphabets[seed % len(alphabets)]
        n = rng.choice((100, 101, 123, 250, 999, 2048, rng.randrange(100, 6000)))
        piece = "".join(rng.choice(letters) for _ in range(n)).encode()
        assert table.encode_piece(piece) == tik(piece), (name, seed, n)
    rng = random.Random(name)
    for n in (40, 99, 100, 401):  # CJK: windows end before a character
        start = rng.randrange(0, 200)
        piece = (CJK * 60)[start:start + n].encode()
        assert table.encode_piece(piece) == tik(piece), (name, start, n)


def test_window_end_is_the_least_eager_place():
    # The Python twin's rule for where a window ends (csrc/ranks_merge.c's
    # rk_window_end does the same): among the places WINDOW - _CUT_SPAN ..
    # WINDOW that start a character, the pair of bytes with the highest
    # priority (none: highest), the last of equals.
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"aa": 299, b"ab": 300, b"ba": 301, b"bc": 400, b"ca": 302})
    rule_of = _encoding(ranks, "python")._table._rule
    n = spec_merge.WINDOW
    piece = b"ab" * n  # pairs ab (300) and ba (301): the last "ba" wins
    parts = [bytes([b]) for b in piece]
    end = spec_merge._window_end(piece, parts, rule_of, 0)
    assert piece[end - 1:end + 1] == b"ba" and n - spec_merge._CUT_SPAN <= end <= n
    assert max(q for q in range(n - spec_merge._CUT_SPAN, n + 1) if piece[q - 1:q + 1] == b"ba") == end
    piece = b"a" * (n - 3) + b"bc" + b"a" * n  # "bc" (400) beats the rest
    assert spec_merge._window_end(piece, [bytes([b]) for b in piece], rule_of, 0) == n - 2
    piece = b"a" * (n - 5) + b"xy" + b"a" * n  # "ax", "xy", "ya": no pairs, highest of all
    assert spec_merge._window_end(piece, [bytes([b]) for b in piece], rule_of, 0) == n - 3
    piece = "あ".encode() * n  # only character starts: a multiple of 3
    assert spec_merge._window_end(piece, [bytes([b]) for b in piece], rule_of, 0) % 3 == 0
    assert spec_merge._window_end(b"ab" * 5, [bytes([b]) for b in b"ab" * 5], rule_of, 0) == 10


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranks=_random_vocab(), data=st.data())
def test_random_vocab_windows_hypothesis(ranks, data):
    # Pieces of many runs (the windows, not the run engine) under rank files
    # in any order, against the plain heap.
    n = data.draw(st.integers(100, 500))
    piece = bytes(data.draw(st.lists(st.sampled_from(b"ab "), min_size=n, max_size=n)))
    want = _oracle(piece, ranks)
    for backend in BACKENDS:
        assert _encoding(ranks, backend)._table.encode_piece(piece) == want, backend



@st.composite
def _dense_vocab(draw):
    """{a, b, space}, all nine pairs of them (so every place of a piece is
    inside some token: no cut, the piece reaches the windows whole), and
    random longer strings, with random distinct ranks."""
    longer = draw(st.lists(st.text("ab ", min_size=3, max_size=8).map(str.encode),
                           max_size=12, unique=True))
    tokens = [bytes([x]) for x in b"ab "] + [bytes([x, y]) for x in b"ab " for y in b"ab "] + longer
    return dict(zip(tokens, draw(st.permutations(range(len(tokens))))))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranks=_dense_vocab(), base=st.sampled_from([0, 2 ** 24 - 12, 2 ** 31 - 12, 2 ** 32 - 40]),
       data=st.data())
def test_windows_keys_hold_every_rank_hypothesis(ranks, base, data):
    # The windows' merge loop (csrc/ranks_merge.c: rk_merge_small) packs a pair's
    # priority and its place into one key: ranks either side of 2^24 and
    # 2^31 and near the top of 32 bits must still order as ranks, ties
    # leftmost.  Three letters, so ties ("abab", "aaa") are common.
    ranks = {t: base + r for t, r in ranks.items()}
    n = data.draw(st.integers(100, 400))
    piece = bytes(data.draw(st.lists(st.sampled_from(b"ab "), min_size=n, max_size=n)))
    want = _oracle(piece, ranks)
    for backend in BACKENDS:
        assert _encoding(ranks, backend)._table.encode_piece(piece) == want, (backend, base)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_short_loop_every_length_shipped(name):
    # The short loop on the shipped tables (their byte pairs set it up),
    # every length it takes, against tiktoken.
    table, tik = _table(name, FASTEST), _tik(name)
    rng = random.Random(name)
    for n in range(2, 100):
        for letters in ("abcdefghijklmnopqrstuvwxyz", "etaoin sh", "éà日本"):
            piece = "".join(rng.choice(letters) for _ in range(n)).encode()[:n]
            piece = piece.decode("utf-8", "ignore").encode()
            if piece:
                assert table.encode_piece(piece) == tik(piece), (name, n, piece)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranks=_dense_vocab(), base=st.sampled_from([0, 2 ** 32 - 40]), seed=st.integers(0, 2 ** 32))
def test_short_loop_every_length_hypothesis(ranks, base, seed):
    # Pieces under 100 bytes are merged whole by the short loop
    # (csrc/ranks_merge.c: rk_merge_small), which drops a pair's key from
    # the keys it scans when the pair goes, and sets its arrays up with a
    # copy of fixed size up to RK_SMALL_COPY (32) bytes: every length from
    # 2 to 99, so both set-ups and every count of keys left over by the
    # scan's four at a time, against the plain heap.  Ranks near the top of
    # 32 bits sit just under the keys of pairs without one.
    ranks = {t: base + r for t, r in ranks.items()}
    rng = random.Random(seed)
    for n in range(2, 100):
        piece = bytes(rng.choice(b"ab ") for _ in range(n))
        # tiktoken's rule: a piece that is a token is that token, unmerged
        want = [ranks[piece]] if piece in ranks else _oracle(piece, ranks)
        for backend in BACKENDS:
            assert _encoding(ranks, backend)._table.encode_piece(piece) == want, (backend, n)


# -- memory: a long piece does not reserve the heap's arrays it never uses ---

_LIMITED_ENCODE = r"""
import hashlib, random, resource, sys
import numpy
import pybpe
enc = pybpe.get_encoding("cl100k_base", backend="c")
enc.encode_to_numpy("warm up the table and NumPy")
n = int(sys.argv[1])
letters = bytes(97 + i % 26 for i in range(256))
text = random.Random(7).randbytes(n).translate(letters).decode()
with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
# Room for the text's UTF-8 copy, the output array (4 bytes per byte at
# most) and slack; not for 44 bytes of merge arrays per byte of the piece.
limit = vm + 9 * n + (64 << 20)
resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
ids = enc.encode_to_numpy(text)
print(len(ids), hashlib.sha256(ids.tobytes()).hexdigest())
"""


def test_a_long_piece_reserves_little_memory(tmp_path):
    # 16 MB of random letters is one piece under cl100k's pattern, merged in
    # windows of a few dozen bytes.  The C used to reserve the heap's arrays
    # for the whole piece first (five of 4 bytes and one of 24 per byte, ~700
    # MB of address space here), so under a limit on address space (ulimit
    # -v, or overcommit off) a piece of a few hundred MB failed with
    # MemoryError though the windows touch almost none of it.
    import os
    import subprocess
    import sys
    pytest.importorskip("numpy")
    if "c" not in BACKENDS:
        pytest.skip("the C core's memory is what is measured")
    if "asan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("AddressSanitizer reserves terabytes of address space: no limit can be set")
    n = 16 << 20
    script = tmp_path / "limited.py"
    script.write_text(_LIMITED_ENCODE)
    run = subprocess.run([sys.executable, str(script), str(n)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    # the same IDs as the unlimited encoder gives
    import hashlib
    letters = bytes(97 + i % 26 for i in range(256))
    text = random.Random(7).randbytes(n).translate(letters).decode()
    ids = pybpe.get_encoding("cl100k_base", backend="c").encode_to_numpy(text)
    assert run.stdout.split() == [str(len(ids)), hashlib.sha256(ids.tobytes()).hexdigest()]
