"""`pybpe train FILE...|- -o MODEL|-`: learn a BPETokenizer from text files and save it.

Every option of BPETokenizer is an option here (the flavour, the sizes,
special tokens, the backend).  Each line of the input is one text of the
corpus, as BPETokenizer.train(open(file)) would take it; the files are
streamed, never held whole.  Progress (bytes read, then merges) goes to
stderr: redrawn on a terminal, plain lines every few seconds otherwise;
-q turns it off.  The model goes to -o: a file replaced only once the whole
model is written (never one of the inputs), or - for stdout, in which case
the summary line goes to stderr instead.
"""
import sys
import time

from .. import BPETokenizer, patterns
from .._atomic import resolve_target
from ._common import (InputError, Progress, UsageError, check_not_input, input_size, megabytes,
                      read_line_texts)

EXAMPLES = """\
examples:
  pybpe train corpus.txt -o tok.json                       the chapter's flavour, 8,000 tokens
  pybpe train a.txt b.txt -o tok.json --vocab-size 32000 --byte-level --pretokenizer cl100k
  pybpe train corpus.txt -o tok.json --end-of-word symbol --marker '</w>' --lowercase
  pybpe train corpus.txt -o tok.json --byte-level --regex '\\w+|\\s+|[^\\w\\s]+'
  cat *.txt | pybpe train - -o - --special-token '<|endoftext|>' > tok.json
"""

PRETOKENIZERS = ["whitespace", "none"] + list(patterns.PRESETS)


def add_parsers(sub, common):
    p = sub.add_parser("train", parents=[common], help="learn a tokenizer from text files and save it",
                       description=__doc__.split("\n\n")[1].replace("\n", " "), epilog=EXAMPLES)
    p.add_argument("inputs", nargs="+", metavar="FILE", help="text files, one text per line; - for stdin")
    p.add_argument("-o", "--output", required=True, metavar="MODEL",
                   help="where to save the model (JSON): a file, replaced whole when done, or - for stdout")
    p.add_argument("--vocab-size", type=int, default=8000, metavar="N",
                   help="tokens wanted, special tokens included (default: %(default)s); fewer when the corpus "
                        "runs out of pairs")
    p.add_argument("--byte-level", action="store_true",
                   help="start from the 256 bytes (lossless, GPT-2 style) instead of the characters seen")
    p.add_argument("--pretokenizer", choices=PRETOKENIZERS, metavar="NAME",
                   help="how text is cut into words: whitespace (str.split), none (the whole text), or a "
                        "preset pattern: %s (default: whitespace, or gpt2 with --byte-level)"
                        % ", ".join(patterns.PRESETS))
    p.add_argument("--regex", metavar="PATTERN",
                   help="cut words with this regular expression instead of a named pre-tokenizer")
    p.add_argument("--end-of-word", choices=("suffix", "symbol", "none"),
                   help="where the end of a word is marked: glued onto the last character (suffix, the "
                        "chapter's), as a symbol of its own (symbol), or not at all (none; the default with "
                        "--byte-level)")
    p.add_argument("--marker", metavar="TEXT",
                   help="the end-of-word marker (default: a space for suffix, </w> for symbol)")
    p.add_argument("--min-frequency", type=int, default=1, metavar="N",
                   help="stop when the best pair occurs fewer than N times (default: %(default)s)")
    p.add_argument("--max-token-length", type=int, metavar="N",
                   help="never make a token of more than N characters (bytes at byte level)")
    p.add_argument("--lowercase", action="store_true", help="lowercase the text before counting words")
    p.add_argument("--special-token", action="append", default=[], metavar="TOKEN",
                   help="a special token (repeat for several): never split, never trained on, given the "
                        "last IDs")
    p.add_argument("--backend", choices=("auto", "c", "python"), default=None,
                   help="the core that does the work (default: $PYBPE_BACKEND, else C when built)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress report (the summary line stays)")
    p.set_defaults(run=run)


def tokenizer_options(args):
    """BPETokenizer's keyword arguments from the command line."""
    options = dict(vocab_size=args.vocab_size, byte_level=args.byte_level, min_frequency=args.min_frequency,
                   max_token_length=args.max_token_length, lowercase=args.lowercase,
                   special_tokens=args.special_token, backend=args.backend)
    if args.pretokenizer is not None and args.regex is not None:
        raise UsageError("give --pretokenizer or --regex, not both")
    if args.pretokenizer is not None:
        options["pretokenizer"] = None if args.pretokenizer == "none" else args.pretokenizer
    if args.regex is not None:
        options["pretokenizer"] = args.regex
    if args.end_of_word is not None:
        options["end_of_word"] = None if args.end_of_word == "none" else args.end_of_word
    if args.marker is not None:
        options["marker"] = args.marker
    return options


def run(args):
    if args.inputs.count("-") > 1:
        raise UsageError("stdin (-) can be read once only")
    try:
        tok = BPETokenizer(**tokenizer_options(args))
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    for path in args.inputs:
        if path != "-":
            try:
                open(path, "rb").close()
            except OSError as exc:
                raise InputError("%s: %s" % (path, exc.strerror or exc)) from None
    check_not_input(args.output, args.inputs)

    progress = Progress(not args.quiet)
    total, done = input_size(args.inputs), [0]

    def count(n):
        done[0] += n
        of = " of %s (%.0f%%)" % (megabytes(total), 100 * done[0] / total) if total else ""
        progress.update("reading %s%s" % (megabytes(done[0]), of))

    texts = read_line_texts(args.inputs, count)  # a text per line, read a block at a time
    start = time.perf_counter()
    tok.train(texts, progress=not args.quiet)
    progress.done()
    to_stream = args.output == "-" or _is_stream(args.output)
    tok.save(sys.stdout.buffer if args.output == "-" else args.output)
    summary = ("%d tokens, %d merges in %.2f s -> %s"
               % (tok.vocab_size, len(tok.merges), time.perf_counter() - start, args.output))
    print(summary, file=sys.stderr if to_stream else sys.stdout)
    return 0


def _is_stream(path):
    """True if writing `path` writes to a stream (stdout, a pipe, a device)."""
    try:
        return resolve_target(path)[1]
    except (OSError, ValueError):
        return False
