/*
 * test_ranks.c -- self-tests of ranks.c and pretok.c, meant to run under
 * ASan + UBSan: known answers, the linear and heap paths against a naive
 * reference on random pieces either side of the threshold, merge-list mode,
 * hostile input to the scanners (malformed UTF-8), their word-at-a-time
 * paths at every alignment with the text ending at its allocation's end,
 * NULL-safe frees.
 * The Python suite (tests/test_encoding.py) checks parity with tiktoken.
 * Build: cc -std=c99 -pedantic -Wall -Wextra -Icsrc csrc/tests/test_ranks.c
 *        csrc/ranks.c csrc/ranks_build.c csrc/ranks_merge.c csrc/pretok.c ...
 *        (make ctest builds it with every file of csrc/)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "check.h"


/* Toy vocabulary: a b c, then ab, bc, abc, aa, aaaa with IDs 0..7. */
static const char *toy[] = {"a", "b", "c", "ab", "bc", "abc", "aa", "aaaa"};
#define N_TOY 8

static bpe_ranks *toy_table(int flags, const uint32_t *l, const uint32_t *r,
                            const uint32_t *res, size_t n_merges)
{
    unsigned char bytes[64];
    size_t offsets[N_TOY + 1], pos = 0, k;
    uint32_t ids[N_TOY];
    int st;
    for (k = 0; k < N_TOY; k++) {
        offsets[k] = pos;
        memcpy(bytes + pos, toy[k], strlen(toy[k]));
        pos += strlen(toy[k]);
        ids[k] = (uint32_t)k;
    }
    offsets[N_TOY] = pos;
    return bpe_ranks_new(bytes, offsets, ids, N_TOY, l, r, res, n_merges, flags, &st);
}

/* Naive tiktoken rule on the toy vocabulary: rescan, merge the lowest rank. */
static size_t naive(const char *text, size_t len, uint32_t *out)
{
    char parts[512][16];
    size_t n = len, i, k;
    for (i = 0; i < len; i++) {
        parts[i][0] = text[i];
        parts[i][1] = 0;
    }
    for (;;) {
        size_t best = 0;
        int best_rank = -1;
        for (i = 0; i + 1 < n; i++) {
            char joined[32];
            size_t la = strlen(parts[i]), lb = strlen(parts[i + 1]);
            if (la + lb >= sizeof joined)
                continue; /* longer than any toy token */
            memcpy(joined, parts[i], la);
            memcpy(joined + la, parts[i + 1], lb + 1);
            for (k = 0; k < N_TOY; k++)
                if (strcmp(joined, toy[k]) == 0 && (best_rank < 0 || (int)k < best_rank)) {
                    best_rank = (int)k;
                    best = i;
                }
        }
        if (best_rank < 0)
            break;
        strcpy(parts[best], toy[best_rank]);
        memmove(parts[best + 1], parts[best + 2], (n - best - 2) * sizeof parts[0]);
        n--;
    }
    for (i = 0; i < n; i++)
        for (k = 0; k < N_TOY; k++)
            if (strcmp(parts[i], toy[k]) == 0)
                out[i] = (uint32_t)k;
    return n;
}

static void test_known_answers(void)
{
    bpe_ranks *t = toy_table(BPE_RANKS_WHOLE_PIECE, NULL, NULL, NULL, 0);
    uint32_t out[16], lens[2] = {4, 3};
    size_t n = 0;
    CHECK(t != NULL);
    CHECK(bpe_ranks_encode(t, (const unsigned char *)"ababaab", 7, lens, 2, 0, out, &n) == BPE_OK);
    /* "abab": ab ab; "aab": aa b -> (aa,b) is no token, but ab is rank 3 < aa
     * rank 6, so a ab */
    CHECK(n == 4 && out[0] == 3 && out[1] == 3 && out[2] == 0 && out[3] == 3);
    lens[0] = 3;
    CHECK(bpe_ranks_encode(t, (const unsigned char *)"abc", 3, lens, 1, 0, out, &n) == BPE_OK);
    CHECK(n == 1 && out[0] == 5);
    lens[0] = 1;
    CHECK(bpe_ranks_encode(t, (const unsigned char *)"z", 1, lens, 1, 0, out, &n) == BPE_EINVAL);
    lens[0] = 5; /* longer than the text */
    CHECK(bpe_ranks_encode(t, (const unsigned char *)"abc", 3, lens, 1, 0, out, &n) == BPE_EINVAL);
    CHECK(bpe_ranks_pair_count(t) > 0);
    bpe_ranks_free(t);
}

