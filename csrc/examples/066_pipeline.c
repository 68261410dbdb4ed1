/*
 * 066_pipeline.c -- the full pipeline: text -> IDs -> embedding matrix.
 *
 * Mirrors: Chapter 11, listing 066.  The text is split into words and each
 * word gets an ID (first-seen, as in 062, with a bpe_symtab as the table);
 * each ID then selects one row of an embedding table of small random
 * numbers, and the rows, stacked in text order, form the [seq_len, dim]
 * matrix a model's first layer receives.
 * Core functions: bpe_symtab_intern / bpe_symtab_size / bpe_symtab_bytes.
 * The random numbers come from a tiny xorshift32 generator with a fixed
 * seed that lives in main's stack frame, so every run (and every machine)
 * prints the same values -- rand() would differ between C libraries.
 * Watch: the shapes -- embedding table [vocab_size, dim], output
 * [seq_len, dim]; and rows 0 and 4 of the output are identical, because
 * both are the word "the": an embedding is a lookup, not a computation.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bpe.h"
#include "book.h"

#define DIM 4
#define MAX_TOKENS 32
#define SEED 42u

static const char TEXT[] = "the cat sat on the mat";

/* xorshift32 (Marsaglia 2003): a whole generator in one uint32_t of state.
 * The state must not be 0. */
static uint32_t xorshift32(uint32_t *state)
{
    uint32_t x = *state;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

/* A uniform number in [-0.1, 0.1): the scale of an untrained embedding. */
static float small_random(uint32_t *state)
{
    return (float)((xorshift32(state) >> 8) / 16777216.0 * 0.2 - 0.1);
}

/* Text -> word IDs, growing the vocabulary in first-seen order. */
static int text_to_ids(bpe_symtab *vocab, const char *text, uint32_t *ids, size_t cap,
                       size_t *n_out)
{
    const char *cursor = text, *word;
    size_t len, n = 0;
    int status;

    while ((word = book_next_word(&cursor, &len)) != NULL) {
        if (n == cap)
            return BPE_ETOOBIG;
        if ((status = bpe_symtab_intern(vocab, word, len, &ids[n++])) != BPE_OK)
            return status;
    }
    *n_out = n;
    return BPE_OK;
}

/* A [rows, DIM] table of random numbers, row-major; NULL when out of memory. */
static float *random_table(size_t rows, uint32_t *state)
{
    float *table = malloc(rows * DIM * sizeof *table);
    size_t i;

    if (table == NULL)
        return NULL;
    for (i = 0; i < rows * DIM; i++)
        table[i] = small_random(state);
    return table;
}

/* The embedding lookup: out[t] = table[ids[t]], one row per token. */
static void embed(const float *table, const uint32_t *ids, size_t n, float *out)
{
    size_t t, d;

    for (t = 0; t < n; t++)
        for (d = 0; d < DIM; d++)
            out[t * DIM + d] = table[ids[t] * DIM + d];
}

static void print_matrix(const bpe_symtab *vocab, const uint32_t *ids, const float *m,
                         size_t n)
{
    char word[BOOK_MAX_TEXT];
    size_t t, d;

    for (t = 0; t < n; t++) {
        printf("    row %lu  %-4s id %lu  [", (unsigned long)t,
               book_symbol(vocab, ids[t], word, sizeof word), (unsigned long)ids[t]);
        for (d = 0; d < DIM; d++)
            printf("%s%+.4f", d ? ", " : "", m[t * DIM + d]);
        printf("]\n");
    }
}

int main(void)
{
    bpe_symtab *vocab = bpe_symtab_new();
    uint32_t ids[MAX_TOKENS], rng = SEED;
    float *table = NULL, *matrix = NULL;
    size_t n = 0, i, vocab_size;
    int status = BPE_ENOMEM;

    if (vocab == NULL || (status = text_to_ids(vocab, TEXT, ids, MAX_TOKENS, &n)) != BPE_OK)
        goto cleanup;
    vocab_size = bpe_symtab_size(vocab);
    status = BPE_ENOMEM;
    if ((table = random_table(vocab_size, &rng)) == NULL ||
        (matrix = malloc((n ? n : 1) * DIM * sizeof *matrix)) == NULL)
        goto cleanup;
    status = BPE_OK;
    embed(table, ids, n, matrix);

    printf("1. text:   \"%s\"\n", TEXT);
    printf("2. ids:    [");
    for (i = 0; i < n; i++)
        printf("%s%lu", i ? ", " : "", (unsigned long)ids[i]);
    printf("]   (vocabulary %lu words, first-seen)\n", (unsigned long)vocab_size);
    printf("3. embedding table: [%lu, %d] = [vocab_size, dim], xorshift32 seed %u\n",
           (unsigned long)vocab_size, DIM, SEED);
    printf("4. output matrix: [%lu, %d] = [seq_len, dim], one row per token:\n",
           (unsigned long)n, DIM);
    print_matrix(vocab, ids, matrix, n);
    printf("rows 0 and 4 are both \"the\", so they are the same row of the table.\n");
cleanup:
    free(matrix);
    free(table);
    bpe_symtab_free(vocab);
    return status == BPE_OK ? 0 : book_fail("066_pipeline", status);
}
