/*
 * piece_cache.h -- the piece cache of ranks.c: a piece's bytes -> its IDs,
 * kept from one encode call to the next.  Text level (bpe.h names the
 * layers); not part of the API: text.h publishes bpe_piece_cache and its
 * life cycle, piece_cache.c builds and frees it, and the lookups below are
 * static inline because ranks.c asks them once per piece.
 *
 * Why across calls.  Text repeats its pieces (Zipf: on Shakespeare the 2%
 * most frequent distinct pieces are 80% of all), so most of encoding is
 * recognising pieces seen before.  A cache that lives in one call starts
 * cold every time: each call pays a probe of the token table (a cache miss,
 * 8 MB for o200k) for every distinct whole token and a merge for every
 * distinct other piece, and a call of 200 bytes sees nearly every piece for
 * the first time in that call.  This cache is an object of its own
 * (bpe_piece_cache_new), passed to bpe_ranks_encode_cached, so the library
 * keeps no global mutable state and stays reentrant: a cache is written by
 * the call that uses it, so it must have one user at a time -- Python keeps
 * one per thread per Encoding (pybpe/encoding.py), with no lock anywhere.
 * It answers for the one table it was first used with (the others are
 * refused, BPE_EINVAL).
 *
 * Three tables, each split into sets of a few entries (ways), an entry
 * holding its piece (so an answer is exact: never a hash match alone) and
 * its IDs:
 *   tok    whole tokens of 2-8 bytes: head (the bytes, zero-padded), length,
 *          ID; 16 bytes, 4 ways = one 64-byte line per set.
 *   two    pieces of 2-8 bytes that merge to two IDs (the second below
 *          2^24): head, both IDs, length; 16 bytes, 4 ways per line.
 *   short  other pieces of 2-16 bytes with at most 3 IDs, and whole tokens
 *          of 9-16 bytes: head and tail (first and last 8 bytes, which spell
 *          the piece with its length), IDs; 32 bytes, 2 ways per line.
 *   long   the rest up to 64 bytes and 14 IDs: head, tail and the bytes
 *          between, IDs; 128 bytes, 2 ways.
 * Longer pieces and longer answers are not cached (they rarely come back).
 * Entries per unit of size: tok n, two n, short n / 2, long n / 8, so
 * 64 * n bytes; n is a multiple of 16, the largest that fits the size
 * asked for (csrc/NOTES.md, "The piece cache": why this split).
 *
 * Which entry a new piece replaces (the policy): see BPE__PC_POLICY, and
 * csrc/NOTES.md, "The piece cache", for what was measured.
 */
#ifndef PYBPE_PIECE_CACHE_H
#define PYBPE_PIECE_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "text.h"

/* Policies, chosen at compile time (csrc/NOTES.md, "The piece cache", has the measurements;
 * 3 won, the others stay for measuring again):
 *   1  direct-mapped, a new piece overwrites its slot (one way per set);
 *   2  least frequent: each entry counts its hits (up to BPE__PC_FREQ_MAX);
 *      a new piece takes an empty way or the least-counted one, and every
 *      miss in a set ages the others by one, so stale favourites go;
 *   3  admission on second sight: counts as in 2, but a new piece only
 *      replaces an entry whose count is 0; otherwise that count drops by
 *      one and the piece is not stored (it must come back to get in). */
#ifndef BPE__PC_POLICY
#define BPE__PC_POLICY 3
#endif
#define BPE__PC_FREQ_MAX 15

#if BPE__PC_POLICY == 1
#define BPE__PC_TOK_WAYS 1
#define BPE__PC_TWO_WAYS 1
#define BPE__PC_SHORT_WAYS 1
#define BPE__PC_LONG_WAYS 1
#else
#define BPE__PC_TOK_WAYS 4
#define BPE__PC_TWO_WAYS 4
#define BPE__PC_SHORT_WAYS 2
#define BPE__PC_LONG_WAYS 2
#endif

#define BPE__PC_SHORT_IDS 3
#define BPE__PC_LONG_BYTES 64  /* the longest piece cached */
#define BPE__PC_LONG_IDS 14
#define BPE__PC_NONE UINT32_MAX

/* merged, in each entry: 1 when its IDs are what merging the piece gives,
 * 0 when they are only the whole-piece rule's answer (one ID: the piece is
 * a token).  The two differ for a token that merging its own bytes does not
 * reach; ranks_merge.c's pieces cut into units (rk_encode_unit) must have the
 * merged answer, so they trust a one-ID entry only when it says merged. */
