/*
 * count.c -- word counting (str.split() semantics) and the initial word table.
 *
 * The first half of training, before listing 064's loop: the corpus becomes
 * its distinct words in order of first appearance, each with a count, and
 * then each distinct word becomes its initial symbols.  In Python this is
 * `Counter(text.split())` and a list comprehension per word; on a 9.5 MB
 * corpus those took longer than the whole incremental merge loop.
 *
 * Data structure.  Word i's bytes are arena[off[i] .. off[i] + len[i]);
 * words are appended to the arena in order, so the arena is also every
 * distinct word back to back in first-appearance order (export and
 * bpe_counter_characters read it in one pass).  An open-addressing hash
 * (linear probing) maps bytes -> index; invariant: n * 2 <= slot count, so
 * a probe always meets an empty slot (BPE__NONE).  Each entry keeps its
 * hash, so growing never re-reads the bytes.
 *
 * Not here: regular expressions, case folding, special tokens (the caller
 * handles those and passes words to bpe_counter_add_words).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "count.h"
#include "internal.h"

typedef struct {
    uint64_t hash;
    uint64_t head;     /* head_of the word: its first (up to) 8 bytes */
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

/* Slots of a new counter: a small table grows fast enough. */
#define INITIAL_SLOTS 1024
/* Direct-mapped cache of code point -> symbol ID in word_table for
 * characters beyond ASCII (ASCII has a full table). */
#define CHAR_CACHE 4096
/* Words found (and their slots prefetched) before any of them is counted. */
#define COUNT_BATCH 32

/* 1 for the ASCII characters str.split() treats as whitespace:
 * \t \n \v \f \r (9-13), the separators \x1c-\x1f (28-31) and space. */
static const unsigned char ascii_space[128] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
    1
};

/* Byte length of the UTF-8 sequence that starts with lead byte b (input is
 * validated first, so b is a lead byte). */
