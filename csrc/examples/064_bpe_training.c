/*
 * 064_bpe_training.c -- the chapter's training loop: count, pick, merge, repeat.
 *
 * Mirrors: Chapter 11, listing 064.  Word table low x5, lower x2, newest x6,
 * widest x3, new x2 (Sennrich et al.'s example), marker `_` as a symbol of
 * its own; at most 10 merges, stopping early when the best count is below 2.
 * Core functions: bpe_find_best_pair and bpe_merge_pair (the loop itself,
 * rescanning the whole table every step, as the listing does), then
 * bpe_trainer_new / bpe_trainer_run (the incremental trainer pybpe really
 * trains with) as a cross-check.
 * Watch: the counts never rise (9, 9, 9, 8, ...); (e,s) wins first with
 * 9 = newest x6 + widest x3, ahead of (n,e) with 8 = newest x6 + new x2;
 * after step 8 `newest_` is a single symbol, while `lower` stays in pieces.  The last line says whether the
 * trainer learned the very same merges -- it must.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bpe.h"
#include "book.h"

#define MAX_MERGES 10
#define MIN_COUNT 2

static const char MARKER[] = "_";

static const struct {
    const char *word;
    uint64_t frequency;
} CORPUS[] = {
    {"low", 5}, {"lower", 2}, {"newest", 6}, {"widest", 3}, {"new", 2},
};
#define N_WORDS (sizeof CORPUS / sizeof CORPUS[0])

/* The word table (each word split into bytes plus the marker), with the
 * characters interned in first-seen order. */
static int build_table(bpe_symtab *symtab, bpe_words *words)
{
    uint32_t symbols[BOOK_MAX_SYMBOLS];
    size_t i, n;
    int status;

    for (i = 0; i < N_WORDS; i++) {
        if ((status = book_word_symbols(symtab, CORPUS[i].word, strlen(CORPUS[i].word),
                                        MARKER, symbols, BOOK_MAX_SYMBOLS, &n)) != BPE_OK ||
            (status = bpe_words_add(words, symbols, n, CORPUS[i].frequency)) != BPE_OK)
            return status;
    }
    return BPE_OK;
}

/* One line per word: its current segmentation and its frequency. */
static void print_table(const bpe_symtab *symtab, const bpe_words *words)
{
    char buf[BOOK_MAX_TEXT];
    const uint32_t *symbols;
    size_t i, n;

    for (i = 0; i < bpe_words_count(words); i++) {
        symbols = bpe_words_symbols(words, i, &n);
        printf("    %-16s x%lu\n", book_render(symtab, symbols, n, buf, sizeof buf),
               (unsigned long)bpe_words_frequency(words, i));
    }
}

/* The ID of left+right: its existing ID, or the next free one. */
static int intern_merged(bpe_symtab *symtab, uint32_t left, uint32_t right,
                         uint32_t *merged)
{
    char buf[BOOK_MAX_TEXT];
    size_t a_len, b_len;
    const char *a = bpe_symtab_bytes(symtab, left, &a_len);
    const char *b = bpe_symtab_bytes(symtab, right, &b_len);

    if (a == NULL || b == NULL || a_len + b_len > sizeof buf)
        return BPE_EINVAL;
    memcpy(buf, a, a_len);
    memcpy(buf + a_len, b, b_len);
    return bpe_symtab_intern(symtab, buf, a_len + b_len, merged);
}

/* "merge  2: (es, t)      -> est      count 9", columns aligned. */
static void print_merge(const bpe_symtab *symtab, size_t step, const bpe_merge *m)
{
    char a[BOOK_MAX_TEXT], b[BOOK_MAX_TEXT], ab[BOOK_MAX_TEXT], pair[3 * BOOK_MAX_TEXT];

    snprintf(pair, sizeof pair, "(%s, %s)", book_symbol(symtab, m->left, a, sizeof a),
             book_symbol(symtab, m->right, b, sizeof b));
    printf("merge %2lu: %-14s -> %-9s count %lu\n", (unsigned long)step, pair,
           book_symbol(symtab, m->merged, ab, sizeof ab), (unsigned long)m->count);
}

