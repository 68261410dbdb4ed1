/*
 * 065_apply_merges.c -- learned merges applied to new text.
 *
 * Mirrors: Chapter 11, listing 065.  Six rules, in rank order:
 * e+s, es+t, l+o, lo+w, n+e, ne+w.  Each word of `newest lower low newest
 * unknown` is split into characters and the rules are replayed on it in
 * rank order; the resulting pieces get IDs in first-seen order.
 * Core functions: bpe_merger_new (the pair -> rank table of the rule list),
 * bpe_apply_merges (segment one word), bpe_symtab_intern (symbols, and the
 * first-seen ID table of the pieces).
 * Watch: `newest` -> new est, `lower` -> low e r (no rule joins e and r);
 * the closing trace shows the rank order at work: e+s and es+t act on
 * `newest` before n+e and ne+w do.  `unknown` has no e-s, l-o or n-e pair, so it stays seven
 * single characters -- every word is still encodable, unlike in 062.
 */
#include <stdio.h>
#include <string.h>

#include "bpe.h"
#include "book.h"

static const char *const RULES[][2] = {
    {"e", "s"}, {"es", "t"}, {"l", "o"}, {"lo", "w"}, {"n", "e"}, {"ne", "w"},
};
#define N_RULES (sizeof RULES / sizeof RULES[0])

static const char TEXT[] = "newest lower low newest unknown";

/* The rule list as symbol IDs (the left and right strings and their
 * concatenation interned in `symbols`), and its merger. */
static bpe_merger *build_merger(bpe_symtab *symbols, size_t n_rules, int *status)
{
    uint32_t lefts[N_RULES], rights[N_RULES], results[N_RULES];
    char merged[BOOK_MAX_TEXT];
    size_t r;

    for (r = 0; r < n_rules; r++) {
        snprintf(merged, sizeof merged, "%s%s", RULES[r][0], RULES[r][1]);
        if ((*status = book_intern(symbols, RULES[r][0], &lefts[r])) != BPE_OK ||
            (*status = book_intern(symbols, RULES[r][1], &rights[r])) != BPE_OK ||
            (*status = book_intern(symbols, merged, &results[r])) != BPE_OK)
            return NULL;
    }
    return bpe_merger_new(lefts, rights, results, n_rules, status);
}

static void print_rules(const bpe_symtab *symbols)
{
    size_t r;

    printf("rules (rank order):\n");
    for (r = 0; r < N_RULES; r++)
        printf("    %lu  %-2s + %-2s -> %s%s\n", (unsigned long)r, RULES[r][0], RULES[r][1],
               RULES[r][0], RULES[r][1]);
    printf("(%lu symbols known to the rules)\n\n", (unsigned long)bpe_symtab_size(symbols));
}

/* Segments one word: characters, then bpe_apply_merges in place. */
static int segment(bpe_symtab *symbols, const bpe_merger *merger, const char *word,
                   size_t len, uint32_t *out, size_t *n)
{
    int status = book_word_symbols(symbols, word, len, NULL, out, BOOK_MAX_SYMBOLS, n);

    return status != BPE_OK ? status : bpe_apply_merges(merger, out, n);
}

/* The pieces' first-seen IDs: interning them in a second table, whose dense
 * IDs are handed out in first-interned order. */
static int piece_ids(const bpe_symtab *symbols, bpe_symtab *vocab, const uint32_t *pieces,
                     size_t n, uint32_t *ids)
{
    const char *bytes;
    size_t i, len;
    int status;

    for (i = 0; i < n; i++) {
        bytes = bpe_symtab_bytes(symbols, pieces[i], &len);
        if (bytes == NULL)
            return BPE_EINVAL;
        if ((status = bpe_symtab_intern(vocab, bytes, len, &ids[i])) != BPE_OK)
            return status;
    }
    return BPE_OK;
}

/* Every word of TEXT: its segmentation and the pieces' IDs; then the IDs
 * of the whole text, as an encoder would return them. */
static int encode_text(bpe_symtab *symbols, const bpe_merger *merger, bpe_symtab *vocab)
{
    const char *cursor = TEXT, *word;
    uint32_t pieces[BOOK_MAX_SYMBOLS], ids[sizeof TEXT];  /* never more pieces than bytes */
    char buf[BOOK_MAX_TEXT];
    size_t len, n, i, total = 0;
    int status;

    printf("    %-9s %-16s ids (first-seen)\n", "word", "segmentation");
    while ((word = book_next_word(&cursor, &len)) != NULL) {
        if ((status = segment(symbols, merger, word, len, pieces, &n)) != BPE_OK ||
            (status = piece_ids(symbols, vocab, pieces, n, ids + total)) != BPE_OK)
            return status;
        printf("    %-9.*s %-16s", (int)len, word, book_render(symbols, pieces, n, buf, sizeof buf));
        for (i = 0; i < n; i++)
            printf(" %lu", (unsigned long)ids[total + i]);
        printf("\n");
        total += n;
    }
    printf("\nids: [");
    for (i = 0; i < total; i++)
        printf("%s%lu", i ? ", " : "", (unsigned long)ids[i]);
    printf("]  (%lu tokens)\n", (unsigned long)total);
    return BPE_OK;
}

/* `newest` under the first r rules, r = 0..6: ranked application made
 * visible, one merger per prefix of the rule list. */
static int trace_word(const char *word)
{
    bpe_symtab *symbols = bpe_symtab_new();
    bpe_merger *merger = NULL;
    uint32_t pieces[BOOK_MAX_SYMBOLS];
    char buf[BOOK_MAX_TEXT];
    size_t r, n;
    int status = BPE_ENOMEM;

    if (symbols == NULL)
        return status;
    printf("\n\"%s\" rule by rule:\n", word);
    for (r = 0; r <= N_RULES; r++) {
        bpe_merger_free(merger);
        if ((merger = build_merger(symbols, r, &status)) == NULL ||
            (status = segment(symbols, merger, word, strlen(word), pieces, &n)) != BPE_OK)
            break;
        printf("    after %lu rule%s %s\n", (unsigned long)r, r == 1 ? ": " : "s:",
               book_render(symbols, pieces, n, buf, sizeof buf));
    }
    bpe_merger_free(merger);
    bpe_symtab_free(symbols);
    return status;
}

int main(void)
{
    bpe_symtab *symbols = bpe_symtab_new();  /* characters and rule strings */
    bpe_symtab *vocab = bpe_symtab_new();    /* the pieces, first-seen IDs */
    bpe_merger *merger = NULL;
    char buf[BOOK_MAX_TEXT];
    uint32_t id;
    int status = BPE_ENOMEM;

    if (symbols == NULL || vocab == NULL ||
        (merger = build_merger(symbols, N_RULES, &status)) == NULL)
        goto cleanup;
    print_rules(symbols);
    printf("text: \"%s\"\n", TEXT);
    if ((status = encode_text(symbols, merger, vocab)) != BPE_OK)
        goto cleanup;
    printf("vocabulary (first-seen): ");
    for (id = 0; id < bpe_symtab_size(vocab); id++)
        printf("%s%lu=%s", id ? ", " : "", (unsigned long)id, book_symbol(vocab, id, buf, sizeof buf));
    printf("\n");
    status = trace_word("newest");
cleanup:
    bpe_merger_free(merger);
    bpe_symtab_free(vocab);
    bpe_symtab_free(symbols);
    return status == BPE_OK ? 0 : book_fail("065_apply_merges", status);
}
