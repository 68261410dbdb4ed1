/*
 * ranks_build.c -- building a rank table (bpe_ranks_new in text.h, at the
 * text level): the token index, the pair table with one entry per token that
 * merging makes (REACHED PAIRS below, with the proof), and the filters and
 * byte-pair arrays that let encoding skip most lookups.  Linear in the
 * total bytes of the tokens.  The table is read-only afterwards, so
 * threads share it without a lock.  Layout and lookups: ranks_internal.h.
 */
#include "ranks_internal.h"

/* The hash of p[0..n) (what rk_key_of computes). */
static inline uint64_t rk_hash_bytes(const unsigned char *p, size_t n)
{
    return rk_key_of(p, n, p + n).hash;
}

/* The smallest power of two >= 2 * n (at least 2): a table at load <= 1/2.
 * 0 when that does not fit a size_t. */
static inline size_t rk_capacity(size_t n)
{
    size_t cap = 2;
    while (cap < n || cap - n < n) {
        if (cap > SIZE_MAX / 2)
            return 0;
        cap *= 2;
    }
    return cap;
}

/* The smallest power of two of at least 16 slots that n fill to at most
 * 4/5: for the tables asked on the way through a piece (the pair table and
 * the token table), whose lines the core's caches lose between calls, a
 * table half the size misses half as often, and linear probing still meets
 * an empty slot.  0 when that does not fit a size_t. */
static inline size_t rk_dense_capacity(size_t n)
{
    size_t cap = rk_capacity(n);
    if (cap >= 16 && n <= cap / 2 / 5 * 4)
        cap /= 2;
    return cap;
}

/* Token index of bytes p[0..n), or RK_NONE. */
static inline uint32_t rk_lookup(const bpe_ranks *r, const unsigned char *p, size_t n)
{
    rk_key key = rk_key_of(p, n, p + n);
    return rk_lookup_key(r, p, n, &key);
}

/* Adds (left, right) -> (prio, result) unless the pair is already there
 * (the first, lowest-priority entry wins). */
static void rk_pair_put(bpe_ranks *r, uint32_t left, uint32_t right,
                        uint32_t prio, uint32_t result)
{
    uint64_t key = (uint64_t)left << 32 | right;
    rk_pair *slot;
    if (r->cpairs) {
        uint64_t want = (uint64_t)left << RK_CPART_BITS | right;
        size_t i = (size_t)bpe__mix64(key) & r->pair_mask;
        while (r->cpairs[i] != RK_EMPTY_KEY) {
            if (r->cpairs[i] >> RK_CPART_BITS == want)
                return;
            i = (i + 1) & r->pair_mask;
        }
        assert(prio == result);
        r->cpairs[i] = want << RK_CPART_BITS | result;
        r->n_pairs++;
        return;
    }
    slot = &r->pairs[rk_pair_slot(r, key)];
    if (slot->key != RK_EMPTY_KEY)
        return;
    slot->key = key;
    slot->prio = prio;
    slot->result = result;
    r->n_pairs++;
}

/* ------------------------------------------------------------ construction */

/* The pair table for n pairs; compact (cpairs) when `compact`.
 *   A compact table is filled up to 4/5, not 1/2 (rk_dense_capacity): the
 * pairs merging asks about are spread over the whole table, and a question
 * that gets past the pair filter probes ~2.6 slots instead of ~1.3, mostly
 * in the same 64-byte line (8 slots).  o200k 4 -> 2 MB, cl100k 2 -> 1 MB,
 * gpt2 1 MB -> 512 KB.  tools/bench_unseen.c, 8 unseen 0.5 MB slices, each
 * call after 64 MB of other memory was touched, medians of 11 rounds of the
 * two builds alternating: gpt2 prose -5.9%, o200k prose -4.1%, o200k
 * multilingual -5.7%, cl100k Python source -1.6%; 1 MB of random letters
 * (the table stays in cache) +1-1.5%.  Same IDs. */
