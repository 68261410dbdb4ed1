/*
 * ranks_internal.h -- the rank table's layout and the lookups its three
 * files share (text level; the public contract is text.h).  ranks_build.c
 * builds a bpe_ranks, ranks_merge.c merges one piece the caches do not
 * know, ranks.c encodes texts piece by piece through the piece cache.
 * Everything here is static inline: the lookups are the hot path of every
 * merge, so each file gets its own copy, inlined as before the split.
 * What was measured and what did not pay: csrc/NOTES.md.
 */
#ifndef PYBPE_RANKS_INTERNAL_H
#define PYBPE_RANKS_INTERNAL_H

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "text_internal.h"
#include "merge.h"
#include "piece_cache.h"

#define RK_NONE UINT32_MAX          /* no part / no priority / dead node */
#define RK_EMPTY_KEY UINT64_MAX     /* an empty slot of the pair table */

/*
 * The table.  A *part* is what merging works on: a token index k
 * (0 <= k < n_tokens) or, for a single byte b that is not itself a token,
 * the pseudo index n_tokens + b.  A pseudo part can still merge (tiktoken
 * merges byte ranges, and "ab" may be a token when "a" is not) but can never
 * be output.
 *
 *   tok_slots   open addressing over token bytes (rk_tok_slot), with
 *               tok_tails beside it; load <= 4/5 (rk_dense_capacity), so a
 *               probe always reaches an empty slot.
 *   pairs       open addressing over (left part, right part) -> (priority,
 *               result part); load <= 1/2, or 4/5 with compact slots
 *               (rk_alloc_pairs); RK_EMPTY_KEY marks empty.
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
 * already there.  (Since then REACHED PAIRS and a fuller table made them 2
 * and 1 MB: ranks_build.c, rk_alloc_pairs.)
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
    /* tok_tails[i]: the last eight bytes of slot i's token when it has more
     * than eight (0 otherwise).  Beside the slots, not in them: a lookup of
     * a longer piece reads slot i and tok_tails[i] at once (both addresses
     * come from the hash), where it read the slot, then offsets[k], then
     * the token's bytes, three misses one after the other (rk_lookup_key). */
    uint64_t *tok_tails;
    size_t tok_mask;
    rk_pair *pairs;           /* NULL when cpairs is used */
    uint64_t *cpairs;         /* compact slots (RK_CPART_BITS), or NULL */
    size_t pair_mask, n_pairs;
    /* byte_pairs[a << 8 | b]: the pair (part of byte a, part of byte b), a
     * copy of its pair-table entry (prio RK_NONE when there is none).  Every
     * merge starts from single bytes, so a piece's first n - 1 lookups come
     * here: one 512 KB array whose used corner (letters after letters)
     * stays in cache, instead of probes all over the pair table (16 MB for
     * o200k when this came, 2 MB now).  NULL for small vocabularies. */
    rk_byte_pair *byte_pairs;
    /* One bit per hash value (rk_tok_filter_bit) of the token table's
     * bytes, RK_TOK_FILTER_BITS per token: a piece whose bit is clear is no
     * token, so a piece that must be merged (first seen in this call) skips
     * the probe of the token table, a cache miss on o200k (4 MB), in ~88%
     * of cases.  256 KB for o200k.  NULL for small vocabularies (same
     * threshold as byte_pairs). */
    uint64_t *tok_filter;
    size_t tok_filter_mask;   /* number of bits - 1 */
    /* The same for the pair table, by bpe__mix64 of the pair's key: most pairs
     * a merge asks about do not exist, and each such question was a probe
     * of the pair table (16 MB for o200k when this came, 2 MB now), a
     * cache miss. */
    uint64_t *pair_filter;
    size_t pair_filter_mask;
    int whole_piece;
    /* Every pair's result is the concatenation of its halves' bytes (always
     * under tiktoken's rule; checked for a merge list), so a part's width in
     * a piece is its token's length: what rk_merge_windows needs. */
    int results_concatenate;
    size_t max_token_len;     /* bytes of the longest token */
    /* Bit a << 8 | b set when no token holds byte a followed by byte b, so
     * a piece may be cut between them (bpe__ranks_merge_cut); 8 KB.  NULL when
     * results do not concatenate (then nothing is cut) or when the span
     * filter is used instead for every piece. */
    uint64_t *cut_ok;
    /* The span filter (bpe__ranks_merge_cut): two bits per cell, cell picked by
     * rk_span_cell of a rolling hash of a string -- bit 0 "some token
     * starts with this string and goes on", bit 1 "maybe a token".  No
     * false negatives, so a walk guided by it finds every token starting at
     * a place; false positives only walk further or ask the token table.
     * NULL when results do not concatenate or cut_ok is used instead;
     * with cut_ok too, it is for the pieces that end in a character of
     * three bytes (ranks_build.c, RK_WIDE_PAIRS_DIV). */
    uint64_t *span_filter;
    unsigned span_shift;      /* 64 - log2(cells) */
    /* With the span filter: [a << 8 | b] the bytes of the longest token
     * that starts with bytes a, b (0: none; RK_SPAN_LONG: that many or
     * more), so that bpe__ranks_merge_cut skips a walk that cannot reach
     * past where others reached; 64 KB. */
    uint8_t *span_longest;
    /* Where offsets, the slots and tails, the pair table, the filters,
     * byte_pairs and the span arrays live (arena.c): freed together, on
     * huge pages where the system has them. */
    bpe__arena arena;
};
#define RK_SPAN_LONG 255

