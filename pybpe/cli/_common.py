"""What every command of the command line shares: errors, the tokenizer, inputs, outputs.

- Errors.  A command raises UsageError (exit code 1: the command line itself
  is wrong) or InputError (exit code 2: a file, an ID, a name it points at is
  wrong or missing); pybpe/cli/__init__.py turns them into one line on stderr.
- The tokenizer.  `-t MODEL` (any file pybpe.load reads), `-e/--encoding
  NAME` (a shipped encoding, or a model name such as gpt-4o), or, with
  neither, the first positional argument when that is unambiguous (a known
  encoding name that is not also a file here, or an existing file).  Tok
  gives the two kinds one face: BPETokenizer and Encoding differ in how
  special-token text, pieces and bad IDs behave.
- Inputs are read as bytes and decoded strictly (text that is not UTF-8 is
  an input error naming the file and line), so "\\r\\n" and a missing final
  newline survive; several files read as `cat` would join them.
- Outputs go through pybpe/_atomic.py (a file is replaced whole at the end or
  not at all, never one of the inputs); `-` is stdout.
- Progress goes to stderr: redrawn in place on a terminal, and as a plain
  line every few seconds otherwise, so a log file gets no "\\r" and no
  terminal codes.
"""
import contextlib
import functools
import io
import os
import stat
import sys
import time

from .. import FormatError, patterns
from .._atomic import atomic_output, same_file

# Progress: how often a terminal line is redrawn, and a plain line written.
TTY_EVERY = 0.1
PLAIN_EVERY = 5.0


class CLIError(Exception):
    """An error the user can fix, reported as one line; `code` is the exit status."""
    code = 1


class UsageError(CLIError):
    """The command line is wrong (exit code 1)."""
    code = 1


class InputError(CLIError):
    """An input is wrong or missing: a file, its content, an ID, a name (exit code 2)."""
    code = 2


# -- the tokenizer -------------------------------------------------------------------
def add_tokenizer_options(parser, implicit=True):
    """-t / --encoding / --backend on a command that needs a tokenizer."""
    group = parser.add_argument_group("tokenizer (one of)")
    group.add_argument("-t", "--tokenizer", metavar="MODEL",
                       help="a tokenizer file: pybpe's JSON (train -o), a tokenizer.json, a GPT-2 vocab.json "
                            "(merges.txt beside it) or an OpenAI .tiktoken file"
                            + ("; without -t or -e, the first argument names the tokenizer" if implicit else ""))
    group.add_argument("-e", "--encoding", metavar="NAME",
                       help="a shipped encoding (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base, "
                            "o200k_harmony) or a model name that uses one (gpt-4o, gpt-3.5-turbo...)")
    parser.add_argument("--backend", choices=("auto", "c", "python"), default=None,
                        help="the core that does the work (default: $PYBPE_BACKEND, else C when built)")


def encoding_names():
    from .. import list_encoding_names  # late: the tiktoken pillar loads only when used
    return list_encoding_names()


def resolve_encoding_name(name):
    """An encoding name, or the one a model name uses; InputError otherwise."""
    from ..model import encoding_name_for_model

    if name in encoding_names():
        return name
    try:
        return encoding_name_for_model(name)
    except KeyError:
        raise InputError("unknown encoding %r; known: %s (or a model name such as gpt-4o)"
                         % (name, ", ".join(encoding_names()))) from None


def _is_model_name(name):
    # Whether `name` is an OpenAI model's (gpt-4o, text-davinci-003...), which
    # names its encoding wherever an encoding name does.
    from ..model import encoding_name_for_model

    try:
        encoding_name_for_model(name)
    except KeyError:
        return False
    return True


def load_tokenizer(path, backend):
    """The tokenizer in file `path` (pybpe.load), as a Tok."""
    from .. import load

    if os.path.isdir(path):
        raise InputError("%s: is a directory, not a tokenizer file" % path)
    if not os.path.exists(path):
        raise InputError("%s: no such tokenizer file" % path)
    return Tok(load(path, backend=backend), path, path=path)


