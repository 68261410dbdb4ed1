/*
 * 062_word_tokenizer.c -- the word tokenizer, with a bpe_symtab as its vocabulary.
 *
 * Mirrors: Chapter 11, listing 062.  Split on spaces; each new word gets the
 * next ID, so the vocabulary grows in first-seen order.  pybpe's symbol
 * table does exactly that (dense IDs, first interned = 0), so it serves as
 * the word -> ID table unchanged: a "symbol" is just a byte string.
 * Core functions: bpe_symtab_intern (grow the vocabulary), bpe_symtab_lookup
 * (token_to_id: -1 for a word never seen), bpe_symtab_bytes, bpe_symtab_size.
 * Watch: "the" is ID 0 and every later "the" reuses it; 12 tokens but only
 * 7 distinct words (the, cat, sat, on, mat, dog, rug) -- SPEC section 5 says 8,
 * but counting gives 7; an unknown word maps to -1.
 */
#include <stdio.h>
#include <string.h>

#include "bpe.h"
#include "book.h"

#define MAX_TOKENS 32

/* token_to_id: the word's ID, or -1 when the vocabulary has never seen it
 * (the core says BPE_NO_SYMBOL; the listing says -1). */
static long token_to_id(const bpe_symtab *vocab, const char *word, size_t len)
{
    uint32_t id = bpe_symtab_lookup(vocab, word, len);
    return id == BPE_NO_SYMBOL ? -1L : (long)id;
}

/* Training: split `text` on spaces and intern every word.  The IDs of the
 * tokens, in text order, go to ids[0..*n_out). */
static int build_vocab(bpe_symtab *vocab, const char *text, uint32_t *ids,
                       size_t cap, size_t *n_out)
{
    const char *cursor = text, *word;
    size_t len, n = 0;
    int status;

    while ((word = book_next_word(&cursor, &len)) != NULL) {
        if (n == cap)
            return BPE_ETOOBIG;
        if ((status = bpe_symtab_intern(vocab, word, len, &ids[n])) != BPE_OK)
            return status;
        n++;
    }
    *n_out = n;
    return BPE_OK;
}

static void print_vocab(const bpe_symtab *vocab)
{
    char buf[BOOK_MAX_TEXT];
    uint32_t id;

    printf("vocabulary (first-seen order):\n");
    for (id = 0; id < bpe_symtab_size(vocab); id++)
        printf("  %2lu  %s\n", (unsigned long)id, book_symbol(vocab, id, buf, sizeof buf));
}

/* Encoding new text with a fixed vocabulary: lookups only, never interning. */
static void encode_and_print(const bpe_symtab *vocab, const char *text)
{
    const char *cursor = text, *word;
    size_t len;
    int first = 1;

    printf("encode \"%s\": [", text);
    while ((word = book_next_word(&cursor, &len)) != NULL) {
        printf("%s%ld", first ? "" : ", ", token_to_id(vocab, word, len));
        first = 0;
    }
    printf("]\n");
}

int main(void)
{
    const char *text = "the cat sat on the mat the dog sat on the rug";
    uint32_t ids[MAX_TOKENS];
    size_t n, i;
    bpe_symtab *vocab = bpe_symtab_new();
    int status;

    if (vocab == NULL)
        return book_fail("bpe_symtab_new", BPE_ENOMEM);
    if ((status = build_vocab(vocab, text, ids, MAX_TOKENS, &n)) != BPE_OK) {
        bpe_symtab_free(vocab);
        return book_fail("building the vocabulary", status);
    }

    printf("text: \"%s\"\n\n", text);
    print_vocab(vocab);
    printf("\nids: [");
    for (i = 0; i < n; i++)
        printf("%s%lu", i ? ", " : "", (unsigned long)ids[i]);
    printf("]\n");
    printf("distinct words: %lu\n", (unsigned long)bpe_symtab_size(vocab));
    printf("tokens: %lu\n\n", (unsigned long)n);

    printf("token_to_id(\"cat\") = %ld\n", token_to_id(vocab, "cat", 3));
    printf("token_to_id(\"bird\") = %ld   (unknown word)\n", token_to_id(vocab, "bird", 4));
    encode_and_print(vocab, "the bird sat on the mat");
    printf("a word tokenizer has no way to spell \"bird\": BPE (063-065) fixes that.\n");

    bpe_symtab_free(vocab);
    return 0;
}
