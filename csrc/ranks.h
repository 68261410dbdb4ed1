/*
 * ranks.h -- tiktoken-style byte-pair merging over a rank table.
 *
 * The hot path of pybpe.Encoding: a table of tokens (byte string -> ID), a
 * pair table (two tokens -> the priority and result of merging them), and an
 * encoder that merges the bytes of many pre-tokenized pieces in one call.
 * It knows nothing of regexes, Unicode categories or special tokens: the
 * caller (pybpe/_cranks.py) cuts the text and hands over piece lengths.
 * Conventions (status codes, NULL-safe frees, no global state) are bpe.h's.
 */
#ifndef PYBPE_RANKS_H
#define PYBPE_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "bpe.h"

/* Flags for bpe_ranks_new. */
#define BPE_RANKS_MERGE_LIST 1  /* priorities come from an explicit merge list */
#define BPE_RANKS_WHOLE_PIECE 2 /* look a whole piece up before merging */

/* Pieces of at least this many bytes are merged with a heap over a linked
 * list (O(n log n)); shorter ones by rescanning the parts (O(n^2), small
 * constants, no heap set-up).  tiktoken switches at 100 for the same reason;
 * _pyranks.HEAP_THRESHOLD must stay equal so both take the same path. */
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
 * pretok.h) and encodes every piece, as bpe_ranks_encode would.
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

#endif /* PYBPE_RANKS_H */
