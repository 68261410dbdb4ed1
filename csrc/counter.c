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
#include "train_core.h"

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

/* ---- str.split() a block of 64 bytes at a time ---------------------------
 *
 * The word loop of bpe__next_word (skip whitespace, find the word's end)
 * costs a branch or two per byte of whitespace and a mispredicted exit per
 * word: ~50 instructions a word, a third of counting Shakespeare.  Here 64
 * bytes become one mask of whitespace (bit i for byte i), SWAR eight bytes
 * at a time, and the words are the runs of 0 bits: w ^ (w << 1) marks each
 * place a run starts or stops, and the marks are read off with ctz, ~10
 * instructions a word.  ASCII whitespace is 9-13 and 28-32 (str.split's);
 * a block holding a byte >= 0x80 also marks the characters bpe__space_at
 * finds (U+0085, U+00A0, U+1680, U+2000...), which may spill over into the
 * next block.  Little-endian only (the masks number bytes in load order);
 * elsewhere bpe__next_word does it all. */
#define SCAN_BLOCK 64

static inline unsigned ctz64(uint64_t x)
{
#if defined(__GNUC__)
    return (unsigned)__builtin_ctzll(x);
#else
    unsigned k = 0;
    while ((x & 1) == 0) {
        x >>= 1;
        k++;
    }
    return k;
#endif
}

/* Bit i = bit 7 of byte i of x, for a little-endian load x: the byte flags
 * gathered by one multiplication (no two products meet). */
static inline uint64_t gather8(uint64_t flags)
{
    return (((flags >> 7) & UINT64_C(0x0101010101010101)) *
            UINT64_C(0x0102040810204080)) >> 56;
}

/* Bit 7 of each byte of x that is ASCII whitespace for str.split(): 9-13
 * or 28-32.  x7 + (0x80 - k) sets bit 7 exactly when x7 >= k and never
 * carries into the next byte (x7 <= 0x7F). */
static inline uint64_t ascii_space8(uint64_t x)
{
    const uint64_t low7 = UINT64_C(0x7F7F7F7F7F7F7F7F);
    const uint64_t x7 = x & low7;
    const uint64_t ge9 = x7 + UINT64_C(0x7777777777777777);
    const uint64_t ge14 = x7 + UINT64_C(0x7272727272727272);
    const uint64_t ge28 = x7 + UINT64_C(0x6464646464646464);
    const uint64_t ge33 = x7 + UINT64_C(0x5F5F5F5F5F5F5F5F);

    return ((ge9 & ~ge14) | (ge28 & ~ge33)) & ~x & UINT64_C(0x8080808080808080);
}

/* The whitespace mask of the 64 bytes at b (validated UTF-8, whose
 * characters are whole in the buffer b lies in).  *spill: on entry the
 * bytes of a whitespace character begun in the block before, as low bits;
 * on exit those of one begun here that run on past byte 63. */
static uint64_t space_mask(const unsigned char *b, uint64_t *spill)
{
    uint64_t space = *spill, high = 0, x;
    unsigned k;

    for (k = 0; k < SCAN_BLOCK / 8; k++) {
        memcpy(&x, b + 8 * k, 8);
        space |= gather8(ascii_space8(x)) << (8 * k);
        high |= x;
    }
    *spill = 0;
    if ((high & UINT64_C(0x8080808080808080)) == 0)
        return space;
    for (k = 0; k < SCAN_BLOCK / 8; k++) {  /* the lead bytes, by bpe__space_at */
        uint64_t leads;
        memcpy(&x, b + 8 * k, 8);
        /* bytes >= 0xC0: lead bytes of two bytes or more */
        leads = gather8(x & (x << 1) & UINT64_C(0x8080808080808080)) << (8 * k);
        while (leads != 0) {
            unsigned i = ctz64(leads);
            size_t n = bpe__space_at(b + i);
            leads &= leads - 1;
            if (n != 0) {
                uint64_t bits = ((UINT64_C(1) << n) - 1);  /* n <= 3 */
                space |= bits << i;
                if (i + n > SCAN_BLOCK)
                    *spill = bits >> (SCAN_BLOCK - i);
            }
        }
    }
    return space;
}

/* The split loop, a block at a time: words go to count_batch COUNT_BATCH
 * at a time.  The last bytes (fewer than 64) are copied into a block
 * padded with spaces. */
