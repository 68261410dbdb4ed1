/*
 * ranks.c -- encoding by rank, the way tiktoken does it (text.h), at the
 * text level: UTF-8 text cut into pieces by pretok.c or by the caller is
 * encoded piece by piece -- the piece cache first (piece_cache.h: the
 * caller's, which lives across calls, or one of the call's own), then the
 * call's spill cache, the whole piece as one token, and only then merging
 * (ranks_merge.c).  Whole texts, batches, and batches that threads share.
 * Mirrors pybpe/core/spec/ranks.py, its specification: same tables, same
 * results.  The table is built by ranks_build.c and stays read-only, so
 * threads share it without a lock; nothing here knows Unicode.  What was
 * measured along the way, and the dead ends: csrc/NOTES.md.
 */
#include "ranks_internal.h"

/* ranks.h publishes the merge engine's threshold for the Python side. */
typedef char rk_threshold_is_the_engines
    [BPE_RANKS_HEAP_THRESHOLD == BPE__MERGE_HEAP_THRESHOLD ? 1 : -1];

/* The part of encoding a piece the piece cache could not answer: p =
 * text + pos, 2 <= len, `key` its rk_key_of, the cache asked already (its
 * tok table too when r->whole_piece and len <= 8).  Then the call's spill
 * cache (pieces with too many IDs for the piece cache, or too long), the
 * whole piece as one token (tiktoken's rule), merging; what the caches did
 * not know goes into one of them. */
static int rk_encode_piece_miss(const bpe_ranks *r, const unsigned char *text,
                                size_t text_len, size_t pos, size_t len, const rk_key *key,
                                bpe_piece_cache *c, rk_scratch *s, uint32_t *out,
                                size_t produced, size_t *count)
{
    const unsigned char *p = text + pos;
    uint32_t *dst = out + produced;
    rk_spill_entry *spill;
    int status;
    *count = 0;
    if (s->spill && len <= RK_SPILL_MAX_PIECE) {
        spill = &s->spill[(size_t)(key->hash >> 32) & (s->spill_slots - 1)];
        if (spill->len == len && spill->head == key->head && spill->tail == key->tail &&
            (len <= 16 ||
             memcmp(text + (size_t)spill->text_pos + 8, p + 8, len - 16) == 0)) {
            uint32_t j; /* never overlapping: the entry's IDs end before dst */
            for (j = 0; j < spill->count; j++)
                dst[j] = out[(size_t)spill->out_pos + j];
            *count = spill->count;
            return BPE_OK;
        }
    }
    if (r->whole_piece && rk_maybe_token(r, key->hash)) {
        uint32_t k = rk_lookup_key(r, p, len, key);
        if (k != RK_NONE) {
            *dst = rk_id(r, k);
            *count = 1;
            c->stats[BPE_PIECE_CACHE_TOKEN_LOOKUPS]++;
            if (len <= 8)
                bpe__pc_tok_put(c, key->hash, key->head, len, *dst, 0);
            else if (len <= BPE__PC_LONG_BYTES)
                bpe__pc_put(c, key->hash, p, len, key->head, key->tail, dst, 1, 0);
            return BPE_OK;
        }
    }
    status = bpe__ranks_merge_cut(r, text, text_len, pos, len, c, s, dst, count);
    c->stats[BPE_PIECE_CACHE_MERGES]++;
    if (status != BPE_OK || len > RK_SPILL_MAX_PIECE)
        return status;
    if (len <= BPE__PC_LONG_BYTES && *count <= BPE__PC_LONG_IDS) {
        bpe__pc_put(c, key->hash, p, len, key->head, key->tail, dst, *count, 1);
    } else if (pos <= UINT32_MAX && produced <= UINT32_MAX) {
        if (!s->spill && !(s->spill = calloc(s->spill_slots, sizeof *s->spill)))
            return BPE_ENOMEM;
        spill = &s->spill[(size_t)(key->hash >> 32) & (s->spill_slots - 1)];
        spill->head = key->head;
        spill->tail = key->tail;
        spill->len = (uint32_t)len;
        spill->text_pos = (uint32_t)pos;
        spill->out_pos = (uint32_t)produced;
        spill->count = (uint32_t)*count;
    }
    return status;
}

