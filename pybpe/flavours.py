"""Flavours of BPE: how text becomes words, and words become initial symbols.

The C core and the pure-Python core see only symbol IDs; everything that
depends on the flavour lives here (the README's "Flavours" table):

    flavour          words            initial symbols    end of word
    chapter          str.split()      characters         marker glued to the last one
    symbol marker    split or regex   characters         marker as its own symbol
    leading space    a regex          characters         none (space leads the word)
    byte level       a regex or none  UTF-8 bytes        none

A Flavour turns text into words (`split`), a word into its initial symbol
strings (`units`), a set of observed characters into the base vocabulary
(`base_vocab`) and a list of token strings back into text (`join`).  Tokens
are `str` for the character flavours and `bytes` at byte level.

What a word is comes from one of two options, never guessed from one string:
`pretokenizer` takes a name ("whitespace", None for the whole text, or a
preset of pybpe.patterns.PRESETS) and `regex` takes a pattern of one's own.
A name-like string that is no known name ("gpt3", "GPT2", "gpt-2") is an
error listing the known ones, never a pattern that matches nothing.  (A
`pretokenizer` string with regex syntax in it is still taken as a pattern:
code and model files from before `regex=` existed keep working.)
"""
import codecs

import regex as _regex

from . import _unicode
from .core.spec.counter import word_units
from .patterns import PRESETS

WHITESPACE = "whitespace"
END_OF_WORD = ("suffix", "symbol", None)
UNK = "<UNK>"


class _Default:
    """The sentinel meaning "the flavour's default" for pretokenizer /
    end_of_word / marker (it shows as such in help())."""

    def __repr__(self):
        return "<flavour's default>"

    def __reduce__(self):  # one sentinel, also through pickle and copy
        return "DEFAULT"


DEFAULT = _Default()
_NON_SPACE = _regex.compile(r"\S+")
_SPACE = _regex.compile(r"\s")  # what _NON_SPACE does not match, one character
# A string made of letters, digits, "_", "-", "." and spaces is meant as a
# name; one with regex syntax in it (a backslash, ? | [ ( + * ...) as a pattern.
_NAME_LIKE = _regex.compile(r"[\w.\- ]*")


def known_pretokenizers():
    """Every value `pretokenizer=` accepts: "whitespace", None (the whole
    text is one word) and the preset names.

        >>> known_pretokenizers()[:4]
        ['whitespace', None, 'cl100k', 'cl100k_base']
    """
    return [WHITESPACE, None] + sorted(PRESETS)


def is_pretokenizer_name(value):
    """True for a value of known_pretokenizers()."""
    return value is None or value == WHITESPACE or (isinstance(value, str) and value in PRESETS)


