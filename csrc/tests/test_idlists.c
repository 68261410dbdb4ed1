/*
 * test_idlists.c -- self-tests of py/idlists.c, meant to run under ASan +
 * UBSan: the exact bytes of a small stream, edge cases (no lists, empty
 * lists, IDs too big for marshal, decreasing ends), and random lists read
 * back by a small decoder written from the stream's description in
 * idlists.h; the 16-bit copy.  tests/test_encoding.py checks that Python's marshal module
 * reads the stream back to the same lists.
 * Build: cc -std=c99 -pedantic -Wall -Wextra -Icsrc csrc/tests/test_idlists.c
 *        csrc/py/idlists.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "py/idlists.h"
#include "check.h"


static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Reads a stream back into ids/ends (as the caller laid them out); returns
 * 0 if it is malformed. */
static int decode(const unsigned char *s, size_t len, uint32_t *ids, size_t *ends,
                  size_t *n_lists, uint32_t *refs)
{
    size_t pos = 0, n_refs = 0, k = 0, i, j, n;
    if (len < 5 || s[0] != '[')
        return 0;
    *n_lists = get_u32(s + 1);
    pos = 5;
    for (i = 0; i < *n_lists; i++) {
        if (pos + 5 > len || s[pos] != '[')
            return 0;
        n = get_u32(s + pos + 1);
        pos += 5;
        for (j = 0; j < n; j++, k++, pos += 5) {
            if (pos + 5 > len)
                return 0;
            if (s[pos] == ('i' | 0x80)) {
                ids[k] = refs[n_refs++] = get_u32(s + pos + 1);
            } else if (s[pos] == 'r' && get_u32(s + pos + 1) < n_refs) {
                ids[k] = refs[get_u32(s + pos + 1)];
            } else {
                return 0;
            }
        }
        ends[i] = k;
    }
    return pos == len;
}

static void test_known_bytes(void)
{
    const uint32_t ids[] = {5, 7, 5};
    const size_t ends[] = {2, 3};
    const unsigned char want[] = {
        '[', 2, 0, 0, 0,
        '[', 2, 0, 0, 0, 'i' | 0x80, 5, 0, 0, 0, 'i' | 0x80, 7, 0, 0, 0,
        '[', 1, 0, 0, 0, 'r', 0, 0, 0, 0};
    unsigned char out[64];
    size_t len = 0;
    CHECK(bpe_idlists_bound(3, 2) == 30);
    CHECK(bpe_idlists_marshal(ids, ends, 2, out, &len) == BPE_OK);
    CHECK(len == sizeof want && memcmp(out, want, len) == 0);
}

static void test_edges(void)
{
    unsigned char out[64];
    size_t len = 0;
    const size_t empty_ends[] = {0, 0};
    const size_t bad_ends[] = {2, 1};
    const size_t one_end[] = {1};
    const uint32_t ids[] = {1, 2};
    const uint32_t too_big[] = {BPE_IDLISTS_MAX_ID + 1};
    CHECK(bpe_idlists_marshal(NULL, NULL, 0, out, &len) == BPE_OK && len == 5);
    CHECK(bpe_idlists_marshal(NULL, empty_ends, 2, out, &len) == BPE_OK && len == 15);
    CHECK(bpe_idlists_marshal(ids, bad_ends, 2, out, &len) == BPE_EINVAL);
    CHECK(bpe_idlists_marshal(too_big, one_end, 1, out, &len) == BPE_ETOOBIG);
    CHECK(bpe_idlists_marshal(ids, one_end, 1, NULL, &len) == BPE_EINVAL);
    CHECK(bpe_idlists_bound(SIZE_MAX, 1) == 0);
    CHECK(bpe_idlists_bound(SIZE_MAX / 5, 0) == 0);
}

