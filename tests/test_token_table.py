"""The token table tells apart tokens that share their first eight bytes.

A slot of the C token table (csrc/ranks_internal.h, rk_tok_slot) holds a
token's first eight bytes and its length; a token of 9-16 bytes is told from
the others by its last eight bytes, which sit in an array beside the slots
(tok_tails), and a longer one by the bytes between as well.  Here hundreds of
tokens share their head and length, so the probes of a small table meet
many slots that match but for the tail; every token must still come back as
itself, and every piece that is no token must be merged (checked against the
plain rescan of tests/conftest.py), on both backends.
"""
import itertools

import pytest

import pybpe
from pybpe import core as backends

from conftest import naive_merge

BACKENDS = backends.available()
HEAD = b"abcdefgh"
LETTERS = b"xyzw"


def _ranks():
    ranks = {bytes([b]): b for b in range(256)}
    extra = [HEAD + bytes(pair) for pair in itertools.product(LETTERS, repeat=2)]           # 10 bytes
    extra += [HEAD + bytes(t) for t in itertools.product(LETTERS, repeat=8)][::97]          # 16 bytes
    extra += [HEAD + b"-" * 6 + bytes(t) for t in itertools.product(LETTERS, repeat=5)][::7]  # 19 bytes
    extra += [HEAD[:4], HEAD]  # so that pieces that are no token merge into something
    for token in extra:
        ranks.setdefault(token, len(ranks))
    return ranks


RANKS = _ranks()
LONG_TOKENS = [t for t in RANKS if len(t) > 8]


def _encoding(backend):
    return pybpe.Encoding("heads", pat_str=r"[\s\S]+", mergeable_ranks=RANKS, special_tokens={},
                          backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_token_sharing_a_head_is_itself(backend):
    assert len(LONG_TOKENS) > 500
    enc = _encoding(backend)
    for token in LONG_TOKENS:
        assert enc.encode_ordinary(token.decode()) == [RANKS[token]], token


@pytest.mark.parametrize("backend", BACKENDS)
def test_pieces_that_match_a_token_but_for_the_tail_are_merged(backend):
    enc = _encoding(backend)
    pieces = [token[:-1] + b"q" for token in LONG_TOKENS]       # same head, same length
    pieces += [token[:9] + b"q" + token[10:] for token in LONG_TOKENS if len(token) > 16]  # middle differs
    for piece in pieces:
        assert piece not in RANKS
        want = [RANKS[p] for p in naive_merge(piece, RANKS)]
        assert enc.encode_ordinary(piece.decode()) == want, piece