typedef struct {
    uint64_t head;           /* the token's bytes, zero-padded */
    uint32_t id;
    uint8_t len, freq;       /* len 0: empty */
    uint8_t merged, pad;
} bpe__pc_tok;

typedef struct {
    uint64_t head, tail;     /* first and last 8 bytes (they overlap below 16) */
    uint32_t ids[BPE__PC_SHORT_IDS];
    uint8_t len, count, freq, merged;
} bpe__pc_short;

typedef struct {
    uint64_t head, tail;     /* as in short */
    unsigned char mid[BPE__PC_LONG_BYTES - 16];  /* bytes 8 .. len - 8 */
    uint32_t ids[BPE__PC_LONG_IDS];
    uint8_t len, count, freq, merged, pad[4];
} bpe__pc_long;

/* Pieces of 2-8 bytes that merge to two IDs (half the pieces a prose
 * slice merges, the most common kind of entry), in half a short entry: no
 * tail, and the second ID, the length and the count share a word.  No
 * merged flag: two IDs are always merging's answer. */
typedef struct {
    uint64_t head;           /* the piece's bytes, zero-padded */
    uint32_t id;             /* the first ID */
    uint32_t rest;           /* second ID << 8 | len << 4 | freq; len 0: empty */
} bpe__pc_two;
#define BPE__PC_TWO_ID_MAX 0xFFFFFFu  /* a larger second ID goes to short */

typedef char bpe__pc_sizes_are_lines[sizeof(bpe__pc_tok) == 16 && sizeof(bpe__pc_two) == 16 &&
                                     sizeof(bpe__pc_short) == 32 &&
                                     sizeof(bpe__pc_long) == 128 ? 1 : -1];

/* Entries per unit of size: tok and two 1, short 1 / BPE__PC_SHORT_DIV,
 * long 1 / BPE__PC_LONG_DIV (csrc/NOTES.md, "The piece cache", has the measurements). */
#ifndef BPE__PC_SHORT_DIV
#define BPE__PC_SHORT_DIV 2
#endif
#ifndef BPE__PC_LONG_DIV
#define BPE__PC_LONG_DIV 8
#endif
/* Units come in steps of this many (whole sets in every table). */
#define BPE__PC_MIN_UNITS (2 * BPE__PC_LONG_DIV > 4 * BPE__PC_SHORT_DIV \
                           ? 2 * BPE__PC_LONG_DIV : 4 * BPE__PC_SHORT_DIV)

struct bpe_piece_cache {
    const void *owner;       /* the table its answers belong to (first use) */
    bpe__pc_tok *tok;
    bpe__pc_two *two;
    bpe__pc_short *shrt;
    bpe__pc_long *lng;
    size_t tok_sets, two_sets, short_sets, long_sets;
    uint8_t two_merged;      /* 1: what bpe__pc_find points a two hit's flag to */
    void *block;             /* the one allocation the tables live in */
    size_t bytes;            /* its size */
    uint64_t stats[BPE_PIECE_CACHE_NSTATS];
};

/* Internal life cycle, for ranks.c's calls without a cache of their own: a
 * cache of `units` (a multiple of 16, at least 16) on the caller's stack. */
int bpe__pc_init(bpe_piece_cache *c, size_t units);
void bpe__pc_done(bpe_piece_cache *c);
/* Reads the whole cache once, front to back, when text_len is at least
 * its size / BPE__PC_WARM_DIV: a call on that much text asks about most
 * of its lines, which then need not come one miss at a time
 * (piece_cache.c says what it was measured to do). */
#define BPE__PC_WARM_DIV 16
void bpe__pc_warm(const bpe_piece_cache *c, size_t text_len);
/* The units of a cache of at most max_bytes (0 when even the smallest does
 * not fit). */
size_t bpe__pc_units_for_bytes(size_t max_bytes);

/* The lookups run once per piece: inlined into ranks.c's loops (with more
 * than one caller GCC kept bpe__pc_find out of line, a call per piece). */
#define BPE__PC_INLINE BPE__ALWAYS_INLINE

/* The set a hash picks, 0 <= set < sets: the high 32 bits of the hash (the
 * low ones pick the token table's slot, bits 13 and up its filter's) scaled
 * to the number of sets, which so need not be a power of two. */
static inline size_t bpe__pc_set(uint64_t hash, size_t sets)
{
    return (size_t)(((hash >> 32) * (uint64_t)sets) >> 32);
}

/* A hit: the entry's count goes up, to BPE__PC_FREQ_MAX. */
#if BPE__PC_POLICY == 1
#define BPE__PC_HIT(e) ((void)0)
#else
#define BPE__PC_HIT(e) ((e)->freq += (e)->freq < BPE__PC_FREQ_MAX)
#endif

