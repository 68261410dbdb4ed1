/*
 * text.h -- the public contract of the text-level C: the C that reads text.
 *
 * bpe.h's core sees only symbol IDs; this layer is where UTF-8 text turns
 * into them (bpe.h names all the layers).  For BPETokenizer:
 *   - counter.c: streaming word counting for training (str.split() words,
 *     or the pieces of pretok.c's scanners), and the initial word table.
 *     The step before listing 064's loop: turn a corpus into its distinct
 *     words, each counted once, in order of first appearance (the order
 *     the first-encountered tie-break depends on), then turn every
 *     distinct word into its initial symbols.
 *   - encode_text.c: the one-call encoder, text -> IDs through the same
 *     words and initial symbols and bpe.h's merger.
 * For Encoding (the tiktoken side), and for counter.c's pieces:
 *   - pretok.c: the gpt2 / cl100k / o200k pre-tokenizers, with Unicode's
 *     character classes (unicode_tables.inc).
 *   - ranks.c: rank tables and tiktoken's merge rule, on pieces of text;
 *     the table is built by ranks_build.c, pieces no cache knows are
 *     merged by ranks_merge.c (ranks_internal.h: what the three share).
 *   - piece_cache.c: what ranks.c learns about pieces, kept across calls.
 * Text arrives as UTF-8, in batches, as Python's str.encode("utf-8",
 * "surrogatepass") writes it, so lone surrogates are ordinary characters.
 * Words are cut exactly where Python's str.split() cuts (its 29 whitespace
 * characters) or where the gpt2 / cl100k / o200k patterns cut (pretok.c);
 * other pre-tokenizers are run by the caller, which hands over the words it
 * found.  Nothing here knows about other regular expressions, case or
 * special tokens.  Conventions (status codes, NULL-safe frees, no global
 * state) are bpe.h's.
 */
#ifndef PYBPE_TEXT_H
#define PYBPE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "bpe.h"

/* cffi-begin: pybpe/_build.py makes Python's declarations from here */
/* ---------------------------------------------------------------------
 * Word counting and the initial word table (counter.c).
 * ------------------------------------------------------------------- */

/* How a word becomes its initial symbols (bpe_counter_word_table,
 * bpe_encode_text). */
#define BPE_UNITS_BYTES 0   /* each UTF-8 byte (byte level)                  */
#define BPE_UNITS_CHARS 1   /* each character (leading-space flavour)        */
#define BPE_UNITS_SUFFIX 2  /* characters, marker glued onto the last one    */
#define BPE_UNITS_SYMBOL 3  /* characters, then the marker as its own symbol */

/* The distinct words seen so far, each with a 64-bit count, in order of
 * first appearance.  Word i keeps index i for the counter's lifetime. */
typedef struct bpe_counter bpe_counter;

/* A new, empty counter, or NULL when out of memory. */
bpe_counter *bpe_counter_new(void);
/* NULL-safe. */
void bpe_counter_free(bpe_counter *counter);

/* Counts the words of text[0..len) as str.split() finds them: maximal runs
 * of non-whitespace characters.  Example: "to be  or\u3000not to" adds
 * to:2, be:1, or:1, not:1 (new words in that order).  text must be
 * (surrogate-tolerant) UTF-8; otherwise BPE_EINVAL and nothing is counted.
 * Batches may be cut anywhere whitespace is: counting "a b" then "b c" is
 * counting "a b\nb c".  BPE_ENOMEM, BPE_ETOOBIG (2^32 - 1 distinct words)
 * and BPE_EOVERFLOW (a count past 2^64 - 1) leave the words before the
 * failure counted and the counter consistent. */
int bpe_counter_add_text(bpe_counter *counter, const char *text, size_t len);

