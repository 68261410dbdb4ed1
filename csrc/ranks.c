/*
 * ranks.c -- byte-pair merging by rank, the way tiktoken does it (text.h).
 * Text level: it encodes pieces of UTF-8 text, cut by pretok.c or by the
 * caller.
 *
 * Mirrors pybpe/core/spec/ranks.py, which is its specification: same
 * tables, same results.  The merging itself is merge.h's engine (the loop,
 * the heap and the threshold between them, shared with merger.c).  What it
 * learns about pieces goes into a piece cache (piece_cache.h): the
 * caller's, which lives across calls (bpe_ranks_encode_cached), or one of
 * the call's own.  Left out on purpose: a cache inside the table (shared
 * mutable state; the table stays read-only, so threads share it without a
 * lock) and any knowledge of Unicode: pieces are cut by pretok.c or arrive
 * cut.
 *
 * Performance notes and dead ends (single thread, shared 2-core machine, so
 * +-30%):
 *   - On Shakespeare the cost was the cutting, not the merging: Python's
 *     `regex` module alone runs at ~5 MB/s.  The hand-compiled scanners of
 *     pretok.c took encode_ordinary from ~3.5 to ~17 MB/s (tiktoken: 5-7).
 *   - A binary heap of 16-byte entries (key + both parts) spent 56% of
 *     "a" * 1,000,000 in sift-down.  Eight-byte entries (validity re-derived
 *     from the pair table instead of stored), four children per node, and
 *     replacing the top in place instead of pop-then-push: 0.53 -> ~0.25 s
 *     (tiktoken: ~0.45 s on the same input here).  That heap and both
 *     merge loops are now the engine of merge.h / merge.c, shared with the
 *     chapter's merger.c; rk_rule is what this file gives it.
 *   - Rejected: a per-table cache of encoded pieces.  It would be mutable
 *     state shared by threads running without the GIL (a lock would cost
 *     more than it saves).  So each call had a small direct-mapped cache
 *     whose entries pointed into the call's own text and output: whole-piece
 *     lookup answers ~90% of Shakespeare's pieces, the cache most of the
 *     rest; encode_text went ~17 -> ~20 MB/s (gpt2, noisy machine).  But a
 *     call starts cold, and a call of 200 bytes sees nearly every piece for
 *     the first time.  Now the cache is an object of the caller's
 *     (piece_cache.h, bpe_ranks_encode_cached), holding the IDs themselves,
 *     one per thread on the Python side: still no shared mutable state, no
 *     lock, and the table stays read-only.  Calls without one get a cache
 *     of their own, sized to the text, as before.  Measured (CPU time, C
 *     alone, o200k, interleaved processes): see piece_cache.c.
 *   - Batches: bpe_ranks_encode_batch takes many texts end to end and
 *     returns one flat ID array, so a batch is one GIL-free call per slice
 *     instead of one call (and one output allocation) per text.
 *   - Building the pair table looked every prefix and suffix of every token
 *     up by hashing it whole: O(L^2) per token (30 KB: 0.93 s, 100 KB:
 *     11.5 s).  The rolling-hash walks of rk_build_split_pairs are linear
 *     in the total token bytes (1 MB: 0.016 s, 2 MB: 0.033 s) and faster
 *     on real vocabularies too (cl100k: 66 -> 42 ms).
 *   - o200k's tables are twice cl100k's (token table 8 MB, pair table
 *     16 MB), and on this machine a miss costs ~80 ns.  Token slots that
 *     hold the token's first 8 bytes, IDs not looked up when they equal the
 *     index, a per-call hot-token cache, the piece cache asked before the
 *     token table, and the byte-pair array took o200k on 2 MB of Shakespeare
 *     from ~38 to ~50 MB/s (C alone, interleaved A/B; cl100k +10-15%).
 *     Dead ends, measured the same way: prefetching the next piece's token
 *     slot while encoding this one (-10%: the hash is computed twice and the
 *     prefetches evict); a per-call cache of pair lookups in front of the
 *     pair table (no change); 65,536-slot piece caches (no better than
 *     16,384).  What is left on prose is merging the pieces that are not
 *     tokens: skipping it (wrong IDs, for timing only) doubles the speed.
 *   - That merging was waiting on the pair table: most pairs a merge asks
 *     about do not exist, and each "no" was a probe of 16 MB.  A bit filter
 *     per table (8 bits per pair, 1 MB for o200k, read-only after building)
 *     answers most of them from the core's cache: o200k on 2 MB of
 *     Shakespeare ~49 -> ~59 MB/s (C alone, interleaved A/B processes).
 *     The same filter over the token table lets a piece seen for the first
 *     time skip its token-table probe: ~+4%.  Dead end: keeping tokens of
 *     more than 8 bytes in the piece cache (-7%: they evict merged pieces);
 *     prefetching both neighbour pairs in the short merge loop (no change: the
 *     two lookups already overlap).
 *   - Then the C scanner alone was ~30% of o200k's time on prose (scanning
 *     2 MB of Shakespeare without encoding: ~240 MB/s against ~70 MB/s for
 *     the whole).  pretok.c's ASCII path for digits, punctuation and spaces
 *     took it to ~265 MB/s.  Pieces are now compared by head and tail words
 *     (rk_key), so whole tokens of 9-16 bytes have a hot cache too.  Both
 *     together: o200k ~70 -> ~74 MB/s (C alone, best of 15, interleaved
 *     processes; the machine was busy, medians spread 30-70 MB/s).
 *     Dead ends, measured the same way: a hot pair table (the ~32,000 pairs
 *     of lowest rank, 8 bytes each, 512 KB, asked before the pair table)
 *     answered 60% of the lookups that find a pair, yet ran ~7% slower --
 *     it crowds the caches the per-call caches live in; huge pages (madvise)
 *     for the 8 and 16 MB tables: no change.
 *   - Then (perf, C alone, o200k prose) pair-table lookups were ~23% and
 *     token-table lookups ~16%, all of it waiting on memory.  Compact pair
 *     slots of 8 bytes (rk_pair_get: the priority is the result when IDs
 *     are indices, so (left, right, result) in 20 bits each), o200k's pair
 *     table 16 -> 8 MB: ~+6%.  rk_lookup_key read offsets[k] (another
 *     miss) before testing whether the token has more than 8 bytes -- the
 *     compiler hoisted the load; returning first: ~+6%, the function 13% ->
 *     9% of the profile.  Piece-cache entries 40 -> 32 bytes: ~+3% (within
 *     noise).  Each step measured as CPU-time medians of 9 calls, 6-7
 *     alternating processes against the build before it (the machine was
 *     loaded: wall time measured the neighbours).  encode_ordinary against
 *     tiktoken, CPU time, alternating in one process, 2 MB each: prose
 *     3.05x -> 3.36x (medians of three runs; runs 3.0-3.3x -> 3.3-3.5x),
 *     Python source 3.6x -> 3.9x, multilingual 3.8x both; gpt2 and cl100k
 *     no slower.  Dead end: the compact pair table at load up to 7/8 (4 MB
 *     for o200k): no gain (longer probes).
 *     What is left (perf): the hot-token cache's load per piece, the
 *     filters' loads (1.5 MB together) and the pair and token slots, each
 *     a miss of the core's 2 MB cache; the per-call caches and the filters
 *     together are ~2.9 MB for o200k.
 *   - Unseen text (issue 13: every 0.5 MB slice new to the encoder): the
 *     pieces the piece cache does not know were ~45% of the C time, and
 *     their merges waited on the pair table: per 5.5 MB of prose o200k
 *     asks it ~420,000 times, ~275,000 find a pair, each a probe of 8 MB.
 *     That table held every split of every token (446,189 for o200k), yet
 *     merging only ever uses the one each token is made by (REACHED PAIRS,
 *     with the proof): 199,742, the table 8 -> 4 MB (cl100k 4 -> 2, gpt2
 *     2 -> 1).  Same IDs (checksums of 11 slices, every encoding).  Misses
 *     of a 2 MB cache (callgrind --cache-sim, one round of 11 slices, the
 *     encode calls only), rk_pair_get: o200k 128k -> 81k, cl100k 72k ->
 *     49k, gpt2 46k -> 35k; the whole call 394k -> 336k, 303k -> 270k,
 *     254k -> 235k.  CPU time, C alone (a harness encoding 11 unseen
 *     slices, medians of 7 alternating processes, load average ~6): o200k
 *     78 -> 81 MB/s, cl100k 99 -> 102, gpt2 107 -> 112.  Building pays a
 *     merge of every token's bytes: bpe_ranks_new o200k ~125 -> ~170 ms,
 *     cl100k ~50 -> ~60, gpt2 ~22 -> ~27.  Dead end: prefetching, before
 *     the short loop, the pairs each first merge would ask about (~+1%,
 *     within noise).
 *   - Long runs of one byte: the heap spent ~150-210 ms on "a" * 1,000,000
 *     or a million spaces (cl100k, o200k).  merge.h's run engine merges a
 *     run pairwise in one step when it is provably the heap's next steps:
 *     ~5 ms for either (CPU time, best of 5, whole encode_ordinary call;
 *     the scanner ~2.4 ms of it).  gpt2 has no token of several spaces, so
 *     a million spaces are a million IDs there: ~17 ms, building the list.
 *     Other long pieces (random letters, long CJK sentences) are merged in
 *     windows whose meeting parts are checked (rk_merge_windows, with the
 *     proof): 1 MB of random letters ~260 -> ~76 ms (cl100k); windows that
 *     end where the bytes are least eager to merge (rk_window_end): ~42 ms;
 *     windows merged by rk_merge_small instead of the rescanning loop: ~26
 *     ms (C alone; what limits it is at rk_merge_windows).
 *   - CJK under o200k: a long piece was cut only between two bytes no
 *     token holds side by side (rk_merge_cut), and under o200k nearly every
 *     pair of CJK bytes is held, so ~0.7% of character boundaries were cuts
 *     and new sentences were merged whole.  Now o200k cuts wherever no token
 *     occurring in the piece spans the place (the span filter, with the
 *     proof at rk_merge_cut): ~65% of the boundaries (a few fewer: the
 *     filter may take a string for a token).  Unseen 0.5 MB slices
 *     of the benchmark's cjk corpus, CPU time, medians of 6 slices, the two
 *     builds in alternating processes, each with gigatoken in the same
 *     process: pybpe list 6.5-7.6 -> 4.0-4.8 ms (against gigatoken's list
 *     0.77-0.84x -> 1.32-1.49x), NumPy 6.0-7.0 -> 3.3-3.9 ms (against its
 *     NumPy 0.53-0.61x -> 0.98-1.10x); o200k multilingual, prose and Python
 *     source the same within noise; o200k load time the same (~210-218 ms).
 *     Dead ends: the span rule for gpt2 and cl100k too (CJK 4.3 -> 4.7-4.9
 *     and 3.7 -> 4.1-4.4 ms: their byte pairs already cut 81% and 40%, and
 *     the walk cost more than the finer cuts saved), so it is chosen per
 *     table (RK_DENSE_PAIRS_DIV); confirming each token the filter reports
 *     in the token table (o200k CJK ~4.5 ms; without, ~4.0: a false report
 *     only loses a cut).
 *   - Per piece (issue 13, unseen 0.5 MB slices): Python source has a
 *     quarter of its pieces of 2-16 bytes that are not short whole tokens
 *     (runs of spaces after a newline, "._", two or three IDs), and each
 *     called rk_encode_piece_rest, which hashed the piece again.  Now
 *     rk_encode_piece asks the whole piece cache about every piece of 2-16
 *     bytes inline, with one key, and a miss hands that key on
 *     (rk_encode_piece_miss); pieces of up to 16 bytes are hashed with a
 *     multiply per word, folded (rk_key_hash), not bpe__mix64's chains; and
 *     the span loop keeps the output position in a register.  Instructions
 *     (callgrind, tools/bench_unseen.c, the encode calls of a warm and four
 *     unseen slices), before -> after: gpt2 Python source 91.1M -> 78.9M,
 *     prose 104.4M -> 94.5M; cl100k 90.4M -> 83.2M, 108.4M -> 99.1M; o200k
 *     86.5M from 93.9M, 105.0M from 114.2M; same IDs (checksums), merges
 *     and token lookups within 1%.  CPU time of 8 unseen slices, each after
 *     8 MB of other memory was touched (L2 evicted, as the interleaved
 *     benchmark does), medians of 5 alternating processes on a loaded
 *     machine: gpt2 source 24.0 -> 21.7 ms, prose 28.6 -> 25.0; cl100k
 *     source 28.8 -> 27.4; o200k source 27.2 -> 24.1, prose 41.5 -> 36.5.
 *     Dead end, measured the same way: a hot pair table of the pairs of the
 *     1,024-8,192 lowest results (16-128 KB, asked before the filter): no
 *     faster C alone or interleaved with the peers in Python, though the
 *     pair table's lines are evicted between calls there.
 *   - One-byte pieces (commas, newlines, lone spaces: a quarter of the
 *     pieces of prose and of Python source) had a branch of their own in
 *     rk_encode_piece, taken at random between the others, and read their
 *     ID from byte_part.  Now they are looked up in the piece cache's
 *     token entries like whole tokens of 2-8 bytes, and put there the
 *     first time: more instructions, one branch fewer to guess.  Same IDs
 *     (checksums).  CPU time of 8 unseen 0.5 MB slices (tools/bench_unseen.c,
 *     the two builds in alternating processes, best / median of 6), before
 *     -> after, ms: gpt2 prose 23.3 / 23.8 -> 21.9 / 22.0, Python source
 *     19.5 / 20.2 -> 18.7 / 19.5; cl100k 24.4 / 25.0 -> 23.0 / 24.1, 21.2 /
 *     21.5 -> 20.7 / 20.9; o200k 26.7 / 27.3 -> 25.4 / 26.1, 22.8 / 22.9 ->
 *     22.3 / 22.5; CJK and multilingual the same.  Dead ends, measured the
 *     same way: the head and tail of rk_key_of made without a branch on the
 *     length (+9-11%: the masks lengthen the chain every probe waits on);
 *     the token entries' four ways compared without a branch (+7%); moving
 *     an entry one way forward when it is hit more than its neighbour
 *     (+5%); rk_merge_small instead of the short loop for pieces the cache
 *     does not know (the same).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "text_internal.h"
#include "merge.h"
#include "piece_cache.h"

/* ranks.h publishes the merge engine's threshold for the Python side. */
typedef char rk_threshold_is_the_engines
    [BPE_RANKS_HEAP_THRESHOLD == BPE__MERGE_HEAP_THRESHOLD ? 1 : -1];

