/*
 * encode_text.c -- text -> IDs in one call, for BPETokenizer (text.h's
 * bpe_encode_text).  Text level: it reads UTF-8 and cuts words where
 * str.split() does.
 *
 * One word at a time, four steps: cut the next word (text_internal.h's
 * str.split() scanner, the same one counter.c counts with); look it up in
 * this call's word cache and, when it was seen before, copy the IDs it got
 * then; otherwise turn it into its initial symbols (counter.c's
 * bpe__word_units, the same ones training started from), apply the
 * merger's merges (merger.c's bpe__applier, which keeps its working memory
 * across words), replace what is still unknown by `unk`, and remember it.
 * Nothing outlives the call, so threads may encode with one shared merger
 * and symbol table at the same time.
 *
 * The cache maps a word's bytes (in the caller's text) to where its IDs were
 * first written in the output: prose repeats its words, and a repeated word
 * then costs one hash probe and a copy, not a merge.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "text_internal.h"

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
        if ((status = bpe__grow_slots(&c->slots, &c->mask, c->words, c->n,
                                      sizeof *c->words,
                                      offsetof(seen_word, hash))) != BPE_OK)
            return status;
        slot = (size_t)e->hash & c->mask;  /* re-probe in the new table */
        while (c->slots[slot] != BPE__NONE)
            slot = (slot + 1) & c->mask;
    }
    c->words[c->n] = *e;
    c->slots[slot] = (uint32_t)c->n++;
    return BPE_OK;
}

/* One call's state: how words become symbols and IDs, the cache, and the
 * output written so far, out[0..pos) of out_cap. */
typedef struct {
    const bpe_merger *merger;
    uint32_t unk;
    bpe__units units;
    word_cache cache;
    bpe__applier *applier;
    uint32_t *out;
    size_t pos, out_cap;
} encoder;

/* Allocates the call's memory.  BPE_OK or BPE_ENOMEM; encoder_close
 * either way. */
static int encoder_open(encoder *e, const bpe_merger *merger,
                        const bpe_symtab *symtab, int units,
                        const char *marker, size_t marker_len, uint32_t unk,
                        uint32_t *out, size_t out_cap)
{
    int status;

    memset(e, 0, sizeof *e);
    e->merger = merger;
    e->unk = unk;
    e->out = out;
    e->out_cap = out_cap;
    status = bpe__units_open(&e->units, symtab, units, marker, marker_len);
    e->cache.slots = bpe__slots_new(BPE__WORD_SLOTS);
    e->applier = bpe__applier_new();
    if (status != BPE_OK || e->cache.slots == NULL || e->applier == NULL)
        return BPE_ENOMEM;
    e->cache.mask = BPE__WORD_SLOTS - 1;
    return BPE_OK;
}

static void encoder_close(encoder *e)
{
    bpe__units_close(&e->units);
    free(e->cache.words);
    free(e->cache.slots);
    bpe__applier_free(e->applier);
}

/* How many initial symbols word w[0..len) has: one per byte or per
 * character, plus the marker of BPE_UNITS_SYMBOL. */
static size_t units_in(const encoder *e, const unsigned char *w, size_t len)
{
    size_t need = e->units.units == BPE_UNITS_SYMBOL, k;

    if (e->units.units == BPE_UNITS_BYTES)
        return len;
    for (k = 0; k < len; k++)
        need += !bpe__utf8_is_cont(w[k]);
    return need;
}

/* Encodes a word not seen before at out[pos..): initial symbols, merges,
 * unknown -> unk.  Sets *n_out to how many IDs it wrote.  BPE_EINVAL when
 * they might not fit in out_cap. */
static int encode_new_word(encoder *e, const unsigned char *w, size_t len,
                           size_t *n_out)
{
    uint32_t *ids = e->out + e->pos;
    size_t n, k;
    int status;

    if (units_in(e, w, len) > e->out_cap - e->pos)
        return BPE_EINVAL;
    n = bpe__word_units(&e->units, w, len, ids);
    if ((status = bpe__applier_run(e->applier, e->merger, ids, &n)) != BPE_OK)
        return status;
    for (k = 0; k < n; k++)
        if (ids[k] == BPE_NO_SYMBOL)
            ids[k] = e->unk;
    *n_out = n;
    return BPE_OK;
}

/* Appends the IDs of word w[0..len) to the output: a copy of its first
 * IDs when the call has seen it, else encode_new_word's and a cache entry.
 * `room` is how many bytes may be read from w (for the word's head). */
static int encode_word(encoder *e, const unsigned char *w, size_t len,
                       size_t room)
{
    const seen_word *hit;
    seen_word rec;
    size_t slot = 0;
    int status;

    rec.head = bpe__word_head(w, len, room);
    rec.hash = bpe__word_hash(w, len, rec.head);
    if ((hit = cache_find(&e->cache, w, len, rec.hash, rec.head, &slot)) != NULL) {
        if (hit->n > e->out_cap - e->pos)
            return BPE_EINVAL;
        memcpy(e->out + e->pos, e->out + hit->off, hit->n * sizeof *e->out);
        e->pos += hit->n;
        return BPE_OK;
    }
    if ((status = encode_new_word(e, w, len, &rec.n)) != BPE_OK)
        return status;
    rec.w = w;
    rec.len = len;
    rec.off = e->pos;
    e->pos += rec.n;
    return cache_add(&e->cache, slot, &rec);
}

int bpe_encode_text(const bpe_merger *merger, const bpe_symtab *symtab,
                    int units, const char *marker, size_t marker_len,
                    uint32_t unk, int split, const char *text, size_t len,
                    uint32_t *out, size_t out_cap, size_t *n_out)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len, *w;
    encoder e;
    size_t nchars, wlen;
    int status;

    if (merger == NULL || symtab == NULL || n_out == NULL ||
        (text == NULL && len != 0) || (out == NULL && out_cap != 0))
        return BPE_EINVAL;
    *n_out = 0;
    if ((status = bpe__units_check(units, marker, &marker_len)) != BPE_OK)
        return status;
    if (len == 0)
        return BPE_OK;
    if (!bpe__utf8_validate(p, len, &nchars))
        return BPE_EINVAL;
    status = encoder_open(&e, merger, symtab, units, marker, marker_len, unk,
                          out, out_cap);
    if (status == BPE_OK && !split)  /* the whole text is one word */
        status = encode_word(&e, p, len, len);
    while (status == BPE_OK && split &&
           (wlen = bpe__next_word(&p, end, &w)) != 0)
        status = encode_word(&e, w, wlen, (size_t)(end - w));
    if (status == BPE_OK)
        *n_out = e.pos;
    encoder_close(&e);
    return status;
}
