/*
 * test_pretok_paths.c -- the scanners' portable path against the path the
 * compiler builds by default (with SSE2 where there is SSE2), in one
 * program, under ASan + UBSan.
 *
 * pretok.c looks for runs of one class sixteen bytes at a time with vector
 * instructions when it may, eight at a time in portable C99 otherwise, and
 * BPE_PRETOK_PORTABLE forces the portable path.  This file compiles a second
 * copy of pretok.c with that macro and its public functions renamed
 * (portable_pretok_*), links the ordinary copy beside it, and asks both to
 * cut the same texts: runs of every class and length up to 40 (more than
 * two vectors), with the characters the scanners single out around them,
 * and seeded random texts -- each text at the end of an allocation of its
 * exact size, so a read past its end is an ASan error.  Where the machine
 * has no vector path both copies are the portable one and the test still
 * checks that they tile every text.  tests/test_scanner_words.py compares
 * the default path with the regex module.
 * Build: cc -std=c99 -pedantic -Wall -Wextra -Icsrc
 *        csrc/tests/test_pretok_paths.c csrc/[a-z]*.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "text_internal.h"
#include "check.h"

/* The portable copy, under other names (text.h is already included, so
 * its declarations keep the real names). */
#define BPE_PRETOK_PORTABLE 1
#define bpe_pretok_next portable_pretok_next
#define bpe_pretok_split portable_pretok_split
#define bpe_pretok_classes portable_pretok_classes
#define bpe__pretok_cut portable_pretok_cut
size_t portable_pretok_cut(int pattern, const unsigned char *text, size_t len, size_t pos,
                           size_t *ends, size_t max);
size_t portable_pretok_next(int pattern, const unsigned char *text, size_t len, size_t pos);
size_t portable_pretok_split(int pattern, const unsigned char *text, size_t len, size_t *ends);
void portable_pretok_classes(unsigned long first, size_t n, unsigned char *out);
#include "../pretok.c"
#undef bpe_pretok_next
#undef bpe_pretok_split
#undef bpe_pretok_classes
#undef bpe__pretok_cut

#define MAX_TEXT 400

/* The general scanner alone, one bpe_pretok_next call per piece (no
 * window): what the window's cuts must equal. */
static size_t one_by_one(size_t (*next)(int, const unsigned char *, size_t, size_t), int mode,
                         const unsigned char *text, size_t len, size_t *ends)
{
    size_t pos = 0, n = 0;
    while (pos < len && (pos = next(mode, text, len, pos)) != 0)
        ends[n++] = pos;
    return n;
}

/* text[0..len) in an allocation of exactly its length, so that ASan stops
 * any read past its end; NULL (and a failed check) when malloc fails. */
static unsigned char *exact_copy(const unsigned char *text, size_t len)
{
    unsigned char *buf = malloc(len ? len : 1);
    CHECK(buf != NULL);
    if (buf)
        memcpy(buf, text, len);
    return buf;
}

/* Both copies cut text[0..len), copied to the end of an exact allocation,
 * the same way, into pieces that tile it, and each copy's window
 * (bpe_pretok_split) cuts as its general scanner does piece by piece. */
static void same_cuts(const unsigned char *text, size_t len)
{
    static size_t ends[MAX_TEXT + 1], portable[MAX_TEXT + 1], general[MAX_TEXT + 1];
    unsigned char *buf = exact_copy(text, len);
    size_t n, m, k;
    int mode;
    if (!buf)
        return;
    for (mode = BPE_PRETOK_GPT2; mode <= BPE_PRETOK_O200K; mode++) {
        n = bpe_pretok_split(mode, buf, len, ends);
        m = portable_pretok_split(mode, buf, len, portable);
        CHECK(n == m && memcmp(ends, portable, n * sizeof *ends) == 0);
        CHECK(one_by_one(bpe_pretok_next, mode, buf, len, general) == n &&
              memcmp(ends, general, n * sizeof *ends) == 0);
        CHECK(one_by_one(portable_pretok_next, mode, buf, len, general) == m &&
              memcmp(portable, general, m * sizeof *ends) == 0);
        CHECK(len == 0 ? n == 0 : n > 0 && ends[n - 1] == len);
        for (k = 1; k < n; k++)
            CHECK(ends[k] > ends[k - 1]);
    }
    free(buf);
}