/* Counts the pieces the pre-tokenizer `preset` (BPE_PRETOK_GPT2, _CL100K or
 * _O200K, below) cuts from each of n_texts texts: text i is the next
 * lengths[i] *characters* of text[0..len), which must hold exactly
 * sum(lengths) characters of UTF-8 (else BPE_EINVAL, nothing counted).
 * Each text is cut alone, as if it were all there is, so a piece never
 * spans two texts: the caller decides where texts end (lines of a file,
 * the places where special tokens were cut out).  Example (gpt2): texts
 * "to be\n" and "to\n" add "to":2, " be":1, "\n":2.  An unknown preset
 * is BPE_EINVAL; other failures as for bpe_counter_add_text.  Surrogates
 * are characters of class "other", as for the `regex` module. */
int bpe_counter_add_pieces(bpe_counter *counter, int preset, const char *text,
                           size_t len, const size_t *lengths, size_t n_texts);

/* Counts n_words given words: word i is the next lengths[i] *characters*
 * (code points) of text, which must hold exactly sum(lengths) characters of
 * UTF-8 (else BPE_EINVAL, nothing counted).  A word may be empty or contain
 * whitespace.  frequencies[i] is added to word i's count (NULL: 1 each); a
 * word added with frequency 0 is still recorded, in its place.  Example:
 * text "abab", lengths {2, 1, 1}, frequencies {5, 0, 1} adds ab:5, a:0,
 * b:1.  Failures as for bpe_counter_add_text. */
int bpe_counter_add_words(bpe_counter *counter, const char *text, size_t len,
                          const size_t *lengths, size_t n_words,
                          const uint64_t *frequencies);

/* Number of distinct words (0 for NULL). */
size_t bpe_counter_size(const bpe_counter *counter);
/* Total bytes of all distinct words together (0 for NULL). */
size_t bpe_counter_bytes(const bpe_counter *counter);

/* Copies every distinct word out, in order: their UTF-8 bytes concatenated
 * into bytes_out (room for bpe_counter_bytes), each word's length in
 * characters into lengths_out and its count into counts_out (room for
 * bpe_counter_size each).  Any output may be NULL to skip it.  BPE_OK or
 * BPE_EINVAL (counter NULL). */
int bpe_counter_export(const bpe_counter *counter, char *bytes_out,
                       size_t *lengths_out, uint64_t *counts_out);

/* The distinct characters of all words, as sorted code points: a new array
 * in *chars_out (the caller frees it with bpe_free; NULL when there are
 * none) of *n_out entries.  Example: words "ba", "ab" -> {'a', 'b'}.
 * BPE_OK, BPE_EINVAL or BPE_ENOMEM. */
int bpe_counter_characters(const bpe_counter *counter, uint32_t **chars_out,
                           size_t *n_out);

/* Appends every distinct word, in order, to `words` as its initial symbols
 * (the `units` mode above) with its count.  A symbol is the ID of its bytes
 * in `symtab` (only read), BPE_NO_SYMBOL when absent.  marker[0..marker_len)
 * is the end-of-word marker of BPE_UNITS_SUFFIX / BPE_UNITS_SYMBOL (ignored
 * otherwise).  Example, SUFFIX with marker " ": "low" -> IDs of "l", "o",
 * "w "; SYMBOL with "</w>": "low" -> "l", "o", "w", "</w>".  An empty word
 * has no symbols (SYMBOL: just the marker).  BPE_OK; BPE_EINVAL for a bad
 * argument; BPE_ENOMEM / BPE_ETOOBIG with `words` unchanged. */
int bpe_counter_word_table(const bpe_counter *counter,
                           const bpe_symtab *symtab, int units,
                           const char *marker, size_t marker_len,
                           bpe_words *words);

/* bpe_trainer_new(symtab, the word table bpe_counter_word_table would
 * build, min_frequency, max_token_units, status), in one step: each word's
 * initial symbols go straight into the trainer, with no word table between
 * (on Shakespeare ~7 MB less fresh memory and a pass less).  Same merges,
 * same failures (NULL and *status). */
bpe_trainer *bpe_counter_trainer(const bpe_counter *counter, bpe_symtab *symtab,
                                 int units, const char *marker,
                                 size_t marker_len, uint64_t min_frequency,
                                 uint32_t max_token_units, int *status);