static int rk_alloc_pairs(bpe_ranks *r, size_t n, int compact)
{
    size_t cap = compact ? rk_dense_capacity(n) : rk_capacity(n), i;
    if (cap == 0 || cap > SIZE_MAX / sizeof(rk_pair))
        return BPE_ETOOBIG;
    r->pair_mask = cap - 1;
    if (compact) {
        r->cpairs = bpe__arena_calloc(&r->arena, cap, sizeof *r->cpairs);
        if (!r->cpairs)
            return BPE_ENOMEM;
        for (i = 0; i < cap; i++)
            r->cpairs[i] = RK_EMPTY_KEY;
        return BPE_OK;
    }
    r->pairs = bpe__arena_calloc(&r->arena, cap, sizeof *r->pairs);
    if (!r->pairs)
        return BPE_ENOMEM;
    for (i = 0; i < cap; i++)
        r->pairs[i].key = RK_EMPTY_KEY;
    return BPE_OK;
}

/*
 * tiktoken's rule: a token T of L bytes can be made from any split point s
 * in 1..L-1 with part(T[0..s)) and part(T[s..L)) both existing, (left,
 * right) -> T.  These splits are found first; the table then keeps the one
 * merging uses (REACHED PAIRS, below).
 *
 * In time linear in the total bytes of all tokens.  Asking the token index
 * about every prefix and suffix of every token hashes O(L^2) bytes per
 * token (a 100 KB token took 11 s).  Instead each token's prefixes are
 * walked left to right with a rolling hash, and a prefix is recognised
 * without rereading it: when V is the longest part that is a proper prefix
 * of T[0..s) (found earlier in the walk), T[0..s) is token c exactly when c
 * has s bytes, c's own longest proper part-prefix lp[c] is V, and
 * c[|V|..s) == T[|V|..s) -- the compared tails add up to at most L bytes.
 * lp[c] is known for every candidate because tokens are walked shortest
 * first (c is shorter than T).  Suffixes are walked right to left the same
 * way with ls[], the longest proper part-suffix.  The rolling hash is a
 * polynomial one, which extends both ways in O(1) (h(xS) = x*B^|S| + h(S),
 * h(Sx) = h(S)*B + x); a separate temporary index over it, since the main
 * index keeps its cheaper FNV-1a for the encoding hot path.  A single byte
 * is always a part (byte_part), so every walk starts from one.
 */
#define RK_POLY_BASE UINT64_C(0x100000001b3)

/* The temporary index's hash of a string whose polynomial hash is h. */
static uint64_t rk_poly_final(uint64_t h, size_t len)
{
    return bpe__mix64(h + (uint64_t)len * BPE__GOLDEN64);
}

typedef struct {
    uint32_t *slots;    /* token index + 1; 0 is empty; load <= 1/2 */
    size_t mask;
    uint64_t *hash;     /* rk_poly_final of each token */
    uint32_t *lp, *ls;  /* longest proper part-prefix / -suffix (len >= 2) */
    uint32_t *order;    /* token indices, shortest first */
    uint32_t *walk;     /* the right part at each split of the current token */
    size_t walk_cap;
    uint32_t *found;    /* (left, right, token) triples, 3 per pair */
    size_t n_found, found_cap;
} rk_splits;

static void rk_splits_free(rk_splits *w)
{
    free(w->slots);
    free(w->hash);
    free(w->lp);
    free(w->ls);
    free(w->order);
    free(w->walk);
    free(w->found);
}

/* Token indices sorted by length, shortest first: an LSD radix sort on
 * bytes of the length (stable), so linear in the number of tokens times the
 * length's digits.  tmp has room for n entries. */
static void rk_sort_by_length(const bpe_ranks *r, uint32_t *order, uint32_t *tmp)
{
    size_t n = r->n_tokens, count[256], i, max = 0;
    uint32_t *src = order, *dst = tmp, *swap;
    unsigned shift;
    for (i = 0; i < n; i++) {
        order[i] = (uint32_t)i;
        max = rk_len(r, i) > max ? rk_len(r, i) : max;
    }
    for (shift = 0; shift < 8 * sizeof(size_t) && (max >> shift) != 0; shift += 8) {
        size_t sum = 0;
        memset(count, 0, sizeof count);
        for (i = 0; i < n; i++)
            count[(rk_len(r, src[i]) >> shift) & 255]++;
        for (i = 0; i < 256; i++) {
            size_t c = count[i];
            count[i] = sum;
            sum += c;
        }
        for (i = 0; i < n; i++)
            dst[count[(rk_len(r, src[i]) >> shift) & 255]++] = src[i];
        swap = src;
        src = dst;
        dst = swap;
    }
    if (src != order)
        memcpy(order, src, n * sizeof *order);
}