static void test_runs(void)
{
    /* each unit repeated 1..40 times, alone, after a word and before each
     * unit (the end of the text included) */
    static const char *units[] = {"a", "Z", "aB", "0", " ", "\t", "\n", "\r\n", ".", "'", "/", "\x01",
                                  "\x08", "\x0e", "\x1f", "!", "@", "[", "`", "{", "\x7f", "9",
                                  "\xc3\xa9", "\xc3\x89", "\xe3\x80\x80", "\xcc\x81", "\xd9\xa3",
                                  "\xe6\xbc\xa2", "\xc2\xa0"};
    static const char tail[] = " and the end of a text long enough for a block of 64 bytes, ok";
    const size_t n_units = sizeof units / sizeof units[0];
    unsigned char text[MAX_TEXT];
    size_t u, v, reps, len, k;
    for (u = 0; u < n_units; u++)
        for (reps = 1; reps <= 40; reps++)
            for (v = 0; v <= n_units; v++) {
                const char *lead = v % 2 ? "x" : " it";
                len = strlen(lead);
                memcpy(text, lead, len);
                for (k = 0; k < reps; k++) {
                    memcpy(text + len, units[u], strlen(units[u]));
                    len += strlen(units[u]);
                }
                if (v < n_units) {
                    memcpy(text + len, units[v], strlen(units[v]));
                    len += strlen(units[v]);
                }
                same_cuts(text, len);
                same_cuts(text + strlen(lead), len - strlen(lead));
                /* after eight ASCII bytes, where the window starts, and
                 * then before 64 more, which gpt2's block needs */
                memmove(text + 8, text + strlen(lead), len - strlen(lead));
                memcpy(text, "(window ", 8);
                len = len - strlen(lead) + 8;
                same_cuts(text, len);
                memcpy(text + len, tail, strlen(tail));
                same_cuts(text, len + strlen(tail));
            }
}

/* A seeded random text into text[0..MAX_TEXT): `runs` runs, each a unit
 * of units[0..n_units) repeated min_reps to min_reps + spread - 1 times;
 * the last `rare` units are drawn one time in five only.  Returns its
 * length. */
static size_t random_text(unsigned char *text, const char *const *units, size_t n_units,
                          size_t rare, size_t runs, size_t min_reps, size_t spread,
                          uint64_t *seed)
{
    size_t len = 0, run, reps;
    for (run = 0; run < runs; run++) {
        const char *unit;
        *seed = *seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        unit = units[(*seed >> 40) % 5 == 0 ? (*seed >> 33) % n_units : (*seed >> 33) % (n_units - rare)];
        for (reps = min_reps + (*seed >> 20) % spread; reps > 0 && len + 4 <= MAX_TEXT; reps--) {
            memcpy(text + len, unit, strlen(unit));
            len += strlen(unit);
        }
    }
    return len;
}

static void test_random(void)
{
    /* runs of random length of random units, seeded */
    static const char *units[] = {"a", "Q", "s", "L", " ", "\t", "\n", "\r", "0", ".", "'", "/",
                                  "\xc3\xa9", "\xe3\x80\x80", "\xcc\x81", "\xc2\x85", "\xf0\x9f\x99\x82",
                                  "d", "T", "ll", "vE", "re", "m", "\xc5\xbf", "7", "\r\n", "Ab", "(", "\xd9\xa3"};
    unsigned char text[MAX_TEXT];
    uint64_t seed = 2024;
    size_t trial;
    for (trial = 0; trial < 20000; trial++)
        same_cuts(text, random_text(text, units, sizeof units / sizeof units[0], 0, 8, 0, 24, &seed));
}

/* Text beyond ASCII between the ASCII the window cuts: letters of two,
 * three and four bytes, "other" characters (punctuation, marks, emoji)
 * before letters and after them, digits and whitespace beyond ASCII, and
 * bytes that are no well-formed character -- a stray continuation byte, a
 * lead cut short, a lead followed by ASCII (which pt_at then takes into
 * the character), bytes no UTF-8 has -- at random places, so that they
 * fall across the window's 64-byte edge at every offset.  Written for a
 * window that classified characters beyond ASCII (a dead end, csrc/NOTES.md:
 * a sequence cut short puts what follows out of step, which a window
 * decoding each character on its own missed); kept for the window as it
 * is, which must hand every such piece to the general scanner. */
static void chunked_cuts(const unsigned char *text, size_t len);

static void test_wide(void)
{
    static const char *units[] = {"a", "Z", " ", "\n", "0", ".", "'", "'s", "\r\n",
                                  "\xc3\xa9", "\xc3\x89", "\xd0\x96", "\xd0\xb6\xd0\xb8",
                                  "\xe6\xbc\xa2", "\xe3\x81\x8b", "\xea\xb0\x80",
                                  "\xf0\x9d\x90\x80", "\xf0\xa0\x80\x80",
                                  "\xc2\xab", "\xe3\x80\x8c", "\xe3\x80\x82", "\xcc\x81",
                                  "\xe0\xa5\x8d", "\xf0\x9f\x99\x82", "\xc5\xbf",
                                  "\xd9\xa3", "\xef\xbc\x91", "\xc2\xa0", "\xe3\x80\x80", "\xc2\x85",
                                  "\x80", "\xbf", "\xc3", "\xe3\x80", "\xf0\x9f\x99", "\xd0\x41",
                                  "\xe6\x41\x42", "\xc0\xaf", "\xff", "\xf5\x80\x80\x80"};
    unsigned char text[MAX_TEXT];
    uint64_t seed = 77;
    size_t trial, len;
    for (trial = 0; trial < 40000; trial++) {
        /* mostly well-formed: the bad bytes (the last ten units) one draw in five */
        len = random_text(text, units, sizeof units / sizeof units[0], 10, 12, 1, 16, &seed);
        same_cuts(text, len);
        if (trial % 8 == 0)
            chunked_cuts(text, len);
    }
}

