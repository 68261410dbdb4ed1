/*
 * bench_pretok.c -- the throughput of pretok.c's scanners alone (no
 * encoding, no Python): MB/s of UTF-8 cut into pieces, per pattern.
 *
 *     cc -std=c99 -O2 -Icsrc -o tools/bin/bench_pretok tools/bench_pretok.c csrc/pretok.c
 *     tools/bin/bench_pretok FILE... [-r ROUNDS]
 *
 * (`make bench-pretok FILES="..."` does both.)  Each file is read whole and
 * cut by bpe_pretok_split with the gpt2, cl100k and o200k scanners, ROUNDS
 * times each (default 15), the patterns interleaved round by round so a
 * noisy neighbour hits all of them alike.  A line per file and pattern:
 * the median and best MB/s by CPU time (clock(): the machine may be shared,
 * and wall time would measure the neighbours), the number of pieces and a
 * checksum of their ends -- equal checksums before and after a change mean
 * the same cuts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text.h"

#define MAX_ROUNDS 101

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (n == cap) {
            unsigned char *grown = realloc(buf, cap = cap ? 2 * cap : 1 << 20);
            if (!grown) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = grown;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    static const int patterns[3] = {BPE_PRETOK_GPT2, BPE_PRETOK_CL100K, BPE_PRETOK_O200K};
    static const char *names[3] = {"gpt2", "cl100k", "o200k"};
    int rounds = 15, i, r, p;
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            rounds = atoi(argv[i + 1]);
            argv[i] = argv[i + 1] = NULL;
            i++;
        }
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "ROUNDS must be 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    for (i = 1; i < argc; i++) {
        double secs[3][MAX_ROUNDS];
        size_t len = 0, n[3] = {0, 0, 0}, *ends;
        unsigned long long sum[3] = {0, 0, 0};
        unsigned char *text;
        if (!argv[i])
            continue;
        if (!(text = read_file(argv[i], &len)) || !(ends = malloc((len + 1) * sizeof *ends))) {
            fprintf(stderr, "%s: cannot read (or out of memory)\n", argv[i]);
            return 1;
        }
        for (r = 0; r < rounds; r++)
            for (p = 0; p < 3; p++) {
                clock_t t0 = clock();
                size_t k;
                n[p] = bpe_pretok_split(patterns[p], text, len, ends);
                secs[p][r] = (double)(clock() - t0) / CLOCKS_PER_SEC;
                for (sum[p] = 0, k = 0; k < n[p]; k++)
                    sum[p] = sum[p] * 1000003u + ends[k];
            }
        for (p = 0; p < 3; p++) {
            qsort(secs[p], (size_t)rounds, sizeof secs[p][0], cmp_double);
            printf("%-28s %-7s median %7.1f MB/s  best %7.1f MB/s  %8zu pieces  sum %016llx\n",
                   argv[i], names[p], len / 1e6 / secs[p][rounds / 2], len / 1e6 / secs[p][0],
                   n[p], sum[p]);
        }
        free(ends);
        free(text);
    }
    return 0;
}
