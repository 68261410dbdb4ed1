"""`pybpe count`: how many tokens each file is, like `wc`.

One line per file -- the token count, right-aligned, then the name -- and a
total line when there are several, as `wc` prints them.  Each file is
encoded as one whole text (what a model would be given); text that spells a
special token counts as that text unless --special.  With no file, or "-",
stdin is counted.

A file or stdin under an encoding with the gpt2, cl100k or o200k pattern is
streamed through encode_file's loop (a few MB in memory whatever its size; it
cuts the text only where the result is the same as for the whole text), its
words and bytes (-w) counted on the way; other inputs are read whole.
"""
import codecs
import os
import sys

from .._encode_file import write_ids
from ._common import (STREAMED, InputError, add_tokenizer_options, check_not_input, read_lines, read_text,
                      tokenizer_and_files)

EXAMPLES = """\
examples:
  pybpe count gpt2 README.md                  tokens of one file under gpt2
  pybpe count --encoding o200k_base *.txt     a line per file and a total
  pybpe count -t tok.json -w notes.txt        with words and bytes, and tokens per word
  cat notes.txt | pybpe count cl100k_base
"""


def add_parsers(sub, common):
    p = sub.add_parser("count", parents=[common], help="count the tokens of files, like wc",
                       description=__doc__.split("\n\n")[1].replace("\n", " "), epilog=EXAMPLES)
    p.add_argument("args", nargs="*", metavar="FILE",
                   help="files to count ([TOKENIZER] FILE... without -t or -e); none or - for stdin")
    add_tokenizer_options(p)
    p.add_argument("-w", "--words", action="store_true",
                   help="also print words (whitespace-separated) and bytes, and tokens per word")
    p.add_argument("--special", action="store_true",
                   help="text that spells a special token counts as that one token")
    p.set_defaults(run=run)


def run(args):
    tok, paths = tokenizer_and_files(args)
    check_not_input("-", paths + ([tok.path] if tok.path else []))
    rows = []
    for path in paths:
        name = "" if path == "-" and len(paths) == 1 else path
        streamed = (not args.special and tok.is_encoding and tok.tokenizer.pat_str in STREAMED
                    and (os.path.isfile(path) or path == "-"))
        if streamed and path == "-":
            # stdin can be read only once: its words and bytes are counted
            # as the tokens' loop reads it.
            stdin = _WordsAndBytes(sys.stdin.buffer) if args.words else sys.stdin.buffer
            tokens = _streamed_tokens(tok.tokenizer, path, stdin)
            rows.append((tokens,) + ((stdin.words, stdin.bytes) if args.words else (0, 0)) + (name,))
            continue
        if streamed:
            rows.append((_streamed_tokens(tok.tokenizer, path),) + (_streamed_words(path) if args.words else (0, 0))
                        + (name,))
            continue
        text = read_text(path)
        words = (len(text.split()), len(text.encode("utf-8"))) if args.words else (0, 0)
        rows.append((len(tok.encode(text, args.special)),) + words + (name,))
    if len(rows) > 1:
        rows.append(tuple(sum(r[k] for r in rows) for k in range(3)) + ("total",))
    width = max(len(str(n)) for row in rows for n in (row[:3] if args.words else row[:1]))
    for tokens, words, size, name in rows:
        line = "%*d" % (width, tokens)
        if args.words:
            per_word = "%.2f" % (tokens / words) if words else "-"
            line += " %*d %*d %6s" % (width, words, width, size, per_word)
        sys.stdout.write((line + " " + name).rstrip() + "\n")
    return 0


def _streamed_tokens(enc, path, stdin=None):
    """The tokens of file `path` ("-": `stdin`, a binary stream) as one
    text, read a few MB at a time (stdin was read whole, with its words and
    bytes counted whether asked for or not: 258 MB piped in peaked at 3.5
    GB)."""
    try:
        if path == "-":
            written, _ = write_ids(enc._encode_array, stdin, _Discard(), "uint32", eot=None,
                                   document_separator=None, chunk_size=1 << 22)
            return written
        return enc.encode_file(path, os.devnull, append_eot=False)
    except UnicodeDecodeError as exc:
        raise InputError("%s: not valid UTF-8 (%s)" % ("<stdin>" if path == "-" else path, exc.reason)) from None


class _Discard:
    """A binary sink that keeps nothing (the IDs are only counted)."""

    def write(self, data):
        return len(data)


class _WordsAndBytes:
    """A binary stream passed through, counting its bytes and its words (as
    str.split() finds them in the whole text) on the way: -w on stdin.

    Each block read is decoded again here by an incremental decoder, so a
    character cut between two reads comes out whole; a word running from
    one block into the next is counted once (it continues when the new text
    starts with a non-space and the text before ended with one).  split()
    runs on slices of _SLICE characters, for the same reason: the list of
    a 4 MB block of one-letter words would take about 100 MB.  A byte that
    is not UTF-8 is replaced here and reported by the tokens' loop."""

    _SLICE = 1 << 16

    def __init__(self, raw):
        self.raw = raw
        self.words = self.bytes = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._in_word = False  # whether the text so far ends inside a word

    def read(self, n):
        data = self.raw.read(n)
        self.bytes += len(data)
        text = self._decoder.decode(data, final=not data)
        for start in range(0, len(text), self._SLICE):
            part = text[start:start + self._SLICE]
            self.words += len(part.split())
            if self._in_word and not part[0].isspace():
                self.words -= 1  # the word before goes on here
            self._in_word = not part[-1].isspace()
        return data


def _streamed_words(path):
    """(words, bytes) of file `path`, a line at a time."""
    words = sum(len(text.split()) for _, _, text, _ in read_lines([path]))
    return words, os.path.getsize(path)
