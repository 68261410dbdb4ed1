/*
 * test_core.c -- self-tests of pybpe's C core (run by `make ctest`).
 *
 * Hand-checkable answers first (the SPEC's worked traces, "a a a" ->
 * "aa a"), then randomized equality: the incremental trainer against
 * find_best_pair + merge_pair repeated (listings 063-064), and the merger
 * against the literal rank-order sweep (listing 065).  The harness is
 * tests/check.h.  The exit status is non-zero when anything failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "internal.h"
#include "merge.h"
#include "check.h"

/* ---- helpers ------------------------------------------------------------ */

typedef struct {
    uint64_t s;
} rng;

static uint32_t rnd(rng *r, uint32_t n)  /* uniform-ish in [0, n) */
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (uint32_t)((r->s >> 11) % n);
}

static uint32_t intern(bpe_symtab *t, const char *s)
{
    uint32_t id = BPE_NO_SYMBOL;
    CHECK(bpe_symtab_intern(t, s, strlen(s), &id) == BPE_OK);
    return id;
}

/* Word i of `w` equals ids[0..n)? */
static int word_is(const bpe_words *w, size_t i, const uint32_t *ids, size_t n)
{
    size_t len;
    const uint32_t *s = bpe_words_symbols(w, i, &len);
    return s != NULL && len == n && (n == 0 || memcmp(s, ids, n * 4) == 0);
}

/* Appends the symbols of `text`, one per character, the last one glued to
 * " " (the chapter flavour). */
static size_t chapter_word(bpe_symtab *t, const char *text, uint32_t *out)
{
    size_t i, n = strlen(text);
    char buf[3];

    for (i = 0; i < n; i++) {
        buf[0] = text[i];
        buf[1] = i + 1 == n ? ' ' : '\0';
        buf[2] = '\0';
        out[i] = bpe_symtab_lookup(t, buf, strlen(buf));
    }
    return n;
}

/* ---- symbol table ----------------------------------------------------- */

static void test_symtab(void)
{
    bpe_symtab *t = bpe_symtab_new();
    const char *first;
    char buf[32];
    size_t len, i;
    uint32_t id;

    CHECK(t != NULL);
    CHECK(intern(t, "a") == 0);
    CHECK(intern(t, "b") == 1);
    CHECK(intern(t, "a") == 0);
    CHECK(intern(t, "") == 2);  /* the empty string is a legal symbol */
    CHECK(bpe_symtab_lookup(t, "", 0) == 2);
    CHECK(bpe_symtab_lookup(t, "ab", 2) == BPE_NO_SYMBOL);
    CHECK(bpe_symtab_lookup(t, "a\0b", 3) == BPE_NO_SYMBOL);
    CHECK(bpe_symtab_intern(t, "a\0b", 3, &id) == BPE_OK && id == 3);
    first = bpe_symtab_bytes(t, 0, &len);
    CHECK(len == 1 && first[0] == 'a');
    CHECK(bpe_symtab_bytes(t, 4, &len) == NULL);
    CHECK(bpe_symtab_intern(t, NULL, 1, &id) == BPE_EINVAL);
    for (i = 0; i < 100000; i++) {  /* growth: slots, arrays, blocks */
        sprintf(buf, "sym%lu", (unsigned long)i);
        CHECK(bpe_symtab_intern(t, buf, strlen(buf), &id) == BPE_OK);
        if (id != 4 + i) {
            CHECK(id == 4 + i);
            break;
        }
    }
    CHECK(bpe_symtab_size(t) == 100004);
    for (i = 0; i < 100000; i += 997) {
        sprintf(buf, "sym%lu", (unsigned long)i);
        CHECK(bpe_symtab_lookup(t, buf, strlen(buf)) == 4 + i);
    }
    CHECK(bpe_symtab_bytes(t, 0, &len) == first);  /* bytes never move */
    {
        const char *p = bpe_symtab_bytes(t, 3, &len);
        CHECK(len == 3 && memcmp(p, "a\0b", 3) == 0);
    }
    {  /* a string longer than an arena block */
        size_t big = 200000;
        char *s = malloc(big);
        CHECK(s != NULL);
        memset(s, 'x', big);
        CHECK(bpe_symtab_intern(t, s, big, &id) == BPE_OK);
        CHECK(bpe_symtab_lookup(t, s, big) == id);
        CHECK(bpe_symtab_bytes(t, id, &len) != NULL && len == big);
        free(s);
    }
    bpe_symtab_free(t);
    bpe_symtab_free(NULL);
}

/* ---- listing 063/064 helpers ---------------------------------------------- */

static void test_count_pairs_order(void)
{
    bpe_words *w = bpe_words_new();
    uint32_t w1[] = {0, 1, 0, 1}, w2[] = {1, 0};
    bpe_pair_count *pairs, best;
    size_t n;

    CHECK(bpe_words_add(w, w1, 4, 1) == BPE_OK);
    CHECK(bpe_words_add(w, w2, 2, 2) == BPE_OK);
    CHECK(bpe_count_pairs(w, &pairs, &n) == BPE_OK);
    CHECK(n == 2);
    if (n == 2) {
        CHECK(pairs[0].left == 0 && pairs[0].right == 1 && pairs[0].count == 2);
        CHECK(pairs[1].left == 1 && pairs[1].right == 0 && pairs[1].count == 3);
    }
    bpe_free(pairs);
    CHECK(bpe_find_best_pair(w, &best) == 1);
    CHECK(best.left == 1 && best.right == 0 && best.count == 3);
    bpe_words_free(w);

    w = bpe_words_new();  /* no pair at all */
    CHECK(bpe_words_add(w, w1, 1, 5) == BPE_OK);
    CHECK(bpe_words_add(w, NULL, 0, 5) == BPE_OK);
    CHECK(bpe_count_pairs(w, &pairs, &n) == BPE_OK && n == 0 && !pairs);
    CHECK(bpe_find_best_pair(w, &best) == 0);
    bpe_words_free(w);
}