/* Encodes the piece text[pos..pos+len) to out[produced..]; *count gets the
 * number of IDs.  text[0..text_len) is the whole buffer (rk_key_of may read
 * up to 8 bytes of it at once).  Order of attempts: one byte; the piece
 * cache (piece_cache.h), asked before the token table: a piece that is not
 * a token would otherwise probe the table in vain (a cache miss) every time
 * it comes back; then rk_encode_piece_miss.  rk_encode_piece has the
 * pieces of 2-16 bytes. */
static int rk_encode_piece_rest(const bpe_ranks *r, const unsigned char *text,
                                size_t text_len, size_t pos, size_t len, bpe_piece_cache *c,
                                rk_scratch *s, uint32_t *out, size_t produced, size_t *count)
{
    const unsigned char *p = text + pos;
    uint32_t *dst = out + produced;
    rk_key key;
    *count = 0;
    if (len == 0)
        return BPE_OK;
    if (len == 1) {
        uint32_t k = r->byte_part[p[0]];
        if (k >= r->n_tokens)
            return BPE_EINVAL; /* a byte with no token */
        *dst = rk_id(r, k);
        *count = 1;
        return BPE_OK;
    }
    if (len > r->max_token_len && len > RK_SPILL_MAX_PIECE) {
        /* no token, never cached: skip hashing it (1 MB: ~1 ms) */
        c->stats[BPE_PIECE_CACHE_MERGES]++;
        return bpe__ranks_merge_cut(r, text, text_len, pos, len, c, s, dst, count);
    }
    key = rk_key_of(p, len, text + text_len);
    if (len <= BPE__PC_LONG_BYTES &&
        (*count = bpe__pc_get(c, key.hash, p, len, key.head, key.tail, dst)) != 0)
        return BPE_OK;
    return rk_encode_piece_miss(r, text, text_len, pos, len, &key, c, s, out, produced, count);
}

/* rk_encode_piece_rest, with its common cases inline in the callers'
 * loops: one byte, and pieces of 2-16 bytes the piece cache knows. */
static inline int rk_encode_piece(const bpe_ranks *r, const unsigned char *text,
                                  size_t text_len, size_t pos, size_t len, bpe_piece_cache *c,
                                  rk_scratch *s, uint32_t *out, size_t produced, size_t *count)
{
    /* The hot path first, where it can be inlined in the callers' loops:
     * two pieces in three of Shakespeare are short whole tokens the cache
     * knows (319,000 of 476,000 per 2 MB), and each paid the call of the
     * large function below (its prologue saving six registers).  Pieces of
     * up to 16 bytes the cache knows otherwise (two or three IDs; Python's
     * runs of spaces) are a quarter of Python source's pieces: asked here
     * too, with the key computed once, and a miss passes the key on.
     *   One-byte pieces (a comma, a newline: a fifth of Shakespeare's
     * pieces) take the same way, through the token entries, where they
     * are put the first time.  They had a branch of their own, and one
     * piece in four taking it at random cost more than the few
     * instructions byte_part saves (csrc/NOTES.md: "One-byte pieces"). */
    if (len - 1 < 16) { /* 1 <= len <= 16 */
        rk_key key = rk_key_of(text + pos, len, text + text_len);
        size_t n;
        if (len <= 8 && r->whole_piece) {
            uint32_t id = bpe__pc_tok_get(c, key.hash, key.head, len);
            if (id != BPE__PC_NONE) {
                out[produced] = id;
                *count = 1;
                return BPE_OK;
            }
        }
        if (len == 1) {
            /* The byte's part; a byte with no token is the call's error. */
            uint32_t k = r->byte_part[text[pos]];
            if (k >= r->n_tokens)
                return BPE_EINVAL;
            out[produced] = rk_id(r, k);
            *count = 1;
            if (r->whole_piece)
                bpe__pc_tok_put(c, key.hash, key.head, 1, out[produced], 1);
            return BPE_OK;
        }
        n = bpe__pc_get(c, key.hash, text + pos, len, key.head, key.tail, out + produced);
        if (n != 0) {
            *count = n;
            return BPE_OK;
        }
        return rk_encode_piece_miss(r, text, text_len, pos, len, &key, c, s, out, produced,
                                    count);
    }
    return rk_encode_piece_rest(r, text, text_len, pos, len, c, s, out, produced, count);
}