static void test_merge_list(void)
{
    /* merges: (b,c) -> bc, (a,b) -> ab; "abc" -> a bc, never abc */
    uint32_t l[2] = {1, 0}, r[2] = {2, 1}, res[2] = {4, 3}, out[8], len = 3;
    size_t n = 0;
    bpe_ranks *t = toy_table(BPE_RANKS_MERGE_LIST, l, r, res, 2);
    CHECK(t != NULL);
    CHECK(bpe_ranks_encode(t, (const unsigned char *)"abc", 3, &len, 1, 0, out, &n) == BPE_OK);
    CHECK(n == 2 && out[0] == 0 && out[1] == 4);
    bpe_ranks_free(t);
    res[1] = 99; /* out of range */
    CHECK(toy_table(BPE_RANKS_MERGE_LIST, l, r, res, 2) == NULL);
}

static void test_heap_matches_naive(void)
{
    bpe_ranks *t = toy_table(0, NULL, NULL, NULL, 0);
    static const size_t sizes[] = {2, 3, 50, 99, 100, 101, 250, 500};
    char text[512];
    uint32_t out[512], expect[512], len;
    size_t s, trial, i, n, m;
    srand(7);
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (trial = 0; trial < 40; trial++) {
            for (i = 0; i < sizes[s]; i++)
                text[i] = "aabc"[rand() % 4];
            len = (uint32_t)sizes[s];
            CHECK(bpe_ranks_encode(t, (const unsigned char *)text, len, &len, 1, 0, out, &n) == BPE_OK);
            m = naive(text, sizes[s], expect);
            CHECK(n == m && memcmp(out, expect, n * sizeof *out) == 0);
        }
    /* Long runs of one byte ("aaaa" is ranked above "aa" here): the run
     * engine of merge.h; then runs mixed with other bytes. */
    for (s = 100; s <= 500; s += 37)
        for (trial = 0; trial < 20; trial++) {
            for (i = 0; i < s;) {
                size_t k = trial == 0 ? s : 1 + (size_t)rand() % 60;
                char c = "aabc"[rand() % 4];
                while (k-- > 0 && i < s)
                    text[i++] = c;
            }
            len = (uint32_t)s;
            CHECK(bpe_ranks_encode(t, (const unsigned char *)text, len, &len, 1, 0, out, &n) == BPE_OK);
            m = naive(text, s, expect);
            CHECK(n == m && memcmp(out, expect, n * sizeof *out) == 0);
        }
    bpe_ranks_free(t);
}

static void test_scanners(void)
{
    size_t ends[64], n;
    const char *s = "Hello world's  2024!!\n\n x";
    n = bpe_pretok_split(BPE_PRETOK_GPT2, (const unsigned char *)s, strlen(s), ends);
    CHECK(n == 8 && ends[0] == 5 && ends[1] == 11 && ends[2] == 13 && ends[7] == strlen(s));
    s = "I'LL 12345";
    n = bpe_pretok_split(BPE_PRETOK_CL100K, (const unsigned char *)s, strlen(s), ends);
    CHECK(n == 5 && ends[1] == 4 && ends[3] == 8);
    CHECK(bpe_pretok_next(99, (const unsigned char *)s, strlen(s), 0) == 0);
    CHECK(bpe_pretok_next(BPE_PRETOK_GPT2, NULL, 0, 0) == 0);
    {
        /* malformed UTF-8 never reads out of bounds and always advances */
        unsigned char bad[] = {0xF0, 0x9F, 0x20, 0xC3, 0x80, 0xFF, 0x80, 0xE2};
        size_t p;
        int mode;
        for (mode = BPE_PRETOK_GPT2; mode <= BPE_PRETOK_O200K; mode++)
            for (p = 0; p < sizeof bad; p++) {
                size_t e = bpe_pretok_next(mode, bad, sizeof bad - p, 0);
                CHECK(e > 0 && e <= sizeof bad - p);
            }
    }
}