static void test_find_best_pair_ties(void)
{
    bpe_words *w = bpe_words_new();
    uint32_t w1[] = {7, 8}, w2[] = {1, 2, 7, 8}, w3[] = {1, 2};
    bpe_pair_count best;

    /* (7,8) and (1,2) both count 2; (7,8) was met first. */
    CHECK(bpe_words_add(w, w1, 2, 1) == BPE_OK);
    CHECK(bpe_words_add(w, w2, 4, 1) == BPE_OK);
    CHECK(bpe_words_add(w, w3, 2, 1) == BPE_OK);
    CHECK(bpe_find_best_pair(w, &best) == 1);
    CHECK(best.left == 7 && best.right == 8 && best.count == 2);
    /* one more (1,2) overtakes */
    CHECK(bpe_words_add(w, w3, 2, 1) == BPE_OK);
    CHECK(bpe_find_best_pair(w, &best) == 1);
    CHECK(best.left == 1 && best.right == 2 && best.count == 3);
    bpe_words_free(w);
}

static void test_merge_pair_skip_two(void)
{
    bpe_words *w = bpe_words_new();
    uint32_t aaa[] = {0, 0, 0}, aaaa[] = {0, 0, 0, 0}, b[] = {1, 0};
    uint32_t want3[] = {5, 0}, want4[] = {5, 5};
    size_t changed;

    CHECK(bpe_words_add(w, aaa, 3, 1) == BPE_OK);
    CHECK(bpe_words_add(w, aaaa, 4, 1) == BPE_OK);
    CHECK(bpe_words_add(w, b, 2, 1) == BPE_OK);
    CHECK(bpe_merge_pair(w, 0, 0, 5, &changed) == BPE_OK && changed == 2);
    CHECK(word_is(w, 0, want3, 2));  /* "a a a" -> "aa a" */
    CHECK(word_is(w, 1, want4, 2));  /* "a a a a" -> "aa aa" */
    CHECK(word_is(w, 2, b, 2));
    bpe_words_free(w);
}

static void test_words_add_many(void)
{
    bpe_words *w = bpe_words_new();
    uint32_t syms[] = {1, 2, 3, 4, 5};
    size_t offs[] = {0, 2, 2, 5}, bad[] = {0, 3, 2};
    uint64_t freqs[] = {7, 8, 9};

    CHECK(bpe_words_add_many(w, syms, offs, freqs, 3) == BPE_OK);
    CHECK(bpe_words_count(w) == 3);
    CHECK(word_is(w, 0, syms, 2) && word_is(w, 1, syms, 0) &&
          word_is(w, 2, syms + 2, 3));
    CHECK(bpe_words_frequency(w, 2) == 9);
    CHECK(bpe_words_add_many(w, syms, bad, freqs, 2) == BPE_EINVAL);
    CHECK(bpe_words_count(w) == 3);  /* unchanged by the failed call */
    CHECK(bpe_words_symbols(w, 3, NULL) == NULL);
    bpe_words_free(w);
    bpe_words_free(NULL);
}

/* ---- trainer vs the literal loop ------------------------------------------ */

/* find_best_pair + merge_pair repeated, with the trainer's stopping rules
 * and max_token_units (which find_best_pair does not know: the best pair is
 * picked here among the allowed ones, first encountered on a tie). */
static size_t naive_train(bpe_symtab *t, bpe_words *w, size_t target,
                          uint64_t minf, uint32_t max_units, uint32_t *units,
                          bpe_merge *out, size_t max_steps)
{
    size_t steps = 0;

    while (steps < max_steps && bpe_symtab_size(t) < target) {
        bpe_pair_count *pairs, *best = NULL;
        size_t n, i, la, lb, before = bpe_symtab_size(t);
        char buf[4096];
        const char *a, *b;
        uint32_t m;

        CHECK(bpe_count_pairs(w, &pairs, &n) == BPE_OK);
        for (i = 0; i < n; i++) {
            if (max_units && units[pairs[i].left] + units[pairs[i].right] >
                                 max_units)
                continue;
            if (best == NULL || pairs[i].count > best->count)
                best = &pairs[i];
        }
        if (best == NULL || best->count < minf) {
            bpe_free(pairs);
            break;
        }
        a = bpe_symtab_bytes(t, best->left, &la);
        b = bpe_symtab_bytes(t, best->right, &lb);
        memcpy(buf, a, la);
        memcpy(buf + la, b, lb);
        CHECK(bpe_symtab_intern(t, buf, la + lb, &m) == BPE_OK);
        if (m >= before)
            units[m] = units[best->left] + units[best->right];
        out[steps].left = best->left;
        out[steps].right = best->right;
        out[steps].merged = m;
        out[steps].count = best->count;
        CHECK(bpe_merge_pair(w, best->left, best->right, m, NULL) == BPE_OK);
        bpe_free(pairs);
        steps++;
    }
    return steps;
}

static int same_merges(const bpe_merge *x, const bpe_merge *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (x[i].left != y[i].left || x[i].right != y[i].right ||
            x[i].merged != y[i].merged || x[i].count != y[i].count)
            return 0;
    return 1;
}

