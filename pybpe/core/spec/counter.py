"""Word counting and initial symbols in pure Python: the specification of
csrc/counter.c.  WordCounter counts the words of str.split() (the chapter's
pre-tokenizer), the pieces a preset pre-tokenizer cuts (gpt2, cl100k,
o200k: ranks.split, the `regex` module with tiktoken's classes), or given
word lists; initial_symbols turns words into
their initial symbol IDs for a units mode -- the one such function of the
spec, which the tokenizer's flavours mirror for a single word.
"""

from ...errors import COUNT_OVERFLOW
from .common import MAX_COUNT, NO_SYMBOL, check_count
from .ranks import PRESET_CL100K, PRESET_GPT2, PRESET_O200K, split
from .symtab import SymbolTable
from .trainer import Trainer
from .words import WordTable

__all__ = ["UNITS", "WordCounter"]


# ---------------------------------------------------------------------------
# Word counting and the initial word table: the step before training.
# ---------------------------------------------------------------------------

UNITS = ("bytes", "chars", "suffix", "symbol")


def marker_bytes(units, marker):
    """The marker's UTF-8 for a units name (b"" unless "suffix" / "symbol"), checked."""
    if units not in UNITS:
        raise ValueError("units must be one of %s, not %r" % (", ".join(map(repr, UNITS)), units))
    if units not in ("suffix", "symbol"):
        return b""
    mark = _utf8(marker, "marker")
    if not mark:
        raise ValueError("units %r needs a non-empty marker" % units)
    return mark


def initial_symbols(symtab, words, units, mark):
    """Each word (str) -> its initial symbols' IDs in `symtab` (NO_SYMBOL
    when absent): the one "word to initial symbols" of the spec, shared by
    WordCounter.word_table and encode_text (csrc/counter.c's units).  `mark`
    is the marker's UTF-8 (_marker_bytes).  An empty word has no symbols.

        >>> t = SymbolTable([b"l", b"o", b"w "])
        >>> initial_symbols(t, ["low", "ox"], "suffix", b" ")
        [[0, 1, 2], [1, 4294967295]]
    """
    lookup, ids = symtab.lookup, {}

    def symbol(unit):  # bytes -> ID, NO_SYMBOL when absent; cached per unit
        found = ids.get(unit)
        if found is None:
            found = ids[unit] = lookup(unit)
            if found < 0:
                found = ids[unit] = NO_SYMBOL
        return found

    return [[symbol(unit) for unit in word_units(word, units, mark)] for word in words]


def word_units(word, units, mark):
    """A word (str) -> the bytes of its initial symbols: its UTF-8 bytes
    ("bytes"), or its characters' UTF-8 with the marker `mark` (bytes)
    glued to the last one ("suffix") or after them ("symbol"), or neither
    ("chars").  The one definition of a word's initial symbols: the
    tokenizer's flavours (pybpe/flavours.py) use it too.

        >>> word_units("né", "suffix", b" "), word_units("né", "bytes", b"")
        ([b'n', b'\\xc3\\xa9 '], [b'n', b'\\xc3', b'\\xa9'])
    """
    if units == "bytes":
        data = word.encode("utf-8", "surrogatepass")
        return [data[i:i + 1] for i in range(len(data))]
    row = [c.encode("utf-8", "surrogatepass") for c in word]
    if units == "suffix" and word:
        row[-1] += mark
    elif units == "symbol":
        row.append(mark)
    return row


def _utf8(text, what):
    if not isinstance(text, str):
        raise TypeError("%s must be str, not %s" % (what, type(text).__name__))
    return text.encode("utf-8", "surrogatepass")


def _check_preset(preset):
    if isinstance(preset, bool) or not isinstance(preset, int):
        raise TypeError("preset must be an int (PRESET_GPT2, PRESET_CL100K or PRESET_O200K), not %s"
                        % type(preset).__name__)
    if preset not in (PRESET_GPT2, PRESET_CL100K, PRESET_O200K):
        raise ValueError("unknown pre-tokenizer preset %r" % (preset,))


# add_text and add_pieces add at most one per word, so no count can pass
# 2**64 - 1 in them unless some count is already this big (only add_words can
# get it there): below it, they skip the per-word check.
_BIG_COUNT = 2**63