/* A cache of the call's own, for the entry points without one: sized to the
 * text, so a call on a handful of bytes does not pay for clearing a large
 * one.  Units of 64 bytes: one per 32 bytes of text, 16 to 16,384 (the
 * per-call caches before the cross-call one held 16,384 entries of each
 * kind; on o200k prose 65,536 were no better). */
static int rk_call_cache(bpe_piece_cache *c, size_t text_len)
{
    size_t units = BPE__PC_MIN_UNITS;
    while (units < 16384 && units * 32 < text_len)
        units *= 2;
    return bpe__pc_init(c, units);
}

/* Byte length of the first `chars` UTF-8 characters of p[0..avail). */
static int rk_utf8_span(const unsigned char *p, size_t avail, size_t chars,
                        size_t *len_out)
{
    size_t pos = 0;
    while (chars-- > 0) {
        unsigned char b;
        size_t step;
        if (pos >= avail)
            return BPE_EINVAL;
        b = p[pos];
        step = bpe__utf8_lead_len(b); /* 0: a continuation or bad byte */
        if (step == 0 || step > avail - pos)
            return BPE_EINVAL;
        pos += step;
    }
    *len_out = pos;
    return BPE_OK;
}

int bpe_ranks_encode(const bpe_ranks *r, const unsigned char *text,
                     size_t text_len, const uint32_t *lens, size_t n_pieces,
                     int lens_in_chars, uint32_t *out, size_t *n_out)
{
    rk_scratch s;
    bpe_piece_cache c;
    size_t pos = 0, produced = 0, i;
    int status = BPE_OK;
    if (!r || !n_out || (text_len && (!text || !out)) || (n_pieces && !lens))
        return BPE_EINVAL;
    *n_out = 0;
    if ((status = rk_call_cache(&c, text_len)) != BPE_OK)
        return status;
    rk_scratch_init(&s, text_len);
    for (i = 0; i < n_pieces; i++) {
        size_t len = lens[i], count = 0;
        if (lens_in_chars) {
            if ((status = rk_utf8_span(text + pos, text_len - pos, lens[i], &len)) != BPE_OK)
                goto cleanup;
        } else if (len > text_len - pos) {
            status = BPE_EINVAL;
            goto cleanup;
        }
        status = rk_encode_piece(r, text, text_len, pos, len, &c, &s, out, produced, &count);
        if (status != BPE_OK)
            goto cleanup;
        produced += count;
        pos += len;
    }
    if (pos != text_len)
        status = BPE_EINVAL;
cleanup:
    rk_scratch_done(&s);
    bpe__pc_done(&c);
    *n_out = produced;
    return status;
}

/* Pieces cut per call of the scanner: one call per piece cost ~4% of an
 * encode (the call through the PLT, the dispatch on the pattern), and a run
 * of pieces lets pretok.c classify 64 bytes at once. */
#define RK_CUT 128

/* Cuts text[start..end) with `pattern` and encodes every piece to
 * out[*produced..], advancing *produced. */
static int rk_encode_span(const bpe_ranks *r, int pattern, const unsigned char *text,
                          size_t text_len, size_t start, size_t end, bpe_piece_cache *c,
                          rk_scratch *s, uint32_t *out, size_t *produced)
{
    /* `at` is *produced kept in a register: the cache's one-byte counts,
     * written on every hit, may alias anything for the compiler. */
    size_t pos = start, at = *produced, ends[RK_CUT];
    int status = BPE_OK;
    while (pos < end && status == BPE_OK) {
        size_t n = bpe__pretok_cut(pattern, text + start, end - start, pos - start, ends, RK_CUT),
               k;
        if (n == 0)
            return BPE_EINVAL; /* unknown pattern */
        for (k = 0; k < n; k++) {
            size_t stop = start + ends[k], count = 0;
            status = rk_encode_piece(r, text, text_len, pos, stop - pos, c, s, out, at, &count);
            if (status != BPE_OK)
                break;
            at += count;
            pos = stop;
        }
    }
    *produced = at;
    return status;
}