def tokenizer_and_files(args):
    """(Tok, the files to read) for commands that read FILE... or stdin:
    the tokenizer as tokenizer_from_args finds it, stdin ("-") when no file
    is named, and stdin named once at most (it can be read once only)."""
    tok, paths = tokenizer_from_args(args, args.args)
    paths = paths or ["-"]
    if paths.count("-") > 1:
        raise UsageError("stdin (-) can be read once only")
    return tok, paths


def tokenizer_from_args(args, positionals):
    """(Tok, the positionals left) from -t / --encoding, or from the first
    positional argument when neither is given."""
    if args.tokenizer is not None and args.encoding is not None:
        raise UsageError("give -t MODEL or --encoding NAME, not both")
    if args.tokenizer is not None:
        return load_tokenizer(args.tokenizer, args.backend), positionals
    if args.encoding is not None:
        return encoding(args.encoding, args.backend), positionals
    if not positionals:
        raise UsageError("name a tokenizer: -t MODEL, --encoding NAME, or a first argument such as gpt2")
    first, rest = positionals[0], positionals[1:]
    is_name = first in encoding_names() or _is_model_name(first)
    is_file = os.path.exists(first)
    if is_name and is_file:
        raise UsageError("%r is both an encoding name and a file here: say -t %s or --encoding %s"
                         % (first, first, first))
    if is_name:
        return encoding(first, args.backend), rest
    if is_file:
        try:
            return load_tokenizer(first, args.backend), rest
        except FormatError as exc:
            raise InputError("%s (without -t or --encoding, the first argument names the tokenizer)"
                             % exc) from None
    raise InputError("no tokenizer file or encoding named %r (encodings: %s, or a model name such as gpt-4o); "
                     "name one with -t MODEL or --encoding NAME" % (first, ", ".join(encoding_names())))


def encoding(name, backend):
    from .. import get_encoding

    name = resolve_encoding_name(name)
    return Tok(get_encoding(name, backend=backend), name)


class Tok:
    """A BPETokenizer or an Encoding behind one small interface.

    `special`: whether text that spells a special token becomes that token
    (otherwise it is encoded as the text it is, which is what counting a
    file needs).  Pieces are what each ID stands for: bytes at byte level
    and for encodings, str in the character flavours.  `path` is the file
    it was loaded from (None for a named encoding): an input, which no
    output may replace."""

    def __init__(self, tokenizer, label, path=None):
        from ..encoding import Encoding
        from ..wordpiece import WordPieceTokenizer

        self.tokenizer, self.label, self.path = tokenizer, label, path
        self.is_encoding = isinstance(tokenizer, Encoding)
        self.is_wordpiece = isinstance(tokenizer, WordPieceTokenizer)
        if self.is_encoding:
            self.specials = dict(tokenizer.special_tokens)
        else:
            self.specials = {s: tokenizer.token_to_id[s] for s in tokenizer.special_tokens}

    @functools.cached_property
    def id_to_piece(self):
        """{ID: the token it stands for} (built on first use: o200k has 200,000)."""
        tok = self.tokenizer
        if not self.is_encoding:
            return tok.id_to_token
        pieces = {i: t for t, i in tok.mergeable_ranks.items()}
        for text, i in tok.special_tokens.items():
            pieces.setdefault(i, text.encode("utf-8"))
        return pieces

    @property
    def backend(self):
        return self.tokenizer.backend

    @property
    def vocab_size(self):
        return len(self.id_to_piece)

    def encode(self, text, special=False):
        # Text that spells a special token is that token only with --special,
        # plain text otherwise: Encoding and BPETokenizer raise for it by
        # default, so they are told not to; WordPiece reads it as text already.
        allowed = "all" if special else frozenset()
        if self.is_wordpiece:
            return self.tokenizer.encode(text, allowed_special=allowed)
        return self.tokenizer.encode(text, allowed_special=allowed, disallowed_special=())

    def check_ids(self, ids, where):
        """InputError for an ID that is not in the vocabulary."""
        for i in ids:
            if i not in self.id_to_piece:
                raise InputError("%s: ID %d is not a token of %s (its IDs run from 0 to %d)"
                                 % (where, i, self.label, max(self.id_to_piece)))

    def decode(self, ids):
        if self.is_encoding:
            return self.tokenizer.decode_bytes(ids).decode("utf-8", "replace")
        return self.tokenizer.decode(ids)

    @property
    def byte_level(self):
        return self.is_encoding or (not self.is_wordpiece and self.tokenizer.flavour.byte_level)

    @property
    def unknown_id(self):
        """The ID unseen text becomes (<UNK>, [UNK]), or None at byte level (there is none)."""
        if self.byte_level:
            return None
        return self.tokenizer.token_to_id[self.tokenizer.unk_token] if self.is_wordpiece else 0

    def describe(self):
        """One line: what kind of tokenizer this is."""
        tok = self.tokenizer
        if self.is_encoding:
            return "encoding %s: %d tokens (%d special), byte level" % (tok.name, tok.n_vocab, len(self.specials))
        if self.is_wordpiece:
            return "WordPieceTokenizer: %d tokens (%d merges + %d special), continuation prefix %r%s" % (
                tok.vocab_size, len(tok.merges), len(self.specials), tok.prefix,
                ", lowercase" if tok.lowercase else "")
        return "BPETokenizer: %d tokens (%d base + %d merges + %d special), %s" % (
            tok.vocab_size, tok.vocab_size - len(tok.merges) - len(self.specials), len(tok.merges),
            len(self.specials), flavour_name(tok))