/* Sweep: merges[0..n) applied in rank order, each left to right with the
 * skip-two rule (the definition apply_merges must meet). */
static size_t naive_sweep(const uint32_t *lefts, const uint32_t *rights,
                          const uint32_t *results, size_t nm, uint32_t *s,
                          size_t n)
{
    size_t r, i, out;

    for (r = 0; r < nm; r++) {
        if (lefts[r] == BPE_NO_SYMBOL || rights[r] == BPE_NO_SYMBOL)
            continue;
        for (i = 0, out = 0; i < n;) {
            if (i + 1 < n && s[i] == lefts[r] && s[i + 1] == rights[r]) {
                s[out++] = results[r];
                i += 2;
            } else {
                s[out++] = s[i++];
            }
        }
        n = out;
    }
    return n;
}

#define MAXSTEPS 200

/* One random case: a tiny alphabet (some initial symbols are already
 * concatenations, so merged strings can exist before they are made), words
 * that repeat, empty and one-symbol words, frequencies 0..3. */
static void trainer_case(rng *r)
{
    static const char *alphabets[2][7] = {
        {"a", "b", "c", "ab", "ba", "bc", "aba"},
        {"a", "", "b", "ab", "ba", "c", "bc"}};  /* with the empty symbol */
    const char **alphabet = alphabets[rnd(r, 4) == 0];
    uint32_t nalpha = 2 + rnd(r, 6), nwords = 1 + rnd(r, 10), k;
    uint64_t minf = 1 + rnd(r, 3) / 2;
    uint32_t max_units = rnd(r, 3) == 0 ? 2 + rnd(r, 3) : 0;
    bpe_symtab *t1 = bpe_symtab_new(), *t2 = bpe_symtab_new();
    bpe_words *w = bpe_words_new(), *naive = bpe_words_new();
    bpe_merge got[MAXSTEPS], want[MAXSTEPS];
    uint32_t units[4096], words[12][12];
    size_t lens[12], target, ngot = 0, nwant, i;
    bpe_trainer *tr;
    int status;

    for (k = 0; k < nalpha; k++) {
        intern(t1, alphabet[k]);
        intern(t2, alphabet[k]);
        units[k] = 1;
    }
    for (k = 0; k < nwords; k++) {
        uint64_t f = rnd(r, 4);
        if (k > 0 && rnd(r, 4) == 0) {  /* a repeated word */
            lens[k] = lens[k - 1];
            memcpy(words[k], words[k - 1], sizeof words[k]);
        } else {
            lens[k] = rnd(r, 5) == 0 ? rnd(r, 2) : rnd(r, 12);
            for (i = 0; i < lens[k]; i++)
                words[k][i] = rnd(r, 30) == 0 ? BPE_NO_SYMBOL : rnd(r, nalpha);
        }
        CHECK(bpe_words_add(w, words[k], lens[k], f) == BPE_OK);
        CHECK(bpe_words_add(naive, words[k], lens[k], f) == BPE_OK);
    }
    target = nalpha + rnd(r, 40);
    tr = bpe_trainer_new(t1, w, minf, max_units, &status);
    CHECK(tr != NULL && status == BPE_OK);
    bpe_words_free(w);  /* the trainer has its own copy */
    if (tr == NULL)
        goto done;
    if (rnd(r, 2)) {
        CHECK(bpe_trainer_run(tr, target, MAXSTEPS, got, &ngot) == BPE_OK);
    } else {  /* one step per call must give the same */
        size_t one = 1;
        while (one == 1 && ngot < MAXSTEPS) {
            CHECK(bpe_trainer_run(tr, target, 1, got + ngot, &one) == BPE_OK);
            ngot += one;
        }
    }
    nwant = naive_train(t2, naive, target, minf, max_units, units, want,
                        MAXSTEPS);
    CHECK(ngot == nwant);
    CHECK(same_merges(got, want, ngot < nwant ? ngot : nwant));
    CHECK(bpe_symtab_size(t1) == bpe_symtab_size(t2));
    if (ngot != nwant || !same_merges(got, want, ngot < nwant ? ngot : nwant))
        fprintf(stderr, "  trainer case differs: %lu vs %lu merges\n",
                (unsigned long)ngot, (unsigned long)nwant);
    {  /* the merges, applied by the merger, give the trained words */
        uint32_t lefts[MAXSTEPS], rights[MAXSTEPS], results[MAXSTEPS];
        bpe_merger *m;
        for (i = 0; i < ngot; i++) {
            lefts[i] = got[i].left;
            rights[i] = got[i].right;
            results[i] = got[i].merged;
        }
        m = bpe_merger_new(lefts, rights, results, ngot, &status);
        CHECK(m != NULL);
        for (k = 0; m != NULL && k < nwords; k++) {
            size_t n = lens[k];
            CHECK(bpe_apply_merges(m, words[k], &n) == BPE_OK);
            CHECK(word_is(naive, k, words[k], n));
        }
        bpe_merger_free(m);
    }
    bpe_trainer_free(tr);
done:
    bpe_words_free(naive);
    bpe_symtab_free(t1);
    bpe_symtab_free(t2);
}

static void test_trainer_random(void)
{
    rng r = {UINT64_C(0x9e3779b97f4a7c15)};
    int i, before = failures;

    for (i = 0; i < 3000 && failures == before; i++)
        trainer_case(&r);
}

