/*
 * piece_cache.c -- the life cycle of ranks.c's piece cache (text level; the
 * cache itself, its entries and its lookups are piece_cache.h's).
 *
 * A cache is one allocation holding its four tables, each set aligned to
 * a 64-byte line, sized once: nothing grows while encoding, so the memory a
 * cache holds is bpe_piece_cache_bytes() from start to end.
 *
 * The policy (BPE__PC_POLICY), the split of the bytes between the
 * tables and the spill cache for what they cannot hold were chosen by
 * measurement: csrc/NOTES.md, "The piece cache", has the figures.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "piece_cache.h"

#define PC_LINE 64

/*
 * A cache's header (its table pointers and sizes, read for every piece,
 * and its counts, written on every merge) on lines no other object shares:
 * a line of padding on either side.  Each thread of a batch has a cache
 * of its own, and a header that shared a line with memory another thread
 * writes (another cache's counts, a Python object's reference count) lost
 * that line at every such write.  tools/bench_batch_threads.py (two
 * threads against one, unseen 10 KB documents; two runs of each build,
 * alternating): gpt2 1.36 / 1.69x -> 1.62 / 1.68x, cl100k 1.41 / 1.47x ->
 * 1.61 / 1.68x, o200k 1.38 / 1.56x -> 1.58 / 1.79x.
 */
typedef struct {
    unsigned char before[PC_LINE];
    bpe_piece_cache cache;
    unsigned char after[PC_LINE];
} pc_alone;

/* Bytes per unit (piece_cache.h's split). */
#define PC_UNIT_BYTES (sizeof(bpe__pc_tok) + sizeof(bpe__pc_two) +              \
                       sizeof(bpe__pc_short) / BPE__PC_SHORT_DIV + sizeof(bpe__pc_long) / BPE__PC_LONG_DIV)
/* The smallest cache has one step of units. */
#define PC_MIN_UNITS BPE__PC_MIN_UNITS
typedef char pc_min_fits[PC_MIN_UNITS * PC_UNIT_BYTES + PC_LINE + sizeof(pc_alone) <=
                         BPE_PIECE_CACHE_MIN_BYTES ? 1 : -1];

size_t bpe__pc_units_for_bytes(size_t max_bytes)
{
    if (max_bytes < PC_MIN_UNITS * PC_UNIT_BYTES + PC_LINE)
        return 0;
    return (max_bytes - PC_LINE) / PC_UNIT_BYTES / PC_MIN_UNITS * PC_MIN_UNITS;
}

int bpe__pc_init(bpe_piece_cache *c, size_t units)
{
    size_t tok = units * sizeof(bpe__pc_tok), two = units * sizeof(bpe__pc_two),
           shrt = units / BPE__PC_SHORT_DIV * sizeof(bpe__pc_short),
           lng = units / BPE__PC_LONG_DIV * sizeof(bpe__pc_long);
    unsigned char *base;
    memset(c, 0, sizeof *c);
    if (units < PC_MIN_UNITS || units % PC_MIN_UNITS || units > (SIZE_MAX / 2) / PC_UNIT_BYTES)
        return BPE_ETOOBIG;
    c->bytes = tok + two + shrt + lng + PC_LINE;
    c->block = calloc(1, c->bytes);  /* len 0 everywhere: every entry empty */
    if (!c->block)
        return BPE_ENOMEM;
    /* Sets on line boundaries, so a set is one line (two for long). */
    base = (unsigned char *)c->block + (PC_LINE - (size_t)((uintptr_t)c->block % PC_LINE)) % PC_LINE;
    c->tok = (bpe__pc_tok *)(void *)base;
    c->two = (bpe__pc_two *)(void *)(base + tok);
    c->shrt = (bpe__pc_short *)(void *)(base + tok + two);
    c->lng = (bpe__pc_long *)(void *)(base + tok + two + shrt);
    c->tok_sets = units / BPE__PC_TOK_WAYS;
    c->two_sets = units / BPE__PC_TWO_WAYS;
    c->short_sets = units / BPE__PC_SHORT_DIV / BPE__PC_SHORT_WAYS;
    c->long_sets = units / BPE__PC_LONG_DIV / BPE__PC_LONG_WAYS;
    c->two_merged = 1;
    return BPE_OK;
}

/*
 * Warming up.  Between two calls on large texts a program does other work
 * (reads files, runs a model, or, in tools/bench_encode_table.py, other
 * encoders), and the cache's lines leave the core's caches; a call then
 * met each set it asked about as a miss, one at a time, ~16,000 lines for
 * the default MiB, the first time it came to each.  Read front to back
 * the same lines arrive many at a time (the core sees the stride and
 * fetches ahead), so a call on enough text (BPE__PC_WARM_DIV) reads its
 * cache once first.  tools/bench_unseen.c, 0.5 MB unseen slices, each call
 * after 64 MB of other memory was touched, CPU time of 8 calls, medians of
 * 5 alternating runs: gpt2 prose 38.0 -> 34.4 ms, o200k Python source 33.0
 * -> 30.5, o200k multilingual 141.0 -> 133.5; calls of 16 KB / 64 KB / 128
 * KB (24 of them) 10.8 -> 10.4, 25.9 -> 23.0, 42.8 -> 40.1.  With nothing
 * between the calls (the lines still there) the same within noise: 0.5 MB
 * 29.8 / 26.4 ms both ways, 64 KB 12.5 / 12.4.  Reading the rank table's
 * filters the same way as well: no better.
 */
void bpe__pc_warm(const bpe_piece_cache *c, size_t text_len)
{
    const volatile unsigned char *p = (const volatile unsigned char *)c->block;
    size_t i;
    if (!p || text_len < c->bytes / BPE__PC_WARM_DIV)
        return;
    for (i = 0; i < c->bytes; i += PC_LINE)
        (void)p[i]; /* volatile: the read happens */
}

void bpe__pc_done(bpe_piece_cache *c)
{
    free(c->block);
    c->block = NULL;
}

static void pc_alone_free(bpe_piece_cache *c)
{
    free((unsigned char *)c - offsetof(pc_alone, cache));
}

bpe_piece_cache *bpe_piece_cache_new(size_t max_bytes, int *status)
{
    size_t units = bpe__pc_units_for_bytes(max_bytes > sizeof(pc_alone)
                                           ? max_bytes - sizeof(pc_alone) : 0);
    bpe_piece_cache *c = NULL;
    int st = BPE_EINVAL;
    if (units == 0 || max_bytes < BPE_PIECE_CACHE_MIN_BYTES)
        goto done;
    st = BPE_ENOMEM;
    {
        pc_alone *a = malloc(sizeof *a);
        if (!a)
            goto done;
        c = &a->cache;
    }
    st = bpe__pc_init(c, units);
    if (st != BPE_OK) {
        pc_alone_free(c);
        c = NULL;
    }
done:
    if (status)
        *status = st;
    return c;
}

void bpe_piece_cache_free(bpe_piece_cache *cache)
{
    if (!cache)
        return;
    bpe__pc_done(cache);
    pc_alone_free(cache);
}

size_t bpe_piece_cache_bytes(const bpe_piece_cache *cache)
{
    return cache ? cache->bytes + sizeof(pc_alone) : 0;
}

uint64_t bpe_piece_cache_stat(const bpe_piece_cache *cache, int which)
{
    if (!cache || which < 0 || which >= BPE_PIECE_CACHE_NSTATS)
        return 0;
    return cache->stats[which];
}