/*
 * The way of a full or partly empty set `set` (of `ways` entries with
 * members len and freq) that a new piece goes to, in *way; ways when the
 * policy keeps it out.  A macro, since the three entry types differ; each
 * line says the policy.
 */
#define BPE__PC_PICK(set, ways, way)                                           \
    do {                                                                       \
        unsigned w_, min_ = 0;                                                 \
        *(way) = (ways);                                                       \
        for (w_ = 0; w_ < (ways); w_++) {                                      \
            if ((set)[w_].len == 0) { /* an empty way first */                 \
                *(way) = w_;                                                   \
                break;                                                         \
            }                                                                  \
            if ((set)[w_].freq < (set)[min_].freq)                             \
                min_ = w_;                                                     \
        }                                                                      \
        if (*(way) == (ways)) {                                                \
            if (BPE__PC_POLICY == 3 && (set)[min_].freq > 0) {                 \
                (set)[min_].freq--; /* not admitted: the incumbent ages */     \
            } else {                                                           \
                if (BPE__PC_POLICY == 2) /* every other way ages */            \
                    for (w_ = 0; w_ < (ways); w_++)                            \
                        (set)[w_].freq -= (set)[w_].freq > 0;                  \
                *(way) = min_;                                                 \
            }                                                                  \
        }                                                                      \
    } while (0)

/* The entry of the whole token of 2-8 bytes with this head and length, or
 * NULL. */
BPE__PC_INLINE bpe__pc_tok *bpe__pc_tok_find(bpe_piece_cache *c, uint64_t hash, uint64_t head,
                                            size_t len)
{
    bpe__pc_tok *set = &c->tok[bpe__pc_set(hash, c->tok_sets) * BPE__PC_TOK_WAYS];
    unsigned w;
    for (w = 0; w < BPE__PC_TOK_WAYS; w++)
        if (set[w].head == head && set[w].len == len) {
            BPE__PC_HIT(&set[w]);
            return &set[w];
        }
    return NULL;
}

/* Its ID, or BPE__PC_NONE. */
BPE__PC_INLINE uint32_t bpe__pc_tok_get(bpe_piece_cache *c, uint64_t hash, uint64_t head,
                                       size_t len)
{
    bpe__pc_tok *e = bpe__pc_tok_find(c, hash, head, len);
    return e ? e->id : BPE__PC_NONE;
}

/* Remembers the token `id` of 2-8 bytes (merged: see the entries). */
static inline void bpe__pc_tok_put(bpe_piece_cache *c, uint64_t hash, uint64_t head,
                                   size_t len, uint32_t id, int merged)
{
    bpe__pc_tok *set = &c->tok[bpe__pc_set(hash, c->tok_sets) * BPE__PC_TOK_WAYS];
    unsigned w;
    BPE__PC_PICK(set, BPE__PC_TOK_WAYS, &w);
    if (w == BPE__PC_TOK_WAYS)
        return;
    set[w].head = head;
    set[w].len = (uint8_t)len;
    set[w].id = id;
    set[w].freq = 0;
    set[w].merged = (uint8_t)merged;
}

/* Looks a piece of 2-64 bytes up in the short and long tables: copies its
 * IDs to out and returns their number, or 0.  p[0..len) is the piece, head
 * and tail its rk_key words (tail 0 up to 8 bytes).  On a hit, *merged (when
 * merged is not NULL) points to the entry's merged flag. */
