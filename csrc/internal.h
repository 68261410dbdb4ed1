/*
 * internal.h -- helpers shared by the C core's files; not part of the API.
 *
 * Holds the word table's layout (words.c owns it, trainer.c reads it), a
 * small open-addressing map from a pair of symbol IDs to a uint32 value
 * (pairmap.c), used by count_pairs (listing 063), the trainer (064) and the
 * merger (065), and one copy of each small helper (util.c: array and slot
 * growth; inline here: the two hashes and PREFETCH).  Book level, like
 * bpe.h: nothing here knows about text (the text level's own helpers, UTF-8
 * among them, are in text_internal.h).  Declarations and static inline
 * helpers only.
 */
#ifndef PYBPE_INTERNAL_H
#define PYBPE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "bpe.h"

/* For the helpers that run once per piece, character or word: inlined into
 * each caller even where GCC would keep them out of line (where each is
 * defined says what that cost); a plain static inline elsewhere. */
#if defined(__GNUC__)
#define BPE__ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define BPE__ALWAYS_INLINE static inline
#endif

/* "No index": end of a linked list, an empty slot, an absent value. */
#define BPE__NONE UINT32_MAX

/* The word table.  Word i is syms[start[i] .. start[i] + len[i]); merging
 * shrinks len[i] in place and leaves the tail of its slot unused, so words
 * never move.  Invariant: start[i] + len[i] <= start[i + 1] (or nsyms). */
struct bpe_words {
    uint32_t *syms;
    size_t nsyms, syms_cap;
    size_t *start, *len;
    uint64_t *freq;
    size_t n, cap;
};

/* Room for more_words words of more_syms symbols in all (words.c). */
int bpe__words_reserve(bpe_words *w, size_t more_words, size_t more_syms);

/* An arena (arena.c): zeroed arrays that are freed all at once, on huge
 * pages where the system has them.  Zero-initialise it ({0}) before the
 * first bpe__arena_calloc; bpe__arena_free frees every array and leaves it
 * empty.  At most BPE__ARENA_CHUNKS calloc'd arrays or mappings. */
#define BPE__ARENA_CHUNKS 16
typedef struct {
    void *chunk[BPE__ARENA_CHUNKS];       /* each calloc'd array or mapping */
    size_t chunk_bytes[BPE__ARENA_CHUNKS]; /* a mapping's length; 0: calloc'd */
    size_t n_chunks;
    unsigned char *room;                  /* unused tail of a mapping */
    size_t room_left;
} bpe__arena;

/* n * size zeroed bytes (at least 64, aligned to at least 16), or NULL
 * when out of memory, on overflow, or when the arena is full. */
void *bpe__arena_calloc(bpe__arena *a, size_t n, size_t size);
void bpe__arena_free(bpe__arena *a);

/* pairmap: (left, right) -> uint32 value, open addressing with linear
 * probing, no deletion.  Invariant: used * 2 <= mask + 1 (load <= 1/2), so
 * a probe always meets an empty slot (val == BPE__NONE). */
typedef struct {
    uint64_t *keys;  /* (uint64_t)left << 32 | right */
    uint32_t *vals;  /* BPE__NONE marks an empty slot */
    size_t mask;     /* capacity - 1; capacity is a power of two */
    size_t used;
} bpe__pairmap;

static inline uint64_t bpe__pair_key(uint32_t left, uint32_t right)
{
    return (uint64_t)left << 32 | right;
}

/* 2^64 / golden ratio, odd: the step splitmix64 adds each round, used to
 * fold a length into a hash so strings of equal content hash but unequal
 * length part (ranks_build.c's table build, text_internal.h's word hash). */
#define BPE__GOLDEN64 UINT64_C(0x9e3779b97f4a7c15)

/* A 64-bit multiply-xorshift mix (splitmix64's finalizer): every input bit
 * reaches the low bits that pick the slot. */
static inline uint64_t bpe__mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

