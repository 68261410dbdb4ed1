/*
 * 063_bpe_trace.c -- one BPE step traced by hand, then checked by the core.
 *
 * Mirrors: Chapter 11, listing 063 (the hand trace of the first merges).
 * Corpus `low lower newest widest`, each word once, with the end-of-word
 * marker `_` as a symbol of its own.
 * Core functions: bpe_words_add (the word table), bpe_count_pairs (every
 * pair with its count, first-encountered order), bpe_find_best_pair (the
 * tie-break rule), bpe_merge_pair (rewrite every word).
 * Watch: the counts are COMPUTED, not copied from the book.  The book's hand
 * trace says (w,e): 1 -- it is 2 (lower AND newest).  Six pairs tie at 2;
 * the book lists five.  The first-encountered rule (what Counter.most_common
 * returns) picks (l,o); the book picks (e,s) by hand and then (es,t).  Both
 * paths are shown: the rule's step on one copy of the table, the book's two
 * steps on another.
 */
#include <stdio.h>
#include <string.h>

#include "bpe.h"
#include "book.h"

static const char CORPUS[] = "low lower newest widest";
static const char MARKER[] = "_";

/* The word table of CORPUS: l o w _, l o w e r _, ...  Characters are
 * interned in first-seen order. */
static int build_table(bpe_symtab *symtab, bpe_words *words)
{
    const char *cursor = CORPUS, *word;
    uint32_t symbols[BOOK_MAX_SYMBOLS];
    size_t len, n;
    int status;

    while ((word = book_next_word(&cursor, &len)) != NULL) {
        if ((status = book_word_symbols(symtab, word, len, MARKER, symbols,
                                        BOOK_MAX_SYMBOLS, &n)) != BPE_OK ||
            (status = bpe_words_add(words, symbols, n, 1)) != BPE_OK)
            return status;
    }
    return BPE_OK;
}

static void print_table(const bpe_symtab *symtab, const bpe_words *words)
{
    char buf[BOOK_MAX_TEXT];
    const uint32_t *symbols;
    size_t i, n;

    for (i = 0; i < bpe_words_count(words); i++) {
        symbols = bpe_words_symbols(words, i, &n);
        printf("    %s\n", book_render(symtab, symbols, n, buf, sizeof buf));
    }
}

/* "(e, s)" for printing. */
static const char *pair_name(const bpe_symtab *symtab, uint32_t left,
                             uint32_t right, char *buf, size_t cap)
{
    char a[BOOK_MAX_TEXT], b[BOOK_MAX_TEXT];

    snprintf(buf, cap, "(%s, %s)", book_symbol(symtab, left, a, sizeof a),
             book_symbol(symtab, right, b, sizeof b));
    return buf;
}

/* Every pair count as bpe_count_pairs computes it; the pairs at the top
 * count are starred and then listed together. */
static int print_pair_counts(const bpe_symtab *symtab, const bpe_words *words)
{
    bpe_pair_count *pairs = NULL;
    char name[2 * BOOK_MAX_TEXT];
    uint64_t top = 0;
    size_t n, i, tied = 0;
    int status = bpe_count_pairs(words, &pairs, &n);

    if (status != BPE_OK)
        return status;
    for (i = 0; i < n; i++)
        top = pairs[i].count > top ? pairs[i].count : top;
    printf("pair counts (bpe_count_pairs, first-encountered order; * = top count):\n");
    for (i = 0; i < n; i++) {
        pair_name(symtab, pairs[i].left, pairs[i].right, name, sizeof name);
        printf("    %-8s %lu%s", name, (unsigned long)pairs[i].count,
               pairs[i].count == top ? "  *" : "");
        if (strcmp(name, "(w, e)") == 0)
            printf("   <- the book's hand trace says 1: lower and newest both have it");
        printf("\n");
        tied += pairs[i].count == top;
    }
    printf("tied at %lu: %lu pairs (the book lists five):", (unsigned long)top,
           (unsigned long)tied);
    for (i = 0; i < n; i++)
        if (pairs[i].count == top)
            printf(" %s", pair_name(symtab, pairs[i].left, pairs[i].right, name, sizeof name));
    printf("\n");
    bpe_free(pairs);
    return BPE_OK;
}

/* Merges (left, right) everywhere in `words` with bpe_merge_pair, naming
 * the new symbol left+right, and prints the table after it. */
