"""`pybpe encode` and `pybpe decode`: text to token IDs and back, from the shell.

Both take the tokenizer as -t MODEL, --encoding NAME, or a first argument
(`pybpe encode gpt2 "hello world"`).  Two modes:

- Line mode, the default for stdin and -i files: one line in, one line out.
  The inputs are streamed a line at a time; each line is encoded without its
  newline, and the output line ends with a newline exactly when the input
  line did.  So `cat f | pybpe encode -e X | pybpe decode -e X` gives f back
  byte for byte (when X is lossless: every encoding, any byte-level model).
  Note that a text cut into lines can encode to other IDs than the whole
  text: a newline may merge with what follows it.
- Whole mode (--whole): each input is one text; encode writes its IDs on one
  line, decode concatenates every ID it reads and writes their text once.

decode never adds a newline that is not in the IDs' text, except in line
mode, where each ID line's newline comes back.  IDs are integers separated by
spaces or commas (a pasted Python list works); one that is not a token of
the tokenizer is an input error naming where it was.  --pieces shows the
tokens instead of IDs: coloured one by one on a terminal, separated by spaces
elsewhere (a space inside a token shows as "▁", bytes that are part of a
character as \\xNN).
"""
import re
import sys
from array import array

from .._encode_file import typecode, write_ids
from ._common import (STREAMED, InputError, UsageError, add_output_option, add_tokenizer_options, open_input,
                      output, read_lines, read_text, show_pieces, tokenizer_from_args, wants_colour)

ENCODE_EXAMPLES = """\
examples:
  pybpe encode gpt2 "hello world"                     31373 995
  pybpe encode --encoding cl100k_base --pieces "hello world"
  pybpe encode -t tok.json -i corpus.txt -o ids.txt   one line of IDs per line of text
  pybpe encode -e o200k_base --whole -i a.txt -i b.txt  one line of IDs per file
  cat f | pybpe encode -e cl100k_base | pybpe decode -e cl100k_base   gives f back
"""

DECODE_EXAMPLES = """\
examples:
  pybpe decode gpt2 31373 995                          hello world (no newline added)
  echo "31373 995" | pybpe decode --encoding gpt2      hello world, and the line's newline
  pybpe decode -t tok.json --whole -i ids.txt -o text.txt
  pybpe decode -e cl100k_base --pieces 15339 1917
"""

_ID_SEPARATORS = re.compile(r"[\s,\[\]]+")


def add_parsers(sub, common):
    p = sub.add_parser("encode", parents=[common], help="text -> token IDs (or pieces)",
                       description=__doc__, epilog=ENCODE_EXAMPLES)
    p.add_argument("args", nargs="*", metavar="TEXT",
                   help="texts to encode, one output line each ([TOKENIZER] TEXT... without -t or -e); "
                        "without any, stdin is read")
    _common_options(p, "text")
    p.add_argument("--special", action="store_true",
                   help="text that spells a special token (<|endoftext|>...) becomes that token; by default it "
                        "is encoded as the text it is")
    p.set_defaults(run=run_encode)

    p = sub.add_parser("decode", parents=[common], help="token IDs -> text (or pieces)",
                       description=__doc__, epilog=DECODE_EXAMPLES)
    p.add_argument("args", nargs="*", metavar="ID",
                   help="IDs to decode as one sequence ([TOKENIZER] ID... without -t or -e); without any, "
                        "stdin is read")
    _common_options(p, "IDs")
    p.set_defaults(run=run_decode)


def _common_options(p, what):
    add_tokenizer_options(p)
    p.add_argument("-i", "--input", action="append", default=[], metavar="FILE",
                   help="read %s from FILE (repeat for several, read one after another; - for stdin)" % what)
    p.add_argument("-w", "--whole", action="store_true",
                   help="whole mode: each input is one text (encode) or one ID sequence (decode), not a "
                        "line at a time")
    p.add_argument("-p", "--pieces", action="store_true", help="show the tokens themselves instead of IDs")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour each piece (--pieces): auto = when writing to a terminal (default); always "
                        "also into files and pipes")
    add_output_option(p, "the output")


