/*
 * test_text.c -- self-tests of text.h (counter.c, encode_text.c), meant
 * to run under ASan + UBSan:
 * str.split() known answers (every Unicode whitespace character, NUL,
 * surrogates), batches cut at whitespace, given words with frequencies,
 * malformed UTF-8, the sorted character set, word tables in every units
 * mode, the preset scanners' pieces (bpe_counter_add_pieces), NULL-safe
 * frees.  tests/test_trainer.py checks the same counter against Python's
 * str.split() and the `regex` module's pieces on generated text.
 * Build: cc -std=c99 -pedantic -Wall -Wextra -Icsrc csrc/tests/test_text.c
 *        csrc/[a-z]*.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "check.h"


/* Word i of the counter equals `word` with count `n`. */
static int has(const bpe_counter *c, size_t i, const char *word, uint64_t n)
{
    size_t size = bpe_counter_size(c), nbytes = bpe_counter_bytes(c), k, off = 0;
    char *bytes = malloc(nbytes + 1);
    size_t *lens = malloc((size + 1) * sizeof *lens);
    uint64_t *counts = malloc((size + 1) * sizeof *counts);
    int ok = 0;

    if (bytes == NULL || lens == NULL || counts == NULL || i >= size)
        goto done;
    if (bpe_counter_export(c, bytes, lens, counts) != BPE_OK)
        goto done;
    /* lens are in characters; walk UTF-8 to find word i's bytes */
    for (k = 0; k <= i; k++) {
        size_t start = off, chars = 0;
        while (chars < lens[k]) {
            off++;
            while (off < nbytes && ((unsigned char)bytes[off] & 0xC0) == 0x80)
                off++;
            chars++;
        }
        if (k == i)
            ok = off - start == strlen(word) &&
                 memcmp(bytes + start, word, off - start) == 0 && counts[i] == n;
    }
done:
    free(bytes);
    free(lens);
    free(counts);
    return ok;
}

static void test_split(void)
{
    bpe_counter *c = bpe_counter_new();
    const char *text = "to be  or\xe3\x80\x80not to";  /* U+3000 */

    CHECK(c != NULL);
    CHECK(bpe_counter_add_text(c, text, strlen(text)) == BPE_OK);
    CHECK(bpe_counter_size(c) == 4);
    CHECK(has(c, 0, "to", 2) && has(c, 1, "be", 1) && has(c, 2, "or", 1) &&
          has(c, 3, "not", 1));
    CHECK(bpe_counter_add_text(c, "", 0) == BPE_OK);
    CHECK(bpe_counter_add_text(c, " \t\n", 3) == BPE_OK);
    CHECK(bpe_counter_size(c) == 4);
    bpe_counter_free(c);
    bpe_counter_free(NULL);
}

/* How many words the counter finds in "a" + sep + "b": 2 when str.split()
 * cuts at sep, 1 when it does not. */
static size_t words_around(const char *sep)
{
    bpe_counter *c = bpe_counter_new();
    char buf[16];
    size_t n = strlen(sep), words;

    buf[0] = 'a';
    memcpy(buf + 1, sep, n);
    buf[n + 1] = 'b';
    CHECK(bpe_counter_add_text(c, buf, n + 2) == BPE_OK);
    words = bpe_counter_size(c);
    bpe_counter_free(c);
    return words;
}

/* Every character str.split() cuts at, between "a" and "b"; and some it
 * does not (U+180E, U+200B, U+FEFF, NUL, a surrogate). */
static void test_whitespace(void)
{
    static const char *spaces[] = {
        "\t", "\n", "\v", "\f", "\r", "\x1c", "\x1d", "\x1e", "\x1f", " ",
        "\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81",
        "\xe2\x80\x82", "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85",
        "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89",
        "\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf",
        "\xe2\x81\x9f", "\xe3\x80\x80"};
    static const char *others[] = {"\xe1\xa0\x8e", "\xe2\x80\x8b", "\xef\xbb\xbf",
                                   "\xed\xa0\x80", "\xc2\x84", "\xe2\x80\x8c"};
    size_t k;

    CHECK(sizeof spaces / sizeof *spaces == 29);
    for (k = 0; k < sizeof spaces / sizeof *spaces; k++)
        CHECK(words_around(spaces[k]) == 2);
    for (k = 0; k < sizeof others / sizeof *others; k++)
        CHECK(words_around(others[k]) == 1);
    {   /* NUL is not whitespace */
        bpe_counter *c = bpe_counter_new();
        CHECK(bpe_counter_add_text(c, "a\0b c", 5) == BPE_OK);
        CHECK(bpe_counter_size(c) == 2);
        bpe_counter_free(c);
    }
}

