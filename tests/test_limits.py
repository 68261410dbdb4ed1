"""Bounded time (issue 11, "Hangs"): rank tables build in linear time, and a
pattern read from a file cannot backtrack for ever.

Building an Encoding was O(L^2) in its longest token on the C backend (every
split point of every token hashed both halves: a 100 KB token took 11.5 s).
It is now linear in the total bytes of all tokens (csrc/ranks.c,
rk_build_split_pairs); the tests time a 1 MB token and the growth from 1 MB
to 2 MB, and check the pair table it builds against a direct count on
vocabularies full of tokens nested in each other.
"""
import random
import time

import pytest

import pybpe
from pybpe import _backend

BACKENDS = _backend.available()


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def byte_ranks():
    return {bytes([b]): b for b in range(256)}


def build_seconds(ranks, backend, repeat=3):
    """The fastest of `repeat` Encoding constructions (the machine is shared)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        pybpe.Encoding("big", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={},
                       backend=backend)
        best = min(best, time.perf_counter() - start)
    return best


# -- linear-time rank tables ------------------------------------------------------------

def test_one_megabyte_token_builds_fast(backend):
    # A quadratic build took 11.5 s at 100 KB, so ~20 minutes at 1 MB.
    ranks = byte_ranks()
    ranks[b"ab" * 500_000] = 256
    assert build_seconds(ranks, backend, repeat=1) < 5.0


def test_build_time_grows_linearly(backend):
    # Doubling the longest token doubles a linear build (x4 for a quadratic
    # one); 3.0 leaves room for a noisy machine.
    times = []
    for size in (1_000_000, 2_000_000):
        ranks = byte_ranks()
        ranks[b"x" * size] = 256
        ranks[b"xy" * (size // 2)] = 257
        times.append(build_seconds(ranks, backend))
    assert times[1] < 3.0 * max(times[0], 0.002), times


def test_long_tokens_with_nested_parts_encode_the_same(backend):
    # Tokens that are prefixes and suffixes of each other, bytes that are not
    # tokens (pseudo parts), and a long token built from them: the C table
    # must give tiktoken's rule exactly as the Python one does.
    ranks = {b"a": 0, b"b": 1}
    for k in (2, 3, 4, 8, 16, 1000, 5000):
        ranks.setdefault(b"a" * k, len(ranks))
    for token in (b"ab", b"ba", b"aab", b"abab", b"ba" * 300, b"a" * 5000 + b"b", b"\xffa", b"a\xfe"):
        ranks.setdefault(token, len(ranks))
    texts = ["a" * n for n in (1, 2, 5, 17, 999, 1000, 1001, 5000, 5001, 6000)]
    texts += ["ab" * 300, "ba" * 301, "a" * 5000 + "b", "b" + "a" * 4999 + "b", "ÿa", "aþ"]
    python = pybpe.Encoding("t", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={},
                            backend="python")
    enc = pybpe.Encoding("t", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={},
                         backend=backend)
    for text in texts:
        if all(bytes([b]) in ranks for b in text.encode()):
            assert enc.encode_ordinary(text) == python.encode_ordinary(text), text


def naive_pair_count(ranks):
    """Entries of tiktoken's pair table: splits of a token into two parts
    (a part is a token or any single byte)."""
    def part(x):
        return len(x) == 1 or x in ranks
    return sum(1 for t in ranks for s in range(1, len(t)) if part(t[:s]) and part(t[s:]))


@pytest.mark.parametrize("seed", range(30))
def test_c_pair_table_is_every_split_into_two_parts(seed):
    cranks = pytest.importorskip("pybpe._cranks")
    rng = random.Random(seed)
    alphabet = b"ab\xff" if seed % 2 else b"abc"
    ranks = {}
    for _ in range(rng.randrange(1, 200)):
        token = bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 12)))
        if rng.random() < 0.1:
            token = token * rng.randrange(2, 40)
        ranks.setdefault(token, len(ranks))
    table = cranks.RankTable(list(ranks), list(ranks.values()))
    assert table.pair_count == naive_pair_count(ranks)
    python = pybpe.Encoding("p", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={},
                            backend="python")
    for _ in range(50):
        piece = bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 150)))
        if all(bytes([b]) in ranks for b in piece):
            assert table.encode_piece(piece) == python._table.encode_piece(piece)