/* ---------------------------------------------------------------------
 * One-call text encoding (encode_text.c).
 * ------------------------------------------------------------------- */

/* Encodes text[0..len) (surrogate-tolerant UTF-8, else BPE_EINVAL) in one
 * pass: cuts it into words -- exactly where str.split() does when `split`
 * is nonzero, else the whole (non-empty) text is one word -- turns each word
 * into its initial symbols as bpe_counter_word_table does (`units`,
 * `marker`; a symbol absent from `symtab` is BPE_NO_SYMBOL), applies the
 * merger's merges to it (bpe_apply_merges), replaces every BPE_NO_SYMBOL
 * left by `unk`, and writes the IDs of all words, in order, to
 * out[0..*n_out).  Repeated words are encoded once per call (a per-call
 * cache of word bytes -> their first IDs in out).  out_cap must cover the
 * result: the text's bytes (BPE_UNITS_BYTES) or characters (other modes),
 * plus one per word for BPE_UNITS_SYMBOL; when it does not, BPE_EINVAL
 * (nothing is ever written past out_cap).  The merger and the symbol table
 * are only read: thread-safe on shared ones, meant to run without the GIL.
 * Returns BPE_OK, BPE_EINVAL, BPE_ENOMEM or BPE_ETOOBIG (*n_out = 0 on
 * failure). */
int bpe_encode_text(const bpe_merger *merger, const bpe_symtab *symtab,
                    int units, const char *marker, size_t marker_len,
                    uint32_t unk, int split, const char *text, size_t len,
                    uint32_t *out, size_t out_cap, size_t *n_out);

/* ---------------------------------------------------------------------
 * Pre-tokenizers (pretok.c): the gpt2, cl100k and o200k patterns,
 * hand-compiled.
 *
 * Python's `regex` module cuts text at about 5 MB/s, slower than the merging
 * itself; these scanners find exactly the same pieces as the published
 * patterns (pybpe/patterns.py: GPT2, CL100K, O200K) at C speed.  Any other
 * pattern stays on the Python side.  Character classes come from
 * unicode_tables.inc, read off tiktoken's own engine by
 * csrc/gen_unicode_tables.py: tiktoken's Unicode version, not the newest.
 * ------------------------------------------------------------------- */

#define BPE_PRETOK_GPT2 1   /* patterns.GPT2 (= GPT2_POSSESSIVE) */
#define BPE_PRETOK_CL100K 2 /* patterns.CL100K */
#define BPE_PRETOK_O200K 3  /* patterns.O200K */

/* The end of the piece that starts at text[pos] (pos < len), in bytes: what
 * the pattern's leftmost match at pos ends at.  All three patterns match every
 * non-empty text at every position, so pieces tile the text.  text must be
 * valid UTF-8 (a stray byte counts as one "other" character).
 * Example (gpt2): "Hello world" at 0 -> 5, at 5 -> 11.
 * Returns 0 for an unknown pattern or pos >= len. */
size_t bpe_pretok_next(int pattern, const unsigned char *text, size_t len,
                       size_t pos);

/* Cuts all of text[0..len) into pieces: writes the end offset of each piece
 * to ends (room for len entries) and returns their number; 0 for an empty
 * text or an unknown pattern.  Example (gpt2): "Hi there" -> {2, 8}. */
size_t bpe_pretok_split(int pattern, const unsigned char *text, size_t len,
                        size_t *ends);

/* Writes the character class (PT_* of unicode_tables.inc: 0 other, 1 space,
 * 2 number, 3 upper, 4 lower, 5 caseless letter, 6 mark) of the n code
 * points first, first + 1, ... to out; code points past U+10FFFF are other.
 * For tests that compare the tables with tiktoken. */
void bpe_pretok_classes(unsigned long first, size_t n, unsigned char *out);

