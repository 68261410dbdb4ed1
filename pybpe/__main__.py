"""Command line: `python -m pybpe demo | train | encode | decode`.

`demo` is what `make run` shows a newcomer: it trains the chapter's tokenizer
on the bundled corpus (Hamlet, pybpe/data/hamlet.txt), then prints what it
learned and how it encodes a line.  `train` does the same for your own files
and saves the model; `encode` / `decode` use a saved model.

`-o -` writes the model to stdout, as does `-o /dev/stdout` (written as a
stream, never replaced by a file); the summary line then goes to stderr.
SIGTERM ends the command as an exception would, so no temporary file stays.
"""
import argparse
import os
import signal
import sys
import time

from . import BPETokenizer, backend, load
from ._atomic import resolve_target

BUNDLED_CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "hamlet.txt")
DEMO_LINE = "To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer"


def _read_lines(paths):
    for path in paths:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            yield from f


def _show_tokens(tok, ids):
    """Token strings separated by spaces, with the end-of-word space shown as "_"."""
    pieces = [tok.id_to_token.get(i, "<UNK>") for i in ids]
    pieces = [p.decode("utf-8", "replace") if isinstance(p, bytes) else p for p in pieces]
    return " ".join(p.replace(" ", "_") for p in pieces)


def demo(args):
    tok = BPETokenizer(vocab_size=args.vocab_size, backend=args.backend)
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
    return 0


def train(args):
    tok = BPETokenizer(vocab_size=args.vocab_size, byte_level=args.byte_level,
                       min_frequency=args.min_frequency, lowercase=args.lowercase,
                       backend=args.backend,
                       **({"pretokenizer": args.pretokenizer} if args.pretokenizer else {}))
    start = time.perf_counter()
    tok.train(_read_lines(args.inputs), progress=not args.quiet)
    stdout = args.output == "-"
    tok.save(sys.stdout.buffer if stdout else args.output)
    summary = ("%d tokens, %d merges in %.2f s -> %s"
               % (tok.vocab_size, len(tok.merges), time.perf_counter() - start, args.output))
    print(summary, file=sys.stderr if stdout or _is_stream(args.output) else sys.stdout)
    return 0


def _is_stream(path):
    """True if writing `path` writes to a stream (stdout, a pipe, a device)."""
    try:
        return resolve_target(path)[1]
    except (OSError, ValueError):
        return False


def encode(args):
    tok = load(args.model)
    text = sys.stdin.read() if args.text is None else args.text
    print(" ".join(map(str, tok.encode(text))))
    return 0


def decode(args):
    tok = load(args.model)
    ids = [int(x) for x in (sys.stdin.read().split() if not args.ids else args.ids)]
    print(tok.decode(ids))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="pybpe", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="train on the bundled corpus and show the result")
    p.add_argument("--vocab-size", type=int, default=1000)
    p.add_argument("--backend", default=None, choices=("auto", "c", "python"))
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=demo)
    p = sub.add_parser("train", help="train on text files and save the model as JSON")
    p.add_argument("inputs", nargs="+")
    p.add_argument("-o", "--output", required=True, help="model file, or - for stdout")
    p.add_argument("--vocab-size", type=int, default=8000)
    p.add_argument("--byte-level", action="store_true")
    p.add_argument("--pretokenizer", default=None, help="'whitespace', a preset or a regex")
    p.add_argument("--min-frequency", type=int, default=1)
    p.add_argument("--lowercase", action="store_true")
    p.add_argument("--backend", default=None, choices=("auto", "c", "python"))
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=train)
    p = sub.add_parser("encode", help="encode text (argument or stdin) with a saved model")
    p.add_argument("model")
    p.add_argument("text", nargs="?")
    p.set_defaults(func=encode)
    p = sub.add_parser("decode", help="decode IDs (arguments or stdin) with a saved model")
    p.add_argument("model")
    p.add_argument("ids", nargs="*")
    p.set_defaults(func=decode)
    args = parser.parse_args(argv)
    print_backend = getattr(args, "backend", None) is None and args.command == "demo"
    if print_backend and backend() != "c":
        sys.stderr.write("note: running on the pure-Python backend\n")
    with _sigterm_as_exit():
        return args.func(args)


class _sigterm_as_exit:
    """SIGTERM raises SystemExit(143) while the command runs, so cleanup code
    (temporary files) runs as for Ctrl-C; the previous handler comes back
    after.  Only the main thread can set handlers: elsewhere nothing changes."""

    def __enter__(self):
        try:
            self.previous = signal.signal(signal.SIGTERM, self._exit)
        except ValueError:  # not the main thread
            self.previous = None

    def __exit__(self, *exc_info):
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)

    @staticmethod
    def _exit(signum, frame):
        raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
