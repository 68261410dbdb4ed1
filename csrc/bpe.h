/*
 * bpe.h -- the public contract of pybpe's book-level C core.
 *
 * The core owns the hot loops of byte-pair encoding and nothing else: a symbol
 * table (ID <-> byte string), the word table (distinct words as arrays of
 * symbol IDs, each with a frequency), the chapter's literal helpers
 * (count_pairs / find_best_pair / merge_pair, Chapter 11 listings 063-064), an
 * incremental trainer, and ranked application of a merge list
 * (apply_merges, listing 065).  It knows nothing about Python, text, Unicode
 * or file formats: symbols are opaque byte strings, and the caller decides
 * what the initial symbols of a word are (characters, bytes, a word with an
 * end-of-word marker...).  Its files (symtab.c, words.c, trainer.c,
 * merge.c, merger.c, pairmap.c, util.c, wordpiece.c) include this header,
 * internal.h and merge.h, nothing else.
 *
 * The C around it comes in two more layers, each with its own header:
 *   - text level, text.h: C that reads UTF-8 text -- counter.c (str.split()
 *     word counting, initial symbols, the initial word table), encode_text.c
 *     (one-call text encoding for BPETokenizer), pretok.c (the gpt2 / cl100k
 *     / o200k scanners, with Unicode tables), ranks.c (tiktoken's
 *     rank-table merging, with ranks_build.c and ranks_merge.c) and piece_cache.c (ranks.c's piece cache, which
 *     lives across calls).  Its private helpers (UTF-8, the str.split()
 *     scanner) are in text_internal.h, the cache's in piece_cache.h.  It is
 *     built on this header.
 *   - Python level: py/idlists.h, the only C that knows a CPython format
 *     (marshal streams for making lists of ints quickly).
 *
 * Conventions, for every function below:
 *   - Functions that can fail return an int status: BPE_OK (0) or a negative
 *     BPE_E* code.  They never print, exit or abort on bad input.
 *   - Every *_new has a NULL-safe *_free.  Ownership is stated per function.
 *   - There is no global mutable state.  Read-only objects (a built
 *     bpe_merger, a bpe_symtab nobody is writing to) may be shared between
 *     threads; anything that is written needs one owner at a time.
 *   - Symbol IDs are uint32_t and dense: a symbol table of n entries holds
 *     IDs 0..n-1 in the order they were first interned.
 */
#ifndef PYBPE_BPE_H
#define PYBPE_BPE_H

#include <stddef.h>
#include <stdint.h>

/* cffi-begin: pybpe/_build.py makes Python's declarations from here */
enum {
    BPE_OK = 0,
    BPE_ENOMEM = -1,   /* an allocation failed; the object is unchanged */
    BPE_EINVAL = -2,   /* an argument is out of range (unknown ID, ...)  */
    BPE_ETOOBIG = -3,  /* a size does not fit the core's 32-bit indices   */
    BPE_EOVERFLOW = -4 /* a count (a sum of uint64 frequencies) would pass
                        * 2^64 - 1; counts never wrap around           */
};

/* A symbol ID that never names a symbol: callers use it for "unknown"
 * characters, which take part in no merge. */
#define BPE_NO_SYMBOL UINT32_MAX

/* ---------------------------------------------------------------------
 * Symbol table: interns byte strings, so identical strings share one ID.
 * ------------------------------------------------------------------- */
typedef struct bpe_symtab bpe_symtab;

bpe_symtab *bpe_symtab_new(void);
void bpe_symtab_free(bpe_symtab *table);

/* Returns the ID of `bytes[0..len)`, adding it with the next free ID when
 * absent (*id_out = size before the call).  The table copies the bytes.
 * len may be 0 only for the empty string, which is a legal symbol. */
int bpe_symtab_intern(bpe_symtab *table, const char *bytes, size_t len,
                      uint32_t *id_out);

/* The ID of `bytes[0..len)`, or BPE_NO_SYMBOL when it was never interned. */
uint32_t bpe_symtab_lookup(const bpe_symtab *table, const char *bytes,
                           size_t len);

size_t bpe_symtab_size(const bpe_symtab *table);

/* The bytes of symbol `id` (owned by the table, valid until it is freed:
 * interning more symbols never moves them), length in *len_out; NULL when
 * id is out of range. */
const char *bpe_symtab_bytes(const bpe_symtab *table, uint32_t id,
                             size_t *len_out);

/* Every symbol's bytes back to back in ID order, in one call: returns their
 * total length, and when bytes_out is not NULL copies them there (room for
 * that total) and each symbol's length into lengths_out (room for
 * bpe_symtab_size entries).  0 for a NULL table. */
size_t bpe_symtab_export(const bpe_symtab *table, char *bytes_out,
                         size_t *lengths_out);

/* ---------------------------------------------------------------------
 * Word table: the distinct words of a corpus, in order of first appearance,
 * each an array of symbol IDs with a frequency.  This is the chapter's data
 * structure; the literal helpers below rescan it, the trainer indexes it.
 * ------------------------------------------------------------------- */
typedef struct bpe_words bpe_words;