/* The token whose bytes are the prefix p[0..s) (s >= 2) with rolling hash
 * h, given that the longest proper part-prefix of it is `v`, |v| bytes;
 * RK_NONE when that prefix is not a token. */
static uint32_t rk_find_prefix(const bpe_ranks *r, const rk_splits *w,
                               const unsigned char *p, size_t s, uint64_t h,
                               uint32_t v, size_t vlen)
{
    size_t i = (size_t)h & w->mask;
    for (; w->slots[i] != 0; i = (i + 1) & w->mask) {
        uint32_t c = w->slots[i] - 1;
        if (w->hash[c] == h && rk_len(r, c) == s && w->lp[c] == v &&
            memcmp(r->bytes + r->offsets[c] + vlen, p + vlen, s - vlen) == 0)
            return c;
    }
    return RK_NONE;
}

/* The same for the suffix q[0..m) (m >= 2) whose longest proper
 * part-suffix is `v`, |v| bytes: only the head q[0..m - |v|) is compared. */
static uint32_t rk_find_suffix(const bpe_ranks *r, const rk_splits *w,
                               const unsigned char *q, size_t m, uint64_t h,
                               uint32_t v, size_t vlen)
{
    size_t i = (size_t)h & w->mask;
    for (; w->slots[i] != 0; i = (i + 1) & w->mask) {
        uint32_t c = w->slots[i] - 1;
        if (w->hash[c] == h && rk_len(r, c) == m && w->ls[c] == v &&
            memcmp(r->bytes + r->offsets[c], q, m - vlen) == 0)
            return c;
    }
    return RK_NONE;
}

/* Both walks over token k (>= 2 bytes): records lp[k] and ls[k] and
 * appends a triple to w->found for every split with two parts. */
static int rk_walk_token(const bpe_ranks *r, rk_splits *w, uint32_t k)
{
    const unsigned char *p = r->bytes + r->offsets[k];
    size_t len = rk_len(r, k), s, vlen;
    uint64_t h, power;
    uint32_t v;
    int status;

    if ((status = bpe__reserve((void **)&w->walk, &w->walk_cap, len,
                               sizeof *w->walk)) != BPE_OK)
        return status;
    /* Right to left: walk[s] = part(p[s..len)) or RK_NONE. */
    v = r->byte_part[p[len - 1]];
    vlen = 1;
    w->walk[len - 1] = v;
    h = p[len - 1];
    power = RK_POLY_BASE;
    for (s = len - 1; s-- > 1;) {
        size_t m = len - s;
        uint32_t c;
        h += p[s] * power;
        power *= RK_POLY_BASE;
        c = rk_find_suffix(r, w, p + s, m, rk_poly_final(h, m), v, vlen);
        if (c != RK_NONE) {
            v = c;
            vlen = m;
        }
        w->walk[s] = c;
    }
    w->ls[k] = v;
    /* Left to right: part(p[0..s)), paired with walk[s]. */
    v = r->byte_part[p[0]];
    vlen = 1;
    h = p[0];
    for (s = 1; s < len; s++) {
        uint32_t left = RK_NONE;
        if (s == 1) {
            left = v;
        } else {
            h = h * RK_POLY_BASE + p[s - 1];
            left = rk_find_prefix(r, w, p, s, rk_poly_final(h, s), v, vlen);
            if (left != RK_NONE) {
                v = left;
                vlen = s;
            }
        }
        if (left != RK_NONE && w->walk[s] != RK_NONE) {
            if ((status = bpe__reserve((void **)&w->found, &w->found_cap,
                                       w->n_found + 3, sizeof *w->found)) != BPE_OK)
                return status;
            w->found[w->n_found++] = left;
            w->found[w->n_found++] = w->walk[s];
            w->found[w->n_found++] = k;
        }
    }
    w->lp[k] = v;
    return BPE_OK;
}