def flavour_name(tok):
    """The README's name for a BPETokenizer's flavour, with its pre-tokenizer."""
    f = tok.flavour
    if f.byte_level:
        name = "byte level"
    elif f.end_of_word == "suffix" and f.pretokenizer == "whitespace":
        name = "chapter flavour"
    elif f.end_of_word == "symbol":
        name = "symbol marker %r" % f.marker
    elif f.end_of_word is None:
        name = "leading space"
    else:
        name = "end-of-word suffix %r" % f.marker
    pre = "whole text" if f.pretokenizer is None else f.pretokenizer
    if len(pre) > 20:
        pre = "a regex"
    return "%s (pre-tokenizer %s%s)" % (name, pre, ", lowercase" if f.lowercase else "")


# -- pieces as text ------------------------------------------------------------------
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def piece_text(piece, plain):
    """A token as a readable string.  Bytes that are not UTF-8 on their own
    (part of a character) show as \\xNN; control characters as escapes; in
    `plain` form (no colours to mark the edges) a space shows as "▁".

        >>> piece_text(b" caf\\xc3\\xa9\\n", plain=True), piece_text(b"\\xe2\\x80", plain=False)
        ('▁café\\\\n', '\\\\xe2\\\\x80')
    """
    if isinstance(piece, bytes):
        piece = piece.decode("utf-8", "backslashreplace")
    else:
        piece = piece.replace("\\", "\\\\")
    out = []
    for c in piece:
        if c == " " and plain:
            out.append("\u2581")
        elif c in "\n\r\t":
            out.append(_ESCAPES[c])
        elif ord(c) < 32 or ord(c) == 127 or 0xD800 <= ord(c) < 0xE000:
            out.append("\\x%02x" % ord(c) if ord(c) < 256 else "\\u%04x" % ord(c))
        else:
            out.append(c)
    return "".join(out)


# Background colours for alternate tokens: readable with the terminal's own text colour.
_COLOURS = ("\x1b[48;5;153m\x1b[30m", "\x1b[48;5;223m\x1b[30m", "\x1b[48;5;194m\x1b[30m", "\x1b[48;5;225m\x1b[30m")
_RESET = "\x1b[0m"


def show_pieces(pieces, colour):
    """Tokens side by side: each on its own background colour (a terminal),
    or separated by spaces (anywhere else)."""
    if not colour:
        return " ".join(piece_text(p, plain=True) for p in pieces)
    return "".join("%s%s" % (_COLOURS[k % len(_COLOURS)], piece_text(p, plain=False))
                   for k, p in enumerate(pieces)) + _RESET


