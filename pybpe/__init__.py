"""pybpe: byte-pair encoding with portable C99 hot loops and a pure-Python twin.

    >>> import pybpe
    >>> tok = pybpe.BPETokenizer(vocab_size=25)          # the chapter's flavour
    >>> tok.train(["low", "low", "lower", "newest", "widest"])
    >>> tok.encode("lowest")
    [21, 23, 24]

The tiktoken-compatible side (`pybpe.get_encoding("o200k_base")`,
`pybpe.encoding_for_model("gpt-4o")`, `pybpe.Encoding`) is loaded on first
use, so importing pybpe stays cheap.
"""
import importlib

from . import core
from .errors import FormatError, InvalidTokenError, NoTokenError, PatternTimeout, UnicodeVersionWarning
from .tokenizer import BPETokenizer, CharTokenizer, Tokenizer, load

__version__ = "0.1.0"

# name -> module that defines it, imported on first access (PEP 562).
_LAZY = {
    "Encoding": "encoding",
    "get_encoding": "registry",
    "list_encoding_names": "registry",
    "register_encoding": "registry",
    "encoding_for_model": "model",
    "encoding_name_for_model": "model",
    "load_tiktoken_bpe": "formats",
    "dump_tiktoken_bpe": "formats",
    "load_gpt2_bpe": "formats",
    "dump_gpt2_bpe": "formats",
    "load_hf_tokenizer": "formats",
    "dump_hf_tokenizer": "formats",
    "WordPieceTokenizer": "wordpiece",
    "patterns": None,
    "registry": None,
    "model": None,
    "reference": None,
    "wordpiece": None,
}


def backend():
    """The backend pybpe uses by default here: "c" or "python"."""
    return core.resolve(None)


def count_words(corpus, **flavour_options):
    """{word: frequency} of an iterable of str, in first-appearance order.

    Takes the BPETokenizer options that decide what a word is (pretokenizer,
    lowercase, special_tokens, byte_level...).  Counts made on parts of a corpus
    can be merged in partition order (see merge_counts) and given to
    BPETokenizer.train_from_counts.
    """
    return BPETokenizer(**flavour_options).count_words(corpus)


def merge_counts(*partial_counts):
    """Merge word counts made on consecutive parts of a corpus, keeping first-
    appearance order (pass them in partition order)."""
    total = {}
    for counts in partial_counts:
        for word, freq in counts.items():
            total[word] = total.get(word, 0) + freq
    return total


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError("module 'pybpe' has no attribute %r" % name)
    if _LAZY[name] is None:
        return importlib.import_module("pybpe." + name)
    return getattr(importlib.import_module("pybpe." + _LAZY[name]), name)


__all__ = ["BPETokenizer", "CharTokenizer", "Tokenizer", "FormatError", "InvalidTokenError", "NoTokenError",
           "PatternTimeout",
           "UnicodeVersionWarning",
           "load", "backend", "count_words", "merge_counts"] + [n for n in _LAZY if _LAZY[n]]