int bpe_ranks_encode_text(const bpe_ranks *r, int pattern,
                          const unsigned char *text, size_t text_len,
                          uint32_t *out, size_t *n_out)
{
    size_t one_end = text_len, out_end = 0;
    int status;
    if (!n_out)
        return BPE_EINVAL;
    status = bpe_ranks_encode_batch(r, pattern, text, text_len, &one_end, 1, out, &out_end);
    *n_out = out_end;
    return status;
}

/* bpe_ranks_encode_cached's checks, then its loop over the texts, with
 * cache c (never NULL here). */
static int rk_encode_texts(const bpe_ranks *r, bpe_piece_cache *c, int pattern,
                           const unsigned char *text, size_t text_len,
                           const size_t *text_ends, size_t n_texts,
                           uint32_t *out, size_t *out_ends)
{
    rk_scratch s;
    size_t start = 0, produced = 0, i;
    int status = BPE_OK;
    rk_scratch_init(&s, text_len);
    for (i = 0; i < n_texts; i++) {
        status = rk_encode_span(r, pattern, text, text_len, start, text_ends[i], c, &s, out,
                                &produced);
        if (status != BPE_OK)
            break;
        out_ends[i] = produced;
        start = text_ends[i];
    }
    rk_scratch_done(&s);
    return status;
}

/* The argument checks of both batch entry points. */
static int rk_check_batch(const bpe_ranks *r, const unsigned char *text, size_t text_len,
                          const size_t *text_ends, size_t n_texts, const uint32_t *out,
                          size_t *out_ends)
{
    size_t i;
    if (!r || (text_len && (!text || !out)) || (n_texts && (!text_ends || !out_ends)))
        return BPE_EINVAL;
    for (i = 0; i < n_texts; i++) {
        out_ends[i] = 0;
        if (text_ends[i] < (i ? text_ends[i - 1] : 0) || text_ends[i] > text_len)
            return BPE_EINVAL;
    }
    if (n_texts && text_ends[n_texts - 1] != text_len)
        return BPE_EINVAL;
    return BPE_OK;
}

int bpe_ranks_encode_batch(const bpe_ranks *r, int pattern,
                           const unsigned char *text, size_t text_len,
                           const size_t *text_ends, size_t n_texts,
                           uint32_t *out, size_t *out_ends)
{
    bpe_piece_cache c;
    int status = rk_check_batch(r, text, text_len, text_ends, n_texts, out, out_ends);
    if (status != BPE_OK || n_texts == 0)
        return status;
    if ((status = rk_call_cache(&c, text_len)) != BPE_OK)
        return status;
    status = rk_encode_texts(r, &c, pattern, text, text_len, text_ends, n_texts, out, out_ends);
    bpe__pc_done(&c);
    return status;
}

int bpe_ranks_encode_cached(const bpe_ranks *r, bpe_piece_cache *cache, int pattern,
                            const unsigned char *text, size_t text_len,
                            const size_t *text_ends, size_t n_texts,
                            uint32_t *out, size_t *out_ends)
{
    int status = rk_check_batch(r, text, text_len, text_ends, n_texts, out, out_ends);
    if (status != BPE_OK)
        return status;
    if (!cache || (cache->owner && cache->owner != (const void *)r))
        return BPE_EINVAL;
    cache->owner = r;
    bpe__pc_warm(cache, text_len); /* a cache that lives across calls may have gone cold */
    return rk_encode_texts(r, cache, pattern, text, text_len, text_ends, n_texts, out, out_ends);
}