/* ---------------------------------------------------------------------
 * Rank tables (ranks.c): tiktoken-style byte-pair merging.
 *
 * The hot path of pybpe.Encoding: a table of tokens (byte string -> ID), a
 * pair table (two tokens -> the priority and result of merging them), and an
 * encoder that merges the bytes of many pre-tokenized pieces in one call.
 * It knows nothing of regexes, Unicode categories or special tokens: the
 * pieces come cut, by the caller (piece lengths) or by the pre-tokenizers
 * above (bpe_ranks_encode_text, bpe_ranks_encode_batch).
 * ------------------------------------------------------------------- */

/* Flags for bpe_ranks_new. */
#define BPE_RANKS_MERGE_LIST 1  /* priorities come from an explicit merge list */
#define BPE_RANKS_WHOLE_PIECE 2 /* look a whole piece up before merging */

/* Pieces of at least this many bytes are merged with a heap over a linked
 * list (O(n log n)); shorter ones by rescanning the parts (O(n^2), small
 * constants, no heap set-up).  The merge engine's one threshold
 * (BPE__MERGE_HEAP_THRESHOLD, merge.h, measured in merge.c; ranks.c checks
 * at compile time that they agree), published for the Python side, whose
 * core/spec/merge.py HEAP_THRESHOLD must stay equal (tests check). */
#define BPE_RANKS_HEAP_THRESHOLD 100

typedef struct bpe_ranks bpe_ranks;

/* Builds a rank table.
 *   Tokens: token k (k < n_tokens) is bytes[offsets[k] .. offsets[k+1]) and
 *   encodes to ids[k].  Tokens must be distinct and non-empty.
 *   Without BPE_RANKS_MERGE_LIST (tiktoken's rule): two adjacent parts may
 *   merge when their concatenation is a token; its priority is its ID (its
 *   rank).  lefts/rights/n_merges are ignored (may be NULL / 0).
 *   With BPE_RANKS_MERGE_LIST: merge r joins token lefts[r] and token
 *   rights[r] (token *indices* k, not IDs) into results[r], priority r.  A
 *   pair listed twice keeps its first (lowest) priority.
 * Example: tokens "a","b","ab" with IDs 0,1,2 and no flag: "abab" -> 2 2.
 * The arrays are copied.  Returns NULL and sets *status (BPE_ENOMEM,
 * BPE_EINVAL for an index out of range or an empty token, BPE_ETOOBIG) on
 * failure. */
bpe_ranks *bpe_ranks_new(const unsigned char *bytes, const size_t *offsets,
                         const uint32_t *ids, size_t n_tokens,
                         const uint32_t *lefts, const uint32_t *rights,
                         const uint32_t *results, size_t n_merges, int flags,
                         int *status);
void bpe_ranks_free(bpe_ranks *ranks);

/* Number of entries in the pair table (for tests and curiosity). */
size_t bpe_ranks_pair_count(const bpe_ranks *ranks);

/* Encodes text[0..text_len) cut into n_pieces consecutive pieces:
 * piece i has lens[i] bytes, or lens[i] UTF-8 characters when lens_in_chars
 * is nonzero (the text must then be valid UTF-8).  The lengths must cover
 * the text exactly.  Writes the IDs to out (room for text_len entries: a
 * token is never shorter than a byte) and their number to *n_out.
 * Example: lens {2, 2} over "abab" -> 2 2.
 * Returns BPE_OK, BPE_EINVAL (lengths do not match the text, or a byte that
 * is not a token is left unmerged), BPE_ETOOBIG, or BPE_ENOMEM.  The table
 * is only read: many threads may encode with one table at once (this is
 * meant to run without the GIL). */
int bpe_ranks_encode(const bpe_ranks *ranks, const unsigned char *text,
                     size_t text_len, const uint32_t *lens, size_t n_pieces,
                     int lens_in_chars, uint32_t *out, size_t *n_out);

