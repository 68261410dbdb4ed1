"""BPE beside WordPiece on the same words: the C book's Figure 11-9, measured.

    python -m pybpe.examples.wordpiece_vs_bpe [corpus.txt] [--vocab-size N] [--backend c|python]
    pybpe wordpiece [corpus.txt] [--vocab-size N]          (the same, from the command line)

The Python side of csrc/examples/067_wordpiece.c, with the same corpus,
the same split and the same numbers: the corpus is cut into words by BERT's
uncased pre-processing (pybpe.WordPieceTokenizer's), and both tokenizers are
trained on those word counts to the same vocabulary size -- BPE
(pybpe.BPETokenizer, end-of-word marker `_` as its own symbol, as the C book
writes it) by pair count, WordPiece by count(ab) / (count(a) * count(b)).
With a file, its last tenth of lines is held out; without one, a built-in
corpus and held-out line (067's).  Printed: the first merges each picks and
why, vocabulary size, tokens per word and characters per token on the
held-out text, unknown-token rate, training time (wall clock, the core's
trainer alone).  `compare` returns the figures as a dict for other code.
"""
import argparse
import sys
import time

from .. import BPETokenizer
from ..wordpiece import WordPieceTokenizer

TRAIN_TEXT = ("low low low low low lower lower newest newest newest newest newest "
              "newest widest widest widest new new")
HELD_TEXT = "Lowest, newer and wider: the slowest!"
DEFAULT_VOCAB = 40      # for the built-in corpus
FILE_VOCAB = 8000       # for a file
SHOW_MERGES = 8
MARKER = "_"
MAX_WORD = 100          # WordPieceTokenizer's max_input_chars_per_word


def split_held_out(text):
    """(training part, held-out part) of a file's text: the held-out part
    starts after 9 of every 10 lines (its newline count, rounded as 067 does)."""
    lines = text.count("\n")
    keep, at = lines - lines // 10, 0
    for _ in range(keep):
        at = text.index("\n", at) + 1
    return text[:at], text[at:]


def compare(train_text, held_text, vocab_size, *, backend=None):
    """Train both on train_text's words and measure them on held_text's.

    Returns {"BPE": figures, "WordPiece": figures, "words": n, "distinct": n,
    "held_words": n}; figures hold "merges" (the first SHOW_MERGES as
    (left, right, why)), "vocab_size", "n_merges", "tokens",
    "tokens_per_word", "chars_per_token", "unknown_rate" (a fraction) and
    "seconds" (training, from word counts).
    """
    wp = WordPieceTokenizer(vocab_size, backend=backend)
    counts = wp.count_words(train_text.splitlines())
    longest = wp.max_input_chars_per_word  # longer words could only be [UNK]: left out, as 067 does
    skipped = sum(f for w, f in counts.items() if len(w) > longest)
    counts = {w: f for w, f in counts.items() if len(w) <= longest}
    held = wp.pre_tokenize(held_text)
    if not held:
        raise ValueError("the held-out text has no words to measure")
    bpe = BPETokenizer(vocab_size, end_of_word="symbol", marker=MARKER, backend=backend)
    start = time.perf_counter()
    bpe.train_from_counts(counts)
    bpe_seconds = time.perf_counter() - start
    start = time.perf_counter()
    wp.train_from_counts(counts)
    wp_seconds = time.perf_counter() - start

    bpe_ids = bpe.encode(" ".join(held))
    wp_ids = wp.encode(" ".join(held))
    chars = sum(map(len, held))
    unk = wp.token_to_id[wp.unk_token]
    return {
        "words": sum(counts.values()), "distinct": len(counts), "skipped": skipped, "held_words": len(held),
        "BPE": _figures(bpe, [(a, b, "%d" % c) for (a, b), c in zip(bpe.merges, bpe.merge_counts)],
                        bpe_ids, sum(1 for i in bpe_ids if i == 0), len(held), chars, bpe_seconds),
        "WordPiece": _figures(wp, [(a, b, "%d/(%d*%d) = %.4g" % (c, ca, cb, c / (ca * cb)))
                                   for (a, b), (c, ca, cb) in zip(wp.merges, wp.merge_scores)],
                              wp_ids, sum(1 for i in wp_ids if i == unk), len(held), chars, wp_seconds),
    }


def _figures(tok, whys, ids, unknown, words, chars, seconds):
    return {"merges": whys[:SHOW_MERGES], "vocab_size": tok.vocab_size, "n_merges": len(tok.merges),
            "tokens": len(ids), "tokens_per_word": len(ids) / words, "chars_per_token": chars / len(ids),
            "unknown_rate": unknown / len(ids), "seconds": seconds}


def report(result, source="built-in", vocab_size=DEFAULT_VOCAB):
    """The comparison as text, laid out as 067_wordpiece prints it."""
    b, w = result["BPE"], result["WordPiece"]
    lines = ["corpus: %s; %d training words (%d distinct, %d longer than %d left out), %d held-out words"
             % (source, result["words"], result["distinct"], result["skipped"], MAX_WORD, result["held_words"]),
             "vocabulary size asked: %d" % vocab_size, "",
             "first merges   %-28s %s" % ("BPE: (pair) count", "WordPiece: (pair) count/(count(a)*count(b))")]
    for k in range(max(len(b["merges"]), len(w["merges"]))):
        left = "(%s, %s) %s" % b["merges"][k] if k < len(b["merges"]) else "-"
        right = "(%s, %s) %s" % w["merges"][k] if k < len(w["merges"]) else ""
        lines.append(("  %2d  %-36s %s" % (k + 1, left, right)).rstrip())
    lines += ["", "%-24s %12s %12s" % ("", "BPE", "WordPiece")]
    for label, key in (("vocabulary size", "vocab_size"), ("merges learned", "n_merges"),
                       ("held-out tokens", "tokens")):
        lines.append("%-24s %12d %12d" % (label, b[key], w[key]))
    for label, b_value, w_value, unit in (
            ("tokens per word", b["tokens_per_word"], w["tokens_per_word"], ""),
            ("characters per token", b["chars_per_token"], w["chars_per_token"], ""),
            ("unknown-token rate", 100 * b["unknown_rate"], 100 * w["unknown_rate"], "%"),
            ("training time (wall)", b["seconds"], w["seconds"], "s")):
        lines.append("%-24s %11.3f%-1s %11.3f%s" % (label, b_value, unit, w_value, unit))
    return "\n".join(lines)


def run(path=None, vocab_size=None, backend=None, out=sys.stdout):
    """Read the corpus (or take the built-in one), compare, print; returns 0."""
    if path is None:
        train_text, held_text = TRAIN_TEXT, HELD_TEXT
        vocab_size = vocab_size or DEFAULT_VOCAB
    else:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            train_text, held_text = split_held_out(f.read())
        vocab_size = vocab_size or FILE_VOCAB
    result = compare(train_text, held_text, vocab_size, backend=backend)
    print(report(result, path or "built-in", vocab_size), file=out)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m pybpe.examples.wordpiece_vs_bpe",
                                     description="BPE beside WordPiece on the same words (Figure 11-9).")
    parser.add_argument("corpus", nargs="?", help="a UTF-8 text file (default: the built-in corpus)")
    parser.add_argument("--vocab-size", type=int, default=None,
                        help="entries for both (default %d; %d with a file)" % (DEFAULT_VOCAB, FILE_VOCAB))
    parser.add_argument("--backend", choices=("auto", "c", "python"), default=None)
    args = parser.parse_args(argv)
    return run(args.corpus, args.vocab_size, args.backend)


if __name__ == "__main__":
    sys.exit(main())