static void test_o200k_scanner(void)
{
    /* case changes split words; contractions ride on the word; CRLF run */
    size_t ends[64], n;
    const char *s = "HTTPServer isn't OK'd\r\n\r\n";
    n = bpe_pretok_split(BPE_PRETOK_O200K, (const unsigned char *)s, strlen(s), ends);
    CHECK(n == 4 && ends[0] == 10 && ends[1] == 16 && ends[2] == 21 && ends[3] == strlen(s));
    s = "helloWorld";
    n = bpe_pretok_split(BPE_PRETOK_O200K, (const unsigned char *)s, strlen(s), ends);
    CHECK(n == 2 && ends[0] == 5);
}

/* Splits text[0..len) copied to the end of an allocation of exactly
 * lead + len bytes (so under ASan a read past the text's end is caught,
 * and `lead` moves where its 8-byte words start); returns the number of
 * pieces, with their ends in ends (room for len + 1). */
static size_t split_alone(int pattern, const unsigned char *text, size_t len, size_t lead,
                          size_t *ends)
{
    unsigned char *buf = malloc(lead + len ? lead + len : 1); /* exactly */
    size_t n;
    CHECK(buf != NULL);
    if (!buf)
        return 0;
    memset(buf, 'x', lead);
    memcpy(buf + lead, text, len);
    n = bpe_pretok_split(pattern, buf + lead, len, ends);
    free(buf);
    return n;
}

/* The scanners' word-at-a-time paths (pretok.c reads ASCII eight bytes at
 * once): runs of one class of every length up to three words, and seeded
 * random texts of the characters the scanners tell apart, each at every
 * start alignment and ending at the end of its allocation: the pieces tile
 * the text and do not depend on the alignment.  Then known answers where a
 * run crosses a word.  (tests/test_scanner_words.py compares the pieces
 * with the regex module.) */
static void test_scanner_words(void)
{
    static const char *units[] = {"a", "Q", "s", "L", " ", "\t", "\n", "\r", "0", ".", "'", "/",
                                  "\xc3\xa9", "\xe3\x80\x80", "\xcc\x81", "\xc2\x85"};
    const size_t n_units = sizeof units / sizeof units[0];
    unsigned char text[200];
    size_t ends[201], first[201], n, n0, len, lead, k, u, trial;
    uint64_t seed = 12345;
    int mode;
    for (trial = 0; trial < n_units * 24 + 3000; trial++) {
        len = 0;
        if (trial < n_units * 24) { /* unit trial / 24, repeated 1..24 times */
            for (k = 0; k <= trial % 24; k++) {
                memcpy(text + len, units[trial / 24], strlen(units[trial / 24]));
                len += strlen(units[trial / 24]);
            }
        } else { /* up to 40 random units */
            seed = seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
            for (k = (seed >> 33) % 41; k > 0; k--) {
                seed = seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
                u = (seed >> 33) % n_units;
                memcpy(text + len, units[u], strlen(units[u]));
                len += strlen(units[u]);
            }
        }
        for (mode = BPE_PRETOK_GPT2; mode <= BPE_PRETOK_O200K; mode++) {
            n0 = split_alone(mode, text, len, 0, first);
            CHECK(n0 <= len && (len == 0 ? n0 == 0 : first[n0 - 1] == len));
            for (k = 0; k < n0; k++)
                CHECK(first[k] > (k ? first[k - 1] : 0) && first[k] <= len);
            for (lead = 1; lead < 8; lead++) {
                n = split_alone(mode, text, len, lead, ends);
                CHECK(n == n0 && memcmp(ends, first, n * sizeof *ends) == 0);
            }
        }
    }
    {
        const unsigned char *s = (const unsigned char *)"abcdefghijklmnopq 0123456789";
        n = split_alone(BPE_PRETOK_GPT2, s, 28, 3, ends);
        CHECK(n == 2 && ends[0] == 17 && ends[1] == 28);
        for (mode = BPE_PRETOK_CL100K; mode <= BPE_PRETOK_O200K; mode++) {
            n = split_alone(mode, s, 28, 5, ends);
            CHECK(n == 6 && ends[0] == 17 && ends[1] == 18 && ends[2] == 21 && ends[5] == 28);
        }
        s = (const unsigned char *)"a  \n\n  b";
        n = split_alone(BPE_PRETOK_GPT2, s, 8, 0, ends);
        CHECK(n == 3 && ends[0] == 1 && ends[1] == 6);
        n = split_alone(BPE_PRETOK_O200K, s, 8, 0, ends);
        CHECK(n == 4 && ends[1] == 5 && ends[2] == 6);
        s = (const unsigned char *)"x          y";
        n = split_alone(BPE_PRETOK_CL100K, s, 12, 7, ends);
        CHECK(n == 3 && ends[0] == 1 && ends[1] == 10);
        s = (const unsigned char *)"HTTPServerHandler'S";
        CHECK(split_alone(BPE_PRETOK_GPT2, s, 19, 1, ends) == 3 && ends[0] == 17);
        CHECK(split_alone(BPE_PRETOK_CL100K, s, 19, 2, ends) == 2 && ends[0] == 17);
        CHECK(split_alone(BPE_PRETOK_O200K, s, 19, 6, ends) == 2 && ends[0] == 10);
    }
}

