/*
 * counter.c -- word counting (str.split() semantics), words -> initial
 * symbols, and the initial word table.  Text level (text.h).
 *
 * The first half of training, before listing 064's loop: the corpus becomes
 * its distinct words in order of first appearance, each with a count, and
 * then each distinct word becomes its initial symbols.  In Python this is
 * `Counter(text.split())` and a list comprehension per word; on a 9.5 MB
 * corpus those took longer than the whole incremental merge loop.  The
 * word -> initial symbols step (bpe__units_*, bpe__word_units) is the one
 * C copy of it: encode_text.c uses it too.
 *
 * Data structure.  Word i's bytes are arena[off[i] .. off[i] + len[i]);
 * words are appended to the arena in order, so the arena is also every
 * distinct word back to back in first-appearance order (export and
 * bpe_counter_characters read it in one pass).  An open-addressing hash
 * (linear probing) maps bytes -> index; invariant: n * 2 <= slot count, so
 * a probe always meets an empty slot (BPE__NONE).  Each entry keeps its
 * hash, so growing never re-reads the bytes.
 *
 * Pieces.  Byte-level training cuts text with the gpt2 / cl100k / o200k
 * patterns, not str.split(): bpe_counter_add_pieces cuts with pretok.c's
 * scanners (the ones encoding uses) and counts what they cut in the same
 * table, so no piece ever becomes a Python str.
 *
 * Not here: other regular expressions, case folding, special tokens (the
 * caller handles those and passes words to bpe_counter_add_words, or texts
 * already cut at special tokens to bpe_counter_add_pieces).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "text_internal.h"

typedef struct {
    uint64_t hash;
    uint64_t head;     /* bpe__word_head of the word: its first (up to) 8 bytes */
    uint64_t count;
    size_t off, len;   /* the word's bytes in the arena */
} entry;

struct bpe_counter {
    char *arena;               /* every distinct word, back to back */
    size_t arena_len, arena_cap;
    entry *entries;            /* in first-appearance order */
    size_t n, cap;
    uint32_t *slots;           /* entry index, or BPE__NONE */
    size_t mask;               /* slot count - 1 (a power of two) */
};

/* Words found (and their slots prefetched) before any of them is counted. */
#define COUNT_BATCH 32

bpe_counter *bpe_counter_new(void)
{
    bpe_counter *c = calloc(1, sizeof *c);

    if (c == NULL)
        return NULL;
    if ((c->slots = bpe__slots_new(BPE__WORD_SLOTS)) == NULL) {
        free(c);
        return NULL;
    }
    c->mask = BPE__WORD_SLOTS - 1;
    return c;
}

void bpe_counter_free(bpe_counter *counter)
{
    if (counter == NULL)
        return;
    free(counter->arena);
    free(counter->entries);
    free(counter->slots);
    free(counter);
}

static int grow_slots(bpe_counter *c)
{
    return bpe__grow_slots(&c->slots, &c->mask, c->entries, c->n, sizeof *c->entries,
                           offsetof(entry, hash));
}

/* Appends a new word (known to be absent) with count `freq`.  On failure
 * the counter holds the same words (maybe with more spare room). */
static int insert(bpe_counter *c, const unsigned char *w, size_t len,
                  uint64_t h, uint64_t head, uint64_t freq)
{
    entry *e;
    size_t s;
    int status;

    if (c->n >= (size_t)BPE__NONE - 1)
        return BPE_ETOOBIG;  /* indices must stay below BPE__NONE */
    if (len > SIZE_MAX - c->arena_len)
        return BPE_ETOOBIG;
    if ((status = bpe__reserve((void **)&c->entries, &c->cap, c->n + 1,
                               sizeof *c->entries)) != BPE_OK ||
        (status = bpe__reserve((void **)&c->arena, &c->arena_cap,
                               c->arena_len + len, 1)) != BPE_OK)
        return status;
    if ((c->n + 1) * 2 > c->mask + 1 && (status = grow_slots(c)) != BPE_OK)
        return status;
    s = (size_t)h & c->mask;
    while (c->slots[s] != BPE__NONE)
        s = (s + 1) & c->mask;
    if (len != 0)
        memcpy(c->arena + c->arena_len, w, len);
    e = &c->entries[c->n];
    e->hash = h;
    e->head = head;
    e->count = freq;
    e->off = c->arena_len;
    e->len = len;
    c->arena_len += len;
    c->slots[s] = (uint32_t)c->n++;
    return BPE_OK;
}