/* The listing's loop.  The learned merges go to out[0..*n_out). */
static int train_by_hand(bpe_symtab *symtab, bpe_words *words, bpe_merge *out,
                         size_t *n_out)
{
    bpe_pair_count best;
    size_t step;
    int found, status;

    for (step = 0; step < MAX_MERGES; step++) {
        if ((found = bpe_find_best_pair(words, &best)) < 0)
            return found;
        if (found == 0) {
            printf("stop: no pair left\n");
            break;
        }
        if (best.count < MIN_COUNT) {
            printf("stop: the best count %lu is below %d\n", (unsigned long)best.count, MIN_COUNT);
            break;
        }
        out[step].left = best.left;
        out[step].right = best.right;
        out[step].count = best.count;
        if ((status = intern_merged(symtab, best.left, best.right, &out[step].merged)) != BPE_OK ||
            (status = bpe_merge_pair(words, best.left, best.right, out[step].merged, NULL)) != BPE_OK)
            return status;
        print_merge(symtab, step + 1, &out[step]);
        print_table(symtab, words);
    }
    if (step == MAX_MERGES)
        printf("stop: %d merges done\n", MAX_MERGES);
    *n_out = step;
    return BPE_OK;
}

/* Trains again with bpe_trainer on a fresh symbol table and word table,
 * and compares its merges with the hand loop's: the same pairs (as
 * strings), in the same order, with the same counts. */
static int cross_check(const bpe_symtab *hand_symtab, const bpe_merge *hand, size_t n_hand)
{
    bpe_symtab *symtab = bpe_symtab_new();
    bpe_words *words = bpe_words_new();
    bpe_trainer *trainer = NULL;
    bpe_merge got[MAX_MERGES];
    char x[BOOK_MAX_TEXT], y[BOOK_MAX_TEXT];
    size_t n = 0, i, same;
    int status = BPE_ENOMEM;

    if (symtab == NULL || words == NULL || (status = build_table(symtab, words)) != BPE_OK)
        goto cleanup;
    if ((trainer = bpe_trainer_new(symtab, words, MIN_COUNT, 0, &status)) == NULL)
        goto cleanup;
    if ((status = bpe_trainer_run(trainer, SIZE_MAX, MAX_MERGES, got, &n)) != BPE_OK)
        goto cleanup;
    same = n == n_hand;
    for (i = 0; same && i < n; i++)
        same = got[i].count == hand[i].count &&
               strcmp(book_symbol(symtab, got[i].merged, x, sizeof x),
                      book_symbol(hand_symtab, hand[i].merged, y, sizeof y)) == 0 &&
               strcmp(book_symbol(symtab, got[i].left, x, sizeof x),
                      book_symbol(hand_symtab, hand[i].left, y, sizeof y)) == 0;
    printf("cross-check: bpe_trainer learned %lu merges, %s\n", (unsigned long)n,
           same ? "the same pairs with the same counts" : "DIFFERENT from the loop above");
    status = same ? BPE_OK : BPE_EINVAL;
cleanup:
    bpe_trainer_free(trainer);
    bpe_words_free(words);
    bpe_symtab_free(symtab);
    return status;
}

int main(void)
{
    bpe_symtab *symtab = bpe_symtab_new();
    bpe_words *words = bpe_words_new();
    bpe_merge merges[MAX_MERGES];
    size_t n_merges = 0;
    int status = BPE_ENOMEM;

    if (symtab == NULL || words == NULL || (status = build_table(symtab, words)) != BPE_OK)
        goto cleanup;
    printf("word table (marker %s as its own symbol); at most %d merges, min count %d\n",
           MARKER, MAX_MERGES, MIN_COUNT);
    print_table(symtab, words);
    printf("\n");
    if ((status = train_by_hand(symtab, words, merges, &n_merges)) != BPE_OK)
        goto cleanup;
    printf("vocabulary: %lu symbols (%lu initial symbols + %lu merges)\n\n",
           (unsigned long)bpe_symtab_size(symtab),
           (unsigned long)(bpe_symtab_size(symtab) - n_merges), (unsigned long)n_merges);
    status = cross_check(symtab, merges, n_merges);
cleanup:
    bpe_words_free(words);
    bpe_symtab_free(symtab);
    return status == BPE_OK ? 0 : book_fail("064_bpe_training", status);
}