/* ------------------------------------------------------------------ hashing */

/* Eight bytes at p as one number (host byte order). */
static inline uint64_t rk_load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The first min(n, 8) bytes of p, zero-padded, read as one number in host
 * byte order: a token slot's head.  rk_key_of has the fast way; this one
 * never reads past p[n - 1]. */
static inline uint64_t rk_head(const unsigned char *p, size_t n)
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

BPE__ALWAYS_INLINE uint64_t rk_key_hash(const unsigned char *p, size_t n, uint64_t head, uint64_t tail)
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
BPE__ALWAYS_INLINE rk_key rk_key_of(const unsigned char *p, size_t n, const unsigned char *end)
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
static inline uint32_t rk_len32(size_t n)
{
    return n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;
}

/* Token index of the bytes p[0..n) whose key is *key, or RK_NONE. */
static inline uint32_t rk_lookup_key(const bpe_ranks *r, const unsigned char *p, size_t n,
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
            /* Beyond 8 bytes, the tail: with the head and the length it
             * spells a piece of up to 16 bytes.  tok_tails[i], not the
             * token's bytes through offsets[k]: its address does not wait
             * for the slot (on text no cache has seen, after other work:
             * tools/bench_unseen.c, 8 unseen 0.5 MB slices, 64 MB touched
             * before each call, medians of 7-9 alternating rounds, Python
             * source gpt2 -4.7%, cl100k -3.6%, o200k -5.3%; prose gpt2
             * -6%, o200k -4%; multilingual cl100k -1.5%).  Longer tokens
             * compare the bytes between as well. */
            if (r->tok_tails[i] == key->tail) {
                if (n <= 16)
                    return (uint32_t)k;
                t = r->bytes + r->offsets[k];
                if (r->offsets[k + 1] - r->offsets[k] == n && memcmp(t + 8, p + 8, n - 16) == 0)
                    return (uint32_t)k;
            }
        }
        i = (i + 1) & r->tok_mask;
    }
}

/* Slot of key in the pair table, starting from its hash m = bpe__mix64(key). */
static inline size_t rk_pair_slot_mixed(const bpe_ranks *r, uint64_t key, uint64_t m)
{
    size_t i = (size_t)m & r->pair_mask;
    while (r->pairs[i].key != RK_EMPTY_KEY && r->pairs[i].key != key)
        i = (i + 1) & r->pair_mask;
    return i;
}