/* The piece cache that lives across calls (piece_cache.c): the same IDs as
 * without it, call after call, in the smallest cache and a default one; its
 * counters show the second call found the first call's pieces; it is
 * refused with another table and below the smallest size. */
static void test_cross_call_cache(const bpe_ranks *t, const char *text)
{
    size_t sizes[2] = {BPE_PIECE_CACHE_MIN_BYTES, BPE_PIECE_CACHE_DEFAULT_BYTES}, i, round;
    size_t text_ends[2] = {24, 30}, out_ends[2], want_ends[2];
    uint32_t out[64], want[64];
    bpe_ranks *other = toy_table(0, NULL, NULL, NULL, 0);
    int st = BPE_OK;
    CHECK(bpe_ranks_encode_batch(t, BPE_PRETOK_GPT2, (const unsigned char *)text, 30, text_ends, 2,
                                 want, want_ends) == BPE_OK);
    for (i = 0; i < 2; i++) {
        bpe_piece_cache *c = bpe_piece_cache_new(sizes[i], &st);
        uint64_t merges = 0;
        CHECK(c != NULL && st == BPE_OK);
        CHECK(bpe_piece_cache_bytes(c) <= sizes[i] && bpe_piece_cache_bytes(c) > sizes[i] / 2);
        for (round = 0; round < 3; round++) {
            memset(out, 0xff, sizeof out);
            CHECK(bpe_ranks_encode_cached(t, c, BPE_PRETOK_GPT2, (const unsigned char *)text, 30,
                                          text_ends, 2, out, out_ends) == BPE_OK);
            CHECK(out_ends[0] == want_ends[0] && out_ends[1] == want_ends[1]);
            CHECK(memcmp(out, want, want_ends[1] * sizeof *out) == 0);
            if (round == 0)
                merges = bpe_piece_cache_stat(c, BPE_PIECE_CACHE_MERGES);
        }
        CHECK(merges > 0 && bpe_piece_cache_stat(c, BPE_PIECE_CACHE_MERGES) == merges);
        CHECK(bpe_piece_cache_stat(c, BPE_PIECE_CACHE_NSTATS) == 0);
        CHECK(bpe_ranks_encode_cached(other, c, BPE_PRETOK_GPT2, (const unsigned char *)"ab", 2,
                                      text_ends + 1, 0, out, out_ends) == BPE_EINVAL);
        CHECK(bpe_ranks_encode_cached(t, NULL, BPE_PRETOK_GPT2, (const unsigned char *)"ab", 2,
                                      text_ends + 1, 0, out, out_ends) == BPE_EINVAL);
        bpe_piece_cache_free(c);
    }
    CHECK(bpe_piece_cache_new(BPE_PIECE_CACHE_MIN_BYTES - 1, &st) == NULL && st == BPE_EINVAL);
    CHECK(bpe_piece_cache_new(0, NULL) == NULL);
    CHECK(bpe_piece_cache_bytes(NULL) == 0);
    bpe_piece_cache_free(NULL);
    bpe_ranks_free(other);
}