/*
 * REACHED PAIRS.  Of a token's splits, merging only ever uses one, so the
 * table keeps that one.  Claim: whenever merging a piece (tiktoken's rule,
 * or any rule that is a function of the two parts) has made a part P
 * covering bytes S, the merges inside S so far are exactly those of S
 * merged alone, in the same order.  Proof: no merge crosses S's edges
 * before P exists (parts only grow, and P covers S exactly), so the parts
 * inside S change only by merges inside S; each of those was the lowest
 * pair, leftmost among equals, of the whole piece, so also of S's pairs,
 * which is what S alone merges next from the same state.  So P is always
 * made by the last merge of P's own bytes merged alone -- its *reached
 * split* -- and a token whose bytes merged alone do not end as that token
 * is never made at all.  A pair (L, R) -> T that is not T's reached split
 * is therefore never the pair merged, and a table without it changes no
 * step: at every step the pair merged keeps its priority and every other
 * pair's priority is only raised (to none).  The same holds for any table
 * between the reached splits and all splits.
 *
 * Finding them: tokens are taken shortest first.  When T's turn comes the
 * table holds the reached split of every shorter token merging makes,
 * which is all T's bytes merged alone ever ask about except T's own splits
 * (a pair inside T making a token of T's length makes T), and T's are not
 * in yet: so merging T's bytes with the table so far stops at two parts
 * L R exactly when (L, R) is T's reached split, at more when merging never
 * makes T.  That is the short loop for tokens under 100 bytes and the heap
 * (O(L log L)) for longer ones, so the build stays near linear.
 *
 * o200k: 446,189 pairs -> 199,742 (every token of two bytes or more is
 * made by merging), its pair table 8 -> 4 MB and its filter 512 -> 256
 * KB; cl100k 233,378 -> 100,000 (4 -> 2 MB), gpt2 108,299 -> 50,000.
 */

/* The reached split of token k (*left, *right) from the pairs of the table
 * so far (above); 0 when merging never makes k.  w has 3 * len entries,
 * heap 2 * len (len: k's bytes). */
static int rk_reached_split(const bpe_ranks *r, uint32_t k, uint32_t *w,
                            bpe__heap_entry *heap, uint32_t *left, uint32_t *right)
{
    const unsigned char *p = r->bytes + r->offsets[k];
    size_t len = rk_len(r, k), i, n;
    uint32_t *sym = w, *prio = w + len, *res = w + 2 * len;
    for (i = 0; i < len; i++)
        sym[i] = r->byte_part[p[i]];
    if (len < BPE__MERGE_HEAP_THRESHOLD) {
        for (i = 0; i + 1 < len; i++)
            prio[i] = rk_pair_get(r, sym[i], sym[i + 1], &res[i]);
        n = bpe__merge_short(rk_rule, r, sym, NULL, prio, res, len);
    } else {
        n = bpe__merge_heap(rk_rule, r, sym, NULL, prio, res, heap, len);
    }
    if (n != 2)
        return 0;
    *left = sym[0];
    *right = sym[1];
    return 1;
}

/* Fills the pair table with the reached splits of the tokens whose splits
 * are w->found (grouped by token, shortest first). */
static int rk_put_reached_pairs(bpe_ranks *r, const rk_splits *w)
{
    size_t i, j, tokens = 0, wlen = r->max_token_len + 1;
    uint32_t *scratch = NULL, left, right;
    bpe__heap_entry *heap = NULL;
    int status;
    for (i = 0; i < w->n_found; i += 3)
        tokens += i == 0 || w->found[i + 2] != w->found[i - 1];
    /* Compact slots when the priority (the result's ID) is the result
     * itself and every part fits RK_CPART_BITS. */
    if ((status = rk_alloc_pairs(r, tokens,
                                 r->ids_are_indices &&
                                 r->n_tokens + 256 <= (size_t)RK_CPART_MASK)) != BPE_OK)
        return status;
    scratch = malloc(3 * wlen * sizeof *scratch);
    heap = malloc(2 * wlen * sizeof *heap);
    if (!scratch || !heap) {
        status = BPE_ENOMEM;
        goto cleanup;
    }
    for (i = 0; i < w->n_found; i = j) {
        uint32_t k = w->found[i + 2];
        for (j = i; j < w->n_found && w->found[j + 2] == k; j += 3)
            ;
        if (rk_reached_split(r, k, scratch, heap, &left, &right))
            rk_pair_put(r, left, right, r->ids[k], k);
    }
cleanup:
    free(scratch);
    free(heap);
    return status;
}

