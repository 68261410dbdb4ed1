/*
 * 067_wordpiece.c -- BPE beside WordPiece on the same words: Figure 11-9, measured.
 *
 * Mirrors: the C book's section 11.8, which ends the chapter by setting BPE
 * against WordPiece (BERT's tokenizer) and says "in practice, the difference
 * is subtle".  Both are trained here on the same word table to the same
 * vocabulary size; BPE merges the most frequent pair, WordPiece the pair
 * with the highest score count(ab) / (count(a) * count(b)).  Then both
 * encode held-out text.
 * Core functions: bpe_trainer_new / bpe_trainer_run (BPE, marker `_` as its
 * own symbol, as in 064), bpe_wp_trainer_new / bpe_wp_trainer_run
 * (WordPiece: a word's first byte as itself, the others with the prefix
 * `##`), bpe_merger_new / bpe_apply_merges (BPE on new words),
 * bpe_symtab_lookup (WordPiece's greedy longest match, written out below).
 * Usage: 067_wordpiece [corpus.txt [vocab_size]] -- with no argument, a
 * built-in corpus and held-out line; with a file, its last tenth of lines is
 * held out.  Words are cut as BERT's uncased pre-processing cuts ASCII text
 * (whitespace, every punctuation character alone, lowercased, control bytes
 * dropped); other bytes are kept as they are, one symbol each.
 * Watch: the first merges -- BPE's are frequent pairs (counts in the
 * thousands on a real corpus), WordPiece's are pairs whose parts rarely
 * occur apart (score 1 = always together) -- and how little the held-out
 * figures differ.  Training time is CPU time, so it varies from run to run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpe.h"
#include "book.h"

#define MAX_WORD 100        /* BERT's max_input_chars_per_word (bytes here) */
#define SHOW_MERGES 8
#define HELD_OUT_TENTHS 1   /* of a file's lines */
#define DEFAULT_VOCAB 40    /* for the built-in corpus */

static const char TRAIN_TEXT[] =
    "low low low low low lower lower newest newest newest newest newest "
    "newest widest widest widest new new";
static const char HELD_TEXT[] = "Lowest, newer and wider: the slowest!";
static const char *const SPECIALS[] = {"[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"};

/* ---- words, as BERT's uncased pre-processing cuts ASCII text ------------ */

/* A growable byte buffer holding the current word. */
typedef struct {
    char *bytes;
    size_t len, cap;
} word_buf;