bpe_words *bpe_words_new(void);
void bpe_words_free(bpe_words *words);

/* Appends a word (the symbols are copied).  n may be 0. */
int bpe_words_add(bpe_words *words, const uint32_t *symbols, size_t n,
                  uint64_t frequency);
/* Appends n_words words at once: word i is
 * symbols[offsets[i] .. offsets[i+1]) with frequencies[i]. */
int bpe_words_add_many(bpe_words *words, const uint32_t *symbols,
                       const size_t *offsets, const uint64_t *frequencies,
                       size_t n_words);
size_t bpe_words_count(const bpe_words *words);
/* Current segmentation of word i (owned by the table; valid until the next
 * call that modifies it) and its length; NULL when i is out of range. */
const uint32_t *bpe_words_symbols(const bpe_words *words, size_t i,
                                  size_t *n_out);
uint64_t bpe_words_frequency(const bpe_words *words, size_t i);

/* One adjacent pair of symbols and how often it occurs, weighted by word
 * frequency. */
typedef struct {
    uint32_t left, right;
    uint64_t count;
} bpe_pair_count;

/* count_pairs (listing 063): every adjacent pair in the table with its
 * weighted count, in first-encountered order -- words in table order, each
 * left to right -- exactly the order of a Counter built by that scan.
 * Pairs with BPE_NO_SYMBOL on either side are not counted.
 * Example: "a b a b" x1, "b a" x2 -> [(a,b): 2, (b,a): 3].
 * On success *pairs_out is a new array the caller frees with bpe_free, and
 * *n_out its length (0 and NULL for a table with no pair).  BPE_EOVERFLOW
 * when a pair's count would pass 2^64 - 1. */
int bpe_count_pairs(const bpe_words *words, bpe_pair_count **pairs_out,
                    size_t *n_out);

/* find_best_pair (listing 063): the pair with the highest count; among
 * equal counts, the first encountered (what Counter.most_common(1) returns).
 * Returns 1 and fills *best when there is a pair, 0 when there is none, or a
 * negative status. */
int bpe_find_best_pair(const bpe_words *words, bpe_pair_count *best);

/* merge_pair (listing 064): rewrites every word, left to right, replacing
 * each occurrence of (left, right) with `merged`; after a match both
 * positions are skipped, so "a a a" with (a, a) becomes "aa a".  A pair
 * with BPE_NO_SYMBOL never merges (nothing changes).
 * *words_changed_out (may be NULL) receives how many words changed. */
int bpe_merge_pair(bpe_words *words, uint32_t left, uint32_t right,
                   uint32_t merged, size_t *words_changed_out);

/* Frees memory the core handed to the caller (bpe_count_pairs's array). */
void bpe_free(void *p);

/* ---------------------------------------------------------------------
 * Incremental trainer.  Learns the same merges, in the same order, as
 * repeating find_best_pair + merge_pair on the word table, but after a
 * merge it touches only the occurrences of the merged pair and updates pair
 * counts by difference (see trainer.c for the data structure and the
 * tie-break argument).
 * ------------------------------------------------------------------- */
typedef struct bpe_trainer bpe_trainer;

typedef struct {
    uint32_t left, right;  /* the pair merged                             */
    uint32_t merged;       /* ID of left+right (existing or newly added)  */
    uint64_t count;        /* its weighted count when it was chosen       */
} bpe_merge;

/* Builds a trainer over a copy of `words` (the table may be freed or
 * changed afterwards).  The symbol table is borrowed: it must outlive the
 * trainer, and the trainer adds merged strings to it.  Every symbol in
 * `words` must be an ID of `symtab` or BPE_NO_SYMBOL (which never pairs:
 * the word is cut there); otherwise, or when min_frequency is 0,
 * BPE_EINVAL.  BPE_ETOOBIG when the words hold 2^32 - 1 symbols or more;
 * BPE_EOVERFLOW when a pair's weighted count would pass 2^64 - 1.
 *   min_frequency     stop when the best count is below it (>= 1)
 *   max_token_units   never create a symbol made of more than this many
 *                     initial symbols (0 = no limit); every symbol already
 *                     in the table before training counts as 1 unit
 * Returns NULL and sets *status on failure. */
bpe_trainer *bpe_trainer_new(bpe_symtab *symtab, const bpe_words *words,
                             uint64_t min_frequency, uint32_t max_token_units,
                             int *status);
void bpe_trainer_free(bpe_trainer *trainer);

/* Performs up to `max_steps` merges, stopping early when the symbol table
 * reaches `target_size` entries (checked before each merge), when no pair
 * is left, or when the best count is below min_frequency.  The merges done
 * are written to out[0..*n_out).  Returns BPE_OK (with *n_out < max_steps
 * meaning training is finished) or a negative status: BPE_EOVERFLOW when a
 * merge would make some pair's count pass 2^64 - 1 (merges can add the
 * counts of two pairs that build the same string).  After a failure
 * (BPE_ENOMEM, ...) the merges completed before it are still in out, but
 * the trainer is marked failed -- a step that stopped half-way leaves it
 * inconsistent -- and every later call returns the same status.  Long calls are fine without the GIL:
 * the trainer touches nothing but its own memory and the borrowed table. */