/* ---- One batch shared by threads (text.h, bpe_ranks_encode_shared) ----
 *
 * Why: two threads with one static slice each (pybpe/encoding.py before)
 * ran at 1.44-1.62x one thread on 10 KB documents.  The two C calls of one
 * batch ran at speeds 10-25% apart (the other core's neighbours, cache
 * misses), so one thread waited ~0.5 ms at the end, and more, smaller static
 * slices cost more than they saved (each its own call, GIL crossing and
 * cold start).  Taking runs of ~16 KB from a shared cursor inside one call
 * per thread lets the faster thread do more, with no extra call.
 *
 * The cursor needs an atomic add.  C99 has none, so it is the GCC/Clang
 * __atomic builtins where the compiler has them (feature test below; they
 * need no flag, also under -std=c99 -pedantic); elsewhere, and with
 * BPE_BATCH_STATIC (tests run both), worker w takes the fixed runs w,
 * w + n, ... instead.  Each text's IDs have a region of their own (its
 * byte range of out), so nothing else is shared: out_ends[i] is stored with
 * release order once text i is done, so a thread that reads it with
 * acquire order (bpe_batch_ready) may read those IDs.
 *
 * Measured (tools/bench_batch_threads.py --rounds 7 under chrt -r 1, the
 * build before and this one in alternating processes, 3 runs each, sha256
 * control 2.05-2.16x): 2 threads / 1 thread 1.47-1.58x -> 1.53-1.72x.
 * Timeline of one call (gpt2, 120 x 10 KB, in the benchmark's loop): the
 * helper enters C ~0.04 ms after the caller (it has no UTF-8 to make) and
 * both leave within ~0.1 ms of each other.  What is left: the two calls
 * together spend ~13% more time in C than one thread (o200k 9.3 against
 * 8.2 ms), and that is the piece caches: each thread's cache learns its
 * own texts, so a piece new to one cache is merged again (merges per batch,
 * gpt2 7,271 on one thread, 8,542 on two; o200k 7,950 against 9,029).
 * Contiguous halves instead of runs merge a little less (gpt2 8,255,
 * o200k 8,951) but cannot even out the threads' speeds.  Dead ends (same benchmark, no
 * change beyond noise): the caller encoding a head of 1/16 of the batch
 * alone while a helper makes the rest's UTF-8 (the helper then entered C
 * ~0.4 ms in, not earlier); giving each worker back the cache it had last;
 * worker 0 building lists 4, 8, 16 times per batch or after every run. */
#if defined(__GNUC__) && defined(__ATOMIC_ACQUIRE) && !defined(BPE_NO_ATOMICS)
#define RK_ATOMICS 1
#define RK_TAKE(p, n) __atomic_fetch_add((p), (n), __ATOMIC_RELAXED)
#define RK_PUBLISH(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define RK_SEEN(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define RK_FLAG(p) __atomic_store_n((p), 1, __ATOMIC_RELAXED)
#define RK_FLAGGED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#else
#define RK_ATOMICS 0
#define RK_PUBLISH(p, v) (*(p) = (v))
#define RK_FLAG(p) ((void)(p))
#define RK_FLAGGED(p) 0
#endif

/* out_ends[i] of a text not done yet (no text ends there: out is text_len
 * items, text_len < SIZE_MAX). */
#define RK_PENDING SIZE_MAX

int bpe_batch_share_init(bpe_batch_share *share, size_t text_len, size_t n_texts,
                         size_t n_workers, int flags, size_t *out_ends)
{
    size_t i, mean;
    if (!share || n_workers == 0 || (n_texts && !out_ends) || (flags & ~BPE_BATCH_STATIC))
        return BPE_EINVAL;
    mean = n_texts ? text_len / n_texts : 0;
    share->next = 0;
    share->n_texts = n_texts;
    share->n_workers = n_workers;
    /* Texts of a run: enough for ~BPE_BATCH_RUN_BYTES (one take of the
     * cursor per ~0.1 ms of work), at least one; a text is never cut. */
    share->run = mean >= BPE_BATCH_RUN_BYTES ? 1 : BPE_BATCH_RUN_BYTES / (mean ? mean : 1);
    share->dynamic = RK_ATOMICS && !(flags & BPE_BATCH_STATIC);
    share->failed = 0;
    for (i = 0; i < n_texts; i++)
        out_ends[i] = RK_PENDING;
    return BPE_OK;
}

