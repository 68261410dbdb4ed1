/*
 * text.h -- the public contract of the text-level C: the C that reads text.
 *
 * bpe.h's core sees only symbol IDs; this layer is where UTF-8 text turns
 * into them, for BPETokenizer (bpe.h names all the layers):
 *   - counter.c: streaming word counting for training (str.split() words,
 *     or the pieces of pretok.h's scanners), and the initial word table.
 *     The step before listing 064's loop: turn a corpus into its distinct
 *     words, each counted once, in order of first appearance (the
 *     order the first-encountered tie-break depends on), then turn every
 *     distinct word into its initial symbols.
 *   - encode_text.c: the one-call encoder, text -> IDs through the same
 *     words and initial symbols and bpe.h's merger.
 * Text arrives as UTF-8, in batches, as Python's str.encode("utf-8",
 * "surrogatepass") writes it, so lone surrogates are ordinary characters.
 * Words are cut exactly where Python's str.split() cuts (its 29 whitespace
 * characters) or where the gpt2 / cl100k / o200k patterns cut (pretok.h);
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
#include "pretok.h"  /* the BPE_PRETOK_* presets of bpe_counter_add_pieces */

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
 * _O200K, pretok.h) cuts from each of n_texts texts: text i is the next
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
/* cffi-end */

#endif /* PYBPE_TEXT_H */