/* Runs every worker of a shared batch on this thread, one after another
 * (worker n_workers - 1 first, so a worker that wrote past its text's
 * region would spoil IDs written before), or taking turns with a budget of
 * one byte; returns the status, *out and *out_ends hold the result. */
static int shared_run(const bpe_ranks *t, const unsigned char *text, size_t text_len,
                      const size_t *text_ends, size_t n_texts, size_t n_workers, int flags,
                      int turns, uint32_t *out, size_t *out_ends)
{
    bpe_batch_share share;
    bpe_piece_cache *caches[3];
    size_t positions[3] = {0, 0, 0}, w, busy, ready = 0;
    int st = BPE_OK, status = BPE_OK, more[3] = {1, 1, 1};
    CHECK(n_workers <= 3);
    CHECK(bpe_batch_share_init(&share, text_len, n_texts, n_workers, flags, out_ends) == BPE_OK);
#ifdef BPE_NO_ATOMICS
    CHECK(share.dynamic == 0); /* the portable shares, always */
#else
    CHECK(share.dynamic == !(flags & BPE_BATCH_STATIC));
#endif
    for (w = 0; w < n_workers; w++)
        CHECK((caches[w] = bpe_piece_cache_new(BPE_PIECE_CACHE_MIN_BYTES, &st)) != NULL);
    do {
        busy = 0;
        for (w = n_workers; w-- > 0;) {
            int one;
            if (!more[w])
                continue;
            one = bpe_ranks_encode_shared(t, caches[w], BPE_PRETOK_GPT2, text, text_len, text_ends,
                                          n_texts, &share, w, &positions[w], turns ? 1 : 0, out,
                                          out_ends);
            more[w] = one == BPE_BATCH_MORE;
            busy += more[w];
            if (one < 0 && status == BPE_OK)
                status = one;
            CHECK(bpe_batch_ready(&share, out_ends, ready) >= ready);
            ready = bpe_batch_ready(&share, out_ends, ready);
        }
    } while (busy);
#ifndef BPE_NO_ATOMICS
    if (status == BPE_OK)
        CHECK(ready == n_texts); /* every text done, and seen to be */
#endif
    for (w = 0; w < n_workers; w++)
        bpe_piece_cache_free(caches[w]);
    return status;
}

/* A batch shared by workers (bpe_ranks_encode_shared): every text's IDs at
 * its own offset, equal to the plain batch call's, for 1-3 workers, the
 * cursor and the fixed shares, whole calls and one-byte budgets; texts
 * empty, short and longer than a run, and closed up end to end
 * (bpe_batch_compact) as the plain call has them.  Then the argument
 * checks, and an error that stops the other workers. */