static void test_malformed(void)
{
    static const char *bad[] = {"\x80", "a\xc0\xafz", "\xe0\x80\x80", "\xf4\x90\x80\x80",
                                "\xf8", "ab \xe2\x80", "\xc2", "\xf0\x8f\xbf\xbf"};
    bpe_counter *c = bpe_counter_new();
    size_t k;

    CHECK(bpe_counter_add_text(c, "ok", 2) == BPE_OK);
    for (k = 0; k < sizeof bad / sizeof *bad; k++)
        CHECK(bpe_counter_add_text(c, bad[k], strlen(bad[k])) == BPE_EINVAL);
    CHECK(bpe_counter_size(c) == 1);  /* nothing counted from bad input */
    CHECK(bpe_counter_add_text(NULL, "a", 1) == BPE_EINVAL);
    CHECK(bpe_counter_add_text(c, NULL, 1) == BPE_EINVAL);
    bpe_counter_free(c);
}

static void test_words(void)
{
    bpe_counter *c = bpe_counter_new();
    size_t lengths[] = {2, 1, 1, 0}, bad[] = {2, 3};
    uint64_t freqs[] = {5, 0, 1, 2};

    CHECK(bpe_counter_add_words(c, "abab", 4, lengths, 4, freqs) == BPE_OK);
    CHECK(bpe_counter_size(c) == 4);
    CHECK(has(c, 0, "ab", 5) && has(c, 1, "a", 0) && has(c, 2, "b", 1) &&
          has(c, 3, "", 2));
    CHECK(bpe_counter_add_words(c, "abab", 4, bad, 2, NULL) == BPE_EINVAL);
    lengths[0] = 1;
    CHECK(bpe_counter_add_words(c, "\xc3\xa9 x", 4, lengths, 3, NULL) == BPE_OK);
    CHECK(has(c, 4, "\xc3\xa9", 1) && has(c, 5, " ", 1) && has(c, 6, "x", 1));
    {   /* counts past 2^64 - 1 are refused */
        uint64_t big[] = {UINT64_MAX};
        size_t one[] = {1};
        CHECK(bpe_counter_add_words(c, "x", 1, one, 1, big) == BPE_EOVERFLOW);
    }
    bpe_counter_free(c);
}

/* Batches cut at whitespace count what the whole text counts, and long
 * words (past the 8-byte head) are told apart by their tails. */
static void test_batches_and_long_words(void)
{
    const char *whole = "abcdefghij abcdefghik abcdefghij ab a\xc3\xa9 abcdefgh";
    bpe_counter *a = bpe_counter_new(), *b = bpe_counter_new();
    size_t cut = 22;  /* after "abcdefghik " */

    CHECK(bpe_counter_add_text(a, whole, strlen(whole)) == BPE_OK);
    CHECK(bpe_counter_add_text(b, whole, cut) == BPE_OK);
    CHECK(bpe_counter_add_text(b, whole + cut, strlen(whole) - cut) == BPE_OK);
    CHECK(bpe_counter_size(a) == 5 && bpe_counter_size(b) == 5);
    CHECK(has(a, 0, "abcdefghij", 2) && has(a, 1, "abcdefghik", 1) &&
          has(a, 4, "abcdefgh", 1));
    CHECK(bpe_counter_bytes(a) == bpe_counter_bytes(b));
    CHECK(has(b, 0, "abcdefghij", 2) && has(b, 3, "a\xc3\xa9", 1));
    bpe_counter_free(a);
    bpe_counter_free(b);
}

/* Many distinct words: the table grows and keeps every count. */
static void test_growth(void)
{
    bpe_counter *c = bpe_counter_new();
    char buf[32];
    size_t k, n;
    int pass;

    for (pass = 0; pass < 2; pass++)
        for (k = 0; k < 5000; k++) {
            n = (size_t)sprintf(buf, "w%lu ", (unsigned long)k);
            CHECK(bpe_counter_add_text(c, buf, n) == BPE_OK);
        }
    CHECK(bpe_counter_size(c) == 5000);
    CHECK(has(c, 0, "w0", 2) && has(c, 4999, "w4999", 2));
    bpe_counter_free(c);
}

