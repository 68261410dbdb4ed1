/*
 * pretok.h -- the gpt2, cl100k and o200k pre-tokenizer patterns, hand-compiled.
 *
 * Python's `regex` module cuts text at about 5 MB/s, slower than the merging
 * itself; these scanners find exactly the same pieces as the published
 * patterns (pybpe/patterns.py: GPT2, CL100K, O200K) at C speed.  Any other
 * pattern stays on the Python side.  Character classes come from
 * unicode_tables.inc, read off tiktoken's own engine by
 * csrc/gen_unicode_tables.py: tiktoken's Unicode version, not the newest.
 * Text level (bpe.h names the layers): it reads UTF-8 and knows Unicode's
 * character classes.
 */
#ifndef PYBPE_PRETOK_H
#define PYBPE_PRETOK_H

#include <stddef.h>

/* cffi-begin: pybpe/_build.py makes Python's declarations from here */
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
/* cffi-end */

#endif /* PYBPE_PRETOK_H */