/* Adds `freq` to the count of word w[0..len) (its hash and bpe__word_head),
 * recording it when new. */
static int count_hashed(bpe_counter *c, const unsigned char *w, size_t len,
                        uint64_t h, uint64_t head, uint64_t freq)
{
    size_t s = (size_t)h & c->mask;

    for (;;) {
        uint32_t id = c->slots[s];
        entry *e;
        if (id == BPE__NONE)
            return insert(c, w, len, h, head, freq);
        e = &c->entries[id];
        if (e->hash == h && e->head == head && e->len == len &&
            (len <= 8 ||
             memcmp(c->arena + e->off + 8, w + 8, len - 8) == 0)) {
            if (e->count > UINT64_MAX - freq)
                return BPE_EOVERFLOW;  /* a count never wraps */
            e->count += freq;
            return BPE_OK;
        }
        s = (s + 1) & c->mask;
    }
}

static int count_word(bpe_counter *c, const unsigned char *w, size_t len,
                      uint64_t freq)
{
    uint64_t head = bpe__word_head(w, len, len);

    return count_hashed(c, w, len, bpe__word_hash(w, len, head), head, freq);
}

/* Counts the n words start[i][0..wlen[i]) once each, in order; `end` is
 * the end of the buffer they lie in (bpe__word_head may read up to it).
 * Three passes, so the cache misses of a batch overlap instead of queueing
 * (the table is a few MB: on Shakespeare the entry loads were 70% of the
 * counting time before this): the first hashes the words and prefetches
 * their slots, the second prefetches the entries those slots name, the
 * third counts. */
static int count_batch(bpe_counter *c, const unsigned char *const *start,
                       const size_t *wlen, size_t n, const unsigned char *end)
{
    uint64_t hash[COUNT_BATCH], head[COUNT_BATCH];
    size_t i;
    int status;

    for (i = 0; i < n; i++) {
        head[i] = bpe__word_head(start[i], wlen[i], (size_t)(end - start[i]));
        hash[i] = bpe__word_hash(start[i], wlen[i], head[i]);
        PREFETCH(&c->slots[(size_t)hash[i] & c->mask]);
    }
    for (i = 0; i < n; i++) {  /* slots are in cache: fetch entries */
        uint32_t id = c->slots[(size_t)hash[i] & c->mask];
        if (id != BPE__NONE)
            PREFETCH(&c->entries[id]);
    }
    for (i = 0; i < n; i++) {
        /* count_hashed's first probe inline: most words are found there
         * (the call was ~10% of counting's instructions) */
        uint32_t id = c->slots[(size_t)hash[i] & c->mask];
        if (id != BPE__NONE) {
            entry *e = &c->entries[id];
            if (e->hash == hash[i] && e->head == head[i] && e->len == wlen[i] &&
                e->count != UINT64_MAX &&
                (wlen[i] <= 8 ||
                 memcmp(c->arena + e->off + 8, start[i] + 8, wlen[i] - 8) == 0)) {
                e->count++;
                continue;
            }
        }
        if ((status = count_hashed(c, start[i], wlen[i], hash[i], head[i], 1)))
            return status;
    }
    return BPE_OK;
}

/* The split loop: skip whitespace, take the run of other characters, and
 * count the words COUNT_BATCH at a time. */
int bpe_counter_add_text(bpe_counter *counter, const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    const unsigned char *start[COUNT_BATCH];
    size_t wlen[COUNT_BATCH], nchars, n;
    int status;

    if (counter == NULL || (text == NULL && len != 0))
        return BPE_EINVAL;
    if (len == 0)
        return BPE_OK;
    if (!bpe__utf8_validate(p, len, &nchars))
        return BPE_EINVAL;
    while (p < end) {
        for (n = 0; n < COUNT_BATCH; n++)
            if ((wlen[n] = bpe__next_word(&p, end, &start[n])) == 0)
                break;
        if ((status = count_batch(counter, start, wlen, n, end)) != BPE_OK)
            return status;
    }
    return BPE_OK;
}

/* The bytes of the first `chars` characters of validated UTF-8 at p, of
 * which `room` bytes may be read.  Eight ASCII bytes are eight characters:
 * most of a line of prose is skipped that way. */