#define RK_NONE UINT32_MAX          /* no part / no priority / dead node */
#define RK_EMPTY_KEY UINT64_MAX     /* an empty slot of the pair table */

/*
 * The table.  A *part* is what merging works on: a token index k
 * (0 <= k < n_tokens) or, for a single byte b that is not itself a token,
 * the pseudo index n_tokens + b.  A pseudo part can still merge (tiktoken
 * merges byte ranges, and "ab" may be a token when "a" is not) but can never
 * be output.
 *
 *   tok_slots   open addressing over token bytes (rk_tok_slot); load <= 1/2,
 *               so a probe always reaches an empty slot.
 *   pairs       open addressing over (left part, right part) -> (priority,
 *               result part); same load bound, RK_EMPTY_KEY marks empty.
 *               Under tiktoken's rule it has one entry per token that
 *               merging makes, for the one split it is made by (REACHED
 *               PAIRS), so a candidate pair costs one probe, not a hash of
 *               concatenated bytes.
 */
/* One slot of the pair table: 16 bytes, so a probe reads one cache line
 * (three separate arrays for key, priority and result cost three misses
 * per hit on cl100k's 8 MB table, and slowed two threads sharing a cache). */
typedef struct {
    uint64_t key;       /* left part << 32 | right part; RK_EMPTY_KEY if free */
    uint32_t prio, result;
} rk_pair;

/*
 * The compact pair slot, 8 bytes: (left << RK_CPART_BITS | right) <<
 * RK_CPART_BITS | result, RK_EMPTY_KEY when free.  Under tiktoken's rule a
 * pair's priority is the ID of its result, and when every ID is its token's
 * index (all of OpenAI's files) the priority *is* the result, so a slot
 * needs no priority of its own.  Used when that holds and every part fits
 * RK_CPART_BITS (checked when the table is built); otherwise rk_pair.  Half
 * the bytes: o200k's pair table 16 -> 8 MB, cl100k's 8 -> 4 MB, so a probe
 * that finds its pair more often finds its cache line (and TLB entry)
 * already there.
 */
#define RK_CPART_BITS 20
#define RK_CPART_MASK ((UINT64_C(1) << RK_CPART_BITS) - 1)

/* One slot of the token table: 16 bytes holding the token's first eight
 * bytes and its length, so a token of up to 8 bytes (most pieces of most
 * text: " the", " world") is recognised from the slot alone.  The first
 * version held only k + 1 and compared through offsets[] and bytes[]: three
 * cache misses per hit on o200k's tables (5 MB together), and 25% of o200k's
 * time on prose. */
typedef struct {
    uint64_t head;   /* the token's first min(len, 8) bytes, zero-padded */
    uint32_t index;  /* token index + 1; 0 marks an empty slot */
    uint32_t len;    /* the token's length, capped at UINT32_MAX */
} rk_tok_slot;

/* The pair of two single bytes, looked up directly (see byte_pairs). */
typedef struct {
    uint32_t prio, result;
} rk_byte_pair;

/* Vocabularies from this many tokens on get the byte_pairs array (512 KB). */
#define RK_BYTE_PAIRS_MIN 4096
/* Bits of the pair filter per pair (its size is rounded up to a power of
 * two).  o200k on prose, interleaved A/B: 4, 8 and 16 bits all the same
 * within noise; 8 keeps false positives near one in eight. */
#define RK_PAIR_FILTER_BITS 8
/* Bits of the token filter per token (rounded up likewise).  It is asked
 * only by pieces the piece cache does not know, a few in a hundred, so its
 * lines are rarely still cached when asked: at 16 bits (512 KB for o200k)
 * its own misses cost about what it saved.  Misses of a 2 MB cache per 11
 * unseen 0.5 MB prose slices (callgrind, encode calls only), 16 -> 8 bits:
 * o200k 336k -> 322k, cl100k 270k -> 255k, gpt2 235k -> 226k (4 bits: 308k,
 * 248k, 227k; 2 bits: 304k, 252k).  CPU time: within noise (o200k +1-2%,
 * gpt2 0; at 4 bits o200k +2-4%, gpt2 -2%). */
#define RK_TOK_FILTER_BITS 8

struct bpe_ranks {
    size_t n_tokens;
    unsigned char *bytes;
    size_t *offsets;          /* n_tokens + 1 entries */
    uint32_t *ids;            /* ID of each token index */
    int ids_are_indices;      /* ids[k] == k for every k (tiktoken files) */
    uint32_t byte_part[256];  /* part of each single byte */
    rk_tok_slot *tok_slots;
    size_t tok_mask;
    rk_pair *pairs;           /* NULL when cpairs is used */
    uint64_t *cpairs;         /* compact slots (RK_CPART_BITS), or NULL */
    size_t pair_mask, n_pairs;
    /* byte_pairs[a << 8 | b]: the pair (part of byte a, part of byte b), a
     * copy of its pair-table entry (prio RK_NONE when there is none).  Every
     * merge starts from single bytes, so a piece's first n - 1 lookups come
     * here: one 512 KB array whose used corner (letters after letters)
     * stays in cache, instead of probes all over the pair table (16 MB for
     * o200k).  NULL for small vocabularies. */
    rk_byte_pair *byte_pairs;
    /* One bit per hash value (rk_tok_filter_bit) of the token table's
     * bytes, RK_TOK_FILTER_BITS per token: a piece whose bit is clear is no
     * token, so a piece that must be merged (first seen in this call) skips
     * the probe of the token table, a cache miss on o200k (8 MB), in ~88%
     * of cases.  256 KB for o200k.  NULL for small vocabularies (same
     * threshold as byte_pairs). */
    uint64_t *tok_filter;
    size_t tok_filter_mask;   /* number of bits - 1 */
    /* The same for the pair table, by bpe__mix64 of the pair's key: most pairs
     * a merge asks about do not exist, and each such question was a probe
     * of the pair table (16 MB for o200k), a cache miss. */
    uint64_t *pair_filter;
    size_t pair_filter_mask;
    int whole_piece;
    /* Every pair's result is the concatenation of its halves' bytes (always
     * under tiktoken's rule; checked for a merge list), so a part's width in
     * a piece is its token's length: what rk_merge_windows needs. */
    int results_concatenate;
    size_t max_token_len;     /* bytes of the longest token */
    /* Bit a << 8 | b set when no token holds byte a followed by byte b, so
     * a piece may be cut between them (rk_merge_cut); 8 KB.  NULL when
     * results do not concatenate (then nothing is cut) or when the span
     * filter is used instead. */
    uint64_t *cut_ok;
    /* The span filter (rk_merge_cut): two bits per cell, cell picked by
     * rk_span_cell of a rolling hash of a string -- bit 0 "some token
     * starts with this string and goes on", bit 1 "maybe a token".  No
     * false negatives, so a walk guided by it finds every token starting at
     * a place; false positives only walk further or ask the token table.
     * NULL when results do not concatenate or cut_ok is used instead. */
    uint64_t *span_filter;
    unsigned span_shift;      /* 64 - log2(cells) */
};

/* ------------------------------------------------------------------ hashing */

/* Eight bytes at p as one number (host byte order). */
static uint64_t rk_load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The first min(n, 8) bytes of p, zero-padded, read as one number in host
 * byte order: a token slot's head.  rk_key_of has the fast way; this one
 * never reads past p[n - 1]. */
static uint64_t rk_head(const unsigned char *p, size_t n)
{
    unsigned char buf[8] = {0};
    if (n >= 8)
        return rk_load64(p);
    memcpy(buf, p, n);
    return rk_load64(buf);
}

/*
 * What the tables and caches compare a piece p[0..n) by: its head (first 8
 * bytes, rk_head) and, past 8 bytes, its tail, the *last* 8 bytes (they
 * overlap the head below 16 bytes, so head, tail and n spell the whole
 * piece up to 16 bytes, 99.9% of English pieces); and its hash.
 *   hash: up to 8 bytes, head and length mixed; up to 16, head and tail
 *   mixed; longer, FNV-1a over the bytes, mixed.
 */
typedef struct {
    uint64_t head, tail, hash;
} rk_key;

BPE__PC_INLINE uint64_t rk_key_hash(const unsigned char *p, size_t n, uint64_t head, uint64_t tail)
{
    uint64_t h;
    size_t i;
    /* Up to 16 bytes (nearly every piece): a multiply per word, the high
     * half folded onto the low one (the token table's slot is low bits,
     * the piece cache's set the high ones).  bpe__mix64 there was a chain
     * of two multiplies, three for 9-16 bytes, ahead of every piece's
     * cache probe. */
    if (n <= 8) {
        h = (head ^ ((uint64_t)n << 56) ^ BPE__FNV_OFFSET) * BPE__GOLDEN64;
        return h ^ h >> 29;
    }
    if (n <= 16) {
        h = head * BPE__GOLDEN64 ^ (tail ^ n) * UINT64_C(0xbf58476d1ce4e5b9);
        return h ^ h >> 29;
    }
    /* Eight bytes a step (the words from 8 on, then the tail, which may
     * overlap the last of them): FNV-1a a byte at a time was one multiply
     * in a chain per byte, ~5% of encoding CJK, whose pieces run 20-99
     * bytes. */
    h = head ^ n;
    for (i = 8; i + 8 < n; i += 8)
        h = (h << 23 | h >> 41) * BPE__GOLDEN64 ^ rk_load64(p + i);
    return bpe__mix64(h * BPE__GOLDEN64 ^ tail);
}

/* The key of p[0..n) (n >= 1), where p + n <= end, the end of the buffer.
 * The head of a piece under 8 bytes is one 8-byte load, masked, when the
 * buffer goes on for 8 bytes (on little-endian machines, where the low
 * bytes of the number are the first ones): building it byte by byte (a
 * loop of varying length, mispredicted at its end) and hashing the bytes
 * again was 7.5% of o200k's profile on prose; this way encoding runs ~8%
 * fewer instructions (cachegrind), though its time moved within noise.
 * Inline: called once per piece. */
BPE__PC_INLINE rk_key rk_key_of(const unsigned char *p, size_t n, const unsigned char *end)
{
    rk_key key;
    if (n >= 8)
        key.head = rk_load64(p);
    else if (bpe__little_endian() && (size_t)(end - p) >= 8)
        key.head = rk_load64(p) & ((UINT64_C(1) << (8 * n)) - 1);
    else
        key.head = rk_head(p, n);
    key.tail = n > 8 ? rk_load64(p + n - 8) : 0;
    key.hash = rk_key_hash(p, n, key.head, key.tail);
    return key;
}

/* The hash of p[0..n) (what rk_key_of computes). */
static uint64_t rk_hash_bytes(const unsigned char *p, size_t n)
{
    return rk_key_of(p, n, p + n).hash;
}

/* The smallest power of two >= 2 * n (at least 2): a table at load <= 1/2.
 * 0 when that does not fit a size_t. */
static size_t rk_capacity(size_t n)
{
    size_t cap = 2;
    while (cap < n || cap - n < n) {
        if (cap > SIZE_MAX / 2)
            return 0;
        cap *= 2;
    }
    return cap;
}

static uint32_t rk_len32(size_t n)
{
    return n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;
}

/* Token index of the bytes p[0..n) whose key is *key, or RK_NONE. */
static uint32_t rk_lookup_key(const bpe_ranks *r, const unsigned char *p, size_t n,
                              const rk_key *key)
{
    size_t i = (size_t)key->hash & r->tok_mask;
    uint32_t len = rk_len32(n);
    for (;;) {
        const rk_tok_slot *slot = &r->tok_slots[i];
        if (slot->index == 0)
            return RK_NONE;
        if (slot->head == key->head && slot->len == len) {
            size_t k = slot->index - 1;
            const unsigned char *t;
            /* Up to 8 bytes the slot says it all.  Return before offsets[]
             * is read: written as one condition, the compiler loaded
             * offsets[k] (a cache miss, 1.6 MB for o200k) ahead of the test,
             * and that load held up the piece: 35% of this function's
             * samples on o200k prose. */
            if (n <= 8)
                return (uint32_t)k;
            t = r->bytes + r->offsets[k];
            /* beyond 8 bytes: the tail, what lies between, the true length */
            if (r->offsets[k + 1] - r->offsets[k] == n && rk_load64(t + n - 8) == key->tail &&
                (n <= 16 || memcmp(t + 8, p + 8, n - 16) == 0))
                return (uint32_t)k;
        }
        i = (i + 1) & r->tok_mask;
    }
}

/* Token index of bytes p[0..n), or RK_NONE. */
static uint32_t rk_lookup(const bpe_ranks *r, const unsigned char *p, size_t n)
{
    rk_key key = rk_key_of(p, n, p + n);
    return rk_lookup_key(r, p, n, &key);
}

/* Slot of key in the pair table, starting from its hash m = bpe__mix64(key). */
static size_t rk_pair_slot_mixed(const bpe_ranks *r, uint64_t key, uint64_t m)
{
    size_t i = (size_t)m & r->pair_mask;
    while (r->pairs[i].key != RK_EMPTY_KEY && r->pairs[i].key != key)
        i = (i + 1) & r->pair_mask;
    return i;
}

static size_t rk_pair_slot(const bpe_ranks *r, uint64_t key)
{
    return rk_pair_slot_mixed(r, key, bpe__mix64(key));
}

/* The pair filter's bit for a pair whose key mixes to m (high bits: the
 * low ones index the table). */
static size_t rk_pair_filter_bit(const bpe_ranks *r, uint64_t m)
{
    return (size_t)(m >> 32) & r->pair_filter_mask;
}

/* Priority of merging parts (left, right), or RK_NONE; *result gets the
 * merged part when there is one.  Unseen prose (11 slices of 0.5 MB, gpt2 /
 * cl100k / o200k): 309k / 322k / 351k questions, 195k / 212k / 240k past
 * the filter, and 94-95% of those find their pair, so what is left of this
 * function's time (~12% of the call's samples, perf) is the slot's line
 * missing the core's caches.  Measured, not built: a bit per part "is
 * some pair's left" / "some pair's right" (a few KB) would answer 5% of
 * the questions; the 4,096 lowest results answer ~50% of the hits (8,192:
 * ~62%), the hot lines the caches keep already (see the hot pair table's
 * dead end above). */
