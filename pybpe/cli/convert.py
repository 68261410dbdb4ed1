"""`pybpe convert`: a tokenizer from one file format to another.

Formats: pybpe's JSON model (BPETokenizer.save), OpenAI's `.tiktoken` rank
file, GPT-2's `vocab.json` + `merges.txt`, and Hugging Face's
`tokenizer.json` (pybpe/formats.py reads and writes them).  The input is any
file pybpe.load reads, a shipped encoding (-e NAME), a `.tiktoken` file of
one's own with --pattern (a rank file holds no pattern), or a GPT-2
vocabulary with --merges.  The output format is --to, or follows from the
output's name: *.tiktoken, *tokenizer.json, *vocab.json / encoder.json
(merges.txt written beside it, or at --merges-output), any other *.json a
pybpe model.

What does not fit is said, not lost silently: only a byte-level
BPETokenizer becomes an encoding (the character flavours have no byte
alphabet); an encoding cannot become a pybpe model (it has no flavour or
training counts); a .tiktoken file keeps the ranks only, so the pattern and
special tokens are reported as left out, as are a pattern other than GPT-2's
and special tokens not spelled <|...|> in GPT-2's vocab.json + merges.txt.
"""
import os
import sys

from .. import FormatError, patterns
from ._common import InputError, UsageError, add_tokenizer_options, check_not_input, tokenizer_from_args, Tok

FORMATS = ("pybpe", "tiktoken", "gpt2", "hf")

EXAMPLES = """\
examples:
  pybpe convert tok.json -o tokenizer.json            a byte-level model for Hugging Face tokenizers
  pybpe convert tokenizer.json -o vocab.json          GPT-2 files (merges.txt beside vocab.json)
  pybpe convert -e cl100k_base -o cl100k.tiktoken     a shipped encoding's rank file
  pybpe convert mine.tiktoken --pattern cl100k -o tokenizer.json
  pybpe convert tok.json --to hf -o - | head
"""


def add_parsers(sub, common):
    p = sub.add_parser("convert", parents=[common], help="convert a tokenizer between file formats",
                       description="\n\n".join(__doc__.split("\n\n")[1:]), epilog=EXAMPLES)
    p.add_argument("args", nargs="*", metavar="INPUT", help="the tokenizer file to convert (or -t / -e)")
    add_tokenizer_options(p, implicit=False)
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the file to write (replaced whole when done, never the input); - for stdout "
                        "(not for gpt2, which is two files)")
    p.add_argument("--to", choices=FORMATS,
                   help="the output format (default: from the output's name): pybpe, tiktoken, gpt2 or hf")
    p.add_argument("--merges-output", metavar="FILE",
                   help="gpt2: where to write the merges (default: merges.txt or vocab.bpe beside the output)")
    p.add_argument("--pattern", metavar="NAME|REGEX",
                   help="the pre-tokenizer of a .tiktoken input: gpt2, cl100k, o200k (or another preset "
                        "name) or a regex")
    p.add_argument("--merges", metavar="FILE", help="the merges.txt of a GPT-2 vocab.json input")
    p.set_defaults(run=run)


def output_format(args, is_model):
    if args.to:
        return args.to
    name = os.path.basename(args.output)
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if name.endswith("tokenizer.json"):
        return "hf"
    if name.endswith("vocab.json") or name == "encoder.json":
        return "gpt2"
    if name.endswith(".json") and is_model:
        return "pybpe"
    raise UsageError("cannot tell the output format from %r: say --to %s" % (args.output, "|".join(FORMATS)))


def read_input(args):
    """The Tok to convert, from the command line."""
    from .. import Encoding, load_gpt2_bpe, load_tiktoken_bpe

    paths = args.args
    if len(paths) > 1:
        raise UsageError("one input at a time (got %s)" % " ".join(paths))
    path = paths[0] if paths else None
    if path is not None and (args.tokenizer or args.encoding):
        raise UsageError("give the input as an argument, -t or -e: one of them")
    if args.pattern is not None:
        if path is None or not path.endswith(".tiktoken"):
            raise UsageError("--pattern is for a .tiktoken input")
        ranks = load_tiktoken_bpe(path)
        enc = Encoding(os.path.splitext(os.path.basename(path))[0], pat_str=patterns.resolve(args.pattern),
                       mergeable_ranks=ranks, special_tokens={}, backend=args.backend)
        return Tok(enc, path)
    if args.merges is not None:
        if path is None:
            raise UsageError("--merges goes with a vocab.json input")
        return Tok(load_gpt2_bpe(path, args.merges, backend=args.backend), path)
    if path is None and not (args.tokenizer or args.encoding):
        raise UsageError("name the tokenizer to convert")
    if path is not None:
        args.tokenizer = path
    try:
        return tokenizer_from_args(args, [])[0]
    except FormatError:
        if args.tokenizer and args.tokenizer.endswith(".tiktoken"):
            raise InputError("%s: a .tiktoken file of one's own holds no pattern: give it with --pattern NAME|REGEX"
                             % args.tokenizer) from None
        raise


