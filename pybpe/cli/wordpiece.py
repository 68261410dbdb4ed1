"""`pybpe wordpiece`: BPE beside WordPiece on the same words (the C book's section 11.8).

Trains pybpe's BPE (end-of-word marker `_`) and WordPiece (BERT's, `##`)
on one corpus to the same vocabulary size and prints Figure 11-9 with
measured figures: the first merges each picks and why (count against score),
vocabulary size, tokens per word and characters per token on the held-out
last tenth of the file, the unknown-token rate and the training time.  The
work is pybpe.examples.wordpiece_vs_bpe's (csrc/examples/067_wordpiece.c
prints the same from C).
"""
from ..examples import wordpiece_vs_bpe
from ._common import InputError, UsageError

EXAMPLES = """\
examples:
  pybpe wordpiece                                  the built-in corpus (067's), 40 entries
  pybpe wordpiece shakespeare.txt                  8,000 entries; the last tenth of lines held out
  pybpe wordpiece corpus.txt --vocab-size 30000 --backend python
"""


def add_parsers(sub, common):
    p = sub.add_parser("wordpiece", parents=[common], help="BPE beside WordPiece on one corpus (Figure 11-9)",
                       description=__doc__.split("\n\n")[1].replace("\n", " "), epilog=EXAMPLES)
    p.add_argument("corpus", nargs="?", help="a UTF-8 text file (default: a built-in corpus and held-out line)")
    p.add_argument("--vocab-size", type=int, default=None, metavar="N",
                   help="entries for both (default: %d, or %d with a file)"
                   % (wordpiece_vs_bpe.DEFAULT_VOCAB, wordpiece_vs_bpe.FILE_VOCAB))
    p.add_argument("--backend", default=None, choices=("auto", "c", "python"),
                   help="the core that does the work (default: $PYBPE_BACKEND, else C when built)")
    p.set_defaults(run=run)


def run(args):
    if args.vocab_size is not None and args.vocab_size < 1:
        raise UsageError("pybpe wordpiece: --vocab-size must be at least 1, not %d" % args.vocab_size)
    try:
        return wordpiece_vs_bpe.run(args.corpus, args.vocab_size, args.backend)
    except ValueError as exc:  # a corpus with nothing to hold out, or no words
        raise InputError("pybpe wordpiece: %s: %s" % (args.corpus or "built-in corpus", exc)) from None