static int buf_push(word_buf *w, char c)
{
    if (w->len == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        char *grown = realloc(w->bytes, cap);
        if (grown == NULL)
            return BPE_ENOMEM;
        w->bytes = grown;
        w->cap = cap;
    }
    w->bytes[w->len++] = c;
    return BPE_OK;
}

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_control(unsigned char c) { return (c < 0x20 && !is_space(c)) || c == 0x7f; }
static int is_punct(unsigned char c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

/* The next word of text[*pos..end) into w: 1, or 0 at the end. */
static int next_word(const char *text, size_t end, size_t *pos, word_buf *w, int *status)
{
    size_t i = *pos;

    w->len = 0;
    *status = BPE_OK;
    while (i < end && (is_space((unsigned char)text[i]) || is_control((unsigned char)text[i])))
        i++;
    if (i == end) {
        *pos = i;
        return 0;
    }
    if (is_punct((unsigned char)text[i])) {  /* a word by itself */
        *status = buf_push(w, text[i]);
        *pos = i + 1;
        return 1;
    }
    for (; i < end && !is_space((unsigned char)text[i]) && !is_punct((unsigned char)text[i]); i++) {
        char c = text[i];
        if (is_control((unsigned char)c))
            continue;  /* dropped, as BERT's clean-up drops it */
        if ((*status = buf_push(w, c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c)) != BPE_OK)
            break;
    }
    *pos = i;
    return 1;
}

/* ---- counting the training words ----------------------------------------- */

/* Distinct words in first-seen order (a symbol table used as the word
 * table of 062) and their frequencies. */
typedef struct {
    bpe_symtab *ids;
    uint64_t *freq;
    size_t cap;
    size_t total, skipped;  /* words seen; of those, longer than MAX_WORD */
} counts;

static int count_words(counts *c, const char *text, size_t end)
{
    word_buf w = {NULL, 0, 0};
    size_t pos = 0;
    uint32_t id;
    int status = BPE_OK;

    while (next_word(text, end, &pos, &w, &status)) {
        if (w.len > MAX_WORD) {
            c->skipped++;  /* WordPiece could only call it [UNK] */
            continue;
        }
        if ((status = bpe_symtab_intern(c->ids, w.bytes, w.len, &id)) != BPE_OK)
            break;
        if (id >= c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 1024;
            uint64_t *grown = realloc(c->freq, cap * sizeof *grown);
            if (grown == NULL) {
                status = BPE_ENOMEM;
                break;
            }
            memset(grown + c->cap, 0, (cap - c->cap) * sizeof *grown);
            c->freq = grown;
            c->cap = cap;
        }
        c->freq[id]++;
        c->total++;
    }
    free(w.bytes);
    return status;
}

/* ---- the two word tables --------------------------------------------------- */

/* Word i of the counts as BPE's initial symbols (bytes, then "_") or
 * WordPiece's (first byte, then "##" + byte; every byte also as itself, so
 * any word of known bytes can start a match). */
static int add_words(const counts *c, bpe_symtab *symtab, bpe_words *words, int wordpiece)
{
    uint32_t syms[MAX_WORD + 1], unused;
    char piece[3] = {'#', '#', 0};
    size_t i, k, len;
    int status;

    for (i = 0; i < bpe_symtab_size(c->ids); i++) {
        const char *word = bpe_symtab_bytes(c->ids, (uint32_t)i, &len);
        for (k = 0; k < len; k++) {
            piece[2] = word[k];
            if (!wordpiece || k == 0)
                status = bpe_symtab_intern(symtab, word + k, 1, &syms[k]);
            else if ((status = bpe_symtab_intern(symtab, word + k, 1, &unused)) == BPE_OK)
                status = bpe_symtab_intern(symtab, piece, 3, &syms[k]);
            if (status != BPE_OK)
                return status;
        }
        if (!wordpiece && (status = book_intern(symtab, "_", &syms[len++])) != BPE_OK)
            return status;
        if ((status = bpe_words_add(words, syms, len, c->freq[i])) != BPE_OK)
            return status;
    }
    return BPE_OK;
}

/* ---- encoding held-out words ----------------------------------------------- */

typedef struct {
    size_t tokens, unknown;
} tally;

/* BPE: bytes + "_" through the merges; a byte never seen is an unknown
 * symbol, one token that never merges. */
static int bpe_encode(const bpe_symtab *symtab, const bpe_merger *merger, const word_buf *w,
                      tally *t)
{
    uint32_t *syms = malloc((w->len + 1) * sizeof *syms);
    size_t n = w->len + 1, k;
    int status;

    if (syms == NULL)
        return BPE_ENOMEM;
    for (k = 0; k < w->len; k++)
        syms[k] = bpe_symtab_lookup(symtab, w->bytes + k, 1);
    syms[w->len] = bpe_symtab_lookup(symtab, "_", 1);
    if ((status = bpe_apply_merges(merger, syms, &n)) == BPE_OK) {
        t->tokens += n;
        for (k = 0; k < n; k++)
            t->unknown += syms[k] == BPE_NO_SYMBOL;
    }
    free(syms);
    return status;
}

/* WordPiece: from the left, the longest vocabulary entry that starts here
 * ("##" after the first piece); none, or a word over MAX_WORD bytes, makes
 * the whole word one [UNK]. */
static void wordpiece_encode(const bpe_symtab *symtab, const word_buf *w, tally *t)
{
    char piece[2 + MAX_WORD] = {'#', '#'};
    size_t start = 0, end, pieces = 0;

    if (w->len > MAX_WORD) {  /* too long: [UNK] without looking */
        t->tokens++;
        t->unknown++;
        return;
    }
    while (start < w->len) {
        for (end = w->len; end > start; end--) {
            memcpy(piece + 2, w->bytes + start, end - start);
            if (start == 0 ? bpe_symtab_lookup(symtab, piece + 2, end) != BPE_NO_SYMBOL
                           : bpe_symtab_lookup(symtab, piece, 2 + end - start) != BPE_NO_SYMBOL)
                break;
        }
        if (end == start)
            break;
        pieces++;
        start = end;
    }
    if (start < w->len) {
        t->tokens++;
        t->unknown++;
    } else {
        t->tokens += pieces;
    }
}

/* ---- the report -------------------------------------------------------------- */

/* "(l, o)" into buf. */
static const char *pair_text(const bpe_symtab *symtab, uint32_t a, uint32_t b, char *buf, size_t cap)
{
    char x[BOOK_MAX_TEXT], y[BOOK_MAX_TEXT];

    snprintf(buf, cap, "(%s, %s)", book_symbol(symtab, a, x, sizeof x), book_symbol(symtab, b, y, sizeof y));
    return buf;
}

static void print_merges(const bpe_symtab *sb, const bpe_merge *bm, size_t nb, const bpe_symtab *sw,
                         const bpe_wp_merge *wm, size_t nw)
{
    char p[2 * BOOK_MAX_TEXT], why[96];
    size_t i;

    printf("first merges   %-28s %s\n", "BPE: (pair) count", "WordPiece: (pair) count/(count(a)*count(b))");
    for (i = 0; i < SHOW_MERGES && (i < nb || i < nw); i++) {
        printf("  %2lu  ", (unsigned long)(i + 1));
        if (i < nb) {
            snprintf(why, sizeof why, "%s %lu", pair_text(sb, bm[i].left, bm[i].right, p, sizeof p),
                     (unsigned long)bm[i].count);
            printf("%-36s ", why);
        } else {
            printf("%-36s ", "-");
        }
        if (i < nw)
            printf("%s %lu/(%lu*%lu) = %.4g", pair_text(sw, wm[i].left, wm[i].right, p, sizeof p),
                   (unsigned long)wm[i].count, (unsigned long)wm[i].left_count,
                   (unsigned long)wm[i].right_count,
                   (double)wm[i].count / ((double)wm[i].left_count * (double)wm[i].right_count));
        printf("\n");
    }
}

static void print_row_u(const char *what, size_t b, size_t w)
{
    printf("%-24s %12lu %12lu\n", what, (unsigned long)b, (unsigned long)w);
}

static void print_row_f(const char *what, double b, double w, const char *unit)
{
    printf("%-24s %11.3f%-1s %11.3f%s\n", what, b, unit, w, unit);
}

/* ---- the program ------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data = NULL;
    size_t cap = 0, n = 0, got;

    if (f == NULL)
        return NULL;
    do {
        if (n == cap) {
            char *grown = realloc(data, cap = cap ? 2 * cap : 1 << 16);
            if (grown == NULL) {
                free(data);
                fclose(f);
                return NULL;
            }
            data = grown;
        }
        got = fread(data + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return data;
}

/* Where the held-out part of a file starts: after 9 of every 10 lines. */
static size_t held_out_start(const char *text, size_t len)
{
    size_t lines = 0, seen = 0, i;

    for (i = 0; i < len; i++)
        lines += text[i] == '\n';
    for (i = 0; i < len && seen < lines - lines * HELD_OUT_TENTHS / 10; i++)
        seen += text[i] == '\n';
    return i;
}

int main(int argc, char **argv)
{
    const char *train = TRAIN_TEXT, *held = HELD_TEXT;
    char *file = NULL;
    size_t train_len = strlen(TRAIN_TEXT), held_len = strlen(HELD_TEXT), vocab = DEFAULT_VOCAB;
    size_t nb = 0, nw = 0, i, pos = 0, held_words = 0, held_bytes = 0;
    counts c = {NULL, NULL, 0, 0, 0};
    bpe_symtab *sb = bpe_symtab_new(), *sw = bpe_symtab_new();
    bpe_words *wb = bpe_words_new(), *ww = bpe_words_new();
    bpe_trainer *tb = NULL;
    bpe_wp_trainer *tw = NULL;
    bpe_merge *bm = NULL;
    bpe_wp_merge *wm = NULL;
    bpe_merger *merger = NULL;
    uint32_t *lefts = NULL, *rights = NULL, *results = NULL, unused;
    word_buf w = {NULL, 0, 0};
    tally tbpe = {0, 0}, twp = {0, 0};
    clock_t t0;
    double secs_b, secs_w;
    int status = BPE_ENOMEM;

    if (argc > 3 || (argc == 3 && (vocab = strtoul(argv[2], NULL, 10)) == 0)) {
        fprintf(stderr, "usage: %s [corpus.txt [vocab_size]]\n", argv[0]);
        return 2;
    }
    if (argc >= 2) {
        if ((file = read_file(argv[1], &train_len)) == NULL) {
            fprintf(stderr, "error: cannot read %s\n", argv[1]);
            return 1;
        }
        vocab = argc == 3 ? vocab : 8000;
        train = file;
        held_len = train_len;
        train_len = held_out_start(file, train_len);
        held = file + train_len;
        held_len -= train_len;
    }
    if ((c.ids = bpe_symtab_new()) == NULL || sb == NULL || sw == NULL || wb == NULL || ww == NULL)
        goto cleanup;
    if ((status = count_words(&c, train, train_len)) != BPE_OK ||
        (status = book_intern(sb, "<UNK>", &unused)) != BPE_OK)
        goto cleanup;
    for (i = 0; i < sizeof SPECIALS / sizeof SPECIALS[0]; i++)
        if ((status = book_intern(sw, SPECIALS[i], &unused)) != BPE_OK)
            goto cleanup;
    if ((status = add_words(&c, sb, wb, 0)) != BPE_OK || (status = add_words(&c, sw, ww, 1)) != BPE_OK)
        goto cleanup;
    status = BPE_ENOMEM;
    if ((bm = malloc((vocab + 1) * sizeof *bm)) == NULL || (wm = malloc((vocab + 1) * sizeof *wm)) == NULL)
        goto cleanup;

    t0 = clock();
    if ((tb = bpe_trainer_new(sb, wb, 1, 0, &status)) == NULL ||
        (status = bpe_trainer_run(tb, vocab, vocab, bm, &nb)) != BPE_OK)
        goto cleanup;
    secs_b = (double)(clock() - t0) / CLOCKS_PER_SEC;
    t0 = clock();
    if ((tw = bpe_wp_trainer_new(sw, ww, 1, "##", 2, &status)) == NULL ||
        (status = bpe_wp_trainer_run(tw, vocab, vocab, wm, &nw)) != BPE_OK)
        goto cleanup;
    secs_w = (double)(clock() - t0) / CLOCKS_PER_SEC;

    status = BPE_ENOMEM;
    lefts = malloc((nb + 1) * sizeof *lefts);
    rights = malloc((nb + 1) * sizeof *rights);
    results = malloc((nb + 1) * sizeof *results);
    if (lefts == NULL || rights == NULL || results == NULL)
        goto cleanup;
    for (i = 0; i < nb; i++) {
        lefts[i] = bm[i].left;
        rights[i] = bm[i].right;
        results[i] = bm[i].merged;
    }
    if ((merger = bpe_merger_new(lefts, rights, results, nb, &status)) == NULL)
        goto cleanup;
    while (next_word(held, held_len, &pos, &w, &status)) {
        held_words++;
        held_bytes += w.len;
        if ((status = bpe_encode(sb, merger, &w, &tbpe)) != BPE_OK)
            goto cleanup;
        wordpiece_encode(sw, &w, &twp);
    }
    if (status != BPE_OK)
        goto cleanup;
    if (held_words == 0) {
        fprintf(stderr, "error: no held-out words to measure (a file's last tenth of lines is held out)\n");
        status = BPE_EINVAL;
        goto cleanup;
    }

    printf("corpus: %s; %lu training words (%lu distinct, %lu longer than %d left out), "
           "%lu held-out words\n", argc >= 2 ? argv[1] : "built-in", (unsigned long)c.total,
           (unsigned long)bpe_symtab_size(c.ids), (unsigned long)c.skipped, MAX_WORD,
           (unsigned long)held_words);
    printf("vocabulary size asked: %lu\n\n", (unsigned long)vocab);
    print_merges(sb, bm, nb, sw, wm, nw);
    printf("\n%-24s %12s %12s\n", "", "BPE", "WordPiece");
    print_row_u("vocabulary size", bpe_symtab_size(sb), bpe_symtab_size(sw));
    print_row_u("merges learned", nb, nw);
    print_row_u("held-out tokens", tbpe.tokens, twp.tokens);
    print_row_f("tokens per word", (double)tbpe.tokens / held_words, (double)twp.tokens / held_words, "");
    print_row_f("characters per token", (double)held_bytes / tbpe.tokens, (double)held_bytes / twp.tokens, "");
    print_row_f("unknown-token rate", 100.0 * tbpe.unknown / tbpe.tokens, 100.0 * twp.unknown / twp.tokens, "%");
    print_row_f("training time (CPU)", secs_b, secs_w, "s");
    status = BPE_OK;
cleanup:
    bpe_merger_free(merger);
    free(lefts);
    free(rights);
    free(results);
    free(w.bytes);
    free(bm);
    free(wm);
    bpe_trainer_free(tb);
    bpe_wp_trainer_free(tw);
    bpe_words_free(wb);
    bpe_words_free(ww);
    bpe_symtab_free(sb);
    bpe_symtab_free(sw);
    bpe_symtab_free(c.ids);
    free(c.freq);
    free(file);
    if (status != BPE_OK && held_words == 0 && status == BPE_EINVAL)
        return 1;  /* (said above) */
    return status == BPE_OK ? 0 : book_fail("067_wordpiece", status);
}