def run(args):
    from .. import dump_gpt2_bpe, dump_hf_tokenizer, dump_tiktoken_bpe

    tok = read_input(args)
    fmt = output_format(args, not tok.is_encoding)  # (a WordPiece file is a model too)
    inputs = [p for p in (args.args + [args.tokenizer, args.merges]) if p]
    outputs = [args.output]
    if fmt == "gpt2":
        if args.output == "-":
            raise UsageError("gpt2 is two files (vocab.json and merges.txt): -o - cannot hold them")
        outputs.append(args.merges_output or _merges_beside(args.output))
    for out in outputs:
        check_not_input(out, inputs)
    if len(outputs) == 2 and _same_output(*outputs):
        raise UsageError("the vocabulary and the merges would be the same file (%s): name the merges "
                         "with --merges-output" % outputs[0])
    target = sys.stdout.buffer if args.output == "-" else args.output
    notes = []
    if tok.is_wordpiece:
        if fmt not in ("pybpe", "hf"):
            raise InputError("%s is a WordPiece vocabulary: it converts to pybpe's JSON or a tokenizer.json "
                             "(--to pybpe or hf), not to %s" % (tok.label, fmt))
        from ..wordpiece import dump_hf_wordpiece

        if fmt == "pybpe":
            tok.tokenizer.save(target)
        else:
            dump_hf_wordpiece(tok.tokenizer, target)
    elif fmt == "pybpe":
        if tok.is_encoding:
            raise InputError("%s is an encoding, which has no flavour or training counts to make a pybpe model of; "
                             "convert it to tiktoken, gpt2 or hf" % tok.label)
        tok.tokenizer.save(target)
    else:
        enc = tok.tokenizer
        if not tok.is_encoding:
            try:
                enc = enc.to_encoding(os.path.splitext(os.path.basename(tok.label))[0])
            except ValueError as exc:
                raise InputError("%s: %s" % (tok.label, exc)) from None
        if fmt == "tiktoken":
            dump_tiktoken_bpe(enc.mergeable_ranks, target)
            notes.append("a .tiktoken file holds the ranks only: the pattern and %d special token(s) are not in it"
                         % len(enc.special_tokens))
        elif fmt == "hf":
            dump_hf_tokenizer(enc, target)
        else:
            dump_gpt2_bpe(enc, args.output, outputs[1])
            notes.extend(_gpt2_notes(enc))
    summary = sys.stderr if args.output == "-" else sys.stdout
    for note in notes:
        sys.stderr.write("pybpe convert: note: %s\n" % note)
    summary.write("%s (%s) -> %s (%s)\n" % (tok.label, tok.describe(), " + ".join(outputs), fmt))
    return 0


def _gpt2_notes(enc):
    """What GPT-2's two files do not keep of `enc`: they hold no pattern
    (readers take GPT-2's), and only entries spelled <|...|> read back as
    special tokens."""
    notes = []
    if enc.pat_str != patterns.GPT2:
        notes.append("GPT-2's files hold no pattern and are read with GPT-2's: this encoding's (%s) is not in "
                     "them, so the IDs may differ; tokenizer.json keeps it" % _short(enc.pat_str))
    plain = [s for s in enc.special_tokens if not (s.startswith("<|") and s.endswith("|>") and len(s) > 4)]
    if plain:
        notes.append("special token(s) %s are in vocab.json but read back as ordinary tokens (only <|...|> "
                     "entries are special there); tokenizer.json keeps them special" % ", ".join(map(repr, plain)))
    return notes


def _short(text, limit=60):
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def _same_output(a, b):
    """Whether output paths `a` and `b` name one file (through links too)."""
    from .._atomic import same_file

    try:
        return same_file(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _merges_beside(vocab_path):
    folder, name = os.path.split(vocab_path)
    return os.path.join(folder, "vocab.bpe" if name == "encoder.json" else
                        name[: -len("vocab.json")] + "merges.txt" if name.endswith("vocab.json") else "merges.txt")
