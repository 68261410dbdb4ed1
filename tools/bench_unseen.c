/*
 * bench_unseen.c -- the unseen-slice workload of tools/bench_encode_table.py
 * in C alone, for callgrind and A/B timing of ranks.c's piece path.
 *
 * Usage: bench_unseen RANKS.tiktoken PATTERN(1 gpt2, 2 cl100k, 3 o200k)
 *                     CORPUS SLICE_BYTES N_SLICES [CACHE_BYTES [EVICT_MB [GAP_MS]]]
 * One cache across calls (as pybpe.Encoding keeps per thread); a warm call on
 * slice N_SLICES, then one call per slice 0 .. N_SLICES - 1.  Prints per
 * slice the merges, unit merges and token lookups the cache did not answer,
 * the CPU time, and a checksum of all IDs (same IDs <=> same checksum).
 * EVICT_MB > 0: before each call, write and read that many MB of memory of
 * its own, so the call starts with the core's caches full of other data, as
 * in tools/bench_encode_table.py, where the other encoders run between two
 * pybpe calls (the piece cache and the rank tables are then cold).  gpt2,
 * 0.5 MB slices of Shakespeare, 64 MB evicted: 2.85 -> 3.32 ms per call
 * (medians of 5 alternating runs, 2026-12-05).
 * GAP_MS > 0: then spin that many milliseconds of CPU time on a loop that
 * touches no memory.  On this shared host time alone cools the core: a
 * call after a 50 ms gap took ~40% longer than one straight after the
 * last (cl100k, 0.5 MB slices of Python source, 2.5 -> 3.4 ms; sleeping
 * instead of spinning the same), more than 64 MB evicted does (+9-14%),
 * and what the interleaved table sees (csrc/NOTES.md, session 20).
 * Under callgrind, --toggle-collect=bpe_ranks_encode_cached counts the
 * encode calls only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text.h"

static int b64(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long n;
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { perror("read"); exit(1); }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static volatile unsigned evict_sink; /* keeps the eviction reads */

static double cpu(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

int main(int argc, char **argv)
{
    size_t flen, clen, n_tok = 0, cap, i, slice, nsl, cache_bytes;
    unsigned char *file, *corpus, *bytes;
    size_t *offsets;
    uint32_t *ids, *out;
    bpe_ranks *r;
    bpe_piece_cache *c;
    int pattern, st;
    uint64_t sum = 0;
    size_t k, evict_bytes;
    double gap_seconds;
    unsigned char *evict = NULL;
    if (argc < 6) { fprintf(stderr, "usage: see the header\n"); return 2; }
    file = slurp(argv[1], &flen);
    pattern = atoi(argv[2]);
    corpus = slurp(argv[3], &clen);
    slice = (size_t)atol(argv[4]);
    nsl = (size_t)atol(argv[5]);
    cache_bytes = argc > 6 ? (size_t)atol(argv[6]) : BPE_PIECE_CACHE_DEFAULT_BYTES;
    evict_bytes = argc > 7 ? (size_t)atol(argv[7]) << 20 : 0;
    gap_seconds = argc > 8 ? atof(argv[8]) / 1e3 : 0;
    if (evict_bytes && !(evict = malloc(evict_bytes))) { perror("evict"); return 1; }
    cap = flen;
    bytes = malloc(cap);
    offsets = malloc(sizeof *offsets * (flen / 4 + 2));
    ids = malloc(sizeof *ids * (flen / 4 + 2));
    offsets[0] = 0;
    {
        size_t pos = 0, blen = 0;
        while (pos < flen) {
            unsigned acc = 0;
            int bits = 0;
            while (pos < flen && file[pos] != ' ') {
                int v = b64(file[pos++]);
                if (v >= 0) {
                    acc = (acc << 6) | (unsigned)v;
                    bits += 6;
                    if (bits >= 8) {
                        bits -= 8;
                        bytes[blen++] = (unsigned char)(acc >> bits);
                        acc &= (1u << bits) - 1;
                    }
                }
            }
            pos++;
            ids[n_tok] = (uint32_t)strtoul((const char *)file + pos, NULL, 10);
            while (pos < flen && file[pos] != '\n') pos++;
            pos++;
            offsets[++n_tok] = blen;
        }
    }
    r = bpe_ranks_new(bytes, offsets, ids, n_tok, NULL, NULL, NULL, 0, BPE_RANKS_WHOLE_PIECE, &st);
    if (!r) { fprintf(stderr, "ranks: %d\n", st); return 1; }
    c = bpe_piece_cache_new(cache_bytes, &st);
    if (!c) { fprintf(stderr, "cache: %d\n", st); return 1; }
    out = malloc(sizeof *out * (slice + 16));
    for (k = 0; k <= nsl; k++) {
        size_t idx = k == 0 ? nsl : k - 1, start = idx * slice, end = start + slice, ends, oends;
        uint64_t m0 = bpe_piece_cache_stat(c, 1), u0 = bpe_piece_cache_stat(c, 2),
                 t0 = bpe_piece_cache_stat(c, 0);
        double t;
        if (end > clen) { fprintf(stderr, "corpus too short\n"); return 1; }
        /* at UTF-8 character boundaries */
        while (start > 0 && (corpus[start] & 0xC0) == 0x80) start++;
        while (end < clen && (corpus[end] & 0xC0) == 0x80) end++;
        ends = end - start;
        if (evict) {
            size_t e;
            unsigned acc = 0;
            memset(evict, (int)k, evict_bytes);
            for (e = 0; e < evict_bytes; e += 64)
                acc += evict[e];
            evict_sink += acc;
        }
        if (gap_seconds > 0) {
            volatile uint32_t spin = 1;
            double g0 = cpu();
            while (cpu() - g0 < gap_seconds)
                spin = spin * 1103515245u + 12345u;
        }
        t = cpu();
        st = bpe_ranks_encode_cached(r, c, pattern, corpus + start, end - start, &ends, 1, out, &oends);
        t = cpu() - t;
        if (st) { fprintf(stderr, "encode: %d\n", st); return 1; }
        for (i = 0; i < oends; i++)
            sum = (sum ^ out[i]) * UINT64_C(0x100000001b3);
        printf("slice %zu%s: ids %zu merges %llu units %llu lookups %llu  %.2f ms\n", idx,
               k == 0 ? " (warm)" : "", oends,
               (unsigned long long)(bpe_piece_cache_stat(c, 1) - m0),
               (unsigned long long)(bpe_piece_cache_stat(c, 2) - u0),
               (unsigned long long)(bpe_piece_cache_stat(c, 0) - t0), t * 1e3);
    }
    printf("checksum %016llx\n", (unsigned long long)sum);
    free(evict);
    bpe_piece_cache_free(c);
    bpe_ranks_free(r);
    return 0;
}
