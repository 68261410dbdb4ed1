"""Encoding a whole text in one call, in pure Python: the specification of
csrc/encode_text.c (bpe_encode_text).  Words as str.split() cuts them (or
the whole text as one), each turned into its initial symbols
(counter.initial_symbols), merged by a Merger, unknown symbols replaced.
Merger.encode_text is this function with the merger itself.
"""

from .common import NO_SYMBOL, check_ids
from .counter import initial_symbols, marker_bytes
from .symtab import SymbolTable

__all__ = []  # reached as Merger.encode_text


def encode_text(merger, symtab, units, marker, unk, text, *, split=True):
    """Text -> IDs: words as text.split() cuts them (split=False: the whole
    text is one word, none when empty), each turned into its initial symbols
    in `symtab` (NO_SYMBOL when absent), merged (merger.encode_words), with
    NO_SYMBOL replaced by `unk`; all words' IDs concatenated.  Repeated
    words are encoded once.
    """
    if not isinstance(symtab, SymbolTable):
        raise TypeError("encode_text needs a spec.SymbolTable, not %s" % type(symtab).__name__)
    mark = marker_bytes(units, marker)
    unk = check_ids((unk,), "unk")[0]
    if not isinstance(text, str):
        raise TypeError("text must be str, not %s" % type(text).__name__)
    words = text.split() if split else ([text] if text else [])
    distinct = list(dict.fromkeys(words))
    rows = initial_symbols(symtab, distinct, units, mark)
    encoded = {word: [unk if s == NO_SYMBOL else s for s in row]
               for word, row in zip(distinct, merger.encode_words(rows))}
    out = []
    for word in words:
        out += encoded[word]
    return out