static uint32_t rk_pair_get(const bpe_ranks *r, uint32_t left, uint32_t right,
                            uint32_t *result)
{
    uint64_t key = (uint64_t)left << 32 | right, m = bpe__mix64(key);
    const rk_pair *slot;
    if (r->pair_filter) {
        size_t b = rk_pair_filter_bit(r, m);
        if (!(r->pair_filter[b / 64] >> (b % 64) & 1))
            return RK_NONE; /* certainly no such pair */
    }
    if (r->cpairs) {
        uint64_t want = (uint64_t)left << RK_CPART_BITS | right;
        size_t i = (size_t)m & r->pair_mask;
        for (;;) {
            uint64_t c = r->cpairs[i];
            if (c >> RK_CPART_BITS == want) {
                *result = (uint32_t)(c & RK_CPART_MASK);
                return *result; /* the priority is the result (see cpairs) */
            }
            if (c == RK_EMPTY_KEY)
                return RK_NONE;
            i = (i + 1) & r->pair_mask;
        }
    }
    slot = &r->pairs[rk_pair_slot_mixed(r, key, m)];
    if (slot->key == RK_EMPTY_KEY)
        return RK_NONE;
    *result = slot->result;
    return slot->prio;
}

/* Adds (left, right) -> (prio, result) unless the pair is already there
 * (the first, lowest-priority entry wins). */
static void rk_pair_put(bpe_ranks *r, uint32_t left, uint32_t right,
                        uint32_t prio, uint32_t result)
{
    uint64_t key = (uint64_t)left << 32 | right;
    rk_pair *slot;
    if (r->cpairs) {
        uint64_t want = (uint64_t)left << RK_CPART_BITS | right;
        size_t i = (size_t)bpe__mix64(key) & r->pair_mask;
        while (r->cpairs[i] != RK_EMPTY_KEY) {
            if (r->cpairs[i] >> RK_CPART_BITS == want)
                return;
            i = (i + 1) & r->pair_mask;
        }
        assert(prio == result);
        r->cpairs[i] = want << RK_CPART_BITS | result;
        r->n_pairs++;
        return;
    }
    slot = &r->pairs[rk_pair_slot(r, key)];
    if (slot->key != RK_EMPTY_KEY)
        return;
    slot->key = key;
    slot->prio = prio;
    slot->result = result;
    r->n_pairs++;
}

/* ------------------------------------------------------------ construction */

/* The pair table for n pairs; compact (cpairs) when `compact`. */
static int rk_alloc_pairs(bpe_ranks *r, size_t n, int compact)
{
    size_t cap = rk_capacity(n), i;
    if (cap == 0 || cap > SIZE_MAX / sizeof(rk_pair))
        return BPE_ETOOBIG;
    r->pair_mask = cap - 1;
    if (compact) {
        r->cpairs = malloc(cap * sizeof *r->cpairs);
        if (!r->cpairs)
            return BPE_ENOMEM;
        for (i = 0; i < cap; i++)
            r->cpairs[i] = RK_EMPTY_KEY;
        return BPE_OK;
    }
    r->pairs = malloc(cap * sizeof *r->pairs);
    if (!r->pairs)
        return BPE_ENOMEM;
    for (i = 0; i < cap; i++)
        r->pairs[i].key = RK_EMPTY_KEY;
    return BPE_OK;
}

static uint32_t rk_rule(const void *table, uint32_t left, uint32_t right,
                        uint32_t born_left, uint32_t born_right, uint32_t *result);

/*
 * tiktoken's rule: a token T of L bytes can be made from any split point s
 * in 1..L-1 with part(T[0..s)) and part(T[s..L)) both existing, (left,
 * right) -> T.  These splits are found first; the table then keeps the one
 * merging uses (REACHED PAIRS, below).
 *
 * In time linear in the total bytes of all tokens.  Asking the token index
 * about every prefix and suffix of every token hashes O(L^2) bytes per
 * token (a 100 KB token took 11 s).  Instead each token's prefixes are
 * walked left to right with a rolling hash, and a prefix is recognised
 * without rereading it: when V is the longest part that is a proper prefix
 * of T[0..s) (found earlier in the walk), T[0..s) is token c exactly when c
 * has s bytes, c's own longest proper part-prefix lp[c] is V, and
 * c[|V|..s) == T[|V|..s) -- the compared tails add up to at most L bytes.
 * lp[c] is known for every candidate because tokens are walked shortest
 * first (c is shorter than T).  Suffixes are walked right to left the same
 * way with ls[], the longest proper part-suffix.  The rolling hash is a
 * polynomial one, which extends both ways in O(1) (h(xS) = x*B^|S| + h(S),
 * h(Sx) = h(S)*B + x); a separate temporary index over it, since the main
 * index keeps its cheaper FNV-1a for the encoding hot path.  A single byte
 * is always a part (byte_part), so every walk starts from one.
 */
#define RK_POLY_BASE UINT64_C(0x100000001b3)

/* The temporary index's hash of a string whose polynomial hash is h. */
static uint64_t rk_poly_final(uint64_t h, size_t len)
{
    return bpe__mix64(h + (uint64_t)len * BPE__GOLDEN64);
}

typedef struct {
    uint32_t *slots;    /* token index + 1; 0 is empty; load <= 1/2 */
    size_t mask;
    uint64_t *hash;     /* rk_poly_final of each token */
    uint32_t *lp, *ls;  /* longest proper part-prefix / -suffix (len >= 2) */
    uint32_t *order;    /* token indices, shortest first */
    uint32_t *walk;     /* the right part at each split of the current token */
    size_t walk_cap;
    uint32_t *found;    /* (left, right, token) triples, 3 per pair */
    size_t n_found, found_cap;
} rk_splits;

static void rk_splits_free(rk_splits *w)
{
    free(w->slots);
    free(w->hash);
    free(w->lp);
    free(w->ls);
    free(w->order);
    free(w->walk);
    free(w->found);
}

static size_t rk_len(const bpe_ranks *r, size_t k)
{
    return r->offsets[k + 1] - r->offsets[k];
}

/* Token indices sorted by length, shortest first: an LSD radix sort on
 * bytes of the length (stable), so linear in the number of tokens times the
 * length's digits.  tmp has room for n entries. */
static void rk_sort_by_length(const bpe_ranks *r, uint32_t *order, uint32_t *tmp)
{
    size_t n = r->n_tokens, count[256], i, max = 0;
    uint32_t *src = order, *dst = tmp, *swap;
    unsigned shift;
    for (i = 0; i < n; i++) {
        order[i] = (uint32_t)i;
        max = rk_len(r, i) > max ? rk_len(r, i) : max;
    }
    for (shift = 0; shift < 8 * sizeof(size_t) && (max >> shift) != 0; shift += 8) {
        size_t sum = 0;
        memset(count, 0, sizeof count);
        for (i = 0; i < n; i++)
            count[(rk_len(r, src[i]) >> shift) & 255]++;
        for (i = 0; i < 256; i++) {
            size_t c = count[i];
            count[i] = sum;
            sum += c;
        }
        for (i = 0; i < n; i++)
            dst[count[(rk_len(r, src[i]) >> shift) & 255]++] = src[i];
        swap = src;
        src = dst;
        dst = swap;
    }
    if (src != order)
        memcpy(order, src, n * sizeof *order);
}

/* The token whose bytes are the prefix p[0..s) (s >= 2) with rolling hash
 * h, given that the longest proper part-prefix of it is `v`, |v| bytes;
 * RK_NONE when that prefix is not a token. */
static uint32_t rk_find_prefix(const bpe_ranks *r, const rk_splits *w,
                               const unsigned char *p, size_t s, uint64_t h,
                               uint32_t v, size_t vlen)
{
    size_t i = (size_t)h & w->mask;
    for (; w->slots[i] != 0; i = (i + 1) & w->mask) {
        uint32_t c = w->slots[i] - 1;
        if (w->hash[c] == h && rk_len(r, c) == s && w->lp[c] == v &&
            memcmp(r->bytes + r->offsets[c] + vlen, p + vlen, s - vlen) == 0)
            return c;
    }
    return RK_NONE;
}

/* The same for the suffix q[0..m) (m >= 2) whose longest proper
 * part-suffix is `v`, |v| bytes: only the head q[0..m - |v|) is compared. */
static uint32_t rk_find_suffix(const bpe_ranks *r, const rk_splits *w,
                               const unsigned char *q, size_t m, uint64_t h,
                               uint32_t v, size_t vlen)
{
    size_t i = (size_t)h & w->mask;
    for (; w->slots[i] != 0; i = (i + 1) & w->mask) {
        uint32_t c = w->slots[i] - 1;
        if (w->hash[c] == h && rk_len(r, c) == m && w->ls[c] == v &&
            memcmp(r->bytes + r->offsets[c], q, m - vlen) == 0)
            return c;
    }
    return RK_NONE;
}

/* Both walks over token k (>= 2 bytes): records lp[k] and ls[k] and
 * appends a triple to w->found for every split with two parts. */
static int rk_walk_token(const bpe_ranks *r, rk_splits *w, uint32_t k)
{
    const unsigned char *p = r->bytes + r->offsets[k];
    size_t len = rk_len(r, k), s, vlen;
    uint64_t h, power;
    uint32_t v;
    int status;

    if ((status = bpe__reserve((void **)&w->walk, &w->walk_cap, len,
                               sizeof *w->walk)) != BPE_OK)
        return status;
    /* Right to left: walk[s] = part(p[s..len)) or RK_NONE. */
    v = r->byte_part[p[len - 1]];
    vlen = 1;
    w->walk[len - 1] = v;
    h = p[len - 1];
    power = RK_POLY_BASE;
    for (s = len - 1; s-- > 1;) {
        size_t m = len - s;
        uint32_t c;
        h += p[s] * power;
        power *= RK_POLY_BASE;
        c = rk_find_suffix(r, w, p + s, m, rk_poly_final(h, m), v, vlen);
        if (c != RK_NONE) {
            v = c;
            vlen = m;
        }
        w->walk[s] = c;
    }
    w->ls[k] = v;
    /* Left to right: part(p[0..s)), paired with walk[s]. */
    v = r->byte_part[p[0]];
    vlen = 1;
    h = p[0];
    for (s = 1; s < len; s++) {
        uint32_t left = RK_NONE;
        if (s == 1) {
            left = v;
        } else {
            h = h * RK_POLY_BASE + p[s - 1];
            left = rk_find_prefix(r, w, p, s, rk_poly_final(h, s), v, vlen);
            if (left != RK_NONE) {
                v = left;
                vlen = s;
            }
        }
        if (left != RK_NONE && w->walk[s] != RK_NONE) {
            if ((status = bpe__reserve((void **)&w->found, &w->found_cap,
                                       w->n_found + 3, sizeof *w->found)) != BPE_OK)
                return status;
            w->found[w->n_found++] = left;
            w->found[w->n_found++] = w->walk[s];
            w->found[w->n_found++] = k;
        }
    }
    w->lp[k] = v;
    return BPE_OK;
}

/*
 * REACHED PAIRS.  Of a token's splits, merging only ever uses one, so the
 * table keeps that one.  Claim: whenever merging a piece (tiktoken's rule,
 * or any rule that is a function of the two parts) has made a part P
 * covering bytes S, the merges inside S so far are exactly those of S
 * merged alone, in the same order.  Proof: no merge crosses S's edges
 * before P exists (parts only grow, and P covers S exactly), so the parts
 * inside S change only by merges inside S; each of those was the lowest
 * pair, leftmost among equals, of the whole piece, so also of S's pairs,
 * which is what S alone merges next from the same state.  So P is always
 * made by the last merge of P's own bytes merged alone -- its *reached
 * split* -- and a token whose bytes merged alone do not end as that token
 * is never made at all.  A pair (L, R) -> T that is not T's reached split
 * is therefore never the pair merged, and a table without it changes no
 * step: at every step the pair merged keeps its priority and every other
 * pair's priority is only raised (to none).  The same holds for any table
 * between the reached splits and all splits.
 *
 * Finding them: tokens are taken shortest first.  When T's turn comes the
 * table holds the reached split of every shorter token merging makes,
 * which is all T's bytes merged alone ever ask about except T's own splits
 * (a pair inside T making a token of T's length makes T), and T's are not
 * in yet: so merging T's bytes with the table so far stops at two parts
 * L R exactly when (L, R) is T's reached split, at more when merging never
 * makes T.  That is the short loop for tokens under 100 bytes and the heap
 * (O(L log L)) for longer ones, so the build stays near linear.
 *
 * o200k: 446,189 pairs -> 199,742 (every token of two bytes or more is
 * made by merging), its pair table 8 -> 4 MB and its filter 512 -> 256
 * KB; cl100k 233,378 -> 100,000 (4 -> 2 MB), gpt2 108,299 -> 50,000.
 */

/* The reached split of token k (*left, *right) from the pairs of the table
 * so far (above); 0 when merging never makes k.  w has 3 * len entries,
 * heap 2 * len (len: k's bytes). */
static int rk_reached_split(const bpe_ranks *r, uint32_t k, uint32_t *w,
                            bpe__heap_entry *heap, uint32_t *left, uint32_t *right)
{
    const unsigned char *p = r->bytes + r->offsets[k];
    size_t len = rk_len(r, k), i, n;
    uint32_t *sym = w, *prio = w + len, *res = w + 2 * len;
    for (i = 0; i < len; i++)
        sym[i] = r->byte_part[p[i]];
    if (len < BPE__MERGE_HEAP_THRESHOLD) {
        for (i = 0; i + 1 < len; i++)
            prio[i] = rk_pair_get(r, sym[i], sym[i + 1], &res[i]);
        n = bpe__merge_short(rk_rule, r, sym, NULL, prio, res, len);
    } else {
        n = bpe__merge_heap(rk_rule, r, sym, NULL, prio, res, heap, len);
    }
    if (n != 2)
        return 0;
    *left = sym[0];
    *right = sym[1];
    return 1;
}

/* Fills the pair table with the reached splits of the tokens whose splits
 * are w->found (grouped by token, shortest first). */
