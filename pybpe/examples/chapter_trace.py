"""TinyTorch Module 10's worked trace, printed by pybpe.

    python -m pybpe.examples.chapter_trace [--vocab-size N ...] [--backend c|python]

Trains the chapter's BPETokenizer (chapter flavour: the end-of-word space is
glued onto the last character, so `w` and `w ` are different tokens) on the
chapter's corpus ["low", "low", "lower", "newest", "widest"] and prints what
a student checks by hand: the base vocabulary, the rank table (rank, pair,
count, new ID, words changed) and the encodings of `lowest` and
`naïve widest` with their IDs and decodes.  With vocab_size=25 these are
the chapter's worked trace (tests/test_tokenizer.py pins it); with 100 the pairs run out after 13 merges.

"Words changed" is not something a tokenizer keeps: it is recomputed here by
replaying the learned merges over the corpus's word table with the core's
own `merge_pair` (C or pure Python, whichever backend the tokenizer uses).
"""
import argparse
import sys

from .. import BPETokenizer
from .. import core as backends

CORPUS = ["low", "low", "lower", "newest", "widest"]
PROBES = ["lowest", "naïve widest"]
DEFAULT_SIZES = (25, 100)


def train(vocab_size, backend=None):
    """The chapter's tokenizer trained on CORPUS."""
    tok = BPETokenizer(vocab_size=vocab_size, backend=backend)
    tok.train(CORPUS)
    return tok


def rank_table(tok, corpus=CORPUS):
    """One row per merge: (rank, (left, right), count, new_id, words_changed).

    The word table is the corpus's distinct words (first-seen order) as
    initial-symbol IDs; each merge is replayed on it with the backend's
    merge_pair, which returns how many distinct words it rewrote.

    >>> rank_table(train(23, backend="python"))
    [(0, ('l', 'o'), 3, 21, 2), (1, ('lo', 'w '), 2, 22, 1)]
    """
    core = backends.get(tok.backend)
    ids = tok.token_to_id
    words = core.WordTable()
    for word, freq in tok.count_words(corpus).items():
        words.add([ids[unit] for unit in tok.flavour.units(word)], freq)
    rows = []
    for rank, ((left, right), count) in enumerate(zip(tok.merges, tok.merge_counts)):
        new_id = ids[left + right]
        changed = core.merge_pair(words, ids[left], ids[right], new_id)
        rows.append((rank, (left, right), count, new_id, changed))
    return rows


def format_base_vocab(tok, corpus=CORPUS, per_line=7):
    """The entries before the first merge, `ID 'token'`, a few per line."""
    n_base = len(tok.flavour.base_vocab(set("".join(corpus))))
    vocab = tok.vocab  # (a copy each time it is read)
    cells = ["%2d %-8s" % (i, repr(vocab[i])) for i in range(n_base)]
    lines = ["  " + "  ".join(cells[k:k + per_line]).rstrip() for k in range(0, n_base, per_line)]
    return "base vocabulary (%d entries):\n%s" % (n_base, "\n".join(lines))


def format_rank_table(rows):
    """The table a student fills in by hand, one merge per line."""
    lines = ["rank  %-16s %5s  %6s  %-10s %s" % ("pair", "count", "new ID", "token", "words changed")]
    for rank, pair, count, new_id, changed in rows:
        lines.append("%4d  %-16s %5d  %6d  %-10s %13d" % (rank, repr(pair), count, new_id,
                                                          repr(pair[0] + pair[1]), changed))
    return "\n".join(lines)


def format_encoding(tok, text):
    """`encode('lowest') -> [21, 23, 24]`, then its pieces and its decode."""
    ids = tok.encode(text)
    pieces = " ".join(repr(tok.id_to_token.get(i, "<UNK>")) for i in ids)
    return ("encode(%r) -> %s\n    pieces: %s\n    decode -> %r"
            % (text, ids, pieces, tok.decode(ids)))


def trace(vocab_size, backend=None):
    """The whole printout for one vocab_size, as a str."""
    tok = train(vocab_size, backend)
    rows = rank_table(tok)
    parts = [
        "== vocab_size=%d ==" % vocab_size,
        format_base_vocab(tok),
        "",
        format_rank_table(rows),
        "vocabulary: %d entries after %d merges%s" % (
            tok.vocab_size, len(rows),
            " (no pair left: the target was not reached)" if tok.vocab_size < vocab_size else ""),
        "",
    ]
    parts += [format_encoding(tok, text) for text in PROBES]
    return "\n".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m pybpe.examples.chapter_trace",
                                     description="TinyTorch Module 10's BPE trace on pybpe.")
    parser.add_argument("--vocab-size", type=int, action="append", dest="sizes",
                        help="target vocabulary size (repeatable; default: 25 and 100)")
    parser.add_argument("--backend", choices=backends.NAMES, default=None,
                        help="core to use (default: $PYBPE_BACKEND, then auto)")
    args = parser.parse_args(argv)
    backend = backends.resolve(args.backend)
    print("TinyTorch Module 10 -- the chapter's BPE trace on pybpe (%s backend)" % backend)
    print("corpus: %r, chapter flavour (end-of-word space glued on: 'w' != 'w ')" % (CORPUS,))
    for size in args.sizes or DEFAULT_SIZES:
        print()
        print(trace(size, backend))
    return 0


if __name__ == "__main__":
    sys.exit(main())