def wants_colour(choice, stream):
    """--color auto|always|never; auto is a terminal, without NO_COLOR, not TERM=dumb."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    return (_isatty(stream) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb")


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# -- inputs --------------------------------------------------------------------------
def open_input(path):
    """A binary file object for `path` ("-" is stdin); InputError when it cannot be read."""
    if path == "-":
        return contextlib.nullcontext(sys.stdin.buffer)
    if os.path.isdir(path):
        raise InputError("%s: is a directory" % path)
    try:
        return open(path, "rb")
    except OSError as exc:
        raise InputError("%s: %s" % (path, exc.strerror or exc)) from None


def _name(path):
    return "<stdin>" if path == "-" else path


def decode_utf8(data, path, lineno=None):
    """Bytes -> str, or InputError naming the file (and line) that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = "%s:%d" % (_name(path), lineno) if lineno else "%s: byte %d" % (_name(path), exc.start)
        raise InputError("%s: not valid UTF-8 (%s)" % (where, exc.reason)) from None


def read_lines(paths, on_bytes=None):
    """(path, line number, text, ending) for each line of the inputs taken
    as one stream (as `cat` joins them); `ending` is "\\n", or "" for a last
    line without one.  stdin is read a line at a time as it arrives.
    `on_bytes(n)` is told how many bytes each line took."""
    carry, carry_path, carry_lineno = b"", None, 0
    for path in paths:
        with open_input(path) as f:
            lineno = 0
            for line in f:
                lineno += 1
                if on_bytes is not None:
                    on_bytes(len(line))
                if not line.endswith(b"\n"):
                    carry, carry_path, carry_lineno = carry + line, path, lineno  # joins the next input's first line
                    continue
                yield path, lineno, decode_utf8(carry + line[:-1], path, lineno), "\n"
                carry = b""
    if carry:
        yield carry_path, carry_lineno, decode_utf8(carry, carry_path, carry_lineno), ""


# The patterns whose encodings Encoding.encode_file may cut the text for:
# under them `count` and `encode --whole` read a file a few MB at a time.
STREAMED = frozenset({patterns.GPT2, patterns.GPT2_POSSESSIVE, patterns.CL100K, patterns.O200K})

# read_line_texts reads this many bytes at a time.
_BLOCK = 1 << 20


def read_line_texts(paths, on_bytes=None):
    """Each line of the inputs taken as one stream, as read_lines gives them,
    as str with its "\n" (none on a last line without one): what `pybpe
    train` trains on, a text per line.  Read in blocks of _BLOCK bytes, each
    decoded once, with one on_bytes(n) per block: per line, the decoding,
    the call and the progress text cost 16-18x what training itself did on
    a 258 MB file (a fuzzing helper).  Not valid UTF-8 is an InputError
    naming the file and line, as read_lines says."""
    carry, carry_path, carry_lineno = b"", None, 0  # a line not ended yet: its bytes and where it began
    for path in paths:
        with open_input(path) as f:
            lineno = 0  # lines of this input ended so far
            while True:
                block = f.read(_BLOCK)
                if not block:
                    break
                if on_bytes is not None:
                    on_bytes(len(block))
                end = block.rfind(b"\n") + 1
                if not carry:
                    carry_path, carry_lineno = path, lineno + 1
                if end == 0:
                    carry += block
                    continue
                data, carry = carry + block[:end], block[end:]
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    # the line holding the bad byte: the carried one, or one of this input's
                    # (a line carried over from the input before is this one's first, as with cat)
                    ended = data.count(b"\n", 0, exc.start)
                    where = (carry_path, carry_lineno) if ended == 0 else (path, lineno + 1 + ended)
                    raise InputError("%s:%d: not valid UTF-8 (%s)" % (_name(where[0]), where[1], exc.reason)) from None
                lines = text.split("\n")
                lines.pop()  # (data ends with "\n": the last is empty)
                for line in lines:
                    yield line + "\n"
                lineno += block.count(b"\n", 0, end)
                carry_path, carry_lineno = path, lineno + 1  # where the carried rest begins
    if carry:
        yield decode_utf8(carry, carry_path, carry_lineno)