static int rk_put_reached_pairs(bpe_ranks *r, const rk_splits *w)
{
    size_t i, j, tokens = 0, wlen = r->max_token_len + 1;
    uint32_t *scratch = NULL, left, right;
    bpe__heap_entry *heap = NULL;
    int status;
    for (i = 0; i < w->n_found; i += 3)
        tokens += i == 0 || w->found[i + 2] != w->found[i - 1];
    /* Compact slots when the priority (the result's ID) is the result
     * itself and every part fits RK_CPART_BITS. */
    if ((status = rk_alloc_pairs(r, tokens,
                                 r->ids_are_indices &&
                                 r->n_tokens + 256 <= (size_t)RK_CPART_MASK)) != BPE_OK)
        return status;
    scratch = malloc(3 * wlen * sizeof *scratch);
    heap = malloc(2 * wlen * sizeof *heap);
    if (!scratch || !heap) {
        status = BPE_ENOMEM;
        goto cleanup;
    }
    for (i = 0; i < w->n_found; i = j) {
        uint32_t k = w->found[i + 2];
        for (j = i; j < w->n_found && w->found[j + 2] == k; j += 3)
            ;
        if (rk_reached_split(r, k, scratch, heap, &left, &right))
            rk_pair_put(r, left, right, r->ids[k], k);
    }
cleanup:
    free(scratch);
    free(heap);
    return status;
}

static int rk_build_split_pairs(bpe_ranks *r)
{
    size_t n = r->n_tokens, cap = rk_capacity(n), k, i;
    uint32_t *tmp = NULL;
    rk_splits w;
    int status = BPE_ENOMEM;

    memset(&w, 0, sizeof w);
    if (cap == 0 || cap > SIZE_MAX / sizeof(uint64_t))
        return BPE_ETOOBIG;
    w.slots = calloc(cap, sizeof *w.slots);
    w.hash = malloc((n ? n : 1) * sizeof *w.hash);
    w.lp = malloc((n ? n : 1) * sizeof *w.lp);
    w.ls = malloc((n ? n : 1) * sizeof *w.ls);
    w.order = malloc((n ? n : 1) * sizeof *w.order);
    tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!w.slots || !w.hash || !w.lp || !w.ls || !w.order || !tmp)
        goto cleanup;
    w.mask = cap - 1;
    for (k = 0; k < n; k++) {  /* the temporary index */
        const unsigned char *p = r->bytes + r->offsets[k];
        uint64_t h = 0;
        for (i = 0; i < rk_len(r, k); i++)
            h = h * RK_POLY_BASE + p[i];
        w.hash[k] = rk_poly_final(h, rk_len(r, k));
        w.lp[k] = w.ls[k] = RK_NONE;
        for (i = (size_t)w.hash[k] & w.mask; w.slots[i] != 0; i = (i + 1) & w.mask)
            ;
        w.slots[i] = (uint32_t)(k + 1);
    }
    rk_sort_by_length(r, w.order, tmp);
    for (k = 0; k < n; k++)
        if (rk_len(r, w.order[k]) >= 2 &&
            (status = rk_walk_token(r, &w, w.order[k])) != BPE_OK)
            goto cleanup;
    status = rk_put_reached_pairs(r, &w);
cleanup:
    rk_splits_free(&w);
    free(tmp);
    return status;
}

static int rk_build_merge_pairs(bpe_ranks *r, const uint32_t *lefts,
                                const uint32_t *rights, const uint32_t *results,
                                size_t n_merges)
{
    size_t m;
    int status;
    if (n_merges >= RK_NONE)
        return BPE_ETOOBIG;
    if (n_merges && (!lefts || !rights || !results))
        return BPE_EINVAL;
    for (m = 0; m < n_merges; m++)
        if (lefts[m] >= r->n_tokens || rights[m] >= r->n_tokens ||
            results[m] >= r->n_tokens)
            return BPE_EINVAL;
    if ((status = rk_alloc_pairs(r, n_merges, 0)) != BPE_OK)
        return status;
    r->results_concatenate = 1;
    for (m = 0; m < n_merges; m++) {
        size_t a = rk_len(r, lefts[m]), b = rk_len(r, rights[m]);
        const unsigned char *t = r->bytes + r->offsets[results[m]];
        rk_pair_put(r, lefts[m], rights[m], (uint32_t)m, results[m]);
        if (rk_len(r, results[m]) != a + b ||
            memcmp(t, r->bytes + r->offsets[lefts[m]], a) != 0 ||
            memcmp(t + a, r->bytes + r->offsets[rights[m]], b) != 0)
            r->results_concatenate = 0;
    }
    return BPE_OK;
}

/* Copies the tokens and indexes them by their bytes. */
static int rk_build_tokens(bpe_ranks *r, const unsigned char *bytes,
                           const size_t *offsets, const uint32_t *ids)
{
    size_t n = r->n_tokens, total = offsets[n] - offsets[0], cap, k;
    int b;
    cap = rk_capacity(n);
    if (cap == 0 || cap > SIZE_MAX / sizeof(rk_tok_slot) || n + 1 > SIZE_MAX / sizeof(size_t))
        return BPE_ETOOBIG;
    r->bytes = malloc(total ? total : 1);
    r->offsets = malloc((n + 1) * sizeof *r->offsets);
    r->ids = malloc((n ? n : 1) * sizeof *r->ids);
    r->tok_slots = calloc(cap, sizeof *r->tok_slots);
    if (!r->bytes || !r->offsets || !r->ids || !r->tok_slots)
        return BPE_ENOMEM;
    if (total)
        memcpy(r->bytes, bytes + offsets[0], total);
    r->tok_mask = cap - 1;
    r->ids_are_indices = 1;
    for (k = 0; k <= n; k++)
        r->offsets[k] = offsets[k] - offsets[0];
    for (k = 0; k < n; k++) {
        size_t len = r->offsets[k + 1] - r->offsets[k], i;
        if (offsets[k + 1] <= offsets[k])
            return BPE_EINVAL; /* empty token, or offsets going backwards */
        if (rk_lookup(r, r->bytes + r->offsets[k], len) != RK_NONE)
            return BPE_EINVAL; /* the same bytes twice */
        i = (size_t)rk_hash_bytes(r->bytes + r->offsets[k], len) & r->tok_mask;
        while (r->tok_slots[i].index != 0)
            i = (i + 1) & r->tok_mask;
        r->tok_slots[i].head = rk_head(r->bytes + r->offsets[k], len);
        r->tok_slots[i].index = (uint32_t)(k + 1);
        r->tok_slots[i].len = rk_len32(len);
        r->max_token_len = len > r->max_token_len ? len : r->max_token_len;
        r->ids[k] = ids[k];
        r->ids_are_indices &= ids[k] == k;
    }
    for (b = 0; b < 256; b++) {
        unsigned char c = (unsigned char)b;
        uint32_t k1 = rk_lookup(r, &c, 1);
        r->byte_part[b] = k1 != RK_NONE ? k1 : (uint32_t)(n + (size_t)b);
    }
    return BPE_OK;
}

/* The filter bit of a piece whose rk_hash_bytes is h (bits other than
 * the ones that index the token table and the per-call caches). */
static size_t rk_tok_filter_bit(const bpe_ranks *r, uint64_t h)
{
    return (size_t)(h >> 13) & r->tok_filter_mask;
}

/* 0 when no token hashes to h (so the piece is certainly no token). */
static int rk_maybe_token(const bpe_ranks *r, uint64_t h)
{
    size_t b;
    if (!r->tok_filter)
        return 1;
    b = rk_tok_filter_bit(r, h);
    return (int)(r->tok_filter[b / 64] >> (b % 64) & 1);
}

static int rk_build_tok_filter(bpe_ranks *r)
{
    size_t bits = 64, k;
    while (bits < RK_TOK_FILTER_BITS * r->n_tokens && bits < ((size_t)1 << 30))
        bits *= 2;
    r->tok_filter = calloc(bits / 64, sizeof *r->tok_filter);
    if (!r->tok_filter)
        return BPE_ENOMEM;
    r->tok_filter_mask = bits - 1;
    for (k = 0; k < r->n_tokens; k++) {
        size_t b = rk_tok_filter_bit(r, rk_hash_bytes(r->bytes + r->offsets[k],
                                                       r->offsets[k + 1] - r->offsets[k]));
        r->tok_filter[b / 64] |= (uint64_t)1 << (b % 64);
    }
    return BPE_OK;
}

static int rk_build_pair_filter(bpe_ranks *r)
{
    size_t bits = 64, i;
    while (bits < RK_PAIR_FILTER_BITS * r->n_pairs && bits < ((size_t)1 << 30))
        bits *= 2;
    r->pair_filter = calloc(bits / 64, sizeof *r->pair_filter);
    if (!r->pair_filter)
        return BPE_ENOMEM;
    r->pair_filter_mask = bits - 1;
    for (i = 0; i <= r->pair_mask; i++) {
        uint64_t key, c;
        size_t b;
        if (r->cpairs) {
            if ((c = r->cpairs[i]) == RK_EMPTY_KEY)
                continue;
            key = (c >> (2 * RK_CPART_BITS)) << 32 | (c >> RK_CPART_BITS & RK_CPART_MASK);
        } else if ((key = r->pairs[i].key) == RK_EMPTY_KEY) {
            continue;
        }
        b = rk_pair_filter_bit(r, bpe__mix64(key));
        r->pair_filter[b / 64] |= (uint64_t)1 << (b % 64);
    }
    return BPE_OK;
}

static int rk_build_byte_pairs(bpe_ranks *r)
{
    size_t ab;
    r->byte_pairs = malloc(65536 * sizeof *r->byte_pairs);
    if (!r->byte_pairs)
        return BPE_ENOMEM;
    for (ab = 0; ab < 65536; ab++) {
        rk_byte_pair *e = &r->byte_pairs[ab];
        e->result = 0;
        e->prio = rk_pair_get(r, r->byte_part[ab >> 8], r->byte_part[ab & 255], &e->result);
    }
    return BPE_OK;
}

/* The span filter replaces cut_ok when the tokens hold at least 1 in
 * RK_DENSE_PAIRS_DIV of the pairs of the bytes they use (of ~200 bytes used,
 * gpt2 holds 7% of the pairs, cl100k 17%, o200k 24%).  A choice of speed
 * only (both rules are exact): where the byte pairs alone cut often (gpt2,
 * cl100k) the walk cost more than its finer cuts saved (CJK, CPU time per
 * 0.5 MB: cl100k 3.7 -> 4.1-4.4 ms, gpt2 4.3 -> 4.7-4.9). */
#define RK_DENSE_PAIRS_DIV 5

/* cut_ok (see bpe_ranks): every pair of neighbouring bytes of every token
 * marks its bit taken, and the others are the cuts.  *dense gets whether
 * the tokens hold at least RK_DENSE_PAIRS of the pairs of their bytes (then
 * the span filter is worth its walk). */
static int rk_build_cut_ok(bpe_ranks *r, int *dense)
{
    size_t k, i, w, held = 0, used = 0;
    uint64_t seen[4] = {0, 0, 0, 0};
    r->cut_ok = malloc(1024 * sizeof *r->cut_ok);
    if (!r->cut_ok)
        return BPE_ENOMEM;
    for (w = 0; w < 1024; w++)
        r->cut_ok[w] = ~(uint64_t)0;
    for (k = 0; k < r->n_tokens; k++) {
        const unsigned char *t = r->bytes + r->offsets[k];
        for (i = 1; i < rk_len(r, k); i++) {
            size_t ab = (size_t)t[i - 1] << 8 | t[i];
            r->cut_ok[ab / 64] &= ~((uint64_t)1 << (ab % 64));
            seen[t[i - 1] / 64] |= (uint64_t)1 << (t[i - 1] % 64);
            seen[t[i] / 64] |= (uint64_t)1 << (t[i] % 64);
        }
    }
    for (w = 0; w < 1024; w++)
        for (i = 0; i < 64; i++)
            held += !(r->cut_ok[w] >> i & 1);
    for (w = 0; w < 256; w++)
        used += seen[w / 64] >> (w % 64) & 1;
    *dense = held * RK_DENSE_PAIRS_DIV >= used * used;
    return BPE_OK;
}

/* The rolling hash of the span filter: h of a string, then h of it with
 * byte b appended.  One multiply a byte; the cell is read from the high
 * bits, which depend on every bit of the string. */
#define RK_SPAN_SEED BPE__FNV_OFFSET
static inline uint64_t rk_span_step(uint64_t h, unsigned char b)
{
    return (h ^ b) * BPE__GOLDEN64;
}

/* Cells of the span filter per token (rounded up to a power of two): o200k
 * has 199,998 tokens and 289,324 distinct strings that some longer token
 * starts with, so 4M cells (1 MB), about one cell in nine used. */
#define RK_SPAN_CELLS_PER_TOKEN 16

/* span_filter (see bpe_ranks): every proper prefix of every token marks
 * bit 0 of its cell, every token bit 1. */
static int rk_build_span_filter(bpe_ranks *r)
{
    size_t cells = 64, k, i;
    unsigned cell_bits = 6;
    while (cells < RK_SPAN_CELLS_PER_TOKEN * r->n_tokens && cells < ((size_t)1 << 30)) {
        cells *= 2;
        cell_bits++;
    }
    r->span_filter = calloc(cells / 32, sizeof *r->span_filter);
    if (!r->span_filter)
        return BPE_ENOMEM;
    r->span_shift = 64 - cell_bits;
    for (k = 0; k < r->n_tokens; k++) {
        const unsigned char *t = r->bytes + r->offsets[k];
        size_t len = rk_len(r, k);
        uint64_t h = RK_SPAN_SEED;
        for (i = 0; i < len; i++) {
            size_t c;
            h = rk_span_step(h, t[i]);
            c = (size_t)(h >> r->span_shift);
            r->span_filter[c / 32] |= (uint64_t)(i + 1 < len ? 1 : 2) << (2 * (c % 32));
        }
    }
    return BPE_OK;
}

