"""The C backend: csrc/ compiled into pybpe._bpe_c, wrapped with cffi.

    core.py     csrc/bpe.h and text.h: SymbolTable, WordTable, the literal
                helpers, Trainer, Merger, WordCounter
    ranks.py    csrc/text.h (ranks, pretok) and py/idlists.h: RankTable, split
    wordpiece.py  csrc/wordpiece.c (in bpe.h): WordPieceTrainer

Same names, arguments and results as pybpe.core.spec (tests/test_twins.py);
importing this package needs the compiled extension.
"""
from .core import (COMPILED, NO_SYMBOL, UNITS, Merger, SymbolTable, Trainer, WordCounter, WordTable,
                   count_pairs, find_best_pair, merge_pair)
from .wordpiece import WordPieceTrainer
from .ranks import (HEAP_THRESHOLD, PIECE_CACHE_DEFAULT_BYTES, PIECE_CACHE_MIN_BYTES, PRESET_CL100K, PRESET_GPT2,
                    PRESET_O200K, RankTable, split)

__all__ = [
    "COMPILED", "NO_SYMBOL", "SymbolTable", "WordTable", "count_pairs", "find_best_pair", "merge_pair",
    "Trainer", "WordPieceTrainer", "Merger", "WordCounter", "UNITS",
    "HEAP_THRESHOLD", "PRESET_GPT2", "PRESET_CL100K", "PRESET_O200K", "split", "RankTable",
    "PIECE_CACHE_DEFAULT_BYTES", "PIECE_CACHE_MIN_BYTES",
]