def _inputs(args, rest, what):
    if rest and args.input:
        raise UsageError("give %s as arguments or with -i FILE, not both" % what)
    inputs = args.input or (["-"] if not rest else [])
    if inputs.count("-") > 1:
        raise UsageError("stdin (-) can be read once only")
    return inputs


def _pieces(tok, ids, colour):
    return show_pieces([tok.id_to_piece[i] for i in ids], colour)


def run_encode(args):
    tok, rest = tokenizer_from_args(args, args.args)
    inputs = _inputs(args, rest, "texts")
    colour = args.pieces and wants_colour(args.color, sys.stdout if args.output == "-" else None)

    def show(ids):
        return _pieces(tok, ids, colour) if args.pieces else " ".join(map(str, ids))

    with output(args.output, inputs + ([tok.path] if tok.path else [])) as out:
        for text in rest:
            out.write(show(tok.encode(text, args.special)) + "\n")
        if args.whole:
            for path in inputs:
                if not args.pieces and not args.special and tok.is_encoding and tok.tokenizer.pat_str in STREAMED:
                    _stream_whole(tok.tokenizer, path, out)  # a few MB in memory, the same IDs
                else:
                    out.write(show(tok.encode(read_text(path), args.special)) + "\n")
        else:
            for _, _, text, ending in read_lines(inputs):
                out.write(show(tok.encode(text, args.special)) + ending)
    return 0


def _stream_whole(enc, path, out):
    """The IDs of file `path` ("-": stdin) as one text, written as one line
    of decimal IDs while it is read a few MB at a time (encode_file's
    loop): read whole, a 258 MB file ran out of memory at 6.4 GB (a
    fuzzing helper)."""
    sink = _DecimalIds(out)
    try:
        with open_input(path) as f:
            write_ids(enc._encode_array, f, sink, "uint32", eot=None, document_separator=None, chunk_size=1 << 22)
    except UnicodeDecodeError as exc:
        raise InputError("%s: not valid UTF-8 (%s)" % ("<stdin>" if path == "-" else path, exc.reason)) from None
    out.write("\n")


class _DecimalIds:
    """A binary sink for write_ids: native uint32 IDs in, written to `out`
    as decimal text separated by spaces."""

    def __init__(self, out):
        self.out, self.first, self.rest = out, True, b""

    def write(self, data):
        data = self.rest + bytes(data)
        whole = len(data) - len(data) % 4
        ids, self.rest = array(typecode("I", 4)), data[whole:]
        ids.frombytes(data[:whole])
        if ids:
            self.out.write(("" if self.first else " ") + " ".join(map(str, ids)))
            self.first = False
        return len(data)


def parse_ids(text, where):
    """The IDs in a line: integers separated by spaces or commas (brackets allowed)."""
    ids = []
    for field in _ID_SEPARATORS.split(text):
        if not field:
            continue
        try:
            value = int(field)
        except ValueError:
            raise InputError("%s: %r is not a token ID (an integer)" % (where, field)) from None
        ids.append(value)
    return ids


def _where(path, lineno):
    return "%s:%d" % ("<stdin>" if path == "-" else path, lineno)


def run_decode(args):
    tok, rest = tokenizer_from_args(args, args.args)
    inputs = _inputs(args, rest, "IDs")
    colour = args.pieces and wants_colour(args.color, sys.stdout if args.output == "-" else None)

    def show(ids, where, ending="\n"):
        """The IDs' text; or their pieces, a line of them (`ending` ends it)."""
        tok.check_ids(ids, where)
        return _pieces(tok, ids, colour) + ending if args.pieces else tok.decode(ids)

    with output(args.output, inputs + ([tok.path] if tok.path else [])) as out:
        if rest:
            out.write(show(parse_ids(" ".join(rest), "the arguments"), "the arguments"))
        if args.whole:
            ids = []
            for path in inputs:
                ids += parse_ids(read_text(path), "<stdin>" if path == "-" else path)
            if inputs:
                out.write(show(ids, "input"))
        else:
            for path, lineno, line, ending in read_lines(inputs):
                where = _where(path, lineno)
                out.write(show(parse_ids(line, where), where, ending="") + ending)
    return 0