static inline size_t rk_pair_slot(const bpe_ranks *r, uint64_t key)
{
    return rk_pair_slot_mixed(r, key, bpe__mix64(key));
}

/* The pair filter's bit for a pair whose key mixes to m (high bits: the
 * low ones index the table). */
static inline size_t rk_pair_filter_bit(const bpe_ranks *r, uint64_t m)
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
 * dead end in csrc/NOTES.md). */
static inline uint32_t rk_pair_get(const bpe_ranks *r, uint32_t left, uint32_t right,
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

/* The number of bytes of token index k. */
static inline size_t rk_len(const bpe_ranks *r, size_t k)
{
    return r->offsets[k + 1] - r->offsets[k];
}

/* The filter bit of a piece whose rk_hash_bytes is h (bits other than
 * the ones that index the token table and the per-call caches). */
static inline size_t rk_tok_filter_bit(const bpe_ranks *r, uint64_t h)
{
    return (size_t)(h >> 13) & r->tok_filter_mask;
}

/* 0 when no token hashes to h (so the piece is certainly no token). */
static inline int rk_maybe_token(const bpe_ranks *r, uint64_t h)
{
    size_t b;
    if (!r->tok_filter)
        return 1;
    b = rk_tok_filter_bit(r, h);
    return (int)(r->tok_filter[b / 64] >> (b % 64) & 1);
}

/* The rolling hash of the span filter: h of a string, then h of it with
 * byte b appended.  One multiply a byte; the cell is read from the high
 * bits, which depend on every bit of the string. */
#define RK_SPAN_SEED BPE__FNV_OFFSET
static inline uint64_t rk_span_step(uint64_t h, unsigned char b)
{
    return (h ^ b) * BPE__GOLDEN64;
}

/* The ID of token index k.  A tiktoken file lists its tokens in rank order,
 * so there the ID is the index and the ids[] load -- a cache miss on large
 * vocabularies -- is skipped. */
static inline uint32_t rk_id(const bpe_ranks *r, uint32_t k)
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
 * back (csrc/NOTES.md, "The piece cache", has the figures).  Direct-mapped, a new
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

static inline void rk_scratch_use_small(rk_scratch *s)
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
static inline void rk_scratch_init(rk_scratch *s, size_t text_len)
{
    rk_scratch_use_small(s);
    s->spill = NULL;
    s->spill_slots = RK_SPILL_MIN;
    while (s->spill_slots < RK_SPILL_MAX && s->spill_slots * 256 < text_len)
        s->spill_slots *= 2;
}

/* Frees what the scratch allocated (it is then back on its small arrays). */
static inline void rk_scratch_free(rk_scratch *s)
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
static inline void rk_scratch_done(rk_scratch *s)
{
    rk_scratch_free(s);
    free(s->spill);
    s->spill = NULL;
}

static inline int rk_scratch_reserve(rk_scratch *s, size_t n)
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
static inline uint32_t rk_rule(const void *table, uint32_t left, uint32_t right,
                               uint32_t born_left, uint32_t born_right,
                               uint32_t *result)
{
    (void)born_left;
    (void)born_right;
    return rk_pair_get((const bpe_ranks *)table, left, right, result);
}

/* The IDs of the piece text[pos..pos+len) (len >= 2) that neither cache
 * knew, into dst; *count gets their number (ranks_merge.c).  A long piece
 * is cut into units where no token spans the cut, each unit asked of the
 * piece cache c; what is merged uses s. */
int bpe__ranks_merge_cut(const bpe_ranks *r, const unsigned char *text, size_t text_len,
                         size_t pos, size_t len, bpe_piece_cache *c, rk_scratch *s,
                         uint32_t *dst, size_t *count);

#endif