static void test_random_round_trips(void)
{
    enum { MAX_IDS = 600, MAX_LISTS = 12 };
    static uint32_t ids[MAX_IDS], back_ids[MAX_IDS], refs[MAX_IDS];
    static size_t ends[MAX_LISTS], back_ends[MAX_LISTS];
    static unsigned char out[(MAX_IDS + MAX_LISTS + 1) * 5];
    int round;
    srand(7);
    for (round = 0; round < 2000; round++) {
        size_t n_lists = (size_t)(rand() % MAX_LISTS), n_ids = 0, i, back_lists = 0, len = 0;
        uint32_t id_range = round % 3 == 0 ? 4u : round % 3 == 1 ? 300u : BPE_IDLISTS_MAX_ID + 1;
        for (i = 0; i < n_lists; i++) {
            size_t n = (size_t)(rand() % (MAX_IDS / MAX_LISTS));
            for (; n; n--)
                ids[n_ids++] = (uint32_t)((((uint32_t)rand() << 16) ^ (uint32_t)rand()) % id_range);
            ends[i] = n_ids;
        }
        CHECK(bpe_idlists_bound(n_ids, n_lists) <= sizeof out);
        CHECK(bpe_idlists_marshal(ids, ends, n_lists, out, &len) == BPE_OK);
        CHECK(len <= bpe_idlists_bound(n_ids, n_lists));
        CHECK(decode(out, len, back_ids, back_ends, &back_lists, refs));
        CHECK(back_lists == n_lists);
        CHECK(n_lists == 0 || memcmp(back_ends, ends, n_lists * sizeof *ends) == 0);
        CHECK(n_ids == 0 || memcmp(back_ids, ids, n_ids * sizeof *ids) == 0);
        if (failures)
            break;
    }
}

static void test_u16(void)
{
    const uint32_t ids[] = {0, 1, 65535, 50256};
    const uint32_t too_big[] = {3, 65536};
    uint16_t out[4];
    CHECK(bpe_ids_to_u16(ids, 4, out) == BPE_OK);
    CHECK(out[0] == 0 && out[1] == 1 && out[2] == 65535 && out[3] == 50256);
    CHECK(bpe_ids_to_u16(too_big, 2, out) == BPE_ETOOBIG);
    CHECK(bpe_ids_to_u16(NULL, 0, NULL) == BPE_OK);
    CHECK(bpe_ids_to_u16(NULL, 1, out) == BPE_EINVAL);
}

/* Runs: cut where the ID changes, refused past max_runs, and every run
 * spelled back equals the IDs (random runs of random lengths). */
static void test_runs(void)
{
    const uint32_t ids[] = {5, 5, 7, 7, 7, 5};
    uint32_t run_ids[8];
    size_t run_ends[8], n_runs = 99, k, j, start;
    CHECK(bpe_ids_runs(ids, 6, 8, run_ids, run_ends, &n_runs) == BPE_OK);
    CHECK(n_runs == 3 && run_ids[0] == 5 && run_ids[1] == 7 && run_ids[2] == 5);
    CHECK(run_ends[0] == 2 && run_ends[1] == 5 && run_ends[2] == 6);
    CHECK(bpe_ids_runs(ids, 6, 3, run_ids, run_ends, &n_runs) == BPE_OK && n_runs == 3);
    CHECK(bpe_ids_runs(ids, 6, 2, run_ids, run_ends, &n_runs) == BPE_ETOOBIG);
    CHECK(bpe_ids_runs(ids, 1, 1, run_ids, run_ends, &n_runs) == BPE_OK && n_runs == 1 && run_ends[0] == 1);
    CHECK(bpe_ids_runs(NULL, 0, 0, NULL, NULL, &n_runs) == BPE_OK && n_runs == 0);
    CHECK(bpe_ids_runs(ids, 1, 0, NULL, NULL, &n_runs) == BPE_ETOOBIG);
    CHECK(bpe_ids_runs(NULL, 1, 1, run_ids, run_ends, &n_runs) == BPE_EINVAL);
    CHECK(bpe_ids_runs(ids, 1, 1, run_ids, run_ends, NULL) == BPE_EINVAL);
    srand(7);
    for (k = 0; k < 200; k++) {
        static uint32_t many[4096], back[4096], rids[4096];
        static size_t rends[4096];
        size_t n = 0;
        while (n < sizeof many / sizeof *many) {
            uint32_t id = (uint32_t)(rand() % 4);
            size_t len = (size_t)(rand() % 9) + 1;
            for (; len && n < sizeof many / sizeof *many; len--)
                many[n++] = id;
        }
        n = (size_t)rand() % (n + 1);
        CHECK(bpe_ids_runs(many, n, n, rids, rends, &n_runs) == BPE_OK);
        for (j = 0, start = 0; j < n_runs; start = rends[j], j++) {
            CHECK(rends[j] > start && (j == 0 || rids[j] != rids[j - 1]));
            for (; start < rends[j]; start++)
                back[start] = rids[j];
        }
        CHECK(start == n && (n == 0 || memcmp(back, many, n * sizeof *many) == 0));
        if (failures)
            break;
    }
}

int main(void)
{
    test_known_bytes();
    test_edges();
    test_random_round_trips();
    test_u16();
    test_runs();
    if (failures) {
        printf("test_idlists: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_idlists: all passed\n");
    return 0;
}
