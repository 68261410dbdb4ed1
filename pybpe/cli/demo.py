"""`pybpe demo`: what `make run` shows a newcomer.

Trains the chapter's tokenizer on the bundled corpus (Hamlet,
pybpe/data/hamlet.txt), then prints what it learned -- the first merges with
their counts, the longest tokens -- and how it encodes and decodes a line.
"""
import os
import time

from .. import BPETokenizer
from ._common import UsageError

BUNDLED_CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "hamlet.txt")
DEMO_LINE = "To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer"

EXAMPLES = """\
examples:
  pybpe demo                        1,000 tokens on Hamlet, on the default backend
  pybpe demo --vocab-size 4000 --backend python --progress
"""


def add_parsers(sub, common):
    p = sub.add_parser("demo", parents=[common], help="train on the bundled corpus (Hamlet) and show the result",
                       description=__doc__.split("\n\n")[1].replace("\n", " "), epilog=EXAMPLES)
    p.add_argument("--vocab-size", type=int, default=1000, metavar="N",
                   help="tokens to learn (default: %(default)s)")
    p.add_argument("--backend", default=None, choices=("auto", "c", "python"),
                   help="the core that does the work (default: $PYBPE_BACKEND, else C when built)")
    p.add_argument("--progress", action="store_true", help="report the merges on stderr as they are learned")
    p.set_defaults(run=run)


def _show_tokens(tok, ids):
    """Token strings separated by spaces, with the end-of-word space shown as "_"."""
    pieces = [tok.id_to_token.get(i, "<UNK>") for i in ids]
    pieces = [p.decode("utf-8", "replace") if isinstance(p, bytes) else p for p in pieces]
    return " ".join(p.replace(" ", "_") for p in pieces)


def run(args):
    try:
        tok = BPETokenizer(vocab_size=args.vocab_size, backend=args.backend)
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    with open(BUNDLED_CORPUS, encoding="utf-8") as f:
        text = f.read()
    start = time.perf_counter()
    tok.train(text.splitlines(), progress=args.progress)
    seconds = time.perf_counter() - start
    counts = tok.count_words(text.splitlines())
    print("pybpe %s backend -- chapter-flavour BPE on the bundled corpus" % tok.backend)
    print("corpus     %s: %d bytes, %d words, %d distinct"
          % (os.path.basename(BUNDLED_CORPUS), len(text.encode()), sum(counts.values()), len(counts)))
    print("trained    %d tokens (%d base + %d merges) in %.3f s"
          % (tok.vocab_size, tok.vocab_size - len(tok.merges), len(tok.merges), seconds))
    print("first merges (pair -> count):")
    for (a, b), n in list(zip(tok.merges, tok.merge_counts))[:8]:
        print("   %-12r + %-12r  %6d" % (a, b, n))
    longest = sorted(tok.vocab, key=len, reverse=True)[:6]
    print("longest tokens: %s" % ", ".join(repr(t) for t in longest))
    ids = tok.encode(DEMO_LINE)
    print("encode     %r" % DEMO_LINE)
    print("  -> %d tokens for %d words: %s" % (len(ids), len(DEMO_LINE.split()), ids[:16]))
    print("  -> %s" % _show_tokens(tok, ids))
    back = tok.decode(ids)
    print("decode     %s" % ("round trip exact" if back == DEMO_LINE else "differs: %r" % back))
    print("next       pybpe train FILE -o tok.json, pybpe encode -t tok.json TEXT, pybpe --help")
    return 0