static size_t char_bytes(const unsigned char *p, size_t chars, size_t room)
{
    const unsigned char *q = p, *end = p + room;
    uint64_t eight;

    while (chars >= 8 && end - q >= 8) {
        memcpy(&eight, q, 8);
        if ((eight & UINT64_C(0x8080808080808080)) != 0)
            break;
        q += 8;
        chars -= 8;
    }
    while (chars-- > 0)
        q += bpe__utf8_len(*q);
    return (size_t)(q - p);
}

/* Whether `text` is valid UTF-8 whose characters the `n` lengths (in
 * characters) tile exactly; *nchars is its length in characters.  Both
 * batch entry points below take their texts this way. */
static int lengths_tile(const unsigned char *text, size_t len, const size_t *lengths,
                        size_t n, size_t *nchars)
{
    size_t total = 0, i;

    if (!bpe__utf8_validate(text, len, nchars))
        return 0;
    for (i = 0; i < n; i++) {
        if (lengths[i] > *nchars - total)  /* (no overflow: total <= *nchars) */
            return 0;
        total += lengths[i];
    }
    return total == *nchars;
}

/* One text after another, each cut by the scanner alone: a text's end is
 * the end of the text for the pattern's look-aheads (`(?!\S)`, `$`), so
 * a piece never runs from one text into the next.  When the whole buffer
 * is ASCII, characters are bytes and the lengths need no walk. */
int bpe_counter_add_pieces(bpe_counter *counter, int preset, const char *text,
                           size_t len, const size_t *lengths, size_t n_texts)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    const unsigned char *start[COUNT_BATCH];
    size_t wlen[COUNT_BATCH], nchars, i, n = 0;
    int status, ascii;

    if (counter == NULL || (text == NULL && len != 0) ||
        (lengths == NULL && n_texts != 0) ||
        (preset != BPE_PRETOK_GPT2 && preset != BPE_PRETOK_CL100K &&
         preset != BPE_PRETOK_O200K))
        return BPE_EINVAL;
    if (!lengths_tile(p, len, lengths, n_texts, &nchars))
        return BPE_EINVAL;
    ascii = nchars == len;
    for (i = 0; i < n_texts; i++) {
        size_t tlen = ascii ? lengths[i] : char_bytes(p, lengths[i], (size_t)(end - p));
        size_t pos = 0;
        while (pos < tlen) {
            size_t next = bpe_pretok_next(preset, p, tlen, pos);
            if (next <= pos || next > tlen)
                return BPE_EINVAL;  /* (never: the scanners tile any text) */
            start[n] = p + pos;
            wlen[n++] = next - pos;
            pos = next;
            if (n == COUNT_BATCH) {
                if ((status = count_batch(counter, start, wlen, n, end)) != BPE_OK)
                    return status;
                n = 0;
            }
        }
        p += tlen;
    }
    return count_batch(counter, start, wlen, n, end);
}

int bpe_counter_add_words(bpe_counter *counter, const char *text, size_t len,
                          const size_t *lengths, size_t n_words,
                          const uint64_t *frequencies)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    size_t nchars, i, k;
    int status;

    if (counter == NULL || (text == NULL && len != 0) ||
        (lengths == NULL && n_words != 0))
        return BPE_EINVAL;
    if (!lengths_tile(p, len, lengths, n_words, &nchars))
        return BPE_EINVAL;
    for (i = 0; i < n_words; i++) {
        const unsigned char *start = p;
        for (k = 0; k < lengths[i]; k++)
            p += bpe__utf8_len(*p);
        status = count_word(counter, start, (size_t)(p - start),
                            frequencies != NULL ? frequencies[i] : 1);
        if (status != BPE_OK)
            return status;
    }
    return p == end ? BPE_OK : BPE_EINVAL;  /* (always equal: validated) */
}

size_t bpe_counter_size(const bpe_counter *counter)
{
    return counter == NULL ? 0 : counter->n;
}

size_t bpe_counter_bytes(const bpe_counter *counter)
{
    return counter == NULL ? 0 : counter->arena_len;
}

