"""`pybpe bench`: how fast tokenizers encode, decode and train here, on a file of yours.

For each tokenizer (-t and -e, repeatable; by default the gpt2, cl100k_base
and o200k_base encodings): the tokens the file makes, and encode and decode
throughput in MB of text per second, the best of --rounds runs (the first
run also warms caches up, which is why it is the best that is shown).  Then
training the chapter's tokenizer on the file (--vocab-size tokens, best of
the same rounds) unless --no-train.  The file defaults to the bundled
corpus (Hamlet, 174 KB).  For comparisons with other libraries see
tools/bench_encode_table.py and tools/bench_train_table.py in the source.
"""
import sys
import time

from .. import BPETokenizer
from ._common import UsageError, encoding, load_tokenizer, read_text
from .demo import BUNDLED_CORPUS

DEFAULT_ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")

EXAMPLES = """\
examples:
  pybpe bench                                  the three encodings and training, on Hamlet
  pybpe bench big.txt -e o200k_base -t tok.json --rounds 5
  pybpe bench --backend python --no-train
"""


def add_parsers(sub, common):
    p = sub.add_parser("bench", parents=[common], help="time encode, decode and training on a file",
                       description=__doc__.split("\n\n")[1].replace("\n", " "), epilog=EXAMPLES)
    p.add_argument("file", nargs="?", default=BUNDLED_CORPUS, metavar="FILE",
                   help="the text to time on (default: the bundled Hamlet)")
    p.add_argument("-t", "--tokenizer", action="append", default=[], metavar="MODEL",
                   help="a tokenizer file to time (repeat for several)")
    p.add_argument("-e", "--encoding", action="append", default=[], metavar="NAME",
                   help="a shipped encoding to time (repeat for several; default: %s)" % ", ".join(DEFAULT_ENCODINGS))
    p.add_argument("--rounds", type=int, default=3, metavar="N", help="runs of each, the best shown (default: 3)")
    p.add_argument("--vocab-size", type=int, default=1000, metavar="N",
                   help="the training run's vocabulary (default: %(default)s)")
    p.add_argument("--no-train", action="store_true", help="leave out the training run")
    p.add_argument("--backend", choices=("auto", "c", "python"), default=None,
                   help="the core that does the work (default: $PYBPE_BACKEND, else C when built)")
    p.set_defaults(run=run)


def _best(rounds, fn):
    """(best seconds, the last result) of `rounds` calls of fn()."""
    best, result = float("inf"), None
    for _ in range(rounds):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def run(args):
    if args.rounds < 1:
        raise UsageError("--rounds must be at least 1")
    try:
        BPETokenizer(vocab_size=args.vocab_size, backend=args.backend)  # its options, checked before any work
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    text = read_text(args.file)
    size = len(text.encode("utf-8"))
    toks = [load_tokenizer(path, args.backend) for path in args.tokenizer]
    toks += [encoding(name, args.backend) for name in args.encoding]
    if not args.tokenizer and not args.encoding:
        toks = [encoding(name, args.backend) for name in DEFAULT_ENCODINGS]
    out = sys.stdout
    mb = size / 1e6
    out.write("%s: %d bytes; best of %d round(s)\n" % (args.file, size, args.rounds))
    out.write("%-22s %-7s %10s %12s %12s\n" % ("tokenizer", "backend", "tokens", "encode MB/s", "decode MB/s"))
    for tok in toks:
        seconds, ids = _best(args.rounds, lambda: tok.encode(text))
        back, _ = _best(args.rounds, lambda: tok.decode(ids))
        out.write("%-22s %-7s %10d %12.1f %12.1f\n" % (tok.label[-22:], tok.backend, len(ids), mb / seconds,
                                                       mb / back if back else float("inf")))
        out.flush()
    if not args.no_train:
        lines = text.splitlines(keepends=True)
        trained = [None]

        def train():
            trained[0] = BPETokenizer(vocab_size=args.vocab_size, backend=args.backend)  # (checked in run)
            trained[0].train(lines)

        seconds, _ = _best(args.rounds, train)
        out.write("train (chapter flavour, %d tokens, %s backend): %.3f s, %.1f MB/s, %d merges\n"
                  % (args.vocab_size, trained[0].backend, seconds, mb / seconds, len(trained[0].merges)))
    return 0