static void test_trainer_errors(void)
{
    bpe_symtab *t = bpe_symtab_new();
    bpe_words *w = bpe_words_new();
    uint32_t bad[] = {0, 5}, ok[] = {0, BPE_NO_SYMBOL, 1};
    bpe_merge out[4];
    size_t n = 9;
    int status = 0;

    intern(t, "a");
    intern(t, "");
    CHECK(bpe_words_add(w, bad, 2, 1) == BPE_OK);
    CHECK(bpe_trainer_new(t, w, 1, 0, &status) == NULL);
    CHECK(status == BPE_EINVAL);  /* 5 is not an ID of t */
    bpe_words_free(w);
    w = bpe_words_new();
    CHECK(bpe_words_add(w, ok, 3, 1) == BPE_OK);
    CHECK(bpe_trainer_new(t, w, 0, 0, &status) == NULL);  /* min_frequency */
    CHECK(status == BPE_EINVAL);
    {  /* "unknown" cuts the word: no pair at all */
        bpe_trainer *tr = bpe_trainer_new(t, w, 1, 0, &status);
        CHECK(tr != NULL && status == BPE_OK);
        CHECK(bpe_trainer_run(tr, 100, 4, out, &n) == BPE_OK && n == 0);
        bpe_trainer_free(tr);
    }
    bpe_words_free(w);
    w = bpe_words_new();  /* no words: trains nothing */
    {
        bpe_trainer *tr = bpe_trainer_new(t, w, 1, 0, &status);
        CHECK(tr != NULL && status == BPE_OK);
        CHECK(bpe_trainer_run(tr, 100, 4, out, &n) == BPE_OK && n == 0);
        bpe_trainer_free(tr);
    }
    bpe_trainer_free(NULL);
    bpe_words_free(w);
    bpe_symtab_free(t);
}

/* Counts past 2^64 - 1 are BPE_EOVERFLOW, never a wrap-around that changes
 * which pair wins: at the start (a, b occurs in two words of 2^63), after a
 * merge ("abc" is built from a+bc and from ab+c, joining two (abc, d) counts
 * of 2^63), but not when a sum passes 2^64 - 1 only inside a step. */
static void test_counts_never_wrap(void)
{
    const uint64_t half = UINT64_C(1) << 63, quarter = UINT64_C(1) << 62;
    bpe_symtab *t = bpe_symtab_new();
    bpe_words *w = bpe_words_new();
    bpe_pair_count *pairs = NULL, best;
    bpe_trainer *tr;
    bpe_merge out[8];
    size_t n = 9;
    int status = 0;
    uint32_t a = intern(t, "a"), b = intern(t, "b"), x = intern(t, "x");
    uint32_t ab[] = {a, b}, xab[] = {x, a, b};

    CHECK(bpe_words_add(w, ab, 2, half) == BPE_OK);
    CHECK(bpe_words_add(w, xab, 3, half) == BPE_OK);
    CHECK(bpe_count_pairs(w, &pairs, &n) == BPE_EOVERFLOW && pairs == NULL);
    CHECK(bpe_find_best_pair(w, &best) == BPE_EOVERFLOW);
    CHECK(bpe_trainer_new(t, w, 1, 0, &status) == NULL && status == BPE_EOVERFLOW);
    bpe_words_free(w);
    bpe_symtab_free(t);

    t = bpe_symtab_new();
    w = bpe_words_new();
    {
        uint32_t a2 = intern(t, "a"), bc = intern(t, "bc"), ab2 = intern(t, "ab");
        uint32_t c = intern(t, "c"), d = intern(t, "d");
        uint32_t w1[] = {a2, bc, d}, w2[] = {ab2, c, d};
        CHECK(bpe_words_add(w, w1, 3, half) == BPE_OK);
        CHECK(bpe_words_add(w, w2, 3, half) == BPE_OK);
        CHECK(bpe_words_add(w, w1, 2, 1) == BPE_OK);
        CHECK(bpe_words_add(w, w2, 2, 1) == BPE_OK);
        tr = bpe_trainer_new(t, w, 1, 0, &status);
        CHECK(tr != NULL && status == BPE_OK);
        CHECK(bpe_trainer_run(tr, 100, 8, out, &n) == BPE_EOVERFLOW);
        CHECK(n == 1 && out[0].left == a2 && out[0].count == half + 1);
        CHECK(bpe_trainer_run(tr, 100, 8, out, &n) == BPE_EOVERFLOW && n == 0);
        bpe_trainer_free(tr);
    }
    bpe_words_free(w);
    bpe_symtab_free(t);

    t = bpe_symtab_new();
    w = bpe_words_new();
    {
        uint32_t a3 = intern(t, "a"), b3 = intern(t, "b"), ab3 = intern(t, "ab");
        uint32_t w1[] = {b3, a3, b3}, w2[] = {a3, b3, ab3}, w3[] = {b3, ab3}, w4[] = {a3, b3};
        CHECK(bpe_words_add(w, w1, 3, quarter) == BPE_OK);
        CHECK(bpe_words_add(w, w2, 3, quarter) == BPE_OK);
        CHECK(bpe_words_add(w, w3, 2, half) == BPE_OK);
        CHECK(bpe_words_add(w, w4, 2, half - quarter + 1) == BPE_OK);
        tr = bpe_trainer_new(t, w, 1, 0, &status);
        CHECK(tr != NULL && status == BPE_OK);
        CHECK(bpe_trainer_run(tr, 100, 8, out, &n) == BPE_OK && n >= 1);
        CHECK(out[0].left == a3 && out[0].right == b3);
        bpe_trainer_free(tr);
    }
    bpe_words_free(w);
    bpe_symtab_free(t);
}