class WordCounter:
    """Distinct words with counts, in first-appearance order.

    >>> c = WordCounter(); c.add_text("to be or\u3000not to"); c.add_words(["be", ""], [2, 0])
    >>> c.items(), c.characters()
    ([('to', 2), ('be', 3), ('or', 1), ('not', 1), ('', 0)], ['b', 'e', 'n', 'o', 'r', 't'])
    """

    def __init__(self):
        self._counts = {}
        self._big = False  # has any count reached _BIG_COUNT (see add_text)?

    def add_text(self, text):
        """Count the words of text.split(); `text` may also be bytes holding
        UTF-8 (surrogates allowed; UnicodeDecodeError when not UTF-8)."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", "surrogatepass")
        if not isinstance(text, str):
            raise TypeError("text must be str, not %s" % type(text).__name__)
        counts = self._counts
        get = counts.get
        if self._big:  # some count is near 2**64: check each addition, as C does
            for word in text.split():
                total = get(word, 0) + 1
                if total > MAX_COUNT:
                    raise OverflowError("WordCounter.add_text: %s" % COUNT_OVERFLOW)
                counts[word] = total
            return
        for word in text.split():
            counts[word] = get(word, 0) + 1

    def add_utf8(self, buffer, end):
        """add_text(bytes(buffer[:end])): `buffer` is any buffer of bytes
        (a bytearray a file is read into) holding UTF-8 up to `end`."""
        data = memoryview(buffer).cast("B")
        if not isinstance(end, int):
            raise TypeError("end must be an int, not %s" % type(end).__name__)
        if not 0 <= end <= len(data):
            raise ValueError("end must be in 0..%d, got %d" % (len(data), end))
        self.add_text(bytes(data[:end]))

    def add_words(self, words, frequencies=None):
        """Count each of `words` (a list of str) once, or frequencies[i] times."""
        words = words if isinstance(words, list) else list(words)
        for k, w in enumerate(words):
            if not isinstance(w, str):
                raise TypeError("words[%d] must be str, not %s" % (k, type(w).__name__))
        if frequencies is None:
            frequencies = [1] * len(words)
        else:
            frequencies = list(frequencies)
            if len(frequencies) != len(words):
                raise ValueError("add_words: %d words but %d frequencies" % (len(words), len(frequencies)))
            for k, f in enumerate(frequencies):
                check_count(f, "word %d frequency" % k, 0)
        counts = self._counts
        get = counts.get
        for word, f in zip(words, frequencies):
            total = get(word, 0) + f
            if total > MAX_COUNT:
                raise OverflowError("WordCounter.add_words: %s" % COUNT_OVERFLOW)
            counts[word] = total
            if total >= _BIG_COUNT:
                self._big = True

    def add_pieces(self, texts, preset):
        """Count the pieces the pre-tokenizer `preset` (PRESET_GPT2, PRESET_CL100K
        or PRESET_O200K) cuts from each of `texts` (a list of str), each text cut
        alone: a piece never spans two texts.

            >>> c = WordCounter(); c.add_pieces(["to be\\n", "to\\n"], PRESET_GPT2); c.items()
            [('to', 2), (' be', 1), ('\\n', 2)]
        """
        _check_preset(preset)
        texts = texts if isinstance(texts, list) else list(texts)
        for k, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError("texts[%d] must be str, not %s" % (k, type(t).__name__))
        counts = self._counts
        get = counts.get
        for text in texts:
            if self._big:  # as in add_text: check each addition only near 2**64
                for piece in split(text, preset):
                    total = get(piece, 0) + 1
                    if total > MAX_COUNT:
                        raise OverflowError("WordCounter.add_pieces: %s" % COUNT_OVERFLOW)
                    counts[piece] = total
                continue
            for piece in split(text, preset):
                counts[piece] = get(piece, 0) + 1

    def __len__(self):
        return len(self._counts)

    def items(self):
        """[(word, count)] in first-appearance order."""
        return list(self._counts.items())

    def characters(self):
        """The distinct characters of all words, sorted (str of length 1)."""
        return sorted(set("".join(self._counts)))

    def trainer(self, symtab, units, marker=None, *, min_frequency=1, max_token_units=0):
        """Trainer(symtab, self.word_table(symtab, units, marker), ...): the C
        twin does it in one step, with no word table between."""
        if not isinstance(symtab, SymbolTable):
            raise TypeError("trainer needs a spec.SymbolTable, not %s" % type(symtab).__name__)
        return Trainer(symtab, self.word_table(symtab, units, marker), min_frequency=min_frequency,
                       max_token_units=max_token_units)

    def word_table(self, symtab, units, marker=None):
        """A WordTable of every word's initial symbols (IDs in symtab, NO_SYMBOL
        when absent) with its count; units is "bytes", "chars", "suffix" or "symbol".

        >>> t = SymbolTable([b"l", b"o", b"w "]); c = WordCounter(); c.add_text("low")
        >>> c.word_table(t, "suffix", " ").symbols(0)
        [0, 1, 2]
        """
        if not isinstance(symtab, SymbolTable):
            raise TypeError("word_table needs a spec.SymbolTable, not %s" % type(symtab).__name__)
        mark = marker_bytes(units, marker)
        rows = initial_symbols(symtab, self._counts, units, mark)
        table = WordTable()
        table.add_many(rows, list(self._counts.values()))
        return table