class Flavour:
    """The word-level choices of a BPETokenizer, validated once.

    >>> f = Flavour()                      # the chapter's flavour
    >>> f.split("low  lower"), f.units("low")
    (['low', 'lower'], ['l', 'o', 'w '])
    """

    def __init__(self, *, pretokenizer=DEFAULT, regex=None, end_of_word=DEFAULT, marker=DEFAULT,
                 byte_level=False, lowercase=False, legacy=False):
        # legacy=True: a model file or a pickle of an earlier tokenizer, whose
        # options are taken as they were then (byte level with "whitespace").
        if not isinstance(byte_level, bool):
            raise TypeError("byte_level must be True or False, not %r" % (byte_level,))
        if not isinstance(lowercase, bool):
            raise TypeError("lowercase must be True or False, not %r" % (lowercase,))
        self.byte_level = byte_level
        self.lowercase = lowercase
        if regex is not None:
            if pretokenizer is not DEFAULT:
                raise ValueError("give either pretokenizer=%r or regex=%r, not both" % (pretokenizer, regex))
            if not isinstance(regex, str):
                raise TypeError("regex must be a pattern str, not %s" % type(regex).__name__)
            if is_pretokenizer_name(regex):
                raise ValueError("regex=%r is a pretokenizer name: pass pretokenizer=%r" % (regex, regex))
            pretokenizer = regex
        elif pretokenizer is DEFAULT:
            pretokenizer = "gpt2" if byte_level else WHITESPACE
        else:
            _check_name(pretokenizer)
        if byte_level and pretokenizer == WHITESPACE and regex is None and not legacy:
            raise ValueError(
                "byte_level=True with pretokenizer='whitespace' would drop every space, tab and newline: "
                "byte-level tokens carry their whitespace, and str.split() throws it away before they "
                "are made.  Use a preset that keeps it ('gpt2', 'cl100k', 'o200k'), regex=..., or "
                "pretokenizer=None")
        if end_of_word is DEFAULT:
            end_of_word = None if byte_level else "suffix"
        if end_of_word not in END_OF_WORD:
            raise ValueError("end_of_word must be 'suffix', 'symbol' or None, not %r" % (end_of_word,))
        if byte_level and end_of_word is not None:
            raise ValueError("byte-level BPE has no end-of-word marker: leave end_of_word=None")
        if end_of_word is None and marker not in (DEFAULT, None) and not legacy:
            raise ValueError("marker=%r marks the end of a word, and this flavour has none (%s): "
                             "pass end_of_word='suffix' or 'symbol' with it, or leave marker out"
                             % (marker, "byte-level BPE" if byte_level else "end_of_word=None"))
        if marker is DEFAULT or (marker is None and end_of_word is None):
            marker = "</w>" if end_of_word == "symbol" else " "
        if not isinstance(marker, str) or not marker:
            raise ValueError("marker must be a non-empty str, not %r" % (marker,))
        self.end_of_word = end_of_word
        self.marker = marker if end_of_word else None
        self.pretokenizer = pretokenizer
        self.pattern = self._compile(pretokenizer)

    @staticmethod
    def _compile(pretokenizer):
        if pretokenizer is None or pretokenizer == WHITESPACE:
            return None
        pattern = PRESETS.get(pretokenizer, pretokenizer)
        try:
            return _regex.compile(pattern)
        except _regex.error as exc:
            raise ValueError("pretokenizer pattern %r is not a valid regular expression: %s"
                             % (pretokenizer, exc)) from None

    @property
    def is_custom(self):
        """True when words are cut by a pattern of the user's (regex=)."""
        return not is_pretokenizer_name(self.pretokenizer)

    def config(self):
        """The options that recreate this flavour (saved in model files; a
        pattern of the user's is saved as "pretokenizer", as before regex=
        existed, so older pybpe versions read the file too)."""
        return {"pretokenizer": self.pretokenizer, "end_of_word": self.end_of_word,
                "marker": self.marker, "byte_level": self.byte_level, "lowercase": self.lowercase}

    # -- text -> words -> symbols -------------------------------------------------
    def prepare(self, text):
        """What every text goes through before it is cut into words:
        lowercasing when asked, and at byte level tiktoken's surrogate rule
        (pairs become their character, lone surrogates U+FFFD), as for an
        Encoding.  The character flavours keep surrogates: each is a
        character, and round-trips.

            >>> Flavour(byte_level=True).prepare("a\\ud800b")
            'a\ufffdb'
        """
        if self.lowercase:
            text = text.lower()
        return _unicode.fix_surrogates(text) if self.byte_level else text

    def prepare_all(self, texts):
        """prepare() of each of `texts` (a list), with no call per text where it
        would change nothing: an ASCII text has no surrogates.

            >>> Flavour(byte_level=True, lowercase=True).prepare_all(["A", "B\\udc00"])
            ['a', 'b�']
        """
        if self.lowercase:
            texts = [text.lower() for text in texts]
        if self.byte_level:
            fix = _unicode.fix_surrogates
            texts = [text if text.isascii() else fix(text) for text in texts]
        return texts

    def split(self, text):
        """Text -> words.  Empty words are never produced."""
        text = self.prepare(text)
        pattern = self.pattern
        if pattern is not None:
            # The presets cut words exactly as they cut them for an Encoding
            # (tiktoken's Unicode classes, pybpe/_unicode.py), so a byte-level
            # tokenizer and its to_encoding() agree; other patterns (perhaps
            # time-bounded ones from a model file) use the `regex` module's.
            findall = _unicode.preset_splitter(pattern.pattern) or pattern.findall
            return [w for w in findall(text) if w]
        if self.pretokenizer is None:
            return [text] if text else []
        return text.split()

    def units(self, word):
        """A word -> its initial symbol strings (str, or bytes at byte level).

        >>> Flavour(end_of_word="symbol").units("low")
        ['l', 'o', 'w', '</w>']
        >>> Flavour(byte_level=True, pretokenizer=None).units("né")
        [b'n', b'\\xc3', b'\\xa9']
        """
        units = word_units(word, self.core_units, self.marker_bytes)
        return units if self.byte_level else [self.from_bytes(u) for u in units]

    @property
    def core_units(self):
        """What the core takes as one initial symbol of a word (its `units`
        argument): "bytes", "chars", "suffix" or "symbol"."""
        return "bytes" if self.byte_level else {None: "chars"}.get(self.end_of_word, self.end_of_word)

    @property
    def marker_bytes(self):
        """The end-of-word marker's UTF-8 (b"" without one)."""
        return b"" if self.marker is None else self.marker.encode("utf-8", "surrogatepass")

    def base_vocab(self, characters):
        """The vocabulary before any merge, in ID order.

        >>> Flavour().base_vocab({"b", "a"})
        ['<UNK>', 'a', 'a ', 'b', 'b ']
        """
        if self.byte_level:
            return [bytes([b]) for b in range(256)]
        if self.end_of_word == "suffix":
            tokens = set(characters) | {c + self.marker for c in characters}
        elif self.end_of_word == "symbol":
            tokens = set(characters) | {self.marker}
        else:
            tokens = set(characters)
        tokens.discard(UNK)
        return [UNK] + sorted(tokens)

    # -- tokens -> text -------------------------------------------------------
    def join(self, tokens):
        """Token strings -> text (the inverse of encoding, up to whitespace)."""
        if self.byte_level:
            return b"".join(tokens).decode("utf-8", "replace")
        text = "".join(tokens)
        if self.end_of_word is None:
            return text
        if self.marker != " ":
            text = text.replace(self.marker, " ")
        if self.pretokenizer == WHITESPACE:
            return " ".join(text.split())
        # Whitespace as the pre-tokenizer sees it (\s, Unicode's White_Space):
        # str.split() would also cut at U+001C..U+001F, which a pattern or the
        # whole-text pre-tokenizer keeps inside words.
        return " ".join(_NON_SPACE.findall(text))

    def stream_joiner(self):
        """A joiner that does `join` a token at a time (see StreamDecoder)."""
        if self.byte_level:
            return ByteJoiner()
        if self.end_of_word is None:
            return _PlainJoiner()
        if self.pretokenizer == WHITESPACE:
            return _WordJoiner(self.marker, str.isspace)
        return _WordJoiner(self.marker, lambda c: _SPACE.match(c) is not None)

    # -- symbols <-> bytes for the core --------------------------------------------
    def to_bytes(self, token):
        return token if self.byte_level else token.encode("utf-8", "surrogatepass")

    def from_bytes(self, data):
        return data if self.byte_level else data.decode("utf-8", "surrogatepass")