/* The first text of worker's next run (n_texts or more when none is left). */
static size_t rk_next_run(bpe_batch_share *share, size_t worker, size_t *position)
{
    size_t run_index, n_runs;
#if RK_ATOMICS
    if (share->dynamic)
        return RK_FLAGGED(&share->failed) ? share->n_texts : RK_TAKE(&share->next, share->run);
#endif
    n_runs = share->n_texts / share->run + (share->n_texts % share->run != 0);
    if (*position >= n_runs)
        return share->n_texts; /* past the last run (and no overflow below) */
    run_index = worker + *position * share->n_workers;
    if (run_index >= n_runs)
        return share->n_texts;
    ++*position;
    return run_index * share->run;
}

int bpe_ranks_encode_shared(const bpe_ranks *r, bpe_piece_cache *cache, int pattern,
                            const unsigned char *text, size_t text_len,
                            const size_t *text_ends, size_t n_texts,
                            bpe_batch_share *share, size_t worker, size_t *position,
                            size_t budget, uint32_t *out, size_t *out_ends)
{
    rk_scratch s;
    size_t i, first, encoded = 0;
    int status = BPE_OK;
    if (!r || !cache || !share || !position || share->n_texts != n_texts ||
        worker >= share->n_workers || (text_len && (!text || !out)) ||
        (n_texts && (!text_ends || !out_ends)) || (cache->owner && cache->owner != (const void *)r))
        return BPE_EINVAL;
    for (i = 0; i < n_texts; i++) /* checked, not written: the other workers write out_ends */
        if (text_ends[i] < (i ? text_ends[i - 1] : 0) || text_ends[i] > text_len)
            return BPE_EINVAL;
    if (n_texts && text_ends[n_texts - 1] != text_len)
        return BPE_EINVAL;
    cache->owner = r;
    /* This worker's part of the batch, or of its budget, decides whether
     * the cache is read through first (it may have gone cold meanwhile). */
    bpe__pc_warm(cache, budget ? budget : text_len / share->n_workers);
    rk_scratch_init(&s, text_len);
    while ((first = rk_next_run(share, worker, position)) < n_texts) {
        size_t last = n_texts - first < share->run ? n_texts : first + share->run;
        for (i = first; i < last; i++) {
            size_t start = i ? text_ends[i - 1] : 0, produced = start;
            status = rk_encode_span(r, pattern, text, text_len, start, text_ends[i], cache, &s,
                                    out, &produced);
            if (status != BPE_OK) {
                RK_FLAG(&share->failed);
                goto done;
            }
            RK_PUBLISH(&out_ends[i], produced);
            encoded += text_ends[i] - start;
        }
        if (budget && encoded >= budget) {
            status = BPE_BATCH_MORE;
            break;
        }
    }
done:
    rk_scratch_done(&s);
    return status;
}

size_t bpe_batch_ready(const bpe_batch_share *share, const size_t *out_ends, size_t first)
{
#if RK_ATOMICS
    if (share && out_ends)
        while (first < share->n_texts && RK_SEEN(&out_ends[first]) != RK_PENDING)
            first++;
#else
    (void)share;
    (void)out_ends;
#endif
    return first;
}

int bpe_batch_compact(uint32_t *out, const size_t *text_starts, const size_t *out_ends,
                      size_t n_texts, int64_t *offsets)
{
    size_t i, at = 0;
    if (!offsets || (n_texts && (!out || !text_starts || !out_ends)))
        return BPE_EINVAL;
    for (i = 0; i < n_texts; i++) /* checked first: nothing moves on bad input */
        if (out_ends[i] < text_starts[i] || (i + 1 < n_texts && out_ends[i] > text_starts[i + 1]))
            return BPE_EINVAL;
    for (i = 0; i < n_texts; i++) {
        size_t count = out_ends[i] - text_starts[i];
        /* at <= text_starts[i], so the move goes down (or nowhere) */
        if (count && at != text_starts[i])
            memmove(out + at, out + text_starts[i], count * sizeof *out);
        offsets[i] = (int64_t)at;
        at += count;
    }
    offsets[n_texts] = (int64_t)at;
    return BPE_OK;
}