static void test_characters(void)
{
    bpe_counter *c = bpe_counter_new();
    const char *text = "ba ab \xed\xa0\x80z \xf0\x9f\x98\x80";  /* surrogate, emoji */
    uint32_t *chars = NULL;
    size_t n = 0;

    CHECK(bpe_counter_add_text(c, text, strlen(text)) == BPE_OK);
    CHECK(bpe_counter_characters(c, &chars, &n) == BPE_OK);
    CHECK(n == 5);
    if (n == 5)
        CHECK(chars[0] == 'a' && chars[1] == 'b' && chars[2] == 'z' &&
              chars[3] == 0xD800 && chars[4] == 0x1F600);
    bpe_free(chars);
    bpe_counter_free(c);
    c = bpe_counter_new();
    CHECK(bpe_counter_characters(c, &chars, &n) == BPE_OK && n == 0 && chars == NULL);
    CHECK(bpe_counter_characters(NULL, &chars, &n) == BPE_EINVAL);
    bpe_counter_free(c);
}

/* The units modes on "low" and "n\xc3\xa9": IDs looked up in a symbol
 * table, absent ones as BPE_NO_SYMBOL. */
static void test_word_table(void)
{
    static const char *base[] = {"l", "o", "w", "w ", "</w>", "n", "\xc3\xa9", "\xc3\xa9 "};
    bpe_symtab *t = bpe_symtab_new();
    bpe_counter *c = bpe_counter_new();
    uint32_t id;
    size_t k, n;
    const uint32_t *s;
    bpe_words *w;

    for (k = 0; k < sizeof base / sizeof *base; k++)
        CHECK(bpe_symtab_intern(t, base[k], strlen(base[k]), &id) == BPE_OK && id == k);
    for (k = 0; k < 256; k++) {
        char one = (char)k;
        CHECK(bpe_symtab_intern(t, &one, 1, &id) == BPE_OK);
    }
    CHECK(bpe_counter_add_text(c, "low n\xc3\xa9 low", 11) == BPE_OK);

    w = bpe_words_new();  /* suffix */
    CHECK(bpe_counter_word_table(c, t, BPE_UNITS_SUFFIX, " ", 1, w) == BPE_OK);
    CHECK(bpe_words_count(w) == 2 && bpe_words_frequency(w, 0) == 2);
    s = bpe_words_symbols(w, 0, &n);
    CHECK(n == 3 && s[0] == 0 && s[1] == 1 && s[2] == 3);
    s = bpe_words_symbols(w, 1, &n);
    CHECK(n == 2 && s[0] == 5 && s[1] == 7);
    bpe_words_free(w);

    w = bpe_words_new();  /* symbol */
    CHECK(bpe_counter_word_table(c, t, BPE_UNITS_SYMBOL, "</w>", 4, w) == BPE_OK);
    s = bpe_words_symbols(w, 0, &n);
    CHECK(n == 4 && s[0] == 0 && s[1] == 1 && s[2] == 2 && s[3] == 4);
    bpe_words_free(w);

    w = bpe_words_new();  /* chars: a character not in the table */
    CHECK(bpe_counter_add_text(c, "lo\xe2\x82\xac", 5) == BPE_OK);  /* euro sign */
    CHECK(bpe_counter_word_table(c, t, BPE_UNITS_CHARS, NULL, 0, w) == BPE_OK);
    s = bpe_words_symbols(w, 2, &n);
    CHECK(n == 3 && s[0] == 0 && s[1] == 1 && s[2] == BPE_NO_SYMBOL);
    bpe_words_free(w);

    w = bpe_words_new();  /* bytes: "n\xc3\xa9" -> three single bytes */
    CHECK(bpe_counter_word_table(c, t, BPE_UNITS_BYTES, NULL, 0, w) == BPE_OK);
    s = bpe_words_symbols(w, 1, &n);
    CHECK(n == 3 && s[0] == 5 && s[1] == bpe_symtab_lookup(t, "\xc3", 1) &&
          s[2] == bpe_symtab_lookup(t, "\xa9", 1) && s[1] != BPE_NO_SYMBOL);
    bpe_words_free(w);

    w = bpe_words_new();
    CHECK(bpe_counter_word_table(c, t, BPE_UNITS_SUFFIX, NULL, 0, w) == BPE_EINVAL);
    CHECK(bpe_counter_word_table(c, t, 7, NULL, 0, w) == BPE_EINVAL);
    CHECK(bpe_words_count(w) == 0);
    bpe_words_free(w);
    bpe_counter_free(c);
    bpe_symtab_free(t);
}