/* A word of a million "a"s: "a" * 2^k collapses in k merges, each linear. */
/* The WordPiece trainer (wordpiece.c): the worked example of
 * reference.learn_wordpiece -- (a, ##c) at 1/(4*1) first, then (a, ##b) at
 * 3/(3*4) tying (d, ##b) at 1/(1*4) and winning as the first met -- scores
 * a double cannot tell apart, counts past 2^64 - 1, bad arguments. */
static void test_wordpiece_trainer(void)
{
    bpe_symtab *t = bpe_symtab_new();
    bpe_words *w = bpe_words_new();
    bpe_wp_trainer *tr;
    bpe_wp_merge out[8];
    uint32_t a = intern(t, "a"), d = intern(t, "d"), b = intern(t, "##b"), c = intern(t, "##c");
    uint32_t ab[2], ac[2], db[2];
    size_t n = 0, len;
    const char *bytes;
    int status = 0;

    ab[0] = a, ab[1] = b, ac[0] = a, ac[1] = c, db[0] = d, db[1] = b;
    CHECK(bpe_words_add(w, ab, 2, 3) == BPE_OK && bpe_words_add(w, ac, 2, 1) == BPE_OK &&
          bpe_words_add(w, db, 2, 1) == BPE_OK);
    tr = bpe_wp_trainer_new(t, w, 1, "##", 2, &status);
    CHECK(tr != NULL && status == BPE_OK);
    CHECK(bpe_wp_trainer_run(tr, 100, 8, out, &n) == BPE_OK && n == 3);
    CHECK(out[0].left == a && out[0].right == c && out[0].count == 1 && out[0].left_count == 4 &&
          out[0].right_count == 1);
    CHECK(out[1].left == a && out[1].right == b && out[1].count == 3 && out[1].left_count == 3);
    CHECK(out[2].left == d && out[2].right == b && out[2].count == 1);
    bytes = bpe_symtab_bytes(t, out[0].merged, &len);
    CHECK(bytes != NULL && len == 2 && memcmp(bytes, "ac", 2) == 0);  /* the prefix is dropped */
    CHECK(bpe_wp_trainer_run(tr, 100, 8, out, &n) == BPE_OK && n == 0);
    bpe_wp_trainer_free(tr);
    bpe_words_free(w);

    /* 1/(2^61 + 1) < 1/2^61, though both are the same double */
    w = bpe_words_new();
    CHECK(bpe_words_add(w, ab, 2, UINT64_C(1) << 61) == BPE_OK && bpe_words_add(w, ab, 1, 1) == BPE_OK &&
          bpe_words_add(w, db, 2, UINT64_C(1) << 61) == BPE_OK);
    tr = bpe_wp_trainer_new(t, w, 1, "##", 2, &status);
    CHECK(tr != NULL && bpe_wp_trainer_run(tr, 100, 1, out, &n) == BPE_OK && n == 1);
    CHECK(out[0].left == d && out[0].right == b);
    bpe_wp_trainer_free(tr);
    bpe_words_free(w);

    w = bpe_words_new();  /* every count fits under the total weight: checked once */
    CHECK(bpe_words_add(w, ab, 2, UINT64_C(1) << 63) == BPE_OK);
    CHECK(bpe_wp_trainer_new(t, w, 1, "##", 2, &status) == NULL && status == BPE_EOVERFLOW);
    CHECK(bpe_wp_trainer_new(t, w, 0, "##", 2, &status) == NULL && status == BPE_EINVAL);
    bpe_words_free(w);
    w = bpe_words_new();
    ab[1] = 99;  /* not an ID of t */
    CHECK(bpe_words_add(w, ab, 2, 1) == BPE_OK);
    CHECK(bpe_wp_trainer_new(t, w, 1, "##", 2, &status) == NULL && status == BPE_EINVAL);
    CHECK(bpe_wp_trainer_run(NULL, 100, 8, out, &n) == BPE_EINVAL);
    bpe_wp_trainer_free(NULL);
    bpe_words_free(w);
    bpe_symtab_free(t);
}

static void test_trainer_long_word(void)
{
    size_t n = 1u << 20, i, nout;
    uint32_t *s = malloc(n * sizeof *s);
    bpe_symtab *t = bpe_symtab_new();
    bpe_words *w = bpe_words_new();
    bpe_trainer *tr;
    bpe_merge out[32];
    int status;

    CHECK(s != NULL);
    for (i = 0; i < n; i++)
        s[i] = 0;
    intern(t, "a");
    CHECK(bpe_words_add(w, s, n, 1) == BPE_OK);
    tr = bpe_trainer_new(t, w, 1, 0, &status);
    CHECK(tr != NULL);
    CHECK(bpe_trainer_run(tr, 1000, 32, out, &nout) == BPE_OK);
    CHECK(nout == 20);  /* then one symbol is left: no pair */
    CHECK(out[0].count == n - 1 && out[1].count == n / 2 - 1);
    CHECK(out[19].count == 1);
    bpe_trainer_free(tr);
    bpe_words_free(w);
    bpe_symtab_free(t);
    free(s);
}

/* ---- merger vs the rank-order sweep --------------------------------------- */