/* The whole path in one call: cuts text[0..text_len) (valid UTF-8) with the
 * C pre-tokenizer `pattern` (BPE_PRETOK_GPT2, _CL100K or _O200K, see
 * above) and encodes every piece, as bpe_ranks_encode would.
 * Example (gpt2 ranks): "hello world" -> 31373 995.
 * Returns BPE_EINVAL for an unknown pattern; otherwise as bpe_ranks_encode. */
int bpe_ranks_encode_text(const bpe_ranks *ranks, int pattern,
                          const unsigned char *text, size_t text_len,
                          uint32_t *out, size_t *n_out);

/* Many texts in one call (meant for batches, run without the GIL): the
 * texts lie end to end in text[0..text_len), text i ending at text_ends[i]
 * (non-decreasing, the last equal to text_len).  Each is cut with `pattern`
 * and encoded on its own, exactly as bpe_ranks_encode_text would encode it
 * alone: no piece crosses from one text into the next.  Writes the IDs of
 * all texts, in order, to out (room for text_len entries) and the end of
 * text i's IDs in out to out_ends[i].
 * Example (gpt2 ranks): "hello" "world", text_ends {5, 10} -> out 31373
 * 6894, out_ends {1, 2}.
 * Returns as bpe_ranks_encode_text; BPE_EINVAL also for bad text_ends. */
int bpe_ranks_encode_batch(const bpe_ranks *ranks, int pattern,
                           const unsigned char *text, size_t text_len,
                           const size_t *text_ends, size_t n_texts,
                           uint32_t *out, size_t *out_ends);

/* ---------------------------------------------------------------------
 * The piece cache (piece_cache.c): piece bytes -> IDs, across calls.
 *
 * The encoders above keep what they learn about pieces for the length of
 * one call.  A bpe_piece_cache keeps it from call to call, within a fixed
 * size, so many short texts (chat messages, one call each) encode as fast
 * as one long one.  It is written by every call that uses it: one user at
 * a time (a thread may keep one of its own; several threads must not share
 * one).  It answers for the table it is first used with: passing it with
 * another table is BPE_EINVAL, and it must not be used once that table is
 * freed (freeing it never reads the table).  The table is still only read.
 * ------------------------------------------------------------------- */
typedef struct bpe_piece_cache bpe_piece_cache;

/* What pybpe.Encoding gives each thread unless told otherwise, and the
 * smallest cache there is. */
#define BPE_PIECE_CACHE_DEFAULT_BYTES 1048576
#define BPE_PIECE_CACHE_MIN_BYTES 4096

/* A new, empty cache of at most max_bytes in all (bpe_piece_cache_bytes
 * says how much it took), or NULL with *status BPE_EINVAL when max_bytes
 * is below BPE_PIECE_CACHE_MIN_BYTES, BPE_ENOMEM when out of memory. */
bpe_piece_cache *bpe_piece_cache_new(size_t max_bytes, int *status);
/* NULL-safe. */
void bpe_piece_cache_free(bpe_piece_cache *cache);
/* The bytes the cache holds (0 for NULL); fixed from its creation. */
size_t bpe_piece_cache_bytes(const bpe_piece_cache *cache);

/* Counters (since the cache was made), for tests and measurements: */
#define BPE_PIECE_CACHE_TOKEN_LOOKUPS 0 /* pieces the cache did not know, found in the token table */
#define BPE_PIECE_CACHE_MERGES 1        /* pieces the cache did not know, merged */
#define BPE_PIECE_CACHE_UNIT_MERGES 2   /* units of such pieces merged (ranks_merge.c's rk_encode_unit) */
#define BPE_PIECE_CACHE_NSTATS 3
uint64_t bpe_piece_cache_stat(const bpe_piece_cache *cache, int which);

/* bpe_ranks_encode_batch with `cache` (not NULL) remembering pieces across
 * calls: the same arguments, results and errors, and the same IDs as
 * without a cache. */
int bpe_ranks_encode_cached(const bpe_ranks *ranks, bpe_piece_cache *cache, int pattern,
                            const unsigned char *text, size_t text_len,
                            const size_t *text_ends, size_t n_texts,
                            uint32_t *out, size_t *out_ends);