static int add_text_blocks(bpe_counter *c, const unsigned char *text,
                           const unsigned char *end)
{
    const unsigned char *start[COUNT_BATCH], *from = text, *word = NULL;
    unsigned char pad[SCAN_BLOCK + 4];
    size_t wlen[COUNT_BATCH], n = 0;
    uint64_t spill = 0, inword = 0;  /* is the byte before `from` in a word? */
    int status;

    while (from < end) {
        size_t room = (size_t)(end - from);
        const unsigned char *b = from;
        uint64_t words, edges;
        if (room < SCAN_BLOCK) {
            memset(pad, ' ', sizeof pad);
            memcpy(pad, from, room);
            b = pad;
        }
        words = ~space_mask(b, &spill);  /* (the pad's spaces end a last word) */
        edges = words ^ (words << 1 | inword);
        inword = words >> (SCAN_BLOCK - 1);
        while (edges != 0) {  /* a start, then an end (maybe a block later) */
            const unsigned char *at;
            if (word == NULL) {
                word = from + ctz64(edges);
                if ((edges &= edges - 1) == 0)
                    break;
            }
            at = from + ctz64(edges);
            edges &= edges - 1;
            start[n] = word;
            wlen[n++] = (size_t)(at - word);
            word = NULL;
            if (n == COUNT_BATCH) {
                if ((status = count_batch(c, start, wlen, n, end)) != BPE_OK)
                    return status;
                n = 0;
            }
        }
        from += room < SCAN_BLOCK ? room : SCAN_BLOCK;
    }
    if (word != NULL) {  /* (a word that runs to the end of a block of 64) */
        start[n] = word;
        wlen[n++] = (size_t)(end - word);
    }
    return count_batch(c, start, wlen, n, end);
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
    if (bpe__little_endian())
        return add_text_blocks(counter, p, end);
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

/* ---- the trainer, straight from the words ---------------------------------- */

/* Nodes have room for one symbol per byte plus the SYMBOL marker per word:
 * pages of the array never written cost nothing. */
bpe_trainer *bpe_counter_trainer(const bpe_counter *counter, bpe_symtab *symtab,
                                 int units, const char *marker,
                                 size_t marker_len, uint64_t min_frequency,
                                 uint32_t max_token_units, int *status)
{
    bpe__units u;
    bpe__node *nodes = NULL;
    uint64_t *freq = NULL;
    uint32_t *syms = NULL;
    size_t i, total = 0, longest = 0;
    int st = BPE_EINVAL;

    if (counter == NULL || symtab == NULL || min_frequency < 1)
        goto fail;
    if ((st = bpe__units_check(units, marker, &marker_len)) != BPE_OK)
        goto fail;
    st = BPE_ETOOBIG;
    if (counter->n >= BPE__NONE ||
        counter->arena_len > SIZE_MAX / sizeof *nodes - counter->n - 1)
        goto fail;
    for (i = 0; i < counter->n; i++)
        longest = counter->entries[i].len > longest ? counter->entries[i].len : longest;
    st = BPE_ENOMEM;
    nodes = malloc((counter->arena_len + counter->n + 1) * sizeof *nodes);
    freq = malloc((counter->n + 1) * sizeof *freq);
    syms = malloc((longest + 1) * sizeof *syms);
    if (nodes == NULL || freq == NULL || syms == NULL)
        goto fail;
    if ((st = bpe__units_open(&u, symtab, units, marker, marker_len)) != BPE_OK) {
        bpe__units_close(&u);
        goto fail;
    }
    for (i = 0; i < counter->n; i++) {
        const entry *e = &counter->entries[i];
        size_t n = bpe__word_units(&u, (const unsigned char *)counter->arena + e->off,
                                   e->len, syms);
        freq[i] = e->count;
        total = bpe__train_lay_word(nodes, total, syms, n, i);
    }
    bpe__units_close(&u);
    free(syms);
    syms = NULL;
    if (total >= BPE__NONE) {
        st = BPE_ETOOBIG;
        goto fail;
    }
    return bpe__trainer_from_nodes(symtab, nodes, total, freq, min_frequency,
                                   max_token_units, status);
fail:
    free(nodes);
    free(freq);
    free(syms);
    if (status != NULL)
        *status = st;
    return NULL;
}