int bpe_counter_export(const bpe_counter *counter, char *bytes_out,
                       size_t *lengths_out, uint64_t *counts_out)
{
    size_t i, k;

    if (counter == NULL)
        return BPE_EINVAL;
    if (bytes_out != NULL && counter->arena_len != 0)
        memcpy(bytes_out, counter->arena, counter->arena_len);
    for (i = 0; i < counter->n; i++) {
        const entry *e = &counter->entries[i];
        if (lengths_out != NULL) {
            const unsigned char *w = (const unsigned char *)counter->arena + e->off;
            size_t n = 0;
            for (k = 0; k < e->len; k++)
                n += !bpe__utf8_is_cont(w[k]);
            lengths_out[i] = n;
        }
        if (counts_out != NULL)
            counts_out[i] = e->count;
    }
    return BPE_OK;
}

int bpe_counter_characters(const bpe_counter *counter, uint32_t **chars_out,
                           size_t *n_out)
{
    const uint32_t ncodes = 0x110000;
    const unsigned char *p, *end;
    unsigned char *seen;
    uint32_t *out = NULL, cp;
    size_t n = 0;

    if (counter == NULL || chars_out == NULL || n_out == NULL)
        return BPE_EINVAL;
    *chars_out = NULL;
    *n_out = 0;
    seen = calloc(ncodes / 8, 1);  /* one bit per code point */
    if (seen == NULL)
        return BPE_ENOMEM;
    p = (const unsigned char *)counter->arena;
    end = p + counter->arena_len;
    while (p < end) {  /* the arena is every word back to back */
        if (*p < 0x80) {  /* ASCII: no decoding */
            seen[*p >> 3] |= (unsigned char)(1u << (*p & 7));
            p++;
            continue;
        }
        cp = bpe__utf8_decode(p);
        seen[cp >> 3] |= (unsigned char)(1u << (cp & 7));
        p += bpe__utf8_len(*p);
    }
    /* Count, then list: whole empty bytes of the bitmap (most of its
     * 139,264) are skipped.  Walking all 0x110000 bits one by one was most
     * of this function's instructions on Shakespeare. */
    for (cp = 0; cp < ncodes; cp += 8) {
        unsigned bits = seen[cp >> 3];
        for (; bits != 0; bits &= bits - 1)
            n++;
    }
    if (n != 0) {
        out = malloc(n * sizeof *out);
        if (out == NULL) {
            free(seen);
            return BPE_ENOMEM;
        }
        n = 0;
        for (cp = 0; cp < ncodes; cp += 8) {
            uint32_t k;
            if (seen[cp >> 3] == 0)
                continue;
            for (k = 0; k < 8; k++)
                if (seen[cp >> 3] & (1u << k))
                    out[n++] = cp + k;
        }
    }
    free(seen);
    *chars_out = out;
    *n_out = n;
    return BPE_OK;
}

/* ---- word -> initial symbols (text_internal.h) ------------------------- */

/* The ID of one character's bytes c[0..k) (code point cp), with the marker
 * glued on when `suffix`. */
static uint32_t char_id(bpe__units *u, const unsigned char *c, size_t k,
                        uint32_t cp, int suffix)
{
    size_t slot;
    uint32_t id;

    if (cp < 128)
        return suffix ? u->ascii_suffix[cp] : u->ascii[cp];
    if (suffix) {
        memcpy(u->buf, c, k);
        memcpy(u->buf + k, u->marker, u->marker_len);
        return bpe_symtab_lookup(u->symtab, u->buf, k + u->marker_len);
    }
    slot = cp & (BPE__CHAR_CACHE - 1);
    if (u->cache_cp[slot] == cp)
        return u->cache_id[slot];
    id = bpe_symtab_lookup(u->symtab, (const char *)c, k);
    u->cache_cp[slot] = cp;
    u->cache_id[slot] = id;
    return id;
}

size_t bpe__word_units(bpe__units *u, const unsigned char *w, size_t len,
                       uint32_t *out)
{
    const unsigned char *p = w, *end = w + len;
    size_t n = 0;

    if (u->units == BPE_UNITS_BYTES) {
        for (; p < end; p++)
            out[n++] = u->byte_ids[*p];
        return n;
    }
    while (p < end) {
        size_t k = bpe__utf8_len(*p);
        int last = p + k == end;
        out[n++] = char_id(u, p, k, bpe__utf8_decode(p),
                           last && u->units == BPE_UNITS_SUFFIX);
        p += k;
    }
    if (u->units == BPE_UNITS_SYMBOL)
        out[n++] = u->marker_id;
    return n;
}

/* Fills the tables: byte_ids for BYTES, the ASCII ones otherwise; empties
 * the cache. */