/* bpe_encode_text: split + units + merges + unk in one call, the word
 * cache, the whole-text mode, the output bound and bad arguments. */
static void test_encode_text(void)
{
    static const char *toks[] = {"<UNK>", "a", "b", "a ", "b ", "</w>", "ab"};
    const uint32_t lefts[] = {1, 6}, rights[] = {2, 3}, results[] = {6, 7};
    bpe_symtab *t = bpe_symtab_new();
    bpe_merger *m = NULL;
    uint32_t out[64], id;
    size_t n, i;
    int st;
    char big[3000];

    CHECK(t != NULL);
    for (i = 0; i < sizeof toks / sizeof *toks; i++)
        CHECK(bpe_symtab_intern(t, toks[i], strlen(toks[i]), &id) == BPE_OK);
    CHECK(bpe_symtab_intern(t, "aba ", 4, &id) == BPE_OK && id == 7);
    m = bpe_merger_new(lefts, rights, results, 2, &st);
    CHECK(m != NULL && st == BPE_OK);
    /* suffix: "aba" -> ab, "a " -> aba ; "ab" -> a, "b " ; "c" unknown */
    CHECK(bpe_encode_text(m, t, BPE_UNITS_SUFFIX, " ", 1, 0, 1,
                          " aba\xe3\x80\x80" "ab c aba ", 16, out, 64, &n) == BPE_OK);
    CHECK(n == 5 && out[0] == 7 && out[1] == 1 && out[2] == 4 &&
          out[3] == 0 && out[4] == 7);
    /* symbol, whole text: a b ' ' </w> with "ab" merged; ' ' is unknown -> 9 */
    CHECK(bpe_encode_text(m, t, BPE_UNITS_SYMBOL, "</w>", 4, 9, 0, "ab ", 3,
                          out, 64, &n) == BPE_OK);
    CHECK(n == 3 && out[0] == 6 && out[1] == 9 && out[2] == 5);
    /* the bound: 3 characters + 2 words = 5 symbols, 4 is too few */
    CHECK(bpe_encode_text(m, t, BPE_UNITS_SYMBOL, "</w>", 4, 0, 1, "b b", 3,
                          out, 5, &n) == BPE_OK && n == 4);
    CHECK(bpe_encode_text(m, t, BPE_UNITS_SYMBOL, "</w>", 4, 0, 1, "b b", 3,
                          out, 3, &n) == BPE_EINVAL && n == 0);
    CHECK(bpe_encode_text(m, t, BPE_UNITS_CHARS, NULL, 0, 0, 1, "", 0,
                          NULL, 0, &n) == BPE_OK && n == 0);
    CHECK(bpe_encode_text(m, t, BPE_UNITS_CHARS, NULL, 0, 0, 1, "\xff", 1,
                          out, 64, &n) == BPE_EINVAL);
    CHECK(bpe_encode_text(m, t, BPE_UNITS_SUFFIX, NULL, 0, 0, 1, "a", 1,
                          out, 64, &n) == BPE_EINVAL);
    CHECK(bpe_encode_text(m, t, 7, NULL, 0, 0, 1, "a", 1, out, 64,
                          &n) == BPE_EINVAL);
    CHECK(bpe_encode_text(NULL, t, BPE_UNITS_CHARS, NULL, 0, 0, 1, "a", 1,
                          out, 64, &n) == BPE_EINVAL);
    /* many distinct words grow the cache; one long word grows the scratch */
    {
        size_t cap = 1000000, total;
        uint32_t *ids = malloc(cap * sizeof *ids);
        char *text = malloc(cap);
        CHECK(ids != NULL && text != NULL);
        if (ids != NULL && text != NULL) {
            for (i = 0, total = 0; i + 16 < cap; i += 16) {
                size_t k;  /* 2^15 distinct words of 15 characters */
                for (k = 0; k < 15; k++)
                    text[i + k] = ((i / 16) >> k) & 1 ? 'a' : 'b';
                text[i + 15] = ' ';
                total += 15;
            }
            CHECK(bpe_encode_text(m, t, BPE_UNITS_CHARS, NULL, 0, 0, 1, text,
                                  i, ids, cap, &n) == BPE_OK);
            CHECK(n > 0 && n <= total);
            memset(big, 'a', sizeof big);
            for (i = 1; i < sizeof big; i += 2)
                big[i] = 'b';
            CHECK(bpe_encode_text(m, t, BPE_UNITS_CHARS, NULL, 0, 0, 0, big,
                                  sizeof big, ids, cap, &n) == BPE_OK);
            CHECK(n == sizeof big / 2);
            for (i = 0; i < n; i++)
                CHECK(ids[i] == 6);
        }
        free(ids);
        free(text);
    }
    bpe_merger_free(m);
    bpe_symtab_free(t);
}