static void merger_case(rng *r)
{
    uint32_t lefts[64], rights[64], results[64], nsym = 2 + rnd(r, 3);
    uint32_t word[300], want[300], got[300], batch[600], batch_out[600];
    size_t nm = rnd(r, 40), i, n, nw, ng, offs[3], out_offs[3];
    bpe_merger *m;
    int status;

    for (i = 0; i < nm; i++) {
        if (i > 0 && rnd(r, 5) == 0) {  /* a pair seen before, again */
            size_t j = rnd(r, (uint32_t)i);
            lefts[i] = lefts[j];
            rights[i] = rights[j];
        } else {
            lefts[i] = rnd(r, nsym);
            rights[i] = rnd(r, nsym);
        }
        /* a new symbol, or one that exists (two pairs, same result) */
        results[i] = rnd(r, 3) == 0 ? rnd(r, nsym) : nsym++;
        if (rnd(r, 50) == 0)
            lefts[i] = BPE_NO_SYMBOL;
    }
    m = bpe_merger_new(lefts, rights, results, nm, &status);
    CHECK(m != NULL && status == BPE_OK);
    if (m == NULL)
        return;
    n = rnd(r, 4) == 0 ? rnd(r, 300) : rnd(r, 40);
    for (i = 0; i < n; i++)
        word[i] = rnd(r, 5) == 0 ? rnd(r, nsym) : rnd(r, 2);
    if (n > 0 && rnd(r, 10) == 0)
        word[rnd(r, (uint32_t)n)] = BPE_NO_SYMBOL;
    memcpy(want, word, n * sizeof *word);
    nw = naive_sweep(lefts, rights, results, nm, want, n);
    for (i = 0; i < 3; i++) {  /* by length, short loop, heap */
        ng = n;
        memcpy(got, word, n * sizeof *word);
        CHECK(bpe__apply_merges_path(m, got, &ng, (int)i - 1) == BPE_OK);
        CHECK(ng == nw && memcmp(got, want, nw * sizeof *want) == 0);
    }
    /* batch: the word twice around an empty one */
    memcpy(batch, word, n * sizeof *word);
    memcpy(batch + n, word, n * sizeof *word);
    offs[0] = 0;
    offs[1] = n;
    offs[2] = n;
    {
        size_t offs4[4] = {0, n, n, 2 * n};
        size_t out4[4];
        CHECK(bpe_encode_words(m, batch, offs4, 3, batch_out, out4) ==
              BPE_OK);
        CHECK(out4[1] == nw && out4[2] == nw && out4[3] == 2 * nw);
        CHECK(memcmp(batch_out, want, nw * 4) == 0 &&
              memcmp(batch_out + nw, want, nw * 4) == 0);
    }
    CHECK(bpe_encode_words(m, batch, offs, 2, batch_out, out_offs) == BPE_OK);
    bpe_merger_free(m);
}

static void test_merger_random(void)
{
    rng r = {UINT64_C(0x2545f4914f6cdd1d)};
    int i, before = failures;

    for (i = 0; i < 20000 && failures == before; i++)
        merger_case(&r);
}

/* (a,b)->x then (x,c)->abc, and (a,bc)->abc where bc = (b,c) ranks later:
 * two pairs build the same result, and the second never fires on "abc". */
static void test_merger_same_result(void)
{
    /* a=0 b=1 c=2 ab=3 abc=4 bc=5 */
    uint32_t l[] = {0, 3, 1, 0}, rr[] = {1, 2, 2, 5}, res[] = {3, 4, 5, 4};
    uint32_t w1[] = {0, 1, 2}, w2[] = {1, 2, 0, 1, 2, 2};
    uint32_t want2[] = {5, 4, 2};
    size_t n;
    bpe_merger *m = bpe_merger_new(l, rr, res, 4, NULL);

    CHECK(m != NULL);
    n = 3;
    CHECK(bpe_apply_merges(m, w1, &n) == BPE_OK && n == 1 && w1[0] == 4);
    n = 6;
    CHECK(bpe_apply_merges(m, w2, &n) == BPE_OK && n == 3);
    CHECK(memcmp(w2, want2, sizeof want2) == 0);
    bpe_merger_free(m);
    bpe_merger_free(NULL);
}

/* One million "a"s with (a,a) -> aa, (aa,aa) -> aaaa, ... must be fast:
 * the heap path is O(n log n). */
static void test_merger_long_word(void)
{
    size_t n = 1000000, i;
    uint32_t l[20], rr[20], res[20], *s = malloc(n * sizeof *s);
    bpe_merger *m;

    CHECK(s != NULL);
    for (i = 0; i < 20; i++) {
        l[i] = rr[i] = (uint32_t)i;
        res[i] = (uint32_t)i + 1;
    }
    for (i = 0; i < n; i++)
        s[i] = 0;
    m = bpe_merger_new(l, rr, res, 20, NULL);
    CHECK(m != NULL);
    CHECK(bpe_apply_merges(m, s, &n) == BPE_OK);
    /* 1000000 = 0b11110100001001000000: one symbol per set bit, largest
     * first */
    CHECK(n == 7 && s[0] == 19 && s[1] == 18 && s[6] == 6);
    bpe_merger_free(m);
    free(s);
}

/* ---- the SPEC's worked traces ---------------------------------------------- */

