/*
 * piece_cache.c -- the life cycle of ranks.c's piece cache (text level; the
 * cache itself, its entries and its lookups are piece_cache.h's).
 *
 * A cache is one allocation holding its three tables, each set aligned to
 * a 64-byte line, sized once: nothing grows while encoding, so the memory a
 * cache holds is bpe_piece_cache_bytes() from start to end.
 *
 * Measurements.  C alone (a harness calling bpe_ranks_encode_cached and
 * bpe_ranks_encode_batch, not kept), o200k, CPU time, medians of 7 runs
 * alternating between the builds in one loop, on a shared machine (load
 * 7-10 on 2 cores: +-10%), so the counts of what the cache did not know
 * decide where the times are close.  Workloads: "unseen", 7 slices of 0.5 MB,
 * one call each, after a warm call on another slice (what
 * tools/bench_encode_table.py times); "short", 10,000 calls of 200 bytes of
 * Shakespeare; "chat", 20,000 messages of 10 bytes to a few KB (lognormal,
 * 60% Shakespeare, 20% Python source, 20% multilingual); "zipf", 0.5 MB
 * slices of random lowercase words drawn from a million by Zipf's law
 * (s = 1.1), where almost every piece must be merged.
 *
 *   MB/s (misses: merges + token-table lookups, thousands)
 *                      unseen prose  unseen code  zipf         short        chat
 *   per-call caches    54.5          84.4         36.7         39.9         42.5
 *   1 direct, 1 MiB    66.1 (60.2)   91.3 (42.3)  39.5 (134.8) 54.6 (45.3)  58.2 (114.2)
 *   2 LFU, 1 MiB       69.8 (39.7)   90.5 (25.8)  41.6 (118.6) 55.0 (33.7)  61.3 (74.3)
 *   3 second sight     71.3 (40.5)   90.0 (27.8)  43.7 (110.8) 55.7 (33.7)  62.2 (72.2)
 *
 * Four ways of 16 bytes (one line) for whole tokens and a count per entry
 * keep the frequent pieces where direct mapping let every rare piece evict
 * one: over a quarter fewer misses.  Between 2 and 3 the counts differ by a few
 * percent either way and 3 was as fast or faster on four of five; it is
 * the policy (BPE__PC_POLICY).  Sizes, policy 3, unseen prose / zipf / chat:
 * 768 KiB 72.3 / 43.3 / 61.7, 1 MiB 71.3 / 43.7 / 62.2, 1.5 MiB 67.6 /
 * 40.1 / 63.4 (policy 2 at 2 MiB: 65.2 / 38.0 / 62.8).  A larger cache
 * misses less (prose merges 30.8k -> 27.7k at 1.5 MiB) but its lines
 * compete with o200k's filters (1.5 MB) for the core's 2 MB cache; 1 MiB
 * is the default (BPE_PIECE_CACHE_DEFAULT_BYTES).  Instructions
 * (cachegrind, table build subtracted), before -> after: 3 MB of unseen
 * prose in 0.5 MB calls 223.2M -> 198.8M (-11%; with no cache across calls
 * 228.3M); 10,000 calls of 200 bytes 289.1M -> 146.7M (-49%; with none,
 * 277.1M: ranks.c's merge scratch on the stack and one allocation for the
 * call's own cache, where there were up to nine); chat 778.6M -> 514.8M
 * (-34%).  What is left on unseen prose (perf): the short table's
 * lines and the token filter missing the core's cache, and merging the
 * pieces no call has seen (8,800 per MB of Shakespeare).  Dead end:
 * cutting and keying the next piece before encoding this one, to prefetch
 * its set (the key computed once, passed along): unseen prose, zipf and
 * source 0-2% faster, chat 2% slower, all within noise (CPU-time medians
 * of 9 alternating runs on 5.5 MB each).
 *
 * The two table.  Half the pieces an unseen prose slice merges are of 2-8
 * bytes and merge to two IDs (gpt2, 3 MB of Shakespeare: 15.7k of 31.0k
 * merges; 3 IDs 4.6k; longer pieces of up to 3 IDs 8.9k; 4 IDs or more
 * 1.7k), and each took a 32-byte short entry; and 15-35% of a slice's
 * merges were of pieces an earlier slice had merged but the cache had not
 * kept (merges per slice with a 64 MiB cache ~3,000, with 1 MiB 3,650-
 * 4,580).  Those pieces now take 16 bytes in a table of their own (two),
 * whose room came from the short table (half its entries; 4-byte IDs above
 * 2^24 still go there).  Merges + token-table lookups per 10 unseen 0.5 MB
 * slices after a warm one (tools/bench_unseen.c), before -> after:
 *   gpt2 prose 39,302+10,793 -> 33,858+10,765, source 17,271+5,960 ->
 *   15,118+5,902; cl100k prose 40,625+11,356 -> 34,544+11,282, source
 *   15,704+13,153 -> 14,831+13,350; o200k source 14,795+13,238 ->
 *   13,847+13,375; CJK unchanged (gpt2 11,413, cl100k 9,837, o200k 7,868
 *   + 2,047 unit merges).
 * Other splits of the same 1 MiB (short n / 2, long n / 16: prose 32,994
 * merges but CJK cl100k 9,837 -> 10,205 and o200k units 2,047 -> 2,256;
 * short n / 4: prose 35,489; short n: 32,029, source no better, CJK worse)
 * were not kept.  CPU time of those 10 slices, medians of 5 alternating
 * runs (loaded machine), before -> after: gpt2 prose 36.3 -> 35.5 ms,
 * source 30.3 -> 29.2; cl100k prose 38.6 -> 37.3, source 31.0 -> 30.7;
 * o200k prose 42.5 -> 40.8.  Still merged again after that (gpt2 prose,
 * 10 slices): 6,325 of 33,858 merges, mostly pieces of 9-16 bytes (3,380)
 * and of up to 8 bytes with 3 IDs (1,583), the short table's; a 64 MiB
 * cache merges 27,567.  Policy 2 on this split merges 2-8% less on prose
 * and source (gpt2 source 15,118 -> 13,970) but 2% more on o200k CJK; not
 * timed on the chat and short workloads that chose 3, so not taken.
 * Dead ends, same harness, CPU-time medians of 5-7 alternating runs:
 * keying every piece of a scanner run (128 pieces) first and prefetching
 * its tok or short set before encoding the run (none faster, up to 4%
 * slower); writing an entry's count only when it changes (a hit stored it
 * unchanged, dirtying the line: 3-7% slower, the branch mispredicts).
 *
 * What it cost CJK, and the fix.  With this cache, encode_ordinary of 1 MB
 * of CJK (bench_encode_table.py's corpus_cjk) got ~45% slower on cl100k and
 * gpt2 (CPU time, best of 5: 20.8 -> 29.8 and 19.2 -> 28.4 ms; o200k 21.5
 * -> 23.3).  Not lookups of pieces that never hit, nor the cache's size:
 * the piece counts tell it.  The text cuts into 71,600 pieces, few
 * distinct (17-64 bytes: 435 distinct, 13,967 occurrences, cl100k), but
 * a long entry holds 14 IDs, and at ~1 ID per character of 3 bytes 247
 * pieces of up to 64 bytes (4,578 occurrences; gpt2 389 and 10,381, o200k
 * 74 and 781) have more: never stored, so merged at every occurrence, where the
 * per-call cache before pointed into the call's own output and took any
 * count.  Merges per warm call: 6,700 (cl100k; 2,113 of them pieces over
 * 64 bytes, which no cache held before either).  The fix is ranks.c's
 * spill cache, that old per-call kind brought back for what this cache
 * cannot hold: pieces of up to 64 bytes with more than 14 IDs, and pieces
 * of 65-256 bytes (950 distinct in 2,113 on CJK); allocated at the first
 * such piece, so prose pays a NULL test.  Merges per warm call 6,700 ->
 * 1,480 (cl100k).  Python, encode_ordinary of 1 MB, CPU time, best of 5
 * per process, 3 processes alternating with main's build (loaded shared
 * machine), best: CJK cl100k 28.7 -> 15.1 ms, gpt2 27.0 -> 15.3, o200k
 * 22.7 -> 14.4 (the build before the cache: 17.3 / 16.6 / 18.0); prose
 * (Shakespeare's first MB) 10.4 / 11.0 / 11.7 -> 10.4 / 10.5 / 12.0 and
 * Python source 7.9 / 10.1 / 8.2 -> 8.1 / 10.7 / 8.6 ms, noise (cachegrind,
 * gpt2, two further 1 MB calls: prose 239.7M -> 240.4M instructions,
 * source 255.9M -> 251.6M; CJK, cl100k: 472.3M -> 296.0M).
 *
 * Then CJK again, on text no call has seen (tools/bench_encode_table.py's
 * unseen slices: 11 calls of 0.5 MB after a warm one): ~1,000 pieces per
 * call still merged, ~600 of them seen in an earlier call but too long
 * (65+ bytes) or with too many IDs to be held, ~400 new sentences, ~75 KB in
 * all and ~55% of the time (perf: the short merge loop and the pair table).
 * ranks_merge.c now cuts such pieces where no merge can cross (bpe__ranks_merge_cut, with
 * the proof) and asks this cache about each unit; an entry's `merged` flag
 * keeps units from taking the whole-piece rule's answer.  encode_to_numpy,
 * CPU-time medians of 3 alternating processes: gpt2 72.3 -> 154.6 MB/s,
 * cl100k 60.0 -> 170.8; unit merges per call after the warm one: gpt2 0,
 * cl100k 0, o200k ~200 (o200k has tokens across nearly every pair of CJK
 * characters: 0.7% of the boundaries are cuts, against 40% for cl100k and
 * 81% for gpt2; with no token *occurrence* across it 64.5% would be, a
 * finer test not built).
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