static void init_units(bpe__units *u)
{
    char one[1];
    uint32_t b;

    for (b = 0; b < BPE__CHAR_CACHE; b++)
        u->cache_cp[b] = UINT32_MAX;
    if (u->units == BPE_UNITS_BYTES) {
        for (b = 0; b < 256; b++) {
            one[0] = (char)b;
            u->byte_ids[b] = bpe_symtab_lookup(u->symtab, one, 1);
        }
        return;
    }
    for (b = 0; b < 128; b++) {
        one[0] = (char)b;
        u->ascii[b] = bpe_symtab_lookup(u->symtab, one, 1);
        u->ascii_suffix[b] = BPE__NONE;
        if (u->units == BPE_UNITS_SUFFIX) {
            u->buf[0] = (char)b;
            memcpy(u->buf + 1, u->marker, u->marker_len);
            u->ascii_suffix[b] =
                bpe_symtab_lookup(u->symtab, u->buf, 1 + u->marker_len);
        }
    }
}

int bpe__units_check(int units, const char *marker, size_t *marker_len)
{
    if (units < BPE_UNITS_BYTES || units > BPE_UNITS_SYMBOL)
        return BPE_EINVAL;
    if (units == BPE_UNITS_BYTES || units == BPE_UNITS_CHARS)
        *marker_len = 0;
    else if (marker == NULL || *marker_len == 0)
        return BPE_EINVAL;
    return *marker_len > SIZE_MAX - 4 ? BPE_ETOOBIG : BPE_OK;
}

int bpe__units_open(bpe__units *u, const bpe_symtab *symtab, int units,
                    const char *marker, size_t marker_len)
{
    memset(u, 0, sizeof *u);
    u->symtab = symtab;
    u->units = units;
    u->marker = marker;
    u->marker_len = marker_len;
    u->marker_id = BPE_NO_SYMBOL;
    u->buf = malloc(4 + marker_len);
    u->cache_cp = malloc(BPE__CHAR_CACHE * sizeof *u->cache_cp);
    u->cache_id = malloc(BPE__CHAR_CACHE * sizeof *u->cache_id);
    if (u->buf == NULL || u->cache_cp == NULL || u->cache_id == NULL)
        return BPE_ENOMEM;
    init_units(u);
    if (units == BPE_UNITS_SYMBOL)
        u->marker_id = bpe_symtab_lookup(symtab, marker, marker_len);
    return BPE_OK;
}

void bpe__units_close(bpe__units *u)
{
    free(u->buf);
    free(u->cache_cp);
    free(u->cache_id);
}

/* ---- the initial word table ---------------------------------------------- */

/* The words go straight into the table's reserved room: building them in
 * arrays of our own and copying them with bpe_words_add_many touched ~6 MB
 * more fresh memory on Shakespeare (a page fault per 4 KB, ~1.5 us each). */
int bpe_counter_word_table(const bpe_counter *counter,
                           const bpe_symtab *symtab, int units,
                           const char *marker, size_t marker_len,
                           bpe_words *words)
{
    bpe__units u;
    size_t i;
    int status;

    if (counter == NULL || symtab == NULL || words == NULL)
        return BPE_EINVAL;
    if ((status = bpe__units_check(units, marker, &marker_len)) != BPE_OK)
        return status;
    if (counter->n > SIZE_MAX / 2 - 1 ||
        counter->arena_len > SIZE_MAX / sizeof *words->syms - counter->n - 1)
        return BPE_ETOOBIG;
    if ((status = bpe__units_open(&u, symtab, units, marker, marker_len)) == BPE_OK)
        /* A word has at most one symbol per byte, plus the SYMBOL marker. */
        status = bpe__words_reserve(words, counter->n, counter->arena_len + counter->n);
    if (status != BPE_OK) {
        bpe__units_close(&u);
        return status;
    }
    for (i = 0; i < counter->n; i++) {  /* (room reserved: nothing fails) */
        const entry *e = &counter->entries[i];
        size_t n = bpe__word_units(&u, (const unsigned char *)counter->arena + e->off,
                                   e->len, words->syms + words->nsyms);
        words->start[words->n] = words->nsyms;
        words->len[words->n] = n;
        words->freq[words->n] = e->count;
        words->nsyms += n;
        words->n++;
    }
    bpe__units_close(&u);
    return BPE_OK;
}
