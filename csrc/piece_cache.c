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
#include <stdlib.h>
#include <string.h>

#include "piece_cache.h"

#define PC_LINE 64
/* Bytes per unit (piece_cache.h's split). */
#define PC_UNIT_BYTES (sizeof(bpe__pc_tok) + sizeof(bpe__pc_two) +              \
                       sizeof(bpe__pc_short) / BPE__PC_SHORT_DIV + sizeof(bpe__pc_long) / BPE__PC_LONG_DIV)
/* The smallest cache has one step of units. */
#define PC_MIN_UNITS BPE__PC_MIN_UNITS
typedef char pc_min_fits[PC_MIN_UNITS * PC_UNIT_BYTES + PC_LINE + sizeof(bpe_piece_cache) <=
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

bpe_piece_cache *bpe_piece_cache_new(size_t max_bytes, int *status)
{
    size_t units = bpe__pc_units_for_bytes(max_bytes > sizeof(bpe_piece_cache)
                                           ? max_bytes - sizeof(bpe_piece_cache) : 0);
    bpe_piece_cache *c = NULL;
    int st = BPE_EINVAL;
    if (units == 0 || max_bytes < BPE_PIECE_CACHE_MIN_BYTES)
        goto done;
    st = BPE_ENOMEM;
    c = malloc(sizeof *c);
    if (!c)
        goto done;
    st = bpe__pc_init(c, units);
    if (st != BPE_OK) {
        free(c);
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
    free(cache);
}

size_t bpe_piece_cache_bytes(const bpe_piece_cache *cache)
{
    return cache ? cache->bytes + sizeof *cache : 0;
}

uint64_t bpe_piece_cache_stat(const bpe_piece_cache *cache, int which)
{
    if (!cache || which < 0 || which >= BPE_PIECE_CACHE_NSTATS)
        return 0;
    return cache->stats[which];
}