def _check_name(pretokenizer):
    """TypeError / ValueError for a `pretokenizer=` value that is no known
    name (see the module docstring)."""
    if is_pretokenizer_name(pretokenizer):
        return
    known = ", ".join(map(repr, known_pretokenizers()))
    if not isinstance(pretokenizer, str):
        raise TypeError("pretokenizer must be one of %s (or a pattern given as regex=...), not %r"
                        % (known, pretokenizer))
    if _NAME_LIKE.fullmatch(pretokenizer):
        raise ValueError("unknown pretokenizer %r: the known names are %s; to cut words with a "
                         "pattern of your own, pass it as regex=%r" % (pretokenizer, known, pretokenizer))


# -- streaming decode: join a token at a time ---------------------------------------------
class StreamDecoder:
    """Decode a sequence of IDs one ID at a time, as a model generates it.

    feed(id) returns the text that ID completes (often "", sometimes more
    than the token: text held back before), finish() whatever the end of
    the sequence completes.  The concatenation of every result equals
    decode() of the whole sequence, always: text is handed out only once no
    later ID can change it -- whole UTF-8 characters at byte level, and in
    the flavours with an end-of-word marker a space only once the next word
    starts (decode drops trailing whitespace and squeezes runs of it).
    BPETokenizer.stream_decoder() and Encoding.stream_decoder() make one.

        >>> import pybpe
        >>> enc = pybpe.get_encoding("cl100k_base")
        >>> ids = enc.encode("🦜 parrot")      # the parrot's 4 bytes in 3 tokens
        >>> decoder = enc.stream_decoder()
        >>> [decoder.feed(i) for i in ids], decoder.finish()
        (['', '', '🦜', ' par', 'rot'], '')
    """

    def __init__(self, token_of, joiner):
        self._token_of = token_of  # (ID, its index in the stream) -> token, or raise
        self._joiner = joiner
        self._count = 0

    def feed(self, token_id):
        """The text complete after one more ID (a str, often empty)."""
        token = self._token_of(token_id, self._count)
        self._count += 1
        return self._joiner.push(token)

    def finish(self):
        """The rest of the text at the end of the sequence; the decoder can
        then start a new sequence."""
        self._count = 0
        return self._joiner.finish()


