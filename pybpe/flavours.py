"""Flavours of BPE: how text becomes words, and words become initial symbols.

The C core and the pure-Python core see only symbol IDs; everything that
depends on the flavour lives here (SPEC §1, "Flavours"):

    flavour          words            initial symbols    end of word
    chapter          str.split()      characters         marker glued to the last one
    symbol marker    split or regex   characters         marker as its own symbol
    leading space    a regex          characters         none (space leads the word)
    byte level       a regex or none  UTF-8 bytes        none

A Flavour turns text into words (`split`), a word into its initial symbol
strings (`units`), a set of observed characters into the base vocabulary
(`base_vocab`) and a list of token strings back into text (`join`).  Tokens
are `str` for the character flavours and `bytes` at byte level.
"""
import regex

from . import _unicode
from .core.spec.counter import word_units
from .patterns import PRESETS

WHITESPACE = "whitespace"
END_OF_WORD = ("suffix", "symbol", None)
UNK = "<UNK>"
DEFAULT = object()  # "the flavour's default" for pretokenizer / end_of_word / marker
_NON_SPACE = regex.compile(r"\S+")


class Flavour:
    """The word-level choices of a BPETokenizer, validated once.

    >>> f = Flavour()                      # the chapter's flavour
    >>> f.split("low  lower"), f.units("low")
    (['low', 'lower'], ['l', 'o', 'w '])
    """

    def __init__(self, *, pretokenizer=DEFAULT, end_of_word=DEFAULT, marker=DEFAULT,
                 byte_level=False, lowercase=False):
        if not isinstance(byte_level, bool):
            raise TypeError("byte_level must be True or False, not %r" % (byte_level,))
        if not isinstance(lowercase, bool):
            raise TypeError("lowercase must be True or False, not %r" % (lowercase,))
        self.byte_level = byte_level
        self.lowercase = lowercase
        if pretokenizer is DEFAULT:
            pretokenizer = "gpt2" if byte_level else WHITESPACE
        if end_of_word is DEFAULT:
            end_of_word = None if byte_level else "suffix"
        if end_of_word not in END_OF_WORD:
            raise ValueError("end_of_word must be 'suffix', 'symbol' or None, not %r" % (end_of_word,))
        if byte_level and end_of_word is not None:
            raise ValueError("byte-level BPE has no end-of-word marker: leave end_of_word=None")
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
        if not isinstance(pretokenizer, str):
            raise TypeError("pretokenizer must be 'whitespace', None, a preset name or a regex str, "
                            "not %r" % (pretokenizer,))
        pattern = PRESETS.get(pretokenizer, pretokenizer)
        try:
            return regex.compile(pattern)
        except regex.error as exc:
            raise ValueError("pretokenizer %r is not a valid regular expression: %s" % (pretokenizer, exc))

    def config(self):
        """The options that recreate this flavour (saved in model files)."""
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

    # -- symbols <-> bytes for the core --------------------------------------------
    def to_bytes(self, token):
        return token if self.byte_level else token.encode("utf-8", "surrogatepass")

    def from_bytes(self, data):
        return data if self.byte_level else data.decode("utf-8", "surrogatepass")