BPE__PC_INLINE size_t bpe__pc_find(bpe_piece_cache *c, uint64_t hash, const unsigned char *p,
                                  size_t len, uint64_t head, uint64_t tail, uint32_t *out,
                                  uint8_t **merged)
{
    unsigned w, j;
    if (len <= 8) {
        bpe__pc_two *set = &c->two[bpe__pc_set(hash, c->two_sets) * BPE__PC_TWO_WAYS];
        for (w = 0; w < BPE__PC_TWO_WAYS; w++)
            if (set[w].head == head && (set[w].rest >> 4 & 15) == len) {
                if (BPE__PC_POLICY != 1)
                    set[w].rest += (set[w].rest & 15) < BPE__PC_FREQ_MAX;
                out[0] = set[w].id;
                out[1] = set[w].rest >> 8;
                if (merged)
                    *merged = &c->two_merged;
                return 2;
            }
    }
    if (len <= 16) {
        bpe__pc_short *set = &c->shrt[bpe__pc_set(hash, c->short_sets) * BPE__PC_SHORT_WAYS];
        for (w = 0; w < BPE__PC_SHORT_WAYS; w++)
            if (set[w].head == head && set[w].tail == tail && set[w].len == len) {
                BPE__PC_HIT(&set[w]);
                for (j = 0; j < set[w].count; j++) /* a loop: 1-3 IDs (memcpy is a call) */
                    out[j] = set[w].ids[j];
                if (merged)
                    *merged = &set[w].merged;
                return set[w].count;
            }
    }
    if (len <= BPE__PC_LONG_BYTES) {
        bpe__pc_long *set = &c->lng[bpe__pc_set(hash, c->long_sets) * BPE__PC_LONG_WAYS];
        for (w = 0; w < BPE__PC_LONG_WAYS; w++)
            if (set[w].head == head && set[w].tail == tail && set[w].len == len &&
                (len <= 16 || memcmp(set[w].mid, p + 8, len - 16) == 0)) {
                BPE__PC_HIT(&set[w]);
                for (j = 0; j < set[w].count; j++)
                    out[j] = set[w].ids[j];
                if (merged)
                    *merged = &set[w].merged;
                return set[w].count;
            }
    }
    return 0;
}

BPE__PC_INLINE size_t bpe__pc_get(bpe_piece_cache *c, uint64_t hash, const unsigned char *p,
                                 size_t len, uint64_t head, uint64_t tail, uint32_t *out)
{
    return bpe__pc_find(c, hash, p, len, head, tail, out, NULL);
}

/* Remembers the count IDs of a piece of 2-64 bytes (bpe__pc_get's
 * arguments; merged: see the entries), when it fits and the policy admits
 * it. */
static inline void bpe__pc_put(bpe_piece_cache *c, uint64_t hash, const unsigned char *p,
                               size_t len, uint64_t head, uint64_t tail, const uint32_t *ids,
                               size_t count, int merged)
{
    unsigned w;
    if (count == 0)
        return;
    if (len <= 8 && count == 2 && ids[1] <= BPE__PC_TWO_ID_MAX) {
        bpe__pc_two *set = &c->two[bpe__pc_set(hash, c->two_sets) * BPE__PC_TWO_WAYS];
        unsigned min = 0;
        for (w = 0; w < BPE__PC_TWO_WAYS; w++) {
            if ((set[w].rest >> 4 & 15) == 0)
                break; /* an empty way first */
            if ((set[w].rest & 15) < (set[min].rest & 15))
                min = w;
        }
        if (w == BPE__PC_TWO_WAYS) { /* full: BPE__PC_PICK's policy */
            if (BPE__PC_POLICY == 3 && (set[min].rest & 15) > 0) {
                set[min].rest--;
                return;
            }
            if (BPE__PC_POLICY == 2)
                for (w = 0; w < BPE__PC_TWO_WAYS; w++)
                    set[w].rest -= (set[w].rest & 15) > 0;
            w = min;
        }
        set[w].head = head;
        set[w].id = ids[0];
        set[w].rest = ids[1] << 8 | (uint32_t)len << 4;
    } else if (len <= 16 && count <= BPE__PC_SHORT_IDS) {
        bpe__pc_short *set = &c->shrt[bpe__pc_set(hash, c->short_sets) * BPE__PC_SHORT_WAYS];
        BPE__PC_PICK(set, BPE__PC_SHORT_WAYS, &w);
        if (w == BPE__PC_SHORT_WAYS)
            return;
        set[w].head = head;
        set[w].tail = tail;
        set[w].len = (uint8_t)len;
        set[w].count = (uint8_t)count;
        set[w].freq = 0;
        set[w].merged = (uint8_t)merged;
        memcpy(set[w].ids, ids, count * sizeof *ids);
    } else if (len <= BPE__PC_LONG_BYTES && count <= BPE__PC_LONG_IDS) {
        bpe__pc_long *set = &c->lng[bpe__pc_set(hash, c->long_sets) * BPE__PC_LONG_WAYS];
        BPE__PC_PICK(set, BPE__PC_LONG_WAYS, &w);
        if (w == BPE__PC_LONG_WAYS)
            return;
        set[w].head = head;
        set[w].tail = tail;
        if (len > 16)
            memcpy(set[w].mid, p + 8, len - 16);
        set[w].len = (uint8_t)len;
        set[w].count = (uint8_t)count;
        set[w].freq = 0;
        set[w].merged = (uint8_t)merged;
        memcpy(set[w].ids, ids, count * sizeof *ids);
    }
}

#endif /* PYBPE_PIECE_CACHE_H */