static size_t seq_len(unsigned char b)
{
    return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

/* Byte length of the whitespace character at p, 0 when p[0] starts some
 * other character.  p points into validated UTF-8, so a lead byte's
 * continuation bytes are there to read.  Beyond ASCII, Python's str.split()
 * splits at U+0085, U+00A0 (C2 xx), U+1680 (E1 9A 80), U+2000-U+200A,
 * U+2028, U+2029, U+202F (E2 80 xx), U+205F (E2 81 9F), U+3000 (E3 80 80):
 * Unicode's White_Space minus nothing, plus the four ASCII separators. */
static size_t space_at(const unsigned char *p)
{
    switch (p[0]) {
    case 0xC2:
        return p[1] == 0x85 || p[1] == 0xA0 ? 2 : 0;
    case 0xE1:
        return p[1] == 0x9A && p[2] == 0x80 ? 3 : 0;
    case 0xE2:
        if (p[1] == 0x80)
            return p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 ||
                   p[2] == 0xAF ? 3 : 0;
        return p[1] == 0x81 && p[2] == 0x9F ? 3 : 0;
    case 0xE3:
        return p[1] == 0x80 && p[2] == 0x80 ? 3 : 0;
    default:
        return p[0] < 0x80 ? ascii_space[p[0]] : 0;
    }
}

static int is_cont(unsigned char b)
{
    return (b & 0xC0) == 0x80;
}

/* Checks that s[0..len) is UTF-8 as str.encode("utf-8", "surrogatepass")
 * writes it (shortest forms, at most U+10FFFF, surrogates allowed) and
 * counts its characters into *nchars.  Returns 1 when valid. */
static int validate(const unsigned char *s, size_t len, size_t *nchars)
{
    size_t i = 0, n = 0;

    while (i < len) {
        unsigned char b = s[i];
        size_t k = seq_len(b);
        uint64_t eight;
        if (b < 0x80 && len - i >= 8) {  /* 8 ASCII bytes at once */
            memcpy(&eight, s + i, 8);
            if ((eight & UINT64_C(0x8080808080808080)) == 0) {
                i += 8;
                n += 8;
                continue;
            }
        }
        if (b >= 0x80) {
            if (b < 0xC2 || b > 0xF4 || len - i < k)
                return 0;
            if (!is_cont(s[i + 1]) || (k > 2 && !is_cont(s[i + 2])) ||
                (k > 3 && !is_cont(s[i + 3])))
                return 0;
            if ((b == 0xE0 && s[i + 1] < 0xA0) ||   /* overlong */
                (b == 0xF0 && s[i + 1] < 0x90) ||   /* overlong */
                (b == 0xF4 && s[i + 1] > 0x8F))     /* > U+10FFFF */
                return 0;
        }
        i += k;
        n++;
    }
    *nchars = n;
    return 1;
}

/* The code point of the (valid) sequence at p. */
static uint32_t decode(const unsigned char *p)
{
    switch (seq_len(p[0])) {
    case 1:
        return p[0];
    case 2:
        return (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
    case 3:
        return (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 |
               (p[2] & 0x3F);
    default:
        return (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
               (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
    }
}

static int little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;

    memcpy(&first, &one, 1);
    return first;  /* a constant to the compiler */
}

/* The first min(len, 8) bytes of w as an integer, zero-padded: the same
 * value for the same bytes whatever follows them in memory.  `room` is how
 * many bytes may be read from w (>= len).  Words of at most 8 bytes (most
 * of them) are compared by this value and their length alone. */
static uint64_t head_of(const unsigned char *w, size_t len, size_t room)
{
    uint64_t x = 0;
    size_t k = len < 8 ? len : 8;

    if (room < 8) {
        if (k != 0)
            memcpy(&x, w, k);
        return x;
    }
    memcpy(&x, w, 8);
    if (k == 8)
        return x;
    return little_endian() ? x & ((UINT64_C(1) << (8 * k)) - 1)
                           : x & ~(UINT64_MAX >> (8 * k));
}

/* The hash of a word from its head and length, FNV-style over the bytes
 * past the first 8, then a final mix so the low bits that pick the slot
 * are good. */
static uint64_t hash_word(const unsigned char *w, size_t len, uint64_t head)
{
    uint64_t h = (head ^ UINT64_C(0xcbf29ce484222325)) +
                 len * UINT64_C(0x9e3779b97f4a7c15);
    size_t i = 8;

    for (; i + 8 <= len; i += 8) {
        uint64_t chunk;
        memcpy(&chunk, w + i, 8);
        h = (h ^ chunk) * UINT64_C(0x100000001b3);
        h ^= h >> 29;
    }
    for (; i < len; i++)
        h = (h ^ w[i]) * UINT64_C(0x100000001b3);
    return bpe__mix64(h);
}

bpe_counter *bpe_counter_new(void)
{
    bpe_counter *c = calloc(1, sizeof *c);

    if (c == NULL)
        return NULL;
    c->slots = malloc(INITIAL_SLOTS * sizeof *c->slots);
    if (c->slots == NULL) {
        free(c);
        return NULL;
    }
    memset(c->slots, 0xff, INITIAL_SLOTS * sizeof *c->slots);
    c->mask = INITIAL_SLOTS - 1;
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

/* Doubles an open-addressing slot array over items[0..n), re-placing item i
 * by the uint64_t hash stored `hash_offset` bytes into it (items are
 * `stride` bytes apart).  Shared by the word counter and the per-call encode
 * cache.  On failure the old slots stay as they were. */
static int grow_slot_array(uint32_t **slots_io, size_t *mask_io, const void *items,
                           size_t n, size_t stride, size_t hash_offset)
{
    size_t nslots = (*mask_io + 1) * 2, i;
    uint32_t *slots;

    if (nslots > SIZE_MAX / sizeof *slots)
        return BPE_ETOOBIG;
    if ((slots = malloc(nslots * sizeof *slots)) == NULL)
        return BPE_ENOMEM;
    memset(slots, 0xff, nslots * sizeof *slots);
    for (i = 0; i < n; i++) {
        uint64_t hash;
        size_t s;

        memcpy(&hash, (const char *)items + i * stride + hash_offset, sizeof hash);
        s = (size_t)hash & (nslots - 1);
        while (slots[s] != BPE__NONE)
            s = (s + 1) & (nslots - 1);
        slots[s] = (uint32_t)i;
    }
    free(*slots_io);
    *slots_io = slots;
    *mask_io = nslots - 1;
    return BPE_OK;
}

static int grow_slots(bpe_counter *c)
{
    return grow_slot_array(&c->slots, &c->mask, c->entries, c->n, sizeof *c->entries,
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

/* Adds `freq` to the count of word w[0..len) (its hash and head_of),
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
    uint64_t head = head_of(w, len, len);

    return count_hashed(c, w, len, hash_word(w, len, head), head, freq);
}

/* The end of the word that starts at p (< end, not whitespace): the next
 * whitespace character or end.  ASCII is tested by table first. */
static const unsigned char *word_end(const unsigned char *p,
                                     const unsigned char *end)
{
    while (p < end) {
        if (*p < 0x80) {
            if (ascii_space[*p])
                break;
            p++;
        } else {
            if (space_at(p) != 0)
                break;
            p += seq_len(*p);
        }
    }
    return p;
}

/* str.split()'s step: skips the whitespace at *pp, then takes the word
 * there.  Sets *start to it, moves *pp past it and returns its length (> 0);
 * returns 0 (and *pp == end) when only whitespace was left.  Shared by
 * bpe_counter_add_text and bpe_encode_text, so both cut the same words. */
static size_t next_word(const unsigned char **pp, const unsigned char *end,
                        const unsigned char **start)
{
    const unsigned char *p = *pp;
    size_t k;

    while (p < end && (k = space_at(p)) != 0)
        p += k;
    *start = p;
    *pp = p == end ? end : word_end(p, end);
    return (size_t)(*pp - p);
}

/* The split loop: skip whitespace, take the run of other characters.
 * Words go through in batches of COUNT_BATCH: the first pass finds them,
 * hashes them and prefetches their slots, the second prefetches the entries
 * those slots name, the third counts them, so the cache misses of a batch
 * overlap instead of queueing (the table is a few MB: on Shakespeare the
 * entry loads were 70% of the counting time before this). */
int bpe_counter_add_text(bpe_counter *counter, const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    const unsigned char *start[COUNT_BATCH];
    size_t wlen[COUNT_BATCH], nchars, i, n;
    uint64_t hash[COUNT_BATCH], head[COUNT_BATCH];
    int status;

    if (counter == NULL || (text == NULL && len != 0))
        return BPE_EINVAL;
    if (len == 0)
        return BPE_OK;
    if (!validate(p, len, &nchars))
        return BPE_EINVAL;
    while (p < end) {
        for (n = 0; n < COUNT_BATCH; n++) {
            if ((wlen[n] = next_word(&p, end, &start[n])) == 0)
                break;
            head[n] = head_of(start[n], wlen[n], (size_t)(end - start[n]));
            hash[n] = hash_word(start[n], wlen[n], head[n]);
            PREFETCH(&counter->slots[(size_t)hash[n] & counter->mask]);
        }
        for (i = 0; i < n; i++) {  /* slots are in cache: fetch entries */
            uint32_t id = counter->slots[(size_t)hash[i] & counter->mask];
            if (id != BPE__NONE)
                PREFETCH(&counter->entries[id]);
        }
        for (i = 0; i < n; i++)
            if ((status = count_hashed(counter, start[i], wlen[i], hash[i],
                                       head[i], 1)))
                return status;
    }
    return BPE_OK;
}

int bpe_counter_add_words(bpe_counter *counter, const char *text, size_t len,
                          const size_t *lengths, size_t n_words,
                          const uint64_t *frequencies)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    size_t nchars, total = 0, i, k;
    int status;

    if (counter == NULL || (text == NULL && len != 0) ||
        (lengths == NULL && n_words != 0))
        return BPE_EINVAL;
    if (!validate(p, len, &nchars))
        return BPE_EINVAL;
    for (i = 0; i < n_words; i++) {  /* the lengths must tile the text */
        if (lengths[i] > nchars - total)
            return BPE_EINVAL;
        total += lengths[i];
    }
    if (total != nchars)
        return BPE_EINVAL;
    for (i = 0; i < n_words; i++) {
        const unsigned char *start = p;
        for (k = 0; k < lengths[i]; k++)
            p += seq_len(*p);
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
                n += !is_cont(w[k]);
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
        cp = decode(p);
        n += !(seen[cp >> 3] & (1u << (cp & 7)));
        seen[cp >> 3] |= (unsigned char)(1u << (cp & 7));
        p += seq_len(*p);
    }
    if (n != 0) {
        out = malloc(n * sizeof *out);
        if (out == NULL) {
            free(seen);
            return BPE_ENOMEM;
        }
        n = 0;
        for (cp = 0; cp < ncodes; cp++)
            if (seen[cp >> 3] & (1u << (cp & 7)))
                out[n++] = cp;
    }
    free(seen);
    *chars_out = out;
    *n_out = n;
    return BPE_OK;
}

/* What word_table needs to turn characters into symbol IDs: a full table
 * for ASCII (plain and with the marker glued on), a direct-mapped cache for
 * the rest, and a scratch buffer for "character + marker". */
typedef struct {
    const bpe_symtab *symtab;
    const char *marker;
    size_t marker_len;
    uint32_t ascii[128], ascii_suffix[128];
    uint32_t byte_ids[256];         /* BPE_UNITS_BYTES: ID of each byte */
    uint32_t *cache_cp, *cache_id;  /* CHAR_CACHE each; cp UINT32_MAX = empty */
    char *buf;                      /* 4 + marker_len bytes */
} units_ctx;

/* The ID of one character's bytes c[0..k) (code point cp), with the marker
 * glued on when `suffix`. */
static uint32_t char_id(units_ctx *u, const unsigned char *c, size_t k,
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
    slot = cp & (CHAR_CACHE - 1);
    if (u->cache_cp[slot] == cp)
        return u->cache_id[slot];
    id = bpe_symtab_lookup(u->symtab, (const char *)c, k);
    u->cache_cp[slot] = cp;
    u->cache_id[slot] = id;
    return id;
}

/* Writes the initial symbols of word w[0..len) to out (room for len + 1)
 * and returns how many. */
static size_t word_units(units_ctx *u, int units, uint32_t marker_id,
                         const unsigned char *w, size_t len, uint32_t *out)
{
    const unsigned char *p = w, *end = w + len;
    size_t n = 0;

    if (units == BPE_UNITS_BYTES) {
        for (; p < end; p++)
            out[n++] = u->byte_ids[*p];
        return n;
    }
    while (p < end) {
        size_t k = seq_len(*p);
        int last = p + k == end;
        out[n++] = char_id(u, p, k, decode(p),
                           last && units == BPE_UNITS_SUFFIX);
        p += k;
    }
    if (units == BPE_UNITS_SYMBOL)
        out[n++] = marker_id;
    return n;
}

/* Fills the tables: byte_ids for BYTES, the ASCII ones otherwise; empties
 * the cache. */
static void init_units(units_ctx *u, int units)
{
    char one[1];
    uint32_t b;

    for (b = 0; b < CHAR_CACHE; b++)
        u->cache_cp[b] = UINT32_MAX;
    if (units == BPE_UNITS_BYTES) {
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
        if (units == BPE_UNITS_SUFFIX) {
            u->buf[0] = (char)b;
            memcpy(u->buf + 1, u->marker, u->marker_len);
            u->ascii_suffix[b] =
                bpe_symtab_lookup(u->symtab, u->buf, 1 + u->marker_len);
        }
    }
}

/* Checks a units mode and its marker: BPE_EINVAL for an unknown mode or a
 * missing marker where one is needed, BPE_ETOOBIG for a marker too long to
 * build symbols with.  Modes without a marker get *marker_len = 0. */
static int units_check(int units, const char *marker, size_t *marker_len)
{
    if (units < BPE_UNITS_BYTES || units > BPE_UNITS_SYMBOL)
        return BPE_EINVAL;
    if (units == BPE_UNITS_BYTES || units == BPE_UNITS_CHARS)
        *marker_len = 0;
    else if (marker == NULL || *marker_len == 0)
        return BPE_EINVAL;
    return *marker_len > SIZE_MAX - 4 ? BPE_ETOOBIG : BPE_OK;
}

/* Allocates u's memory (check with units_ready; units_close either way). */
static void units_open(units_ctx *u, const bpe_symtab *symtab,
                       const char *marker, size_t marker_len)
{
    memset(u, 0, sizeof *u);
    u->symtab = symtab;
    u->marker = marker;
    u->marker_len = marker_len;
    u->buf = malloc(4 + marker_len);
    u->cache_cp = malloc(CHAR_CACHE * sizeof *u->cache_cp);
    u->cache_id = malloc(CHAR_CACHE * sizeof *u->cache_id);
}

static int units_ready(const units_ctx *u)
{
    return u->buf != NULL && u->cache_cp != NULL && u->cache_id != NULL;
}

static void units_close(units_ctx *u)
{
    free(u->buf);
    free(u->cache_cp);
    free(u->cache_id);
}

int bpe_counter_word_table(const bpe_counter *counter,
                           const bpe_symtab *symtab, int units,
                           const char *marker, size_t marker_len,
                           bpe_words *words)
{
    units_ctx u;
    uint32_t *syms = NULL, marker_id = BPE_NO_SYMBOL;
    size_t *offsets = NULL, i, total;
    uint64_t *freqs = NULL;
    int status = BPE_ENOMEM;

    if (counter == NULL || symtab == NULL || words == NULL)
        return BPE_EINVAL;
    if ((status = units_check(units, marker, &marker_len)) != BPE_OK)
        return status;
    status = BPE_ENOMEM;
    if (counter->n > SIZE_MAX / 2 - 1 ||
        counter->arena_len > SIZE_MAX / sizeof *syms - counter->n - 1)
        return BPE_ETOOBIG;
    units_open(&u, symtab, marker, marker_len);
    /* A word has at most one symbol per byte, plus the SYMBOL marker. */
    syms = malloc((counter->arena_len + counter->n + 1) * sizeof *syms);
    offsets = malloc((counter->n + 1) * sizeof *offsets);
    freqs = malloc((counter->n + 1) * sizeof *freqs);
    if (!units_ready(&u) || syms == NULL || offsets == NULL || freqs == NULL)
        goto cleanup;
    init_units(&u, units);
    if (units == BPE_UNITS_SYMBOL)
        marker_id = bpe_symtab_lookup(symtab, marker, marker_len);
    total = 0;
    for (i = 0; i < counter->n; i++) {
        const entry *e = &counter->entries[i];
        offsets[i] = total;
        total += word_units(&u, units, marker_id,
                            (const unsigned char *)counter->arena + e->off,
                            e->len, syms + total);
        freqs[i] = e->count;
    }
    offsets[counter->n] = total;
    status = bpe_words_add_many(words, syms, offsets, freqs, counter->n);
cleanup:
    units_close(&u);
    free(syms);
    free(offsets);
    free(freqs);
    return status;
}

/* ---- encoding text: split, initial symbols, merges, in one pass ----------- */

/* A distinct word of one bpe_encode_text call: its bytes (in the caller's
 * text) and where its IDs were first written in the output. */
typedef struct {
    uint64_t hash, head;
    const unsigned char *w;
    size_t len, off, n;
} seen_word;

/* The per-call word cache: open addressing over `words`, load <= 1/2. */
typedef struct {
    seen_word *words;
    size_t n, cap;
    uint32_t *slots;  /* index into words, or BPE__NONE */
    size_t mask;
} word_cache;

static int cache_grow(word_cache *c)
{
    return grow_slot_array(&c->slots, &c->mask, c->words, c->n, sizeof *c->words,
                           offsetof(seen_word, hash));
}

/* The cached word equal to w[0..len), or NULL; *slot_out is where it is or
 * where it would go. */
static const seen_word *cache_find(const word_cache *c, const unsigned char *w,
                                   size_t len, uint64_t h, uint64_t head,
                                   size_t *slot_out)
{
    size_t s = (size_t)h & c->mask;

    for (;; s = (s + 1) & c->mask) {
        uint32_t id = c->slots[s];
        const seen_word *e;
        if (id == BPE__NONE)
            break;
        e = &c->words[id];
        if (e->hash == h && e->head == head && e->len == len &&
            (len <= 8 || memcmp(e->w + 8, w + 8, len - 8) == 0))
            return e;
    }
    *slot_out = s;
    return NULL;
}

/* Records a word (known absent, its slot found by cache_find).  When the
 * cache is full it is simply not recorded: the cache is only a shortcut. */
static int cache_add(word_cache *c, size_t slot, const seen_word *e)
{
    int status;

    if (c->n >= (size_t)BPE__NONE - 1)
        return BPE_OK;
    if ((status = bpe__reserve((void **)&c->words, &c->cap, c->n + 1,
                               sizeof *c->words)) != BPE_OK)
        return status;
    if ((c->n + 1) * 2 > c->mask + 1) {
        if ((status = cache_grow(c)) != BPE_OK)
            return status;
        slot = (size_t)e->hash & c->mask;  /* re-probe in the new table */
        while (c->slots[slot] != BPE__NONE)
            slot = (slot + 1) & c->mask;
    }
    c->words[c->n] = *e;
    c->slots[slot] = (uint32_t)c->n++;
    return BPE_OK;
}

int bpe_encode_text(const bpe_merger *merger, const bpe_symtab *symtab,
                    int units, const char *marker, size_t marker_len,
                    uint32_t unk, int split, const char *text, size_t len,
                    uint32_t *out, size_t out_cap, size_t *n_out)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    units_ctx u;
    word_cache cache;
    bpe__applier *applier = NULL;
    uint32_t marker_id = BPE_NO_SYMBOL;
    size_t pos = 0, nchars;
    int status = BPE_ENOMEM;

    if (merger == NULL || symtab == NULL || n_out == NULL ||
        (text == NULL && len != 0) || (out == NULL && out_cap != 0))
        return BPE_EINVAL;
    *n_out = 0;
    if ((status = units_check(units, marker, &marker_len)) != BPE_OK)
        return status;
    status = BPE_ENOMEM;
    if (len == 0)
        return BPE_OK;
    if (!validate(p, len, &nchars))
        return BPE_EINVAL;
    memset(&cache, 0, sizeof cache);
    units_open(&u, symtab, marker, marker_len);
    cache.slots = malloc(INITIAL_SLOTS * sizeof *cache.slots);
    applier = bpe__applier_new();
    if (!units_ready(&u) || cache.slots == NULL || applier == NULL)
        goto cleanup;
    memset(cache.slots, 0xff, INITIAL_SLOTS * sizeof *cache.slots);
    cache.mask = INITIAL_SLOTS - 1;
    init_units(&u, units);
    if (units == BPE_UNITS_SYMBOL)
        marker_id = bpe_symtab_lookup(symtab, marker, marker_len);
    status = BPE_OK;
    while (p < end) {
        const unsigned char *w;
        size_t wlen, need, n, k, slot = 0;
        const seen_word *hit;
        seen_word e;
        if (split) {
            if ((wlen = next_word(&p, end, &w)) == 0)
                break;
        } else {  /* the whole text is one word */
            w = p;
            wlen = len;
            p = end;
        }
        e.head = head_of(w, wlen, (size_t)(end - w));
        e.hash = hash_word(w, wlen, e.head);
        if ((hit = cache_find(&cache, w, wlen, e.hash, e.head, &slot)) != NULL) {
            if (hit->n > out_cap - pos) {
                status = BPE_EINVAL;
                break;
            }
            memcpy(out + pos, out + hit->off, hit->n * sizeof *out);
            pos += hit->n;
            continue;
        }
        /* room for the initial symbols: one per unit, plus the marker */
        need = units == BPE_UNITS_SYMBOL;
        if (units == BPE_UNITS_BYTES)
            need = wlen;
        else
            for (k = 0; k < wlen; k++)
                need += !is_cont(w[k]);
        if (need > out_cap - pos) {
            status = BPE_EINVAL;
            break;
        }
        n = word_units(&u, units, marker_id, w, wlen, out + pos);
        if ((status = bpe__applier_run(applier, merger, out + pos, &n)) != BPE_OK)
            break;
        for (k = 0; k < n; k++)
            if (out[pos + k] == BPE_NO_SYMBOL)
                out[pos + k] = unk;
        e.w = w;
        e.len = wlen;
        e.off = pos;
        e.n = n;
        pos += n;
        if ((status = cache_add(&cache, slot, &e)) != BPE_OK)
            break;
    }
cleanup:
    units_close(&u);
    free(cache.words);
    free(cache.slots);
    bpe__applier_free(applier);
    if (status == BPE_OK)
        *n_out = pos;
    return status;
}