static int rk_build_split_pairs(bpe_ranks *r)
{
    size_t n = r->n_tokens, cap = rk_capacity(n), k, i;
    uint32_t *tmp = NULL;
    rk_splits w;
    int status = BPE_ENOMEM;

    memset(&w, 0, sizeof w);
    if (cap == 0 || cap > SIZE_MAX / sizeof(uint64_t))
        return BPE_ETOOBIG;
    w.slots = calloc(cap, sizeof *w.slots);
    w.hash = malloc((n ? n : 1) * sizeof *w.hash);
    w.lp = malloc((n ? n : 1) * sizeof *w.lp);
    w.ls = malloc((n ? n : 1) * sizeof *w.ls);
    w.order = malloc((n ? n : 1) * sizeof *w.order);
    tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!w.slots || !w.hash || !w.lp || !w.ls || !w.order || !tmp)
        goto cleanup;
    w.mask = cap - 1;
    for (k = 0; k < n; k++) {  /* the temporary index */
        const unsigned char *p = r->bytes + r->offsets[k];
        uint64_t h = 0;
        for (i = 0; i < rk_len(r, k); i++)
            h = h * RK_POLY_BASE + p[i];
        w.hash[k] = rk_poly_final(h, rk_len(r, k));
        w.lp[k] = w.ls[k] = RK_NONE;
        for (i = (size_t)w.hash[k] & w.mask; w.slots[i] != 0; i = (i + 1) & w.mask)
            ;
        w.slots[i] = (uint32_t)(k + 1);
    }
    rk_sort_by_length(r, w.order, tmp);
    for (k = 0; k < n; k++)
        if (rk_len(r, w.order[k]) >= 2 &&
            (status = rk_walk_token(r, &w, w.order[k])) != BPE_OK)
            goto cleanup;
    status = rk_put_reached_pairs(r, &w);
cleanup:
    rk_splits_free(&w);
    free(tmp);
    return status;
}

static int rk_build_merge_pairs(bpe_ranks *r, const uint32_t *lefts,
                                const uint32_t *rights, const uint32_t *results,
                                size_t n_merges)
{
    size_t m;
    int status;
    if (n_merges >= RK_NONE)
        return BPE_ETOOBIG;
    if (n_merges && (!lefts || !rights || !results))
        return BPE_EINVAL;
    for (m = 0; m < n_merges; m++)
        if (lefts[m] >= r->n_tokens || rights[m] >= r->n_tokens ||
            results[m] >= r->n_tokens)
            return BPE_EINVAL;
    if ((status = rk_alloc_pairs(r, n_merges, 0)) != BPE_OK)
        return status;
    r->results_concatenate = 1;
    for (m = 0; m < n_merges; m++) {
        size_t a = rk_len(r, lefts[m]), b = rk_len(r, rights[m]);
        const unsigned char *t = r->bytes + r->offsets[results[m]];
        rk_pair_put(r, lefts[m], rights[m], (uint32_t)m, results[m]);
        if (rk_len(r, results[m]) != a + b ||
            memcmp(t, r->bytes + r->offsets[lefts[m]], a) != 0 ||
            memcmp(t + a, r->bytes + r->offsets[rights[m]], b) != 0)
            r->results_concatenate = 0;
    }
    return BPE_OK;
}

/* Copies the tokens and indexes them by their bytes, in a table filled up
 * to 4/5 (rk_dense_capacity; o200k 8 -> 4 MB, cl100k 4 -> 2, gpt2 2 -> 1):
 * asked by the pieces no piece cache knows, on lines other work has
 * evicted.  tools/bench_unseen.c as for the pair table (rk_alloc_pairs),
 * medians of 9 rounds against the table at 1/2: gpt2 prose -6.6%, o200k
 * prose -3.4%, cl100k Python source -1.7%, o200k multilingual the same.
 * The slots' tails (tok_tails, 8 bytes a slot: o200k 2 MB, cl100k 1, gpt2
 * 0.5) cost that memory back for the lookups of pieces over 8 bytes
 * (rk_lookup_key has the figures). */
