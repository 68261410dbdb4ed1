"""The pure-Python backend: the readable specification of pybpe's core.

One module per C file of csrc/, with the same names, arguments and results
as the C backend (pybpe.core.native; docs/backends.md), so one test suite
runs on both:

    symtab.py       csrc/symtab.c       SymbolTable (listings 061-062)
    words.py        csrc/words.c        WordTable, count_pairs, find_best_pair,
                                        merge_pair (listings 063-064, literal)
    trainer.py      csrc/trainer.c      Trainer: listing 064, incremental
    wordpiece.py    csrc/wordpiece.c    WordPieceTrainer: section 11.8, incremental
    merger.py       csrc/merger.c       Merger: listing 065, by applicable rank
    counter.py      csrc/counter.c      WordCounter, initial symbols of words
    encode_text.py  csrc/encode_text.c  a whole text -> IDs in one call
    ranks.py        csrc/ranks*.c       RankTable (tiktoken's rule), split
                                        (csrc/pretok.c's presets)
    merge.py        csrc/merge.h, .c    byte_pair_merge: lowest priority first (both rules)
    common.py       (bpe.h, internal.h) NO_SYMBOL, COMPILED, argument checks

This package holds every name of the interface, as pybpe.core.native does.
"""
from .common import COMPILED, NO_SYMBOL
from .counter import UNITS, WordCounter
from .merger import Merger
from .ranks import (HEAP_THRESHOLD, PIECE_CACHE_DEFAULT_BYTES, PIECE_CACHE_MIN_BYTES, PRESET_CL100K, PRESET_GPT2,
                    PRESET_O200K, RankTable, split)
from .symtab import SymbolTable
from .trainer import Trainer
from .wordpiece import WordPieceTrainer
from .words import WordTable, count_pairs, find_best_pair, merge_pair

__all__ = [
    "COMPILED", "NO_SYMBOL", "SymbolTable", "WordTable", "count_pairs", "find_best_pair", "merge_pair",
    "Trainer", "WordPieceTrainer", "Merger", "WordCounter", "UNITS",
    "HEAP_THRESHOLD", "PRESET_GPT2", "PRESET_CL100K", "PRESET_O200K", "split", "RankTable",
    "PIECE_CACHE_DEFAULT_BYTES", "PIECE_CACHE_MIN_BYTES",
]