int bpe_trainer_run(bpe_trainer *trainer, size_t target_size,
                    size_t max_steps, bpe_merge *out, size_t *n_out);

/* ---------------------------------------------------------------------
 * Ranked application (listing 065): the pair -> rank table of a merge list
 * and the encoder built on it.
 * ------------------------------------------------------------------- */
typedef struct bpe_merger bpe_merger;

/* Builds the table for merges[0..n): merge r joins (lefts[r], rights[r])
 * into results[r].  The list may be anything: a pair may appear twice, two
 * pairs may produce the same result.  The arrays are copied.
 * Returns NULL and sets *status on failure. */
bpe_merger *bpe_merger_new(const uint32_t *lefts, const uint32_t *rights,
                           const uint32_t *results, size_t n, int *status);
void bpe_merger_free(bpe_merger *merger);

/* apply_merges: rewrites symbols[0..*n) in place into what applying merge
 * 0 to the whole word, then merge 1, ... (each left to right, skip-two)
 * produces, and sets *n to the new length.  BPE_NO_SYMBOL never merges.
 * Thread-safe on a shared merger. */
int bpe_apply_merges(const bpe_merger *merger, uint32_t *symbols, size_t *n);

/* Encodes many words in one call: word i is
 * symbols[offsets[i] .. offsets[i+1]) (offsets has n_words + 1 entries).
 * The result is written the same way: out_symbols must have room for
 * offsets[n_words] entries (a word never grows), out_offsets for
 * n_words + 1.  Thread-safe on a shared merger; meant to run without the
 * GIL. */
int bpe_encode_words(const bpe_merger *merger, const uint32_t *symbols,
                     const size_t *offsets, size_t n_words,
                     uint32_t *out_symbols, size_t *out_offsets);

/* ---------------------------------------------------------------------
 * The WordPiece trainer (the C book's section 11.8; wordpiece.c).
 *
 * WordPiece learns merges bottom-up over the same word table, but each
 * step takes the pair with the highest likelihood score
 *     count(ab) / (count(a) * count(b))
 * (pair and symbol counts over the current segmentation, weighted by word
 * frequency) instead of the highest count(ab); ties go to the pair met
 * first, as above.  Scores are compared exactly, by cross-multiplying the
 * counts in 192-bit integers, never as floating point, so the C, its Python
 * twin (pybpe/core/spec/wordpiece.py) and the literal reference
 * (pybpe.reference.learn_wordpiece) agree bit for bit.  Encoding with a
 * WordPiece vocabulary is greedy longest match, which needs no merge list.
 * ------------------------------------------------------------------- */
typedef struct bpe_wp_trainer bpe_wp_trainer;

typedef struct {
    uint32_t left, right;  /* the pair merged                            */
    uint32_t merged;       /* ID of the merged token (existing or new)   */
    uint64_t count;        /* count(left right) when it was chosen       */
    uint64_t left_count;   /* count(left) then: the score is             */
    uint64_t right_count;  /* count / (left_count * right_count)         */
} bpe_wp_merge;

/* Builds a trainer over a copy of `words`.  The symbol table is borrowed
 * (it must outlive the trainer, which adds merged tokens to it).  The token
 * a merge of (a, b) makes is a's bytes followed by b's without its leading
 * `prefix` (prefix "##": "l" + "##o" -> "lo", "##o" + "##w" -> "##ow");
 * b keeps all its bytes when it does not start with prefix.  The prefix is
 * copied; prefix_len may be 0.  Every symbol of `words` must be an ID of
 * `symtab` or BPE_NO_SYMBOL (which never pairs: the word is cut there),
 * and min_frequency >= 1 (pairs counted fewer times are never chosen);
 * otherwise BPE_EINVAL.  BPE_ETOOBIG when the words hold 2^32 - 1 symbols
 * or more; BPE_EOVERFLOW when the frequencies of all symbols add up past
 * 2^64 - 1 (no count can pass that total, so none ever overflows).
 * Returns NULL and sets *status on failure. */
bpe_wp_trainer *bpe_wp_trainer_new(bpe_symtab *symtab, const bpe_words *words,
                                   uint64_t min_frequency, const char *prefix,
                                   size_t prefix_len, int *status);
void bpe_wp_trainer_free(bpe_wp_trainer *trainer);

/* Performs up to `max_steps` merges, stopping early when the symbol table
 * reaches `target_size` entries (checked before each merge) or when no pair
 * with count >= min_frequency is left.  The merges are written to
 * out[0..*n_out).  BPE_OK (*n_out < max_steps meaning training is over), or
 * a negative status after which the trainer is marked failed and every
 * later call returns it (the merges before the failure are in out).  Runs
 * without the GIL: it touches only its own memory and the borrowed table. */
int bpe_wp_trainer_run(bpe_wp_trainer *trainer, size_t target_size,
                       size_t max_steps, bpe_wp_merge *out, size_t *n_out);
/* cffi-end */

#endif /* PYBPE_BPE_H */