def read_text(path):
    """The whole of one input as str."""
    with open_input(path) as f:
        try:
            data = f.read()
        except OSError as exc:
            raise InputError("%s: %s" % (_name(path), exc.strerror or exc)) from None
    return decode_utf8(data, path)


def input_size(paths):
    """Total bytes of the inputs that are regular files, or None if one is not."""
    total = 0
    for path in paths:
        try:
            if path == "-" or not os.path.isfile(path):
                return None
            total += os.path.getsize(path)
        except OSError:
            return None
    return total


# -- outputs -------------------------------------------------------------------------
def add_output_option(parser, what, required=False):
    parser.add_argument("-o", "--output", metavar="FILE", required=required, default=None if required else "-",
                        help="where to write %s: a file (replaced whole when done, never one of the inputs) or - "
                             "for stdout%s" % (what, "" if required else " (the default)"))


@contextlib.contextmanager
def output(path, inputs=()):
    """A text stream writing to `path` ("-": stdout) through pybpe's safe
    writer.  Writing over one of the inputs is refused before anything runs."""
    check_not_input(path, inputs)
    target = sys.stdout.buffer if path in (None, "-") else path
    with atomic_output(target, inputs=[p for p in inputs if p != "-"]) as raw:
        text = io.TextIOWrapper(_Unclosable(raw), encoding="utf-8", newline="",
                                write_through=True, line_buffering=False)
        yield text
        text.flush()


def check_not_input(path, inputs):
    """UsageError when output `path` is the same file as one of `inputs`;
    "-" (or None) is standard output, which the shell may have opened on
    one (`pybpe encode gpt2 -i notes.txt >> notes.txt` read its own output
    for ever), as `cat f >> f` refuses."""
    if path in (None, "-"):
        stdout = _stdout_file()
        for source in inputs if stdout is not None else ():
            try:
                st = os.stat(source) if source != "-" else None
            except OSError:
                continue
            if st is not None and (st.st_dev, st.st_ino) == (stdout.st_dev, stdout.st_ino):
                raise UsageError("standard output is the input %s: writing there would destroy it "
                                 "(send the output elsewhere, or give -o FILE)" % source)
        return
    for source in inputs:
        if source != "-" and os.path.isfile(source) and os.path.exists(path):
            try:
                same = same_file(path, source)
            except OSError:
                continue
            if same:
                raise UsageError("output %s is the input %s: writing it would destroy the input" % (path, source))


def _stdout_file():
    """The stat of standard output when it is a regular file, else None."""
    try:
        st = os.fstat(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # no file behind it (a test's StringIO), or closed
        return None
    return st if stat.S_ISREG(st.st_mode) else None


class _Unclosable(io.RawIOBase):
    """The binary writer pybpe._atomic gives, as a raw stream a TextIOWrapper
    can sit on (closing the wrapper must not close stdout)."""

    def __init__(self, raw):
        self._raw = raw

    def writable(self):
        return True

    def write(self, data):
        self._raw.write(bytes(data))
        if self._raw is sys.stdout.buffer:
            self._raw.flush()  # a pipe downstream sees each line as it is done
        return len(data)


# -- progress ------------------------------------------------------------------------
class Progress:
    """A progress report on stderr.  On a terminal one line is redrawn in
    place ~10 times a second; anywhere else (a log file, a pipe) a plain
    line is written every PLAIN_EVERY seconds, and never "\\r" or a terminal
    code.  `enabled=False` makes every call a no-op."""

    def __init__(self, enabled, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = _isatty(self.stream)
        self.last = None
        self.drawn = False

    def update(self, line, force=False):
        if not self.enabled:
            return
        now = time.monotonic()
        if self.last is None:
            self.last = now  # the first report waits one interval: short jobs stay quiet
            if not force:
                return
        if not force and now - self.last < (TTY_EVERY if self.tty else PLAIN_EVERY):
            return
        self.last = now
        if self.tty:
            self.stream.write("\r%s\x1b[K" % line)
            self.drawn = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self):
        """End the redrawn line (a terminal), so what follows starts afresh."""
        if self.enabled and self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


def megabytes(n):
    return "%.1f MB" % (n / 1e6)