class ByteJoiner:
    """Byte tokens -> text as bytes.decode("utf-8", errors) of them all
    would give it: Python's incremental UTF-8 decoder is that decoder, a
    character handed out as soon as its last byte arrives."""

    def __init__(self, errors="replace"):
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)

    def push(self, token):
        return self._decoder.decode(token)

    def finish(self):
        text = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        return text


def byte_offsets(pieces):
    """(text, offsets) of byte tokens: the text is their UTF-8 (strict) and
    each offset the index of the character the token starts in; a token that
    starts inside a multi-byte character is attributed to that character
    (tiktoken's decode_with_offsets).

        >>> byte_offsets([b"h", b"\\xc3", b"\\xa9!"])
        ('hé!', [0, 1, 1])
    """
    offsets = []
    n_chars = 0
    # Per distinct piece, once: whether it starts inside a character, and
    # how many characters start in it (every byte that is not a
    # continuation byte starts one).  Pieces repeat, so this is a dict
    # lookup per token where the count was a generator per token (50,000
    # cl100k tokens of Shakespeare: 31 -> 8.6 ms).
    known = {}
    for piece in pieces:
        counts = known.get(piece)
        if counts is None:
            counts = known[piece] = (bool(piece) and 0x80 <= piece[0] < 0xC0,
                                     sum(1 for b in piece if not 0x80 <= b < 0xC0))
        offsets.append(n_chars - counts[0] if n_chars else 0)
        n_chars += counts[1]
    return b"".join(pieces).decode("utf-8", errors="strict"), offsets


def text_offsets(joiner, tokens):
    """(text, offsets) of character tokens joined by a flavour's joiner: each
    offset is the index in the decoded text where the token's own text
    starts -- past the space between two words that the token's first
    character brings out; a token that brings out nothing (an end-of-word
    marker alone) is at the place the text had reached."""
    parts, offsets, length = [], [], 0
    for token in tokens:
        pending = joiner.space_pending
        piece = joiner.push(token)
        offsets.append(length + (1 if pending and piece.startswith(" ") else 0))
        parts.append(piece)
        length += len(piece)
    parts.append(joiner.finish())
    return "".join(parts), offsets


class _PlainJoiner:
    # No end-of-word marker: decode is "".join(tokens).
    space_pending = False

    def push(self, token):
        return token

    def finish(self):
        return ""


class _WordJoiner:
    """Tokens -> text as Flavour.join does with an end-of-word marker: the
    marker becomes a space (str.replace, left to right), then the words are
    joined by single spaces, with no space at either end.  A piece that
    could be the start of a marker split across tokens is held back, and so
    is a space until the next word starts."""

    def __init__(self, marker, is_space):
        self._marker = marker
        self._is_space = is_space
        self._held = ""          # the raw text's tail that may start a marker
        self._started = False    # a word has been handed out
        self._space = False      # whitespace since the last word

    @property
    def space_pending(self):
        """True when a space between two words waits for the next word."""
        return self._space

    def push(self, token):
        text, marker = self._held + token, self._marker
        if marker == " ":  # the chapter's flavour: nothing to replace
            self._held = ""
            return self._words(text)
        out, pos, m = [], 0, len(marker)
        while True:
            found = text.find(marker, pos)
            if found < 0:
                break
            out += [text[pos:found], " "]
            pos = found + m
        # the first place from which the rest could still become a marker
        cut = next((q for q in range(max(pos, len(text) - m + 1), len(text))
                    if marker.startswith(text[q:])), len(text))
        out.append(text[pos:cut])
        self._held = text[cut:]
        return self._words("".join(out))

    def _words(self, text):
        out = []
        for c in text:
            if self._is_space(c):
                self._space = self._started
            else:
                if self._space:
                    out.append(" ")
                    self._space = False
                out.append(c)
                self._started = True
        return "".join(out)

    def finish(self):
        text = self._words(self._held)  # no marker left in it: the sequence ended
        self._held, self._started, self._space = "", False, False
        return text