static void test_trace_bytes(void)
{
    const char *text = "aaabdaaabac";
    bpe_symtab *t = bpe_symtab_new();
    bpe_words *w = bpe_words_new();
    uint32_t s[11], want[] = {258, 100, 258, 97, 99}, l[3], rr[3], res[3];
    bpe_merge out[8];
    bpe_trainer *tr;
    bpe_merger *m;
    size_t i, n;
    char c;

    for (i = 0; i < 256; i++) {
        uint32_t id;
        c = (char)i;
        CHECK(bpe_symtab_intern(t, &c, 1, &id) == BPE_OK && id == i);
    }
    for (i = 0; i < 11; i++)
        s[i] = (unsigned char)text[i];
    CHECK(bpe_words_add(w, s, 11, 1) == BPE_OK);
    tr = bpe_trainer_new(t, w, 1, 0, NULL);
    CHECK(tr != NULL);
    CHECK(bpe_trainer_run(tr, 259, 100, out, &n) == BPE_OK && n == 3);
    CHECK(out[0].left == 'a' && out[0].right == 'a' && out[0].merged == 256);
    CHECK(out[1].left == 256 && out[1].right == 'a' && out[1].merged == 257);
    CHECK(out[2].left == 257 && out[2].right == 'b' && out[2].merged == 258);
    for (i = 0; i < 3; i++) {
        l[i] = out[i].left;
        rr[i] = out[i].right;
        res[i] = out[i].merged;
    }
    m = bpe_merger_new(l, rr, res, 3, NULL);
    n = 11;
    CHECK(bpe_apply_merges(m, s, &n) == BPE_OK && n == 5);
    CHECK(memcmp(s, want, sizeof want) == 0);
    bpe_merger_free(m);
    bpe_trainer_free(tr);
    bpe_words_free(w);
    bpe_symtab_free(t);
}

/* Chapter flavour on ["low", "low", "lower", "newest", "widest"]. */
static void build_chapter(bpe_symtab *t, bpe_words *w)
{
    const char *chars = "deilnorstw";  /* sorted observed characters */
    const char *words[] = {"low", "lower", "newest", "widest"};
    uint64_t freqs[] = {2, 1, 1, 1};
    uint32_t s[16];
    size_t i;
    char buf[3] = {0, 0, 0};

    intern(t, "<UNK>");
    for (i = 0; chars[i]; i++) {
        buf[0] = chars[i];
        buf[1] = '\0';
        intern(t, buf);
        buf[1] = ' ';
        intern(t, buf);
    }
    for (i = 0; i < 4; i++)
        CHECK(bpe_words_add(w, s, chapter_word(t, words[i], s), freqs[i]) ==
              BPE_OK);
}

static void test_trace_chapter(void)
{
    bpe_symtab *t = bpe_symtab_new();
    bpe_words *w = bpe_words_new();
    bpe_merge out[32];
    uint32_t l[32], rr[32], res[32], s[16], want[] = {21, 23, 24};
    bpe_trainer *tr;
    bpe_merger *m;
    size_t n, i;

    build_chapter(t, w);
    CHECK(bpe_symtab_size(t) == 21);
    CHECK(bpe_symtab_lookup(t, "w ", 2) == 20);
    tr = bpe_trainer_new(t, w, 1, 0, NULL);
    CHECK(tr != NULL);
    CHECK(bpe_trainer_run(tr, 25, 100, out, &n) == BPE_OK && n == 4);
    CHECK(out[0].left == bpe_symtab_lookup(t, "l", 1) &&
          out[0].right == bpe_symtab_lookup(t, "o", 1) && out[0].merged == 21);
    CHECK(out[1].left == 21 && out[1].right == 20 && out[1].merged == 22);
    CHECK(bpe_symtab_lookup(t, "we", 2) == 23);
    CHECK(bpe_symtab_lookup(t, "st ", 3) == 24);
    for (i = 0; i < n; i++) {
        l[i] = out[i].left;
        rr[i] = out[i].right;
        res[i] = out[i].merged;
    }
    m = bpe_merger_new(l, rr, res, n, NULL);
    n = chapter_word(t, "lowest", s);
    CHECK(bpe_apply_merges(m, s, &n) == BPE_OK && n == 3);
    CHECK(memcmp(s, want, sizeof want) == 0);
    bpe_merger_free(m);
    bpe_trainer_free(tr);
    bpe_symtab_free(t);

    /* vocab_size=100: stops at 34 entries after 13 merges */
    t = bpe_symtab_new();
    bpe_words_free(w);
    w = bpe_words_new();
    build_chapter(t, w);
    tr = bpe_trainer_new(t, w, 1, 0, NULL);
    CHECK(bpe_trainer_run(tr, 100, 100, out, &n) == BPE_OK && n == 13);
    CHECK(bpe_symtab_size(t) == 34);
    bpe_trainer_free(tr);
    bpe_words_free(w);
    bpe_symtab_free(t);
}

/* ---- the run engine against the heap (merge.h) ------------------------- */

/* A rule on parts that are lengths: x then y merge to x + y, with priority
 * prio[x + y], when that is not 0 -- any order of priorities, ties too. */
typedef struct {
    uint32_t prio[33];
} len_rule_table;

static uint32_t len_rule(const void *table, uint32_t x, uint32_t y, uint32_t bx,
                         uint32_t by, uint32_t *merged)
{
    const len_rule_table *t = table;
    (void)bx;
    (void)by;
    if (x + y > 32 || t->prio[x + y] == 0)
        return BPE__NONE;
    *merged = x + y;
    return t->prio[x + y];
}

/* bpe__merge_runs (its heap heap_cap entries) gives bpe__merge_heap's parts. */
static int runs_match_heap(const len_rule_table *t, const uint32_t *parts, size_t n,
                           size_t heap_cap)
{
    uint32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    uint32_t *cnt = malloc(n * sizeof *cnt), *wid = malloc(n * sizeof *wid);
    uint32_t *next = malloc(n * sizeof *next), *prev = malloc(n * sizeof *prev);
    bpe__heap_entry *heap = malloc(heap_cap * sizeof *heap);
    bpe__heap_entry *heap2 = malloc(2 * n * sizeof *heap2);
    size_t m1, m2;
    int same = 0;
    if (a && b && cnt && wid && next && prev && heap && heap2) {
        memcpy(a, parts, n * sizeof *a);
        memcpy(b, parts, n * sizeof *b);
        m1 = bpe__merge_runs(len_rule, t, a, cnt, wid, next, prev, heap, heap_cap, n);
        m2 = bpe__merge_heap(len_rule, t, b, NULL, next, prev, heap2, n);
        same = m1 == m2 && memcmp(a, b, m1 * sizeof *a) == 0;
    }
    free(a);
    free(b);
    free(cnt);
    free(wid);
    free(next);
    free(prev);
    free(heap);
    free(heap2);
    return same;
}