/* ---------------------------------------------------------------------
 * One batch shared by several threads (ranks.c, bpe_ranks_encode_shared).
 *
 * Each thread makes ONE call with the whole batch and its own piece cache;
 * the texts are shared out as the threads go: a thread takes the next run
 * of texts (about BPE_BATCH_RUN_BYTES) from a shared cursor, so a faster
 * thread takes more and all finish within about one run of each other.
 * Text i's IDs go to out[text start .. out_ends[i]) (its own region: a text
 * never has more IDs than bytes), so threads never write the same place.
 * Where the compiler has no atomics (or with BPE_BATCH_STATIC), worker w of
 * n takes the runs w, w + n, w + 2n, ... instead: the same IDs, a fixed
 * share.  The share is the caller's (no global state); it must outlive
 * every call that uses it.
 * ------------------------------------------------------------------- */
#define BPE_BATCH_STATIC 1          /* bpe_batch_share_init: the fixed shares even with atomics */
#define BPE_BATCH_MORE 1            /* bpe_ranks_encode_shared stopped at its budget */
#define BPE_BATCH_RUN_BYTES 16384   /* about the bytes of a run (at least one text) */

typedef struct {
    size_t next;      /* with atomics: the first text no worker has taken */
    size_t run;       /* texts per run */
    size_t n_texts;
    size_t n_workers;
    int dynamic;      /* 1: runs from `next`; 0: the fixed shares */
    int failed;       /* a worker failed: the others stop taking runs */
} bpe_batch_share;

/* Sets *share up for n_texts texts of text_len bytes in all, encoded by
 * n_workers workers (>= 1), and marks every out_ends[i] not ready.  Flags:
 * 0 or BPE_BATCH_STATIC.  BPE_OK or BPE_EINVAL. */
int bpe_batch_share_init(bpe_batch_share *share, size_t text_len, size_t n_texts,
                         size_t n_workers, int flags, size_t *out_ends);

/* Worker `worker` (< n_workers) of a shared batch: the texts and out as for
 * bpe_ranks_encode_cached, `cache` its own (one per worker).  *position is
 * the worker's own progress (0 before its first call).  Encodes runs until
 * none is left (BPE_OK), or, when budget > 0, until it has encoded at least
 * budget bytes in this call (BPE_BATCH_MORE: runs may be left; call again).
 * Writes out_ends[i] (the end of text i's IDs, which start at out[start of
 * text i]) as each text is done; bpe_batch_ready tells which are.  An error
 * status stops the other workers at their next run. */
int bpe_ranks_encode_shared(const bpe_ranks *ranks, bpe_piece_cache *cache, int pattern,
                            const unsigned char *text, size_t text_len,
                            const size_t *text_ends, size_t n_texts,
                            bpe_batch_share *share, size_t worker, size_t *position,
                            size_t budget, uint32_t *out, size_t *out_ends);

/* The first text at or after `first` not yet done (n_texts if all are), as
 * seen by the calling thread: what it may read of out and out_ends.  Without
 * atomics: `first` (read only after every worker has returned). */
size_t bpe_batch_ready(const bpe_batch_share *share, const size_t *out_ends, size_t first);

/* Once every worker has returned: moves each text's IDs down so that all
 * of them lie end to end from out[0], text after text, and sets
 * offsets[i] (n_texts + 1 entries) to where text i's IDs now start and
 * offsets[n_texts] to their number.  text_starts[i]: where text i starts
 * (n_texts entries, ascending), out_ends as the workers left it.  For a
 * batch's arrays without a list per text (Encoding.encode_batch_to_numpy).
 * BPE_OK, or BPE_EINVAL (nothing moved) for a NULL pointer, or an end
 * before its text's start or after the next text's start. */
int bpe_batch_compact(uint32_t *out, const size_t *text_starts, const size_t *out_ends,
                      size_t n_texts, int64_t *offsets);
/* cffi-end */

#endif /* PYBPE_TEXT_H */