static int rk_build_tokens(bpe_ranks *r, const unsigned char *bytes,
                           const size_t *offsets, const uint32_t *ids)
{
    size_t n = r->n_tokens, total = offsets[n] - offsets[0], cap, k;
    int b;
    cap = rk_dense_capacity(n);
    if (cap == 0 || cap > SIZE_MAX / sizeof(rk_tok_slot) || n + 1 > SIZE_MAX / sizeof(size_t))
        return BPE_ETOOBIG;
    r->bytes = malloc(total ? total : 1);
    r->offsets = bpe__arena_calloc(&r->arena, n + 1, sizeof *r->offsets);
    r->ids = malloc((n ? n : 1) * sizeof *r->ids);
    r->tok_slots = bpe__arena_calloc(&r->arena, cap, sizeof *r->tok_slots);
    r->tok_tails = bpe__arena_calloc(&r->arena, cap, sizeof *r->tok_tails);
    if (!r->bytes || !r->offsets || !r->ids || !r->tok_slots || !r->tok_tails)
        return BPE_ENOMEM;
    if (total)
        memcpy(r->bytes, bytes + offsets[0], total);
    r->tok_mask = cap - 1;
    r->ids_are_indices = 1;
    for (k = 0; k <= n; k++)
        r->offsets[k] = offsets[k] - offsets[0];
    for (k = 0; k < n; k++) {
        size_t len = r->offsets[k + 1] - r->offsets[k], i;
        if (offsets[k + 1] <= offsets[k])
            return BPE_EINVAL; /* empty token, or offsets going backwards */
        if (rk_lookup(r, r->bytes + r->offsets[k], len) != RK_NONE)
            return BPE_EINVAL; /* the same bytes twice */
        i = (size_t)rk_hash_bytes(r->bytes + r->offsets[k], len) & r->tok_mask;
        while (r->tok_slots[i].index != 0)
            i = (i + 1) & r->tok_mask;
        r->tok_slots[i].head = rk_head(r->bytes + r->offsets[k], len);
        r->tok_slots[i].index = (uint32_t)(k + 1);
        r->tok_slots[i].len = rk_len32(len);
        if (len > 8)
            r->tok_tails[i] = rk_load64(r->bytes + r->offsets[k] + len - 8);
        r->max_token_len = len > r->max_token_len ? len : r->max_token_len;
        r->ids[k] = ids[k];
        r->ids_are_indices &= ids[k] == k;
    }
    for (b = 0; b < 256; b++) {
        unsigned char c = (unsigned char)b;
        uint32_t k1 = rk_lookup(r, &c, 1);
        r->byte_part[b] = k1 != RK_NONE ? k1 : (uint32_t)(n + (size_t)b);
    }
    return BPE_OK;
}

/* A zeroed bit filter of at least per_item * n_items bits (a power of two,
 * 64 to 2^30); *mask gets its number of bits - 1.  NULL when out of memory. */
static uint64_t *rk_new_filter(bpe_ranks *r, size_t per_item, size_t n_items, size_t *mask)
{
    size_t bits = 64;
    uint64_t *filter;
    while (bits < per_item * n_items && bits < ((size_t)1 << 30))
        bits *= 2;
    filter = bpe__arena_calloc(&r->arena, bits / 64, sizeof *filter);
    *mask = bits - 1;
    return filter;
}

static int rk_build_tok_filter(bpe_ranks *r)
{
    size_t k;
    r->tok_filter = rk_new_filter(r, RK_TOK_FILTER_BITS, r->n_tokens, &r->tok_filter_mask);
    if (!r->tok_filter)
        return BPE_ENOMEM;
    for (k = 0; k < r->n_tokens; k++) {
        size_t b = rk_tok_filter_bit(r, rk_hash_bytes(r->bytes + r->offsets[k],
                                                       r->offsets[k + 1] - r->offsets[k]));
        r->tok_filter[b / 64] |= (uint64_t)1 << (b % 64);
    }
    return BPE_OK;
}

static int rk_build_pair_filter(bpe_ranks *r)
{
    size_t i;
    r->pair_filter = rk_new_filter(r, RK_PAIR_FILTER_BITS, r->n_pairs, &r->pair_filter_mask);
    if (!r->pair_filter)
        return BPE_ENOMEM;
    for (i = 0; i <= r->pair_mask; i++) {
        uint64_t key, c;
        size_t b;
        if (r->cpairs) {
            if ((c = r->cpairs[i]) == RK_EMPTY_KEY)
                continue;
            key = (c >> (2 * RK_CPART_BITS)) << 32 | (c >> RK_CPART_BITS & RK_CPART_MASK);
        } else if ((key = r->pairs[i].key) == RK_EMPTY_KEY) {
            continue;
        }
        b = rk_pair_filter_bit(r, bpe__mix64(key));
        r->pair_filter[b / 64] |= (uint64_t)1 << (b % 64);
    }
    return BPE_OK;
}