bpe_ranks *bpe_ranks_new(const unsigned char *bytes, const size_t *offsets,
                         const uint32_t *ids, size_t n_tokens,
                         const uint32_t *lefts, const uint32_t *rights,
                         const uint32_t *results, size_t n_merges, int flags,
                         int *status)
{
    int st = BPE_OK, dense = 0;
    bpe_ranks *r = NULL;
    if (!offsets || (n_tokens && (!bytes || !ids))) {
        st = BPE_EINVAL;
        goto cleanup;
    }
    if (n_tokens >= (size_t)RK_NONE - 257) { /* pseudo parts need room */
        st = BPE_ETOOBIG;
        goto cleanup;
    }
    r = calloc(1, sizeof *r);
    if (!r) {
        st = BPE_ENOMEM;
        goto cleanup;
    }
    r->n_tokens = n_tokens;
    r->whole_piece = (flags & BPE_RANKS_WHOLE_PIECE) != 0;
    if ((st = rk_build_tokens(r, bytes, offsets, ids)) != BPE_OK)
        goto cleanup;
    if (flags & BPE_RANKS_MERGE_LIST) {
        st = rk_build_merge_pairs(r, lefts, rights, results, n_merges);
    } else {
        st = rk_build_split_pairs(r);
        r->results_concatenate = 1;
    }
    if (st == BPE_OK && n_tokens >= RK_BYTE_PAIRS_MIN)
        st = rk_build_byte_pairs(r);
    if (st == BPE_OK && n_tokens >= RK_BYTE_PAIRS_MIN && r->whole_piece)
        st = rk_build_tok_filter(r);
    if (st == BPE_OK && n_tokens >= RK_BYTE_PAIRS_MIN)
        st = rk_build_pair_filter(r);
    if (st == BPE_OK && r->results_concatenate)
        st = rk_build_cut_ok(r, &dense);
    if (st == BPE_OK && r->results_concatenate && dense) {
        st = rk_build_span_filter(r);
        free(r->cut_ok);
        r->cut_ok = NULL;
    }

cleanup:
    if (st != BPE_OK) {
        bpe_ranks_free(r);
        r = NULL;
    }
    if (status)
        *status = st;
    return r;
}

void bpe_ranks_free(bpe_ranks *r)
{
    if (!r)
        return;
    free(r->bytes);
    free(r->offsets);
    free(r->ids);
    free(r->tok_slots);
    free(r->pairs);
    free(r->cpairs);
    free(r->byte_pairs);
    free(r->tok_filter);
    free(r->pair_filter);
    free(r->cut_ok);
    free(r->span_filter);
    free(r);
}

size_t bpe_ranks_pair_count(const bpe_ranks *r)
{
    return r ? r->n_pairs : 0;
}

/* ---------------------------------------------------------------- merging */

/* The ID of token index k.  A tiktoken file lists its tokens in rank order,
 * so there the ID is the index and the ids[] load -- a cache miss on large
 * vocabularies -- is skipped. */
static uint32_t rk_id(const bpe_ranks *r, uint32_t k)
{
    return r->ids_are_indices ? k : r->ids[k];
}

/* Pieces merged with the scratch's own arrays (no allocation): every piece
 * a cache can hold, and most others.  Per call, a malloc and free of six
 * arrays was a tenth of the cost of encoding a text of 200 bytes. */
#define RK_SMALL_PIECE BPE__PC_LONG_BYTES

/*
 * The spill cache: pieces the piece cache cannot hold because they have
 * more IDs than its entries do (BPE__PC_LONG_IDS), remembered for one call
 * by where their first occurrence sits in the call's text and output (both
 * stay put for the whole call, so nothing is copied).  CJK pieces are
 * 20-99 bytes of 3-byte characters, and cl100k or gpt2 give many of 17-64
 * bytes 15 IDs or more: without this they were merged every time they came
 * back (piece_cache.c's header has the figures).  Direct-mapped, a new
 * piece overwrites its slot; allocated on the first such piece, so prose
 * (where they are rare) pays a NULL test.  len 0: empty.
 */
typedef struct {
    uint64_t head, tail;     /* rk_key */
    uint32_t text_pos, out_pos;
    uint32_t len, count;
} rk_spill_entry;

/* Spill slots: one per 256 bytes of text, 64 to 4,096 (128 KB).  A MB of
 * CJK holds 74-389 distinct such pieces (o200k, cl100k, gpt2). */
#define RK_SPILL_MIN 64
#define RK_SPILL_MAX 4096
/* The longest piece spilled: longer ones rarely come back whole. */
#define RK_SPILL_MAX_PIECE 256

/* Per-call working memory for merging, grown to the longest piece seen
 * (beyond RK_SMALL_PIECE bytes; below, the arrays inside it are used), and
 * the call's spill cache. */
typedef struct {
    size_t cap;
    uint32_t *sym, *prio, *res, *next, *prev;
    bpe__heap_entry *heap;
    uint32_t small[5][RK_SMALL_PIECE];
    bpe__heap_entry small_heap[3 * RK_SMALL_PIECE];
    rk_spill_entry *spill;   /* NULL until needed */
    size_t spill_slots;      /* a power of two */
} rk_scratch;

static void rk_scratch_use_small(rk_scratch *s)
{
    s->sym = s->small[0];
    s->prio = s->small[1];
    s->res = s->small[2];
    s->next = s->small[3];
    s->prev = s->small[4];
    s->heap = s->small_heap;
    s->cap = RK_SMALL_PIECE;
}

/* A scratch for a call on text_len bytes of text. */
static void rk_scratch_init(rk_scratch *s, size_t text_len)
{
    rk_scratch_use_small(s);
    s->spill = NULL;
    s->spill_slots = RK_SPILL_MIN;
    while (s->spill_slots < RK_SPILL_MAX && s->spill_slots * 256 < text_len)
        s->spill_slots *= 2;
}

/* Frees what the scratch allocated (it is then back on its small arrays). */
static void rk_scratch_free(rk_scratch *s)
{
    if (s->sym != s->small[0]) {
        free(s->sym);
        free(s->prio);
        free(s->res);
        free(s->next);
        free(s->prev);
        free(s->heap);
    }
    rk_scratch_use_small(s);
}

/* Frees everything, the spill cache included. */
static void rk_scratch_done(rk_scratch *s)
{
    rk_scratch_free(s);
    free(s->spill);
    s->spill = NULL;
}

static int rk_scratch_reserve(rk_scratch *s, size_t n)
{
    size_t cap = s->cap * 2 > n ? s->cap * 2 : n;
    if (n <= s->cap)
        return BPE_OK;
    rk_scratch_free(s);
    if (cap > SIZE_MAX / (3 * sizeof(bpe__heap_entry)))
        return BPE_ETOOBIG;
    s->sym = malloc(cap * sizeof *s->sym);
    s->prio = malloc(cap * sizeof *s->prio);
    s->res = malloc(cap * sizeof *s->res);
    s->next = malloc(cap * sizeof *s->next);
    s->prev = malloc(cap * sizeof *s->prev);
    s->heap = malloc(3 * cap * sizeof *s->heap);
    if (!s->sym || !s->prio || !s->res || !s->next || !s->prev || !s->heap) {
        rk_scratch_free(s); /* sym is not the small array now, so all are freed */
        return BPE_ENOMEM;
    }
    s->cap = cap;
    return BPE_OK;
}

/* tiktoken's rule for the merge engine (merge.h): the pair table's
 * priority and result; creation ranks play no part. */
static uint32_t rk_rule(const void *table, uint32_t left, uint32_t right,
                        uint32_t born_left, uint32_t born_right,
                        uint32_t *result)
{
    (void)born_left;
    (void)born_right;
    return rk_pair_get((const bpe_ranks *)table, left, right, result);
}

/* A long piece of at most len / RK_RUNS_SHARE runs of one repeated byte
 * ("a" * 1,000,000, a million spaces) is merged by merge.h's run engine, in
 * O(runs log runs) batched steps instead of O(len log len) single ones
 * (positions must fit its 31-bit keys).  Other long pieces (prose, CJK,
 * random letters: about one run per byte) go to rk_merge_windows. */
#define RK_RUNS_SHARE 4
#define RK_RUNS_MAX_LEN ((size_t)1 << 31)

/* Merges p[0..len) (2 <= len < BPE__MERGE_HEAP_THRESHOLD) with the short
 * loop; the parts are left in s->sym, their number returned. */
static size_t rk_merge_short(const bpe_ranks *r, const unsigned char *p, size_t len,
                             rk_scratch *s)
{
    size_t i;
    for (i = 0; i < len; i++)
        s->sym[i] = r->byte_part[p[i]];
    for (i = 0; i + 1 < len; i++) {
        if (r->byte_pairs) {
            const rk_byte_pair *e = &r->byte_pairs[(size_t)p[i] << 8 | p[i + 1]];
            s->prio[i] = e->prio;
            s->res[i] = e->result;
        } else {
            s->prio[i] = rk_pair_get(r, s->sym[i], s->sym[i + 1], &s->res[i]);
        }
    }
    return bpe__merge_short(rk_rule, r, s->sym, NULL, s->prio, s->res, len);
}

/* The longest stretch rk_merge_small merges (positions fit a byte). */
#define RK_SMALL_MAX (BPE__MERGE_HEAP_THRESHOLD - 1)
typedef char rk_small_positions_fit_a_byte[RK_SMALL_MAX < 256 ? 1 : -1];

/*
 * The windows' merge loop (rk_merge_windows below): the same merges as
 * rk_merge_short -- the lowest priority, leftmost among equals, until no
 * pair has one -- for 2 <= len <= RK_WINDOW_MAX bytes, found another way.
 * Each pair is one key, priority << 32 | position of its left part, and the
 * position never changes: merged-away parts stay in place, skipped through
 * next[] / prev[], their key UINT64_MAX.  So the lowest key is the lowest
 * priority and, among equals, the smallest position, which (positions keep
 * their order) is the leftmost pair: the pair bpe__merge_short's strict-<
 * scan picks.  Same pair each step, same parts after it, same result.
 * Why: the scan's `prio[i] < best` branch went the other way at every new
 * minimum (a misprediction each time), and removing a part moved three
 * arrays (calls of memmove); here the minimum is taken with four
 * independent branch-free chains and nothing moves.
 */
static size_t rk_merge_small(const bpe_ranks *r, const unsigned char *p, size_t len,
                             rk_scratch *s)
{
    uint64_t key[RK_SMALL_MAX];
    uint32_t sym[RK_SMALL_MAX], res[RK_SMALL_MAX];
    unsigned char next[RK_SMALL_MAX], prev[RK_SMALL_MAX];
    size_t i, out = 0, nk = len - 1;
    assert(len >= 2 && len <= RK_SMALL_MAX);
    for (i = 0; i < len; i++) {
        sym[i] = r->byte_part[p[i]];
        next[i] = (unsigned char)(i + 1);
        prev[i] = (unsigned char)(i - 1); /* prev[0] unused */
    }
    for (i = 0; i < nk; i++) {
        uint32_t pr;
        if (r->byte_pairs) {
            const rk_byte_pair *e = &r->byte_pairs[(size_t)p[i] << 8 | p[i + 1]];
            pr = e->prio;
            res[i] = e->result;
        } else {
            pr = rk_pair_get(r, sym[i], sym[i + 1], &res[i]);
        }
        key[i] = pr == RK_NONE ? UINT64_MAX : (uint64_t)pr << 32 | i;
    }
    for (;;) {
        uint64_t m0 = UINT64_MAX, m1 = UINT64_MAX, m2 = UINT64_MAX, m3 = UINT64_MAX, m;
        size_t a, b, c;
        uint32_t pr;
        for (i = 0; i + 4 <= nk; i += 4) {
            m0 = key[i] < m0 ? key[i] : m0;
            m1 = key[i + 1] < m1 ? key[i + 1] : m1;
            m2 = key[i + 2] < m2 ? key[i + 2] : m2;
            m3 = key[i + 3] < m3 ? key[i + 3] : m3;
        }
        for (; i < nk; i++)
            m0 = key[i] < m0 ? key[i] : m0;
        m0 = m1 < m0 ? m1 : m0;
        m2 = m3 < m2 ? m3 : m2;
        m = m2 < m0 ? m2 : m0;
        if (m == UINT64_MAX)
            break;
        a = (size_t)(m & 0xffffffffu);
        b = next[a];
        c = next[b];
        sym[a] = res[a];
        key[b] = UINT64_MAX; /* part b is gone, and its pair with it */
        next[a] = (unsigned char)c;
        if (c < len) {
            prev[c] = (unsigned char)a;
            pr = rk_pair_get(r, sym[a], sym[c], &res[a]);
            key[a] = pr == RK_NONE ? UINT64_MAX : (uint64_t)pr << 32 | a;
        } else {
            key[a] = UINT64_MAX;
        }
        if (a > 0) {
            b = prev[a];
            pr = rk_pair_get(r, sym[b], sym[a], &res[b]);
            key[b] = pr == RK_NONE ? UINT64_MAX : (uint64_t)pr << 32 | b;
        }
    }
    for (i = 0; i < len; i = next[i]) /* part 0 is never merged away */
        s->sym[out++] = sym[i];
    return out;
}

/* The number of bytes part k covers (results_concatenate holds). */
static size_t rk_part_len(const bpe_ranks *r, uint32_t k)
{
    return k < r->n_tokens ? rk_len(r, k) : 1;
}