static void test_shared_batch(const bpe_ranks *t)
{
    enum { N = 40 };
    static unsigned char text[N * BPE_BATCH_RUN_BYTES / 8];
    size_t text_ends[N], want_ends[N], out_ends[N], len = 0, i, workers;
    uint32_t *want = malloc(sizeof text * sizeof(uint32_t)), *out = malloc(sizeof text * sizeof(uint32_t));
    unsigned seed = 12345;
    int flags, turns;
    CHECK(want != NULL && out != NULL);
    if (!want || !out)
        goto done;
    for (i = 0; i < N; i++) {
        /* lengths 0 .. ~1 KB, and two texts longer than a run */
        size_t n = i % 7 == 3 ? 0 : (seed = seed * 1103515245u + 12345u) >> 22;
        if (i == 5 || i == 30)
            n = BPE_BATCH_RUN_BYTES + 100;
        while (n-- > 0 && len < sizeof text) {
            seed = seed * 1103515245u + 12345u;
            text[len++] = (unsigned char)"abc a"[(seed >> 16) % 5];
        }
        text_ends[i] = len;
    }
    CHECK(bpe_ranks_encode_batch(t, BPE_PRETOK_GPT2, text, len, text_ends, N, want, want_ends) == BPE_OK);
    for (workers = 1; workers <= 3; workers++)
        for (flags = 0; flags <= BPE_BATCH_STATIC; flags += BPE_BATCH_STATIC)
            for (turns = 0; turns <= 1; turns++) {
                memset(out, 0xff, sizeof text * sizeof(uint32_t));
                CHECK(shared_run(t, text, len, text_ends, N, workers, flags, turns, out, out_ends) == BPE_OK);
                for (i = 0; i < N; i++) {
                    size_t start = i ? text_ends[i - 1] : 0, n = want_ends[i] - (i ? want_ends[i - 1] : 0);
                    CHECK(out_ends[i] == start + n);
                    CHECK(memcmp(out + start, want + (i ? want_ends[i - 1] : 0), n * sizeof *out) == 0);
                }
                {   /* closed up: every ID end to end, as one call makes them */
                    size_t starts[N];
                    int64_t offsets[N + 1];
                    for (i = 0; i < N; i++)
                        starts[i] = i ? text_ends[i - 1] : 0;
                    CHECK(bpe_batch_compact(out, starts, out_ends, N, offsets) == BPE_OK);
                    CHECK(offsets[0] == 0 && (size_t)offsets[N] == want_ends[N - 1]);
                    for (i = 0; i < N; i++)
                        CHECK((size_t)offsets[i + 1] == want_ends[i]);
                    CHECK(memcmp(out, want, want_ends[N - 1] * sizeof *out) == 0);
                }
            }
    {
        bpe_batch_share share;
        size_t position = 0;
        int st;
        bpe_piece_cache *c = bpe_piece_cache_new(BPE_PIECE_CACHE_MIN_BYTES, &st);
        CHECK(c != NULL);
        CHECK(bpe_batch_share_init(&share, len, N, 0, 0, out_ends) == BPE_EINVAL);
        CHECK(bpe_batch_share_init(&share, len, N, 2, 4, out_ends) == BPE_EINVAL);
        CHECK(bpe_batch_share_init(NULL, len, N, 2, 0, out_ends) == BPE_EINVAL);
        CHECK(bpe_batch_share_init(&share, len, N, 2, 0, out_ends) == BPE_OK);
        CHECK(bpe_batch_ready(&share, out_ends, 0) == 0);
        CHECK(bpe_ranks_encode_shared(t, c, BPE_PRETOK_GPT2, text, len, text_ends, N, &share, 2,
                                      &position, 0, out, out_ends) == BPE_EINVAL); /* no worker 2 */
        CHECK(bpe_ranks_encode_shared(t, c, BPE_PRETOK_GPT2, text, len, text_ends, N - 1, &share, 0,
                                      &position, 0, out, out_ends) == BPE_EINVAL); /* not its texts */
        CHECK(bpe_ranks_encode_shared(t, NULL, BPE_PRETOK_GPT2, text, len, text_ends, N, &share, 0,
                                      &position, 0, out, out_ends) == BPE_EINVAL);
        text_ends[N - 1]--;
        CHECK(bpe_ranks_encode_shared(t, c, BPE_PRETOK_GPT2, text, len, text_ends, N, &share, 0,
                                      &position, 0, out, out_ends) == BPE_EINVAL); /* short of the text */
        text_ends[N - 1]++;
        CHECK(bpe_batch_ready(&share, out_ends, 0) == 0); /* nothing was written */
        /* a byte with no token in text 1: the worker that meets it fails
         * (whichever it is), and with the cursor the other takes no run
         * after it */
        for (flags = 0; flags <= BPE_BATCH_STATIC; flags += BPE_BATCH_STATIC) {
            text[text_ends[0]] = 'z';
            CHECK(shared_run(t, text, len, text_ends, N, 2, flags, 0, out, out_ends) == BPE_EINVAL);
            text[text_ends[0]] = 'a';
            /* worker 1 ran first, took run 0 (the first ~16 KB) and failed;
             * worker 0 then took nothing from the cursor, but its own runs
             * under the fixed shares (0 is worker 1's only there: no text
             * of it is done) */
            CHECK(out_ends[1] == SIZE_MAX);
#ifndef BPE_NO_ATOMICS
            CHECK((out_ends[N - 1] == SIZE_MAX) == !flags);
#endif
            CHECK(bpe_batch_ready(&share, out_ends, 0) <= 1);
        }
        bpe_piece_cache_free(c);
        CHECK(bpe_batch_share_init(&share, 0, 0, 1, 0, NULL) == BPE_OK);
        CHECK(bpe_batch_ready(&share, NULL, 0) == 0);
    }
done:
    free(want);
    free(out);
}