static int rk_build_byte_pairs(bpe_ranks *r)
{
    size_t ab;
    r->byte_pairs = bpe__arena_calloc(&r->arena, 65536, sizeof *r->byte_pairs);
    if (!r->byte_pairs)
        return BPE_ENOMEM;
    for (ab = 0; ab < 65536; ab++) {
        rk_byte_pair *e = &r->byte_pairs[ab];
        e->result = 0;
        e->prio = rk_pair_get(r, r->byte_part[ab >> 8], r->byte_part[ab & 255], &e->result);
    }
    return BPE_OK;
}

/* The span filter replaces cut_ok when the tokens hold at least 1 in
 * RK_DENSE_PAIRS_DIV of the pairs of the bytes they use (of ~200 bytes used,
 * gpt2 holds 7% of the pairs, cl100k 17%, o200k 24%).  A choice of speed
 * only (both rules are exact): where the byte pairs alone cut often (gpt2,
 * cl100k) the walk cost more than its finer cuts saved (CJK, CPU time per
 * 0.5 MB: cl100k 3.7 -> 4.1-4.4 ms, gpt2 4.3 -> 4.7-4.9).
 *   At 1 in RK_WIDE_PAIRS_DIV (cl100k, not gpt2) the table has both: the
 * span filter for pieces that end in a character of three bytes, cut_ok
 * for the rest.  Since the walk got cheaper (rk_span_may_reach) the span
 * rule wins on cl100k's CJK, where its byte pairs cut 40% of the places,
 * but not on its source, whose long pieces are runs of spaces that walk
 * far: tools/bench_unseen.c, medians of five alternating runs, 64 MB
 * touched before each call, the span filter for every piece: CJK 6 slices
 * 80.3 / 69.1 -> 66.6 / 60.1 ms, Python source 8 slices 32.0 -> 35.2,
 * prose and multilingual the same; gpt2 CJK 48.5 / 46.7 -> 55.2 / 53.6. */
#define RK_DENSE_PAIRS_DIV 5
#define RK_WIDE_PAIRS_DIV 8

/* cut_ok (see bpe_ranks): every pair of neighbouring bytes of every token
 * marks its bit taken, and the others are the cuts.  *dense gets 2 when
 * the tokens hold at least 1 in RK_DENSE_PAIRS_DIV of the pairs of their
 * bytes (then the span filter is worth its walk on every piece), 1 at 1 in
 * RK_WIDE_PAIRS_DIV (on pieces of three-byte characters), else 0. */
static int rk_build_cut_ok(bpe_ranks *r, int *dense)
{
    size_t k, i, w, held = 0, used = 0;
    uint64_t seen[4] = {0, 0, 0, 0};
    r->cut_ok = malloc(1024 * sizeof *r->cut_ok);
    if (!r->cut_ok)
        return BPE_ENOMEM;
    for (w = 0; w < 1024; w++)
        r->cut_ok[w] = ~(uint64_t)0;
    for (k = 0; k < r->n_tokens; k++) {
        const unsigned char *t = r->bytes + r->offsets[k];
        for (i = 1; i < rk_len(r, k); i++) {
            size_t ab = (size_t)t[i - 1] << 8 | t[i];
            r->cut_ok[ab / 64] &= ~((uint64_t)1 << (ab % 64));
            seen[t[i - 1] / 64] |= (uint64_t)1 << (t[i - 1] % 64);
            seen[t[i] / 64] |= (uint64_t)1 << (t[i] % 64);
        }
    }
    for (w = 0; w < 1024; w++)
        for (i = 0; i < 64; i++)
            held += !(r->cut_ok[w] >> i & 1);
    for (w = 0; w < 256; w++)
        used += seen[w / 64] >> (w % 64) & 1;
    *dense = held * RK_DENSE_PAIRS_DIV >= used * used ? 2
             : held * RK_WIDE_PAIRS_DIV >= used * used ? 1 : 0;
    return BPE_OK;
}

/* Cells of the span filter per token (rounded up to a power of two): o200k
 * has 199,998 tokens and 289,324 distinct strings that some longer token
 * starts with, so 4M cells (1 MB), about one cell in nine used. */
#define RK_SPAN_CELLS_PER_TOKEN 16