/*
 * Long pieces in windows.  Merging a long piece whole takes the heap, whose
 * arrays (20 bytes per byte of the piece) leave the core's caches past a
 * few KB: 1 MB of random letters took ~330 ms (cl100k).  Instead the piece
 * is merged in windows of RK_WINDOW bytes on the short loop, and where two
 * windows meet, the two parts on either side are checked.  Write BPE(x) for
 * the parts the engine makes of bytes x (tiktoken's rule, or any rule that
 * is a function of the two parts).  Two facts make this exact:
 *
 * (1) Windows of a result.  If BPE(x) = t1 .. tk, then for a <= b the bytes
 *     that t_a .. t_b cover merge alone to t_a .. t_b.  The whole run merges
 *     inside that span exactly when its lowest pair, leftmost among equals,
 *     lies there; that pair is then also the lowest, leftmost, of the span's
 *     own pairs (fewer pairs), so the span alone makes the same merges in
 *     the same order (no merge crosses a final boundary), and ends where the
 *     whole run leaves no mergeable pair among them.
 * (2) Pairs suffice.  Let parts t1 .. tk cover x (t_i covers [e_{i-1},
 *     e_i)) such that every two neighbours, merged alone, give themselves:
 *     BPE(x[e_{i-1} .. e_{i+1})) = t_i t_{i+1}.  Then BPE(x) = t1 .. tk.
 *     Proof: suppose some merge of the whole run crosses a boundary e_i and
 *     let M be the first one; before M every merge lies inside one t's
 *     span.  Compare the run on the pair of spans A B around e_i alone (the
 *     "pair run", which by assumption never crosses e_i): by induction the
 *     whole run's merges inside A B before M are the pair run's first ones,
 *     in order -- from the same state of A B, the whole run's next merge
 *     there is the lowest, leftmost, of all pairs, so of A B's pairs, which
 *     is the pair run's next merge (merges elsewhere change no pair with
 *     both parts in A B).  At M, A B is in a state of the pair run, and M is
 *     the lowest, leftmost, of A B's pairs too: the pair run would cross e_i
 *     there.  Contradiction, so no merge crosses a boundary.  Each span then
 *     merges as it would alone (as in (1)), which by (1) on the pair run
 *     ends in its t; and the pair (t_i, t_{i+1}) has no priority, or the
 *     pair run would have merged it.
 *
 * The loop keeps a prefix of committed parts in which every two neighbours
 * pass the test of (2).  It merges the next window, parts R (neighbours in
 * R pass by (1)), and tests the last committed part with R's first; when
 * they fail, the last committed part is taken back and the window, now
 * starting where that part started, is merged again.  At the end all
 * neighbours pass, so by (2) the parts are BPE(piece): exact for any rank
 * file.  A window that would outgrow the short loop (RK_WINDOW_MAX) gives
 * up and the piece goes to the heap, which is always exact.
 *
 * 1 MB of random lowercase letters (one piece), CPU time, best of 5, whole
 * encode_ordinary: cl100k ~260 -> ~76 ms, gpt2 ~205 -> ~62 ms, o200k ~313
 * -> ~84 ms.  Windows of 16 to 32 bytes measured the same; 48 and 64 slower
 * (the short loop rescans its window after every merge).  What limits it
 * (perf, cl100k): rk_pair_get ~29% and the short loop ~28% -- random
 * letters are ~1.85 bytes per token, so ~460,000 merges per MB, each asking
 * the pair table (4 MB) about its new neighbours, a cache miss when the
 * filter lets the question through.  Dead end: rk_pair_get inlined into
 * the loop (no change).
 *
 * Where a window ends (rk_window_end) turned out to matter more: a window
 * cut at a fixed width splits a part often, the test then fails and the
 * window is merged again.  Ending it between the two bytes least eager to
 * merge (of the last nine places) took 1 MB of random letters, NumPy
 * output, CPU best of 5, four alternating processes each against the build
 * before: cl100k ~62 -> ~42 ms, gpt2 ~48 -> ~36 ms, o200k ~70 -> ~50 ms
 * (about 1 window in 10 is merged twice now).  Windows of 12 to 32 bytes
 * then measure the same (24 kept).  Dead ends, measured the same way:
 *   - A merge-free method, as GitHub's bpe crate does it: at each position
 *     the longest token, tested against the part before it by (2) without
 *     merging (for parts whose merges rise in priority all the way down,
 *     the test is a walk down x's right and y's left halves, a pair
 *     question per step), the next shorter token when it fails, and a
 *     position from which nothing passes marked dead for good (the parts
 *     before any position are unique, by (2)), so it stays linear and
 *     exact.  It ran ~2x slower than these windows (cl100k ~120 ms): the
 *     longest token is wrong at ~1 position in 4 (~160,000 dead positions
 *     per MB), and each test is a chain of dependent cache misses (pair
 *     table, the per-call memos of splits and answers, token lengths).
 *   - A per-call memo of pair answers in front of the pair table for the
 *     windows' merges (direct-mapped, up to 32,768 slots): ~5% before the
 *     cuts moved, nothing after.
 * What limited it then (perf, cl100k): the short loop's rescans and its
 * pair-table questions (the filter's and the table's cache lines), ~460,000
 * merges per MB.  The rescan itself was most of the loop: its `<` branch
 * mispredicted at each new minimum, and each merge moved three arrays.
 * rk_merge_small (same merges, keys that never move, a branch-free
 * minimum) took 1 MB of random lowercase letters, one piece, C alone
 * (bpe_ranks_encode_text, CPU time, best of 7, the two builds alternating
 * in one shell): gpt2 29.6 -> 23.9 ms, cl100k 36.2 -> 26.0, o200k 40.4 ->
 * 28.2; same IDs (checksums).  Dead end: 32-bit keys (priority << 8 |
 * position) in one chain, 27.7 ms against the 64-bit keys' four chains
 * (cl100k).  Counted per MB (cl100k): 578,000 merges in windows and
 * meeting checks, 1.07 million pair questions, of which the filter
 * answers 836,000; ~54,000 windows.
 * What limits it now: instructions.  callgrind counts 195.5 million per
 * MB (cl100k, the encode call): rk_merge_small's own 131 million (the
 * scans for the lowest key ~60, setting windows up ~37), rk_pair_get ~39
 * million; at the ~2.6 instructions per cycle the time implies, that is
 * the 26 ms.  Issue 13's 10 ms would need under ~80 instructions per byte
 * including the pair questions.  Dead ends, measured the same way
 * (interleaved builds, best of 9-11):
 *   - 32-bit keys (priority << 8 | position) with an SSE2 minimum, four
 *     keys per compare: 123 million instructions in the loop instead of
 *     131, yet 27.8 ms against 26.0 -- the vector load reads keys just
 *     written by scalar stores, which the core cannot forward to it.
 *   - Two windows merged a step each in turn, so that one's pair questions
 *     overlap the other's: 24.4-26.2 ms against 24.4-25.6 (no change; the
 *     loop is not waiting on memory).
 *   - Windows of 12, 16, 32 bytes with this loop: 29.5, 27.0, 24.5-24.9 ms
 *     against 24.8-26.9 for 24.  rk_window_end without its branch, and
 *     the window's setup from a table of next/prev: within noise (the
 *     setup's instruction count did not move).
 *   - Not built: the backtracking encoder (above), counted first in a
 *     Python model against this merge (cl100k, 100 KB of random letters):
 *     54,000 tokens, 99,000 pair tests, 263,000 pair-table questions
 *     (~2.6 per test, walking both tokens' merge trees) where the windows
 *     ask ~107,000 per 100 KB; 30,000 retries with a shorter token and
 *     15,500 dead positions.  More questions, and no fewer instructions.
 */
#define RK_WINDOW 24
#define RK_WINDOW_MAX RK_SMALL_MAX
#define RK_GIVE_UP 1  /* rk_merge_windows: take the heap instead */
/* A window ends within this many bytes before RK_WINDOW (rk_window_end). */
#define RK_CUT_SPAN 8

/* The priority of the two bytes a, b as a pair (RK_NONE when none). */
static uint32_t rk_byte_pair_prio(const bpe_ranks *r, unsigned char a, unsigned char b)
{
    uint32_t merged;
    if (r->byte_pairs)
        return r->byte_pairs[(size_t)a << 8 | b].prio;
    return rk_pair_get(r, r->byte_part[a], r->byte_part[b], &merged);
}

/* Where the window starting at pos ends (pos < len).  A window's last
 * part is only a guess (the bytes after it are missing), and a guess the
 * test of (2) rejects costs a second merge of the window; so the window
 * ends between the two bytes least eager to merge -- the highest priority
 * of the last RK_CUT_SPAN + 1 places before a character's first byte, the
 * last of equals -- where a part is least likely to straddle the cut.
 * (1 MB of random letters, cl100k: ending at a fixed RK_WINDOW bytes, ~a
 * third of the windows were merged twice, now ~1 in 10.)  Any end is
 * exact; this one is cheap: the byte-pair array, in cache. */
static size_t rk_window_end(const bpe_ranks *r, const unsigned char *p, size_t pos,
                            size_t len)
{
    size_t stop = pos + RK_WINDOW, q, best = 0;
    uint32_t highest = 0;
    if (stop >= len)
        return len;
    for (q = stop - RK_CUT_SPAN; q <= stop; q++) {
        uint32_t prio;
        if ((p[q] & 0xc0) == 0x80)
            continue; /* inside a character */
        prio = rk_byte_pair_prio(r, p[q - 1], p[q]);
        if (best == 0 || prio >= highest) {
            highest = prio;
            best = q;
        }
    }
    if (best != 0)
        return best;
    while (stop > pos + 1 && (p[stop] & 0xc0) == 0x80)
        stop--; /* no character starts there: end before one further back */
    return stop;
}

/* Whether parts x then y, covering p[a..b) then p[b..c), are what p[a..c)
 * merges to alone (the test of (2) above); -1 when p[a..c) is too long
 * for the short loop. */
static int rk_neighbours_pass(const bpe_ranks *r, const unsigned char *p, size_t a,
                              size_t c, uint32_t x, uint32_t y, rk_scratch *s)
{
    uint32_t merged;
    if (c - a > RK_WINDOW_MAX)
        return -1;
    if (rk_pair_get(r, x, y, &merged) != RK_NONE)
        return 0; /* they would merge */
    return rk_merge_small(r, p + a, c - a, s) == 2 && s->sym[0] == x && s->sym[1] == y;
}

/* Merges p[0..len) window by window (above) into out as parts (not IDs);
 * *count gets their number.  RK_GIVE_UP when a window outgrew the short
 * loop.  Uses s->sym, prio, res (merging).  Where the last committed part
 * starts is found back from the window's start and the part's length, at
 * the meeting place only, instead of an array of where each part ends (4 MB
 * written per MB of text and a length looked up per part; CPU time the
 * same within noise, one array fewer). */
static int rk_merge_windows(const bpe_ranks *r, const unsigned char *p, size_t len,
                            rk_scratch *s, uint32_t *out, size_t *count)
{
    size_t k = 0, pos = 0, i;
    while (pos < len) {
        size_t stop = rk_window_end(r, p, pos, len), start = pos, m;
        for (;;) {
            size_t last;
            int pass;
            if (stop - start > RK_WINDOW_MAX)
                return RK_GIVE_UP;
            m = stop - start >= 2 ? rk_merge_small(r, p + start, stop - start, s) : 1;
            if (stop - start < 2)
                s->sym[0] = r->byte_part[p[start]];
            for (i = 0; i < m; i++) /* staged after the committed parts */
                out[k + i] = s->sym[i];
            if (k == 0)
                break;
            last = start - rk_part_len(r, out[k - 1]); /* where the last committed part starts */
            pass = rk_neighbours_pass(r, p, last, start + rk_part_len(r, out[k]), out[k - 1],
                                      out[k], s);
            if (pass < 0)
                return RK_GIVE_UP;
            if (pass)
                break;
            k--; /* take the last committed part back into the window */
            start = last;
        }
        k += m;
        pos = stop;
    }
    *count = k;
    return BPE_OK;
}

/* Merges one piece p[0..len) (len >= 2) into out; *count gets the number
 * of IDs. */
static int rk_merge_piece(const bpe_ranks *r, const unsigned char *p, size_t len,
                          rk_scratch *s, uint32_t *out, size_t *count)
{
    size_t i, n;
    uint32_t *parts;
    int status;
    if (len >= RK_NONE)
        return BPE_ETOOBIG;
    if ((status = rk_scratch_reserve(s, len)) != BPE_OK)
        return status;
    parts = s->sym; /* (after the reserve, which may move it) */
    if (len < BPE__MERGE_HEAP_THRESHOLD) {
        n = rk_merge_short(r, p, len, s);
        goto done;
    }
    if (len < RK_RUNS_MAX_LEN) {
        size_t runs = 1;
        for (i = 1; i < len; i++)
            runs += p[i] != p[i - 1];
        if (runs * RK_RUNS_SHARE <= len) {
            for (i = 0; i < len; i++)
                s->sym[i] = r->byte_part[p[i]];
            /* cnt and wid in prio and res, which the long paths leave alone;
             * the heap has 3 * cap >= 2 * len + BPE__RUN_PUSHES entries */
            n = bpe__merge_runs(rk_rule, r, s->sym, s->prio, s->res, s->next,
                                s->prev, s->heap, 3 * s->cap, len);
            goto done;
        }
        if (r->results_concatenate &&
            rk_merge_windows(r, p, len, s, out, &n) == BPE_OK) {
            parts = out;
            goto done;
        }
    }
    for (i = 0; i < len; i++)
        s->sym[i] = r->byte_part[p[i]];
    n = bpe__merge_heap(rk_rule, r, s->sym, NULL, s->next, s->prev, s->heap, len);
done:
    for (i = 0; i < n; i++) {
        if (parts[i] >= r->n_tokens)
            return BPE_EINVAL; /* a byte with no token was left alone */
        out[i] = rk_id(r, parts[i]);
    }
    *count = n;
    return BPE_OK;
}

/*
 * Long pieces cut into units.  Under cl100k's pattern a CJK sentence is one
 * piece (20-300 bytes), too long or with too many IDs for the piece cache,
 * so each new sentence, and each old one again in the next call, was merged
 * whole: ~1,000 merges of ~75 KB per 0.5 MB call, ~55% of the time.  Yet
 * the sentences are made of the same few words.
 *
 * The cut.  Let k be a place in a piece p that no token occurring in p
 * spans: no token p[i..j) of two bytes or more with i < k < j.  Then p
 * merges as its two halves do, one after the other: BPE(p) = BPE(p[0..k))
 * BPE(p[k..)), for any rank file whose results concatenate.  Every part
 * merging forms is one byte or a token occurring at its place in p (its
 * bytes are its halves' bytes), so no part ever covers both p[k-1] and
 * p[k]; the pair of parts across k never has a priority (its result would
 * be a token spanning k), so no merge crosses k; and the lowest, leftmost
 * pair of one side is that side's lowest, leftmost pair alone, so each side
 * makes the merges it makes alone, in the same order.
 *   A special case, and cheap: a place between two bytes no token holds
 * side by side (cut_ok, a 64 Kbit map of byte pairs): no token spans it.
 * gpt2 and cl100k cut there only (81% and 40% of the boundaries between
 * CJK characters).  Under o200k nearly every pair of CJK bytes occurs in
 * some token, so that cut ~0.7% of them; the general rule cuts ~65%.
 *   Finding the places: for each start i, the farthest end of a token
 * starting there, by walking p[i..j) while some token starts with it (the
 * span filter: a bit per string that some longer token starts with and a
 * bit per token, in cells picked by a rolling hash -- no false negatives, so
 * the walk finds every token; a false "token" only loses a cut, so it is
 * not confirmed in the token table: ~10% faster on o200k CJK).  k is a cut
 * when no start before k reaches past it.  CJK text walks ~2-3 bytes per
 * byte under every shipped vocabulary; a run of spaces ~126 (o200k's long
 * space tokens), so the walk stops cutting past RK_SPAN_STEPS per byte.
 * The filter is 16 cells of 2 bits per token (o200k: 1 MB, ~1 cell in 9
 * used), built with the table (o200k load: no change within noise), for
 * tables whose byte pairs cut too rarely (RK_DENSE_PAIRS_DIV: o200k, and
 * small dense vocabularies); the others keep cut_ok.
 *
 * The units between cuts (a few characters) recur where whole sentences
 * do not, so each unit is asked of the piece cache and only the ones it
 * does not know are merged -- with merging's answer, never the
 * whole-piece rule's (that rule is for whole pieces: a unit that is a token
 * merging does not reach must merge).  So a one-ID entry is trusted only
 * when it says merged (piece_cache.h): an entry the whole-piece rule made is
 * checked by merging the unit once, and a unit that merges to several IDs
 * but is a token is not stored (its whole-piece answer differs).
 */