/* A scanner's cut function: bpe__pretok_cut (SSE2 where built) or its
 * portable copy. */
typedef size_t (*cut_fn)(int pattern, const unsigned char *text, size_t len, size_t pos,
                         size_t *ends, size_t max);

/* Every piece of buf, cut at most `max` per call of `cut` into `part`;
 * returns how many. */
static size_t cut_in_calls(cut_fn cut, int mode, const unsigned char *buf, size_t len,
                           size_t max, size_t *part)
{
    size_t m, pos, got;
    for (m = 0, pos = 0; pos < len && m < MAX_TEXT; pos = part[m - 1]) {
        got = cut(mode, buf, len, pos, part + m, max);
        CHECK(got >= 1 && got <= max);
        if (got == 0)
            break;
        m += got;
    }
    return m;
}

/* Cutting a few pieces per call, as ranks.c does (bpe__pretok_cut with
 * max = RK_CUT), gives the same pieces as one call for the whole text: a
 * block with less room than it has starts writes the first of them. */
static void chunked_cuts(const unsigned char *text, size_t len)
{
    static const size_t maxes[] = {1, 7, 8, 9, 20, 63, 64, 128};
    static const cut_fn cuts[] = {bpe__pretok_cut, portable_pretok_cut};
    static size_t whole[MAX_TEXT + 1], part[MAX_TEXT + 1];
    unsigned char *buf = exact_copy(text, len);
    size_t i, c, n, m;
    int mode;
    if (!buf)
        return;
    for (mode = BPE_PRETOK_GPT2; mode <= BPE_PRETOK_O200K; mode++) {
        n = bpe_pretok_split(mode, buf, len, whole);
        for (i = 0; i < sizeof maxes / sizeof maxes[0]; i++)
            for (c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
                m = cut_in_calls(cuts[c], mode, buf, len, maxes[i], part);
                CHECK(m == n && memcmp(part, whole, n * sizeof *whole) == 0);
            }
    }
    free(buf);
}

/* The blocks of cl100k and o200k (and gpt2): mostly ASCII texts of the
 * shapes their one-pass rules single out -- words of both cases and case
 * changes, digit runs of 1-7, runs of spaces, tabs and newlines (blank
 * lines with trailing spaces), marks and mark runs before letters,
 * newlines and "/" after marks, contractions of either case and
 * apostrophes that are none, after letters, marks, spaces and digits --
 * behind a lead of 0-63 bytes, so that every shape falls at every offset
 * of a block, and now and then a non-ASCII character that stops one. */
static void test_blocks(void)
{
    static const char *units[] = {"a", "the", "Hello", "HTTPServer", "fooBar", "XML", "s", "T", "ll",
                                  "0", "12", "345", "6789", "1234567", " ", "  ", "   ", "\t", " \t",
                                  "\n", "\n\n", "\r\n", "\n    ", "  \n", "\n  \n", "\x0b", ".", ",",
                                  "()", "...", "/", "//", "'", "''", "'s", "'S", "'t", "'ll", "'LL",
                                  "'re", "'Ve", "'d", "'m", "'x", "\"", "-", "\xc3\xa9",
                                  "\xc5\xbf", "\xc2\xa0"};
    const size_t n_units = sizeof units / sizeof units[0];
    unsigned char text[MAX_TEXT];
    uint64_t seed = 4242;
    size_t trial, len, k;
    for (trial = 0; trial < 30000; trial++) {
        seed = seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        len = (seed >> 33) % 64;
        for (k = 0; k < len; k++)
            text[k] = (unsigned char)"a b"[k % 3];
        while (len + 8 <= 300) {
            const char *unit;
            seed = seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
            unit = units[(seed >> 33) % (trial % 4 ? n_units - 3 : n_units)]; /* non-ASCII in 1/4 */
            memcpy(text + len, unit, strlen(unit));
            len += strlen(unit);
        }
        same_cuts(text, len);
        if (trial % 4 == 1)
            chunked_cuts(text, len);
    }
}

int main(void)
{
    RUN(test_runs);
    RUN(test_random);
    RUN(test_blocks);
    RUN(test_wide);
    if (failures == 0)
        printf("test_pretok_paths: all passed (%s)\n",
#if defined(__SSE2__) && defined(__GNUC__)
               "SSE2 path against the portable one"
#else
               "no vector path here: portable in both copies"
#endif
        );
    return failures != 0;
}