/* bpe_counter_add_pieces: the scanners' pieces, each text cut alone;
 * lengths in characters; bad arguments count nothing. */
static void test_pieces(void)
{
    bpe_counter *c = bpe_counter_new();
    /* cl100k: "end.\n" + "\n" as two texts, then "end.\n\n" as one; "\xc3\xa9" is one character. */
    const char *text = "end.\n\nend.\n\n\xc3\xa9t\xc3\xa9's";
    size_t lengths[] = {5, 1, 6, 0, 5}, bad[] = {5, 1, 6, 0, 4};

    CHECK(c != NULL);
    CHECK(bpe_counter_add_pieces(c, BPE_PRETOK_CL100K, text, strlen(text), lengths, 5) == BPE_OK);
    CHECK(bpe_counter_size(c) == 6);
    CHECK(has(c, 0, "end", 2));
    CHECK(has(c, 1, ".\n", 1));
    CHECK(has(c, 2, "\n", 1));
    CHECK(has(c, 3, ".\n\n", 1));
    CHECK(has(c, 4, "\xc3\xa9t\xc3\xa9", 1));
    CHECK(has(c, 5, "'s", 1));
    /* no texts: only an empty buffer is all of them; gpt2 keeps "." and
     * "\n\n" apart */
    CHECK(bpe_counter_add_pieces(c, BPE_PRETOK_GPT2, "a.\n\n", 4, NULL, 0) == BPE_EINVAL);
    CHECK(bpe_counter_add_pieces(c, BPE_PRETOK_GPT2, "", 0, NULL, 0) == BPE_OK);
    CHECK(bpe_counter_add_pieces(c, BPE_PRETOK_GPT2, "end.\n\n", 6, lengths + 2, 1) == BPE_OK);
    CHECK(has(c, 0, "end", 3));
    CHECK(has(c, 6, ".", 1));
    CHECK(has(c, 7, "\n\n", 1));
    /* lengths that do not tile the text, an unknown preset, bad UTF-8, NULLs */
    CHECK(bpe_counter_add_pieces(c, BPE_PRETOK_CL100K, text, strlen(text), bad, 5) == BPE_EINVAL);
    CHECK(bpe_counter_add_pieces(c, 0, "a", 1, lengths + 2, 0) == BPE_EINVAL);
    CHECK(bpe_counter_add_pieces(c, 4, "a", 1, NULL, 0) == BPE_EINVAL);
    CHECK(bpe_counter_add_pieces(c, BPE_PRETOK_O200K, "a\xff", 2, lengths + 1, 1) == BPE_EINVAL);
    CHECK(bpe_counter_add_pieces(NULL, BPE_PRETOK_O200K, "a", 1, lengths + 1, 1) == BPE_EINVAL);
    CHECK(bpe_counter_add_pieces(c, BPE_PRETOK_O200K, NULL, 1, lengths + 1, 1) == BPE_EINVAL);
    CHECK(bpe_counter_size(c) == 8);
    bpe_counter_free(c);
}

int main(void)
{
    test_split();
    test_whitespace();
    test_malformed();
    test_words();
    test_batches_and_long_words();
    test_growth();
    test_characters();
    test_word_table();
    test_encode_text();
    test_pieces();
    if (failures) {
        printf("test_text: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_text: all passed\n");
    return 0;
}