#define RK_CUT_MIN 17    /* shorter pieces are merged whole */
#define RK_CUT_MAX 4096  /* longer ones too: rk_merge_piece's run engine and windows */
/* Walk steps per byte of a piece before rk_merge_cut stops cutting it (CJK
 * text takes ~2-3 under every shipped vocabulary, Python source ~3.5-5). */
#define RK_SPAN_STEPS 16

/* Whether a piece may be cut between bytes a and b (bpe_ranks' cut_ok). */
static int rk_cut_ok(const bpe_ranks *r, unsigned a, unsigned b)
{
    size_t ab = (size_t)a << 8 | b;
    return (int)(r->cut_ok[ab / 64] >> (ab % 64) & 1);
}

/* The farthest end, beyond `reach`, of what the span filter takes for a
 * token of two bytes or more starting at p[i], in p[0..len) -- every token,
 * perhaps a few strings more; `reach` when there is none.  Walks p[i..j)
 * while the filter says some token starts with it (rk_merge_cut), adding
 * the bytes walked to *steps. */
static size_t rk_span_reach(const bpe_ranks *r, const unsigned char *p, size_t i, size_t len,
                            size_t reach, size_t *steps)
{
    uint64_t h = RK_SPAN_SEED;
    size_t j, end = len - i > r->max_token_len ? i + r->max_token_len : len;
    for (j = i; j < end; j++) {
        size_t c;
        unsigned cell;
        ++*steps;
        h = rk_span_step(h, p[j]);
        c = (size_t)(h >> r->span_shift);
        cell = (unsigned)(r->span_filter[c / 32] >> (2 * (c % 32)) & 3);
        if ((cell & 2) && j >= reach && j > i)
            reach = j + 1;
        if (!(cell & 1))
            break;
    }
    return reach;
}

/* The IDs merging gives the unit text[pos..pos+len) (len >= 1), through
 * the piece cache, into dst; *count gets their number. */
static int rk_encode_unit(const bpe_ranks *r, const unsigned char *text, size_t text_len,
                          size_t pos, size_t len, bpe_piece_cache *c, rk_scratch *s,
                          uint32_t *dst, size_t *count)
{
    const unsigned char *p = text + pos;
    uint8_t *merged = NULL;
    uint32_t single = RK_NONE;
    size_t n = 0;
    rk_key key;
    int status;
    if (len == 1) {
        uint32_t k = r->byte_part[p[0]];
        if (k >= r->n_tokens)
            return BPE_EINVAL; /* a byte with no token, which no neighbour joins */
        dst[0] = rk_id(r, k);
        *count = 1;
        return BPE_OK;
    }
    key = rk_key_of(p, len, text + text_len);
    if (len <= 8 && r->whole_piece) {
        bpe__pc_tok *e = bpe__pc_tok_find(c, key.hash, key.head, len);
        if (e) {
            dst[0] = e->id;
            n = 1;
            merged = &e->merged;
        }
    }
    if (n == 0 && len <= BPE__PC_LONG_BYTES)
        n = bpe__pc_find(c, key.hash, p, len, key.head, key.tail, dst, &merged);
    if (n > 1 || (n == 1 && *merged)) {
        *count = n;
        return BPE_OK;
    }
    if (n == 1)
        single = dst[0]; /* the whole-piece rule's token: does merging reach it? */
    c->stats[BPE_PIECE_CACHE_UNIT_MERGES]++;
    if ((status = rk_merge_piece(r, p, len, s, dst, count)) != BPE_OK)
        return status;
    if (n == 1) {
        if (*count == 1 && dst[0] == single)
            *merged = 1;
        return BPE_OK;
    }
    if (*count == 1) {
        if (len <= 8 && r->whole_piece)
            bpe__pc_tok_put(c, key.hash, key.head, len, dst[0], 1);
        else if (len <= BPE__PC_LONG_BYTES)
            bpe__pc_put(c, key.hash, p, len, key.head, key.tail, dst, 1, 1);
    } else if (len <= BPE__PC_LONG_BYTES &&
               !(r->whole_piece && len <= r->max_token_len && rk_maybe_token(r, key.hash) &&
                 rk_lookup_key(r, p, len, &key) != RK_NONE)) {
        bpe__pc_put(c, key.hash, p, len, key.head, key.tail, dst, *count, 1);
    }
    return BPE_OK;
}

/* rk_merge_piece of the piece text[pos..pos+len), cut into units (above)
 * when it is RK_CUT_MIN to RK_CUT_MAX bytes long.  `reach` is the farthest
 * end of the tokens of two bytes or more starting before k, so k is a cut
 * when it is <= k.  Past RK_SPAN_STEPS walk steps per byte (a long run of
 * spaces walks ~126 bytes from each start under cl100k and o200k) the rest
 * of the piece, from the last cut on, is one unit: exact either way. */
static int rk_merge_cut(const bpe_ranks *r, const unsigned char *text, size_t text_len,
                        size_t pos, size_t len, bpe_piece_cache *c, rk_scratch *s,
                        uint32_t *dst, size_t *count)
{
    const unsigned char *p = text + pos;
    size_t start = 0, k, n = 0, m, reach = 0, steps = 0;
    int status;
    if ((!r->span_filter && !r->cut_ok) || len < RK_CUT_MIN || len > RK_CUT_MAX)
        return rk_merge_piece(r, p, len, s, dst, count);
    for (k = 0; k <= len; k++) {
        if (!r->span_filter) { /* the byte-pair rule */
            if (k < len && (k == 0 || !rk_cut_ok(r, p[k - 1], p[k])))
                continue;
            goto cut;
        }
        if (k < len && steps > RK_SPAN_STEPS * len)
            k = len; /* walked too far: no more cuts */
        if (k < len && (k == 0 || reach > k)) {
            reach = rk_span_reach(r, p, k, len, reach, &steps);
            continue;
        }
    cut:
        if (start == 0 && k == len) /* no cut: the piece is one unit */
            return rk_merge_piece(r, p, len, s, dst, count);
        status = rk_encode_unit(r, text, text_len, pos + start, k - start, c, s, dst + n, &m);
        if (status != BPE_OK)
            return status;
        n += m;
        start = k;
        if (k < len && r->span_filter)
            reach = rk_span_reach(r, p, k, len, reach, &steps);
    }
    *count = n;
    return BPE_OK;
}

/* The part of encoding a piece the piece cache could not answer: p =
 * text + pos, 2 <= len, `key` its rk_key_of, the cache asked already (its
 * tok table too when r->whole_piece and len <= 8).  Then the call's spill
 * cache (pieces with too many IDs for the piece cache, or too long), the
 * whole piece as one token (tiktoken's rule), merging; what the caches did
 * not know goes into one of them. */
static int rk_encode_piece_miss(const bpe_ranks *r, const unsigned char *text,
                                size_t text_len, size_t pos, size_t len, const rk_key *key,
                                bpe_piece_cache *c, rk_scratch *s, uint32_t *out,
                                size_t produced, size_t *count)
{
    const unsigned char *p = text + pos;
    uint32_t *dst = out + produced;
    rk_spill_entry *spill;
    int status;
    *count = 0;
    if (s->spill && len <= RK_SPILL_MAX_PIECE) {
        spill = &s->spill[(size_t)(key->hash >> 32) & (s->spill_slots - 1)];
        if (spill->len == len && spill->head == key->head && spill->tail == key->tail &&
            (len <= 16 ||
             memcmp(text + (size_t)spill->text_pos + 8, p + 8, len - 16) == 0)) {
            uint32_t j; /* never overlapping: the entry's IDs end before dst */
            for (j = 0; j < spill->count; j++)
                dst[j] = out[(size_t)spill->out_pos + j];
            *count = spill->count;
            return BPE_OK;
        }
    }
    if (r->whole_piece && rk_maybe_token(r, key->hash)) {
        uint32_t k = rk_lookup_key(r, p, len, key);
        if (k != RK_NONE) {
            *dst = rk_id(r, k);
            *count = 1;
            c->stats[BPE_PIECE_CACHE_TOKEN_LOOKUPS]++;
            if (len <= 8)
                bpe__pc_tok_put(c, key->hash, key->head, len, *dst, 0);
            else if (len <= BPE__PC_LONG_BYTES)
                bpe__pc_put(c, key->hash, p, len, key->head, key->tail, dst, 1, 0);
            return BPE_OK;
        }
    }
    status = rk_merge_cut(r, text, text_len, pos, len, c, s, dst, count);
    c->stats[BPE_PIECE_CACHE_MERGES]++;
    if (status != BPE_OK || len > RK_SPILL_MAX_PIECE)
        return status;
    if (len <= BPE__PC_LONG_BYTES && *count <= BPE__PC_LONG_IDS) {
        bpe__pc_put(c, key->hash, p, len, key->head, key->tail, dst, *count, 1);
    } else if (pos <= UINT32_MAX && produced <= UINT32_MAX) {
        if (!s->spill && !(s->spill = calloc(s->spill_slots, sizeof *s->spill)))
            return BPE_ENOMEM;
        spill = &s->spill[(size_t)(key->hash >> 32) & (s->spill_slots - 1)];
        spill->head = key->head;
        spill->tail = key->tail;
        spill->len = (uint32_t)len;
        spill->text_pos = (uint32_t)pos;
        spill->out_pos = (uint32_t)produced;
        spill->count = (uint32_t)*count;
    }
    return status;
}

/* Encodes the piece text[pos..pos+len) to out[produced..]; *count gets the
 * number of IDs.  text[0..text_len) is the whole buffer (rk_key_of may read
 * up to 8 bytes of it at once).  Order of attempts: one byte; the piece
 * cache (piece_cache.h), asked before the token table: a piece that is not
 * a token would otherwise probe the table in vain (a cache miss) every time
 * it comes back; then rk_encode_piece_miss.  rk_encode_piece has the
 * pieces of 2-16 bytes. */
static int rk_encode_piece_rest(const bpe_ranks *r, const unsigned char *text,
                                size_t text_len, size_t pos, size_t len, bpe_piece_cache *c,
                                rk_scratch *s, uint32_t *out, size_t produced, size_t *count)
{
    const unsigned char *p = text + pos;
    uint32_t *dst = out + produced;
    rk_key key;
    *count = 0;
    if (len == 0)
        return BPE_OK;
    if (len == 1) {
        uint32_t k = r->byte_part[p[0]];
        if (k >= r->n_tokens)
            return BPE_EINVAL; /* a byte with no token */
        *dst = rk_id(r, k);
        *count = 1;
        return BPE_OK;
    }
    if (len > r->max_token_len && len > RK_SPILL_MAX_PIECE) {
        /* no token, never cached: skip hashing it (1 MB: ~1 ms) */
        c->stats[BPE_PIECE_CACHE_MERGES]++;
        return rk_merge_cut(r, text, text_len, pos, len, c, s, dst, count);
    }
    key = rk_key_of(p, len, text + text_len);
    if (len <= BPE__PC_LONG_BYTES &&
        (*count = bpe__pc_get(c, key.hash, p, len, key.head, key.tail, dst)) != 0)
        return BPE_OK;
    return rk_encode_piece_miss(r, text, text_len, pos, len, &key, c, s, out, produced, count);
}

/* rk_encode_piece_rest, with its common cases inline in the callers'
 * loops: one byte, and pieces of 2-16 bytes the piece cache knows. */
static inline int rk_encode_piece(const bpe_ranks *r, const unsigned char *text,
                                  size_t text_len, size_t pos, size_t len, bpe_piece_cache *c,
                                  rk_scratch *s, uint32_t *out, size_t produced, size_t *count)
{
    /* The hot path first, where it can be inlined in the callers' loops:
     * two pieces in three of Shakespeare are short whole tokens the cache
     * knows (319,000 of 476,000 per 2 MB), and each paid the call of the
     * large function below (its prologue saving six registers).  Pieces of
     * up to 16 bytes the cache knows otherwise (two or three IDs; Python's
     * runs of spaces) are a quarter of Python source's pieces: asked here
     * too, with the key computed once, and a miss passes the key on.
     *   One-byte pieces (a comma, a newline: a fifth of Shakespeare's
     * pieces) take the same way, through the token entries, where they
     * are put the first time.  They had a branch of their own, and one
     * piece in four taking it at random cost more than the few
     * instructions byte_part saves (the file's notes: "One-byte pieces"). */
    if (len - 1 < 16) { /* 1 <= len <= 16 */
        rk_key key = rk_key_of(text + pos, len, text + text_len);
        size_t n;
        if (len <= 8 && r->whole_piece) {
            uint32_t id = bpe__pc_tok_get(c, key.hash, key.head, len);
            if (id != BPE__PC_NONE) {
                out[produced] = id;
                *count = 1;
                return BPE_OK;
            }
        }
        if (len == 1) {
            /* The byte's part; a byte with no token is the call's error. */
            uint32_t k = r->byte_part[text[pos]];
            if (k >= r->n_tokens)
                return BPE_EINVAL;
            out[produced] = rk_id(r, k);
            *count = 1;
            if (r->whole_piece)
                bpe__pc_tok_put(c, key.hash, key.head, 1, out[produced], 1);
            return BPE_OK;
        }
        n = bpe__pc_get(c, key.hash, text + pos, len, key.head, key.tail, out + produced);
        if (n != 0) {
            *count = n;
            return BPE_OK;
        }
        return rk_encode_piece_miss(r, text, text_len, pos, len, &key, c, s, out, produced,
                                    count);
    }
    return rk_encode_piece_rest(r, text, text_len, pos, len, c, s, out, produced, count);
}