/* FNV-1a, 64-bit, over bytes[0..len): the one byte-string hash of the C core
 * (offset basis 0xcbf29ce484222325 = 14695981039346656037, prime 2^40 + 435).
 * Its low bits are weak; callers that pick a slot by them mix the result
 * (bpe__mix64). */
#define BPE__FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define BPE__FNV_PRIME UINT64_C(0x100000001b3)

static inline uint64_t bpe__fnv1a64(const void *bytes, size_t len)
{
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t h = BPE__FNV_OFFSET;
    size_t i;

    for (i = 0; i < len; i++) {
        h ^= p[i];
        h *= BPE__FNV_PRIME;
    }
    return h;
}

/* A hint to fetch the cache line at p before it is read: the hash-table
 * probes and sparse node walks are cache misses without it.  GCC/Clang only;
 * other compilers skip the hint. */
#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

/* Empty map with room for about `hint` pairs.  BPE_OK or BPE_ENOMEM. */
int bpe__pairmap_init(bpe__pairmap *map, size_t hint);
/* NULL-safe; leaves the map empty-initialised-looking (all NULL). */
void bpe__pairmap_free(bpe__pairmap *map);
/* The value stored for (left, right), or BPE__NONE. */
uint32_t bpe__pairmap_get(const bpe__pairmap *map, uint32_t left,
                          uint32_t right);
/* Where the value of (left, right) is stored (to read or overwrite), or
 * NULL when the pair is absent.  Valid until the next put. */
uint32_t *bpe__pairmap_find(bpe__pairmap *map, uint32_t left, uint32_t right);
/* Stores val (!= BPE__NONE) for (left, right), which must be absent.  May
 * grow the map; on BPE_ENOMEM the map is unchanged. */
int bpe__pairmap_put(bpe__pairmap *map, uint32_t left, uint32_t right,
                     uint32_t val);

/* Grows *array (element size `elem`) so it holds at least `need` elements,
 * at least doubling.  BPE_OK, or BPE_ENOMEM / BPE_ETOOBIG with *array and
 * *cap unchanged.  (util.c) */
int bpe__reserve(void **array, size_t *cap, size_t need, size_t elem);

/* A new slot array of nslots empty slots (all BPE__NONE), or NULL when out
 * of memory.  (util.c) */
uint32_t *bpe__slots_new(size_t nslots);

/* Doubles an open-addressing slot array (linear probing, BPE__NONE marks an
 * empty slot, *mask_io + 1 slots) over items[0..n), re-placing item i by the
 * uint64_t hash stored `hash_offset` bytes into it (items are `stride`
 * bytes apart), so growing never re-reads the keys.  The symbol table, the
 * word counter and the per-call word cache of bpe_encode_text grow their
 * tables with it.  BPE_OK, or BPE_ENOMEM / BPE_ETOOBIG with the old slots
 * kept.  (util.c) */
int bpe__grow_slots(uint32_t **slots_io, size_t *mask_io, const void *items,
                    size_t n, size_t stride, size_t hash_offset);

/* apply_merges with the path forced: 0 = the short-word scanning loop,
 * 1 = the heap over a linked list, -1 = by length (what bpe_apply_merges
 * does).  For the self-tests, which check that both paths agree. */
int bpe__apply_merges_path(const bpe_merger *merger, uint32_t *symbols,
                           size_t *n, int path);

/* Working memory for applying merges to many words one at a time (merger.c):
 * grows to the longest word seen, so a caller that encodes word by word
 * (bpe_encode_text) allocates O(log longest) times, not once per word. */
typedef struct bpe__applier bpe__applier;

/* A new, empty applier, or NULL when out of memory. */
bpe__applier *bpe__applier_new(void);
/* NULL-safe. */
void bpe__applier_free(bpe__applier *applier);
/* bpe_apply_merges on symbols[0..*n) with the applier's memory.  BPE_OK,
 * or BPE_ENOMEM / BPE_ETOOBIG with the symbols unchanged. */
int bpe__applier_run(bpe__applier *applier, const bpe_merger *merger,
                     uint32_t *symbols, size_t *n);

#endif /* PYBPE_INTERNAL_H */