static int merge_and_show(bpe_symtab *symtab, bpe_words *words,
                          const char *left, const char *right)
{
    char merged[BOOK_MAX_TEXT];
    uint32_t a, b, m;
    size_t changed;
    int status;

    a = bpe_symtab_lookup(symtab, left, strlen(left));
    b = bpe_symtab_lookup(symtab, right, strlen(right));
    if (a == BPE_NO_SYMBOL || b == BPE_NO_SYMBOL)
        return BPE_EINVAL;
    snprintf(merged, sizeof merged, "%s%s", left, right);
    if ((status = book_intern(symtab, merged, &m)) != BPE_OK ||
        (status = bpe_merge_pair(words, a, b, m, &changed)) != BPE_OK)
        return status;
    printf("merge (%s, %s) -> %s   (bpe_merge_pair: %lu words changed)\n", left,
           right, merged, (unsigned long)changed);
    print_table(symtab, words);
    return BPE_OK;
}

/* The count bpe_count_pairs gives (left, right) now, 0 when absent. */
static int count_of(const bpe_symtab *symtab, const bpe_words *words,
                    const char *left, const char *right, uint64_t *count)
{
    bpe_pair_count *pairs = NULL;
    uint32_t a = bpe_symtab_lookup(symtab, left, strlen(left));
    uint32_t b = bpe_symtab_lookup(symtab, right, strlen(right));
    size_t n, i;
    int status = bpe_count_pairs(words, &pairs, &n);

    if (status != BPE_OK)
        return status;
    *count = 0;
    for (i = 0; i < n; i++)
        if (pairs[i].left == a && pairs[i].right == b)
            *count = pairs[i].count;
    bpe_free(pairs);
    return BPE_OK;
}

/* The rule's path: find_best_pair on a fresh copy of the table. */
static int rule_path(void)
{
    bpe_symtab *symtab = bpe_symtab_new();
    bpe_words *words = bpe_words_new();
    bpe_pair_count best;
    char name[2 * BOOK_MAX_TEXT], a[BOOK_MAX_TEXT], b[BOOK_MAX_TEXT];
    int status = BPE_ENOMEM, found;

    if (symtab == NULL || words == NULL || (status = build_table(symtab, words)) != BPE_OK)
        goto cleanup;
    if ((found = bpe_find_best_pair(words, &best)) < 0) {
        status = found;
        goto cleanup;
    }
    if (found == 0) {
        printf("no pair at all\n");
        goto cleanup;
    }
    printf("\nthe first-encountered rule (bpe_find_best_pair): %s with count %lu\n",
           pair_name(symtab, best.left, best.right, name, sizeof name),
           (unsigned long)best.count);
    status = merge_and_show(symtab, words, book_symbol(symtab, best.left, a, sizeof a),
                            book_symbol(symtab, best.right, b, sizeof b));
cleanup:
    bpe_words_free(words);
    bpe_symtab_free(symtab);
    return status;
}

/* The book's path: (e, s), then (es, t), on another fresh copy. */
static int book_path(void)
{
    bpe_symtab *symtab = bpe_symtab_new();
    bpe_words *words = bpe_words_new();
    uint64_t count = 0;
    int status = BPE_ENOMEM;

    if (symtab == NULL || words == NULL || (status = build_table(symtab, words)) != BPE_OK)
        goto cleanup;
    printf("\nthe book's path (chosen by hand among the tied pairs):\n");
    if ((status = merge_and_show(symtab, words, "e", "s")) != BPE_OK ||
        (status = count_of(symtab, words, "es", "t", &count)) != BPE_OK)
        goto cleanup;
    printf("now (es, t) has count %lu, so the book merges it next:\n", (unsigned long)count);
    status = merge_and_show(symtab, words, "es", "t");
cleanup:
    bpe_words_free(words);
    bpe_symtab_free(symtab);
    return status;
}

int main(void)
{
    bpe_symtab *symtab = bpe_symtab_new();
    bpe_words *words = bpe_words_new();
    int status = BPE_ENOMEM;

    if (symtab == NULL || words == NULL || (status = build_table(symtab, words)) != BPE_OK)
        goto cleanup;
    printf("corpus: \"%s\", marker %s as its own symbol\n", CORPUS, MARKER);
    printf("initial symbols (%lu in the symbol table):\n", (unsigned long)bpe_symtab_size(symtab));
    print_table(symtab, words);
    printf("\n");
    if ((status = print_pair_counts(symtab, words)) != BPE_OK ||
        (status = rule_path()) != BPE_OK)
        goto cleanup;
    status = book_path();
cleanup:
    bpe_words_free(words);
    bpe_symtab_free(symtab);
    return status == BPE_OK ? 0 : book_fail("063_bpe_trace", status);
}