/* A cache of the call's own, for the entry points without one: sized to the
 * text, so a call on a handful of bytes does not pay for clearing a large
 * one.  Units of 64 bytes: one per 32 bytes of text, 16 to 16,384 (the
 * per-call caches before the cross-call one held 16,384 entries of each
 * kind; on o200k prose 65,536 were no better). */
static int rk_call_cache(bpe_piece_cache *c, size_t text_len)
{
    size_t units = BPE__PC_MIN_UNITS;
    while (units < 16384 && units * 32 < text_len)
        units *= 2;
    return bpe__pc_init(c, units);
}

/* Byte length of the first `chars` UTF-8 characters of p[0..avail). */
static int rk_utf8_span(const unsigned char *p, size_t avail, size_t chars,
                        size_t *len_out)
{
    size_t pos = 0;
    while (chars-- > 0) {
        unsigned char b;
        size_t step;
        if (pos >= avail)
            return BPE_EINVAL;
        b = p[pos];
        step = bpe__utf8_lead_len(b); /* 0: a continuation or bad byte */
        if (step == 0 || step > avail - pos)
            return BPE_EINVAL;
        pos += step;
    }
    *len_out = pos;
    return BPE_OK;
}

int bpe_ranks_encode(const bpe_ranks *r, const unsigned char *text,
                     size_t text_len, const uint32_t *lens, size_t n_pieces,
                     int lens_in_chars, uint32_t *out, size_t *n_out)
{
    rk_scratch s;
    bpe_piece_cache c;
    size_t pos = 0, produced = 0, i;
    int status = BPE_OK;
    if (!r || !n_out || (text_len && (!text || !out)) || (n_pieces && !lens))
        return BPE_EINVAL;
    *n_out = 0;
    if ((status = rk_call_cache(&c, text_len)) != BPE_OK)
        return status;
    rk_scratch_init(&s, text_len);
    for (i = 0; i < n_pieces; i++) {
        size_t len = lens[i], count = 0;
        if (lens_in_chars) {
            if ((status = rk_utf8_span(text + pos, text_len - pos, lens[i], &len)) != BPE_OK)
                goto cleanup;
        } else if (len > text_len - pos) {
            status = BPE_EINVAL;
            goto cleanup;
        }
        status = rk_encode_piece(r, text, text_len, pos, len, &c, &s, out, produced, &count);
        if (status != BPE_OK)
            goto cleanup;
        produced += count;
        pos += len;
    }
    if (pos != text_len)
        status = BPE_EINVAL;
cleanup:
    rk_scratch_done(&s);
    bpe__pc_done(&c);
    *n_out = produced;
    return status;
}

/* Pieces cut per call of the scanner: one call per piece cost ~4% of an
 * encode (the call through the PLT, the dispatch on the pattern), and a run
 * of pieces lets pretok.c classify 64 bytes at once. */
#define RK_CUT 128

/* Cuts text[start..end) with `pattern` and encodes every piece to
 * out[*produced..], advancing *produced. */
static int rk_encode_span(const bpe_ranks *r, int pattern, const unsigned char *text,
                          size_t text_len, size_t start, size_t end, bpe_piece_cache *c,
                          rk_scratch *s, uint32_t *out, size_t *produced)
{
    /* `at` is *produced kept in a register: the cache's one-byte counts,
     * written on every hit, may alias anything for the compiler. */
    size_t pos = start, at = *produced, ends[RK_CUT];
    int status = BPE_OK;
    while (pos < end && status == BPE_OK) {
        size_t n = bpe__pretok_cut(pattern, text + start, end - start, pos - start, ends, RK_CUT),
               k;
        if (n == 0)
            return BPE_EINVAL; /* unknown pattern */
        for (k = 0; k < n; k++) {
            size_t stop = start + ends[k], count = 0;
            status = rk_encode_piece(r, text, text_len, pos, stop - pos, c, s, out, at, &count);
            if (status != BPE_OK)
                break;
            at += count;
            pos = stop;
        }
    }
    *produced = at;
    return status;
}

int bpe_ranks_encode_text(const bpe_ranks *r, int pattern,
                          const unsigned char *text, size_t text_len,
                          uint32_t *out, size_t *n_out)
{
    size_t one_end = text_len, out_end = 0;
    int status;
    if (!n_out)
        return BPE_EINVAL;
    status = bpe_ranks_encode_batch(r, pattern, text, text_len, &one_end, 1, out, &out_end);
    *n_out = out_end;
    return status;
}

/* bpe_ranks_encode_cached's checks, then its loop over the texts, with
 * cache c (never NULL here). */
static int rk_encode_texts(const bpe_ranks *r, bpe_piece_cache *c, int pattern,
                           const unsigned char *text, size_t text_len,
                           const size_t *text_ends, size_t n_texts,
                           uint32_t *out, size_t *out_ends)
{
    rk_scratch s;
    size_t start = 0, produced = 0, i;
    int status = BPE_OK;
    rk_scratch_init(&s, text_len);
    for (i = 0; i < n_texts; i++) {
        status = rk_encode_span(r, pattern, text, text_len, start, text_ends[i], c, &s, out,
                                &produced);
        if (status != BPE_OK)
            break;
        out_ends[i] = produced;
        start = text_ends[i];
    }
    rk_scratch_done(&s);
    return status;
}

/* The argument checks of both batch entry points. */
static int rk_check_batch(const bpe_ranks *r, const unsigned char *text, size_t text_len,
                          const size_t *text_ends, size_t n_texts, const uint32_t *out,
                          size_t *out_ends)
{
    size_t i;
    if (!r || (text_len && (!text || !out)) || (n_texts && (!text_ends || !out_ends)))
        return BPE_EINVAL;
    for (i = 0; i < n_texts; i++) {
        out_ends[i] = 0;
        if (text_ends[i] < (i ? text_ends[i - 1] : 0) || text_ends[i] > text_len)
            return BPE_EINVAL;
    }
    if (n_texts && text_ends[n_texts - 1] != text_len)
        return BPE_EINVAL;
    return BPE_OK;
}

int bpe_ranks_encode_batch(const bpe_ranks *r, int pattern,
                           const unsigned char *text, size_t text_len,
                           const size_t *text_ends, size_t n_texts,
                           uint32_t *out, size_t *out_ends)
{
    bpe_piece_cache c;
    int status = rk_check_batch(r, text, text_len, text_ends, n_texts, out, out_ends);
    if (status != BPE_OK || n_texts == 0)
        return status;
    if ((status = rk_call_cache(&c, text_len)) != BPE_OK)
        return status;
    status = rk_encode_texts(r, &c, pattern, text, text_len, text_ends, n_texts, out, out_ends);
    bpe__pc_done(&c);
    return status;
}

int bpe_ranks_encode_cached(const bpe_ranks *r, bpe_piece_cache *cache, int pattern,
                            const unsigned char *text, size_t text_len,
                            const size_t *text_ends, size_t n_texts,
                            uint32_t *out, size_t *out_ends)
{
    int status = rk_check_batch(r, text, text_len, text_ends, n_texts, out, out_ends);
    if (status != BPE_OK)
        return status;
    if (!cache || (cache->owner && cache->owner != (const void *)r))
        return BPE_EINVAL;
    cache->owner = r;
    return rk_encode_texts(r, cache, pattern, text, text_len, text_ends, n_texts, out, out_ends);
}

/* ---- One batch shared by threads (text.h, bpe_ranks_encode_shared) ----
 *
 * Why: two threads with one static slice each (pybpe/encoding.py before)
 * ran at 1.44-1.62x one thread on 10 KB documents.  The two C calls of one
 * batch ran at speeds 10-25% apart (the other core's neighbours, cache
 * misses), so one thread waited ~0.5 ms at the end, and more, smaller static
 * slices cost more than they saved (each its own call, GIL crossing and
 * cold start).  Taking runs of ~16 KB from a shared cursor inside one call
 * per thread lets the faster thread do more, with no extra call.
 *
 * The cursor needs an atomic add.  C99 has none, so it is the GCC/Clang
 * __atomic builtins where the compiler has them (feature test below; they
 * need no flag, also under -std=c99 -pedantic); elsewhere, and with
 * BPE_BATCH_STATIC (tests run both), worker w takes the fixed runs w,
 * w + n, ... instead.  Each text's IDs have a region of their own (its
 * byte range of out), so nothing else is shared: out_ends[i] is stored with
 * release order once text i is done, so a thread that reads it with
 * acquire order (bpe_batch_ready) may read those IDs.
 *
 * Measured (tools/bench_batch_threads.py --rounds 7 under chrt -r 1, the
 * build before and this one in alternating processes, 3 runs each, sha256
 * control 2.05-2.16x): 2 threads / 1 thread 1.47-1.58x -> 1.53-1.72x.
 * Timeline of one call (gpt2, 120 x 10 KB, in the benchmark's loop): the
 * helper enters C ~0.04 ms after the caller (it has no UTF-8 to make) and
 * both leave within ~0.1 ms of each other.  What is left: the two calls
 * together spend ~13% more time in C than one thread (o200k 9.3 against
 * 8.2 ms), and that is the piece caches: each thread's cache learns its
 * own texts, so a piece new to one cache is merged again (merges per batch,
 * gpt2 7,271 on one thread, 8,542 on two; o200k 7,950 against 9,029).
 * Contiguous halves instead of runs merge a little less (gpt2 8,255,
 * o200k 8,951) but cannot even out the threads' speeds.  Dead ends (same benchmark, no
 * change beyond noise): the caller encoding a head of 1/16 of the batch
 * alone while a helper makes the rest's UTF-8 (the helper then entered C
 * ~0.4 ms in, not earlier); giving each worker back the cache it had last;
 * worker 0 building lists 4, 8, 16 times per batch or after every run. */
#if defined(__GNUC__) && defined(__ATOMIC_ACQUIRE) && !defined(BPE_NO_ATOMICS)
#define RK_ATOMICS 1
#define RK_TAKE(p, n) __atomic_fetch_add((p), (n), __ATOMIC_RELAXED)
#define RK_PUBLISH(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define RK_SEEN(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define RK_FLAG(p) __atomic_store_n((p), 1, __ATOMIC_RELAXED)
#define RK_FLAGGED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#else
#define RK_ATOMICS 0
#define RK_PUBLISH(p, v) (*(p) = (v))
#define RK_FLAG(p) ((void)(p))
#define RK_FLAGGED(p) 0
#endif

/* out_ends[i] of a text not done yet (no text ends there: out is text_len
 * items, text_len < SIZE_MAX). */
#define RK_PENDING SIZE_MAX

int bpe_batch_share_init(bpe_batch_share *share, size_t text_len, size_t n_texts,
                         size_t n_workers, int flags, size_t *out_ends)
{
    size_t i, mean;
    if (!share || n_workers == 0 || (n_texts && !out_ends) || (flags & ~BPE_BATCH_STATIC))
        return BPE_EINVAL;
    mean = n_texts ? text_len / n_texts : 0;
    share->next = 0;
    share->n_texts = n_texts;
    share->n_workers = n_workers;
    /* Texts of a run: enough for ~BPE_BATCH_RUN_BYTES (one take of the
     * cursor per ~0.1 ms of work), at least one; a text is never cut. */
    share->run = mean >= BPE_BATCH_RUN_BYTES ? 1 : BPE_BATCH_RUN_BYTES / (mean ? mean : 1);
    share->dynamic = RK_ATOMICS && !(flags & BPE_BATCH_STATIC);
    share->failed = 0;
    for (i = 0; i < n_texts; i++)
        out_ends[i] = RK_PENDING;
    return BPE_OK;
}

/* The first text of worker's next run (n_texts or more when none is left). */
static size_t rk_next_run(bpe_batch_share *share, size_t worker, size_t *position)
{
    size_t run_index, n_runs;
#if RK_ATOMICS
    if (share->dynamic)
        return RK_FLAGGED(&share->failed) ? share->n_texts : RK_TAKE(&share->next, share->run);
#endif
    n_runs = share->n_texts / share->run + (share->n_texts % share->run != 0);
    if (*position >= n_runs)
        return share->n_texts; /* past the last run (and no overflow below) */
    run_index = worker + *position * share->n_workers;
    if (run_index >= n_runs)
        return share->n_texts;
    ++*position;
    return run_index * share->run;
}

int bpe_ranks_encode_shared(const bpe_ranks *r, bpe_piece_cache *cache, int pattern,
                            const unsigned char *text, size_t text_len,
                            const size_t *text_ends, size_t n_texts,
                            bpe_batch_share *share, size_t worker, size_t *position,
                            size_t budget, uint32_t *out, size_t *out_ends)
{
    rk_scratch s;
    size_t i, first, encoded = 0;
    int status = BPE_OK;
    if (!r || !cache || !share || !position || share->n_texts != n_texts ||
        worker >= share->n_workers || (text_len && (!text || !out)) ||
        (n_texts && (!text_ends || !out_ends)) || (cache->owner && cache->owner != (const void *)r))
        return BPE_EINVAL;
    for (i = 0; i < n_texts; i++) /* checked, not written: the other workers write out_ends */
        if (text_ends[i] < (i ? text_ends[i - 1] : 0) || text_ends[i] > text_len)
            return BPE_EINVAL;
    if (n_texts && text_ends[n_texts - 1] != text_len)
        return BPE_EINVAL;
    cache->owner = r;
    rk_scratch_init(&s, text_len);
    while ((first = rk_next_run(share, worker, position)) < n_texts) {
        size_t last = n_texts - first < share->run ? n_texts : first + share->run;
        for (i = first; i < last; i++) {
            size_t start = i ? text_ends[i - 1] : 0, produced = start;
            status = rk_encode_span(r, pattern, text, text_len, start, text_ends[i], cache, &s,
                                    out, &produced);
            if (status != BPE_OK) {
                RK_FLAG(&share->failed);
                goto done;
            }
            RK_PUBLISH(&out_ends[i], produced);
            encoded += text_ends[i] - start;
        }
        if (budget && encoded >= budget) {
            status = BPE_BATCH_MORE;
            break;
        }
    }
done:
    rk_scratch_done(&s);
    return status;
}

size_t bpe_batch_ready(const bpe_batch_share *share, const size_t *out_ends, size_t first)
{
#if RK_ATOMICS
    if (share && out_ends)
        while (first < share->n_texts && RK_SEEN(&out_ends[first]) != RK_PENDING)
            first++;
#else
    (void)share;
    (void)out_ends;
#endif
    return first;
}