/* span_filter (see bpe_ranks): every proper prefix of every token marks
 * bit 0 of its cell, every token bit 1; and span_longest. */
static int rk_build_span_filter(bpe_ranks *r)
{
    size_t cells = 64, k, i;
    unsigned cell_bits = 6;
    while (cells < RK_SPAN_CELLS_PER_TOKEN * r->n_tokens && cells < ((size_t)1 << 30)) {
        cells *= 2;
        cell_bits++;
    }
    r->span_filter = bpe__arena_calloc(&r->arena, cells / 32, sizeof *r->span_filter);
    if (!r->span_filter)
        return BPE_ENOMEM;
    r->span_shift = 64 - cell_bits;
    r->span_longest = bpe__arena_calloc(&r->arena, 65536, 1);
    if (!r->span_longest)
        return BPE_ENOMEM;
    for (k = 0; k < r->n_tokens; k++) {
        const unsigned char *t = r->bytes + r->offsets[k];
        size_t len = rk_len(r, k);
        uint64_t h = RK_SPAN_SEED;
        if (len >= 2) {
            uint8_t *longest = &r->span_longest[(size_t)t[0] << 8 | t[1]];
            uint8_t here = len < RK_SPAN_LONG ? (uint8_t)len : RK_SPAN_LONG;
            if (*longest < here)
                *longest = here;
        }
        for (i = 0; i < len; i++) {
            size_t c;
            h = rk_span_step(h, t[i]);
            c = (size_t)(h >> r->span_shift);
            r->span_filter[c / 32] |= (uint64_t)(i + 1 < len ? 1 : 2) << (2 * (c % 32));
        }
    }
    return BPE_OK;
}

bpe_ranks *bpe_ranks_new(const unsigned char *bytes, const size_t *offsets,
                         const uint32_t *ids, size_t n_tokens,
                         const uint32_t *lefts, const uint32_t *rights,
                         const uint32_t *results, size_t n_merges, int flags,
                         int *status)
{
    int st = BPE_OK, dense = 0;
    bpe_ranks *r = NULL;
    if (!offsets || (n_tokens && (!bytes || !ids))) {
        st = BPE_EINVAL;
        goto cleanup;
    }
    if (n_tokens >= (size_t)RK_NONE - 257) { /* pseudo parts need room */
        st = BPE_ETOOBIG;
        goto cleanup;
    }
    r = calloc(1, sizeof *r);
    if (!r) {
        st = BPE_ENOMEM;
        goto cleanup;
    }
    r->n_tokens = n_tokens;
    r->whole_piece = (flags & BPE_RANKS_WHOLE_PIECE) != 0;
    if ((st = rk_build_tokens(r, bytes, offsets, ids)) != BPE_OK)
        goto cleanup;
    if (flags & BPE_RANKS_MERGE_LIST) {
        st = rk_build_merge_pairs(r, lefts, rights, results, n_merges);
    } else {
        st = rk_build_split_pairs(r);
        r->results_concatenate = 1;
    }
    if (st == BPE_OK && n_tokens >= RK_BYTE_PAIRS_MIN)
        st = rk_build_byte_pairs(r);
    if (st == BPE_OK && n_tokens >= RK_BYTE_PAIRS_MIN && r->whole_piece)
        st = rk_build_tok_filter(r);
    if (st == BPE_OK && n_tokens >= RK_BYTE_PAIRS_MIN)
        st = rk_build_pair_filter(r);
    if (st == BPE_OK && r->results_concatenate)
        st = rk_build_cut_ok(r, &dense);
    if (st == BPE_OK && r->results_concatenate && dense)
        st = rk_build_span_filter(r);
    if (st == BPE_OK && dense == 2) {
        free(r->cut_ok); /* the span filter for every piece */
        r->cut_ok = NULL;
    }

cleanup:
    if (st != BPE_OK) {
        bpe_ranks_free(r);
        r = NULL;
    }
    if (status)
        *status = st;
    return r;
}

void bpe_ranks_free(bpe_ranks *r)
{
    if (!r)
        return;
    free(r->bytes);
    free(r->ids);
    free(r->cut_ok);
    bpe__arena_free(&r->arena); /* the lookup arrays */
    free(r);
}

size_t bpe_ranks_pair_count(const bpe_ranks *r)
{
    return r ? r->n_pairs : 0;
}