static void test_merge_runs(void)
{
    rng r = {0x9e3779b97f4a7c15u};
    uint32_t parts[800];
    len_rule_table t;
    size_t trial, i, k;

    /* Compaction: "aaa" (3) is ranked before "aa" (2) and (3, 1) -> 4
     * last, so the run of 1s merges one pair at a time and the 3-run's edge
     * is pushed again every few steps while lower priorities keep it in the
     * heap.  At most four runs are
     * alive (3s, a 2, 1s, the last 4), so a 16-entry heap is within
     * heap_cap's bound, and fills with repeats: bpe__runs_compact runs. */
    memset(&t, 0, sizeof t);
    t.prio[2] = 5;
    t.prio[3] = 2;
    t.prio[4] = 8;
    for (i = 0; i < 800; i++)
        parts[i] = 1;
    CHECK(runs_match_heap(&t, parts, 800, 16));
    /* Random priorities over runs of 1s, 2s and 3s of random lengths. */
    for (trial = 0; trial < 400; trial++) {
        size_t n = 100 + rnd(&r, 700);
        for (k = 2; k <= 32; k++)
            t.prio[k] = rnd(&r, 3) ? 1 + rnd(&r, 40) : 0;
        for (i = 0; i < n;) {
            uint32_t part = 1 + rnd(&r, trial % 2 ? 3 : 2), len = 1 + rnd(&r, 80);
            while (len-- > 0 && i < n)
                parts[i++] = part;
        }
        CHECK(runs_match_heap(&t, parts, n, 2 * n + BPE__RUN_PUSHES));
    }
}

/* The arena (arena.c): arrays of every size come zeroed, writable to their
 * last byte, apart from each other and aligned to 16 bytes at least; the
 * arena refuses more than BPE__ARENA_CHUNKS arrays of their own and an
 * overflowing size; freeing leaves it empty and reusable.  With huge pages
 * (a build without ASan) the large ones share mappings; under ASan each is
 * a calloc whose bounds ASan checks. */
static void test_arena(void)
{
    static const size_t sizes[] = {1, 100, 4096, (size_t)256 << 10, (size_t)700 << 10,
                                   (size_t)3 << 20, (size_t)1 << 20, 64, (size_t)300 << 10};
    const size_t n_sizes = sizeof sizes / sizeof sizes[0];
    unsigned char *arrays[sizeof sizes / sizeof sizes[0]];
    bpe__arena a;
    size_t i, j, round;
    memset(&a, 0, sizeof a);
    for (round = 0; round < 2; round++) {
        for (i = 0; i < n_sizes; i++) {
            size_t k, nonzero = 0;
            arrays[i] = bpe__arena_calloc(&a, sizes[i], 1);
            CHECK(arrays[i] != NULL);
            if (!arrays[i])
                return;
            CHECK((uintptr_t)arrays[i] % 16 == 0);
            for (k = 0; k < sizes[i]; k++)
                nonzero += arrays[i][k] != 0;
            CHECK(nonzero == 0);
            memset(arrays[i], (int)(i + 1), sizes[i]);
        }
        for (i = 0; i < n_sizes; i++) /* no array wrote over another */
            for (j = 0; j < sizes[i]; j += 1 + sizes[i] / 7)
                CHECK(arrays[i][j] == (unsigned char)(i + 1) &&
                      arrays[i][sizes[i] - 1] == (unsigned char)(i + 1));
        bpe__arena_free(&a);
        CHECK(a.n_chunks == 0 && a.room == NULL && a.room_left == 0);
    }
    CHECK(bpe__arena_calloc(&a, SIZE_MAX / 2, 3) == NULL); /* n * size overflows */
    CHECK(bpe__arena_calloc(&a, SIZE_MAX - 100, 1) == NULL);
    for (i = 0; i < BPE__ARENA_CHUNKS; i++) /* small arrays: a chunk each */
        CHECK(bpe__arena_calloc(&a, 10, 10) != NULL);
    CHECK(a.n_chunks == BPE__ARENA_CHUNKS);
    CHECK(bpe__arena_calloc(&a, 10, 10) == NULL); /* full */
    bpe__arena_free(&a);
    CHECK(bpe__arena_calloc(&a, 0, 8) != NULL); /* an empty array is still an array */
    bpe__arena_free(&a);
}

int main(void)
{
    RUN(test_arena);
    RUN(test_symtab);
    RUN(test_count_pairs_order);
    RUN(test_find_best_pair_ties);
    RUN(test_merge_pair_skip_two);
    RUN(test_words_add_many);
    RUN(test_trainer_errors);
    RUN(test_counts_never_wrap);
    RUN(test_trainer_random);
    RUN(test_trainer_long_word);
    RUN(test_wordpiece_trainer);
    RUN(test_merger_same_result);
    RUN(test_merger_random);
    RUN(test_merger_long_word);
    RUN(test_trace_bytes);
    RUN(test_trace_chapter);
    RUN(test_merge_runs);
    printf("%d checks, %d failed\n", checks, failures);
    return failures != 0;
}