/* Batches: each text encoded alone; the piece cache (pieces that are not one
 * token, repeated) gives what merging gives. */
static void test_batch_and_cache(void)
{
    bpe_ranks *t = toy_table(0, NULL, NULL, NULL, 0);
    /* gpt2 scanner on toy bytes: pieces "abcabc", " aab", " aab", ... */
    const char *text = "abcabc aab aab aabcc aab" "abcabc";
    size_t text_ends[2] = {24, 30}, out_ends[2], n1 = 0, n2 = 0;
    uint32_t out[64], alone[64];
    CHECK(bpe_ranks_encode_batch(t, BPE_PRETOK_GPT2, (const unsigned char *)text, 30, text_ends, 2,
                                 out, out_ends) == BPE_EINVAL); /* " " is not a toy token */
    bpe_ranks_free(t);
    {
        static const char *toks[] = {"a", "b", "c", " ", "ab", "bc", "abc", "aa", " a"};
        unsigned char bytes[64];
        size_t offsets[10], pos = 0, k;
        uint32_t ids[9];
        int st;
        for (k = 0; k < 9; k++) {
            offsets[k] = pos;
            memcpy(bytes + pos, toks[k], strlen(toks[k]));
            pos += strlen(toks[k]);
            ids[k] = (uint32_t)k;
        }
        offsets[9] = pos;
        t = bpe_ranks_new(bytes, offsets, ids, 9, NULL, NULL, NULL, 0, BPE_RANKS_WHOLE_PIECE, &st);
    }
    CHECK(t != NULL);
    CHECK(bpe_ranks_encode_batch(t, BPE_PRETOK_GPT2, (const unsigned char *)text, 30, text_ends, 2,
                                 out, out_ends) == BPE_OK);
    CHECK(bpe_ranks_encode_text(t, BPE_PRETOK_GPT2, (const unsigned char *)text, 24, alone, &n1) == BPE_OK);
    CHECK(bpe_ranks_encode_text(t, BPE_PRETOK_GPT2, (const unsigned char *)text + 24, 6, alone + n1, &n2) == BPE_OK);
    CHECK(out_ends[0] == n1 && out_ends[1] == n1 + n2);
    CHECK(memcmp(out, alone, (n1 + n2) * sizeof *out) == 0);
    /* " aab" -> " a" "ab" (8, 4) every time, from the cache after the first */
    CHECK(n1 >= 6 && out[2] == 8 && out[3] == 4 && out[4] == 8 && out[5] == 4);
    text_ends[0] = 31;
    CHECK(bpe_ranks_encode_batch(t, BPE_PRETOK_GPT2, (const unsigned char *)text, 30, text_ends, 2,
                                 out, out_ends) == BPE_EINVAL);
    CHECK(bpe_ranks_encode_batch(t, BPE_PRETOK_GPT2, NULL, 0, NULL, 0, NULL, NULL) == BPE_OK);
    test_cross_call_cache(t, text);
    test_shared_batch(t);
    bpe_ranks_free(t);
}

int main(void)
{
    test_o200k_scanner();
    test_batch_and_cache();
    test_known_answers();
    test_merge_list();
    test_heap_matches_naive();
    test_scanners();
    test_scanner_words();
    bpe_ranks_free(NULL);
    if (failures == 0)
        printf("test_ranks: all passed\n");
    return failures != 0;
}
