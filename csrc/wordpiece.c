/*
 * wordpiece.c -- the incremental WordPiece trainer (section 11.8; bpe.h).
 *
 * Learns what pybpe.reference.learn_wordpiece learns -- each step the pair
 * with the highest score count(ab) / (count(a) * count(b)), ties to the pair
 * met first -- but after a merge it touches only what the merge changed.
 * Its Python twin, pybpe/core/spec/wordpiece.py, has the same structure and
 * the same essay; what follows is the short form.
 *
 * NODES, KEYS, OCCURRENCES: as in trainer.c, and the same code: both
 * trainers take them from train_core.h.  Every symbol of every word is a
 * node in one flat array, words in first-appearance order, so the global
 * index of a pair occurrence's left node (its KEY) orders occurrences as a
 * Counter rebuilt from scratch would meet them, and a pair's smallest valid
 * key is its place in that Counter.  Each pair keeps a lazy min-heap of its
 * keys (occ) and a lower bound key_lb of its smallest valid one (exact when
 * `exact`).  An occurrence at node i is VALID iff sym[i] == left and
 * sym[next[i]] == right.
 *
 * WHAT IS NEW.  symcount[s] is the weighted number of occurrences of symbol s
 * (one-symbol words included).  A pair's score changes when its count does
 * and also when count(left) or count(right) does, so every symbol keeps the
 * list of pairs it is part of (users).  Invariant: every pair with count > 0
 * is in the user lists of both its symbols (lists may also hold pairs whose
 * count fell to 0; they are dropped when a list is walked, and a pair whose
 * count rises again is listed again).  After a merge of (a, b) into m, every
 * pair in the lists of a, b and m gets a fresh heap entry.
 *
 * THE HEAP.  Max-heap of {count, count(left), count(right), key, pair} by
 * (score desc, key asc).  An entry is current iff all four numbers equal
 * the pair's and its symbols' now; invariant: every pair with
 * count >= min_frequency has a current entry.  The top current entry wins
 * once its key is exact (else the key is made exact and the entry sifted),
 * by trainer.c's argument: valid keys are distinct, bounds are below them.
 *
 * EXACT SCORES.  s1 > s2  <=>  c1 * a2 * b2 > c2 * a1 * b1, each product of
 * three uint64 fitting in 192 bits (mul_192).  No count passes the total
 * weight of all nodes, which is checked to fit in uint64 when building.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "train_core.h"

/* A heap holding more than twice the listed pairs plus this many entries
 * is rebuilt: every merge re-pushes every pair of three symbols, so stale
 * entries would otherwise pile up. */
#define HEAP_FLOOR 4096

typedef struct {
    uint32_t left, right;
    uint64_t count;
    bpe__occ occ;           /* lazy min-heap of keys */
    uint32_t key_lb;
    unsigned char exact, touched, listed, seen;
} wp_pair;

typedef struct {
    uint64_t count, ca, cb;
    uint32_t key, pair;
} wp_entry;

typedef struct {
    uint32_t *items;
    size_t len, cap;
} wp_list;

struct bpe_wp_trainer {
    bpe_symtab *symtab;
    char *prefix;
    size_t prefix_len;
    uint64_t min_frequency;
    bpe__node *nodes;
    uint64_t *freq;          /* per word */
    uint64_t *symcount;      /* per symbol ID */
    wp_list *users;          /* per symbol ID: pairs it is part of */
    size_t nsyms;            /* symbols symcount and users cover */
    size_t symcount_cap, users_cap;
    wp_pair *pairs;
    size_t npairs, pairs_cap, nlisted;
    bpe__pairmap map;
    wp_entry *heap;
    size_t heap_len, heap_cap;
    uint32_t *touched;
    size_t ntouched, touched_cap;
    uint32_t *sort_tmp;
    size_t sort_cap;
    char *scratch;
    size_t scratch_cap;
    int failed;
};

/* ---- exact scores ------------------------------------------------------- */

/* x * y as a 128-bit number {hi, lo}, from 32-bit halves (C99 has no
 * 128-bit type). */
static void mul_128(uint64_t x, uint64_t y, uint64_t *hi, uint64_t *lo)
{
    uint64_t x0 = x & 0xffffffffu, x1 = x >> 32, y0 = y & 0xffffffffu, y1 = y >> 32;
    uint64_t p00 = x0 * y0, p01 = x0 * y1, p10 = x1 * y0, p11 = x1 * y1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);

    *lo = (mid << 32) | (p00 & 0xffffffffu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* x * y * z as a 192-bit number out[0] (most significant) .. out[2]. */
static void mul_192(uint64_t x, uint64_t y, uint64_t z, uint64_t out[3])
{
    uint64_t hi, lo, a_hi, a_lo, b_hi, b_lo;

    mul_128(x, y, &hi, &lo);      /* x*y = hi:lo */
    mul_128(lo, z, &a_hi, &a_lo); /* lo*z */
    mul_128(hi, z, &b_hi, &b_lo); /* hi*z, shifted up 64 bits */
    out[2] = a_lo;
    out[1] = a_hi + b_lo;
    out[0] = b_hi + (out[1] < b_lo);  /* the carry out of the middle word */
}

/* -1, 0 or 1 as the score of e is below, equal to or above that of f. */
static int score_cmp(const wp_entry *e, const wp_entry *f)
{
    uint64_t l[3], r[3];
    int k;

    mul_192(e->count, f->ca, f->cb, l);
    mul_192(f->count, e->ca, e->cb, r);
    for (k = 0; k < 3; k++)
        if (l[k] != r[k])
            return l[k] < r[k] ? -1 : 1;
    return 0;
}

/* Does entry e come out of the heap before f? */
static int before(const wp_entry *e, const wp_entry *f)
{
    int c = score_cmp(e, f);

    return c > 0 || (c == 0 && e->key < f->key);
}

/* ---- the main heap ------------------------------------------------------ */

static void heap_sift_up(wp_entry *h, size_t i)
{
    wp_entry e = h[i];

    while (i > 0 && before(&e, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static void heap_sift_down(wp_entry *h, size_t n, size_t i)
{
    wp_entry e = h[i];

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h[c + 1], &h[c]))
            c++;
        if (!before(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

/* The entry pair p would have now. */
static wp_entry entry_of(const bpe_wp_trainer *t, uint32_t p)
{
    const wp_pair *r = &t->pairs[p];
    wp_entry e;

    e.count = r->count;
    e.ca = t->symcount[r->left];
    e.cb = t->symcount[r->right];
    e.key = r->key_lb;
    e.pair = p;
    return e;
}

static int current(const bpe_wp_trainer *t, const wp_entry *e)
{
    const wp_pair *r = &t->pairs[e->pair];

    return e->count == r->count && e->key == r->key_lb &&
           e->ca == t->symcount[r->left] && e->cb == t->symcount[r->right];
}

static int heap_push(bpe_wp_trainer *t, uint32_t p)
{
    int status = bpe__reserve((void **)&t->heap, &t->heap_cap, t->heap_len + 1,
                              sizeof *t->heap);

    if (status != BPE_OK)
        return status;
    t->heap[t->heap_len] = entry_of(t, p);
    heap_sift_up(t->heap, t->heap_len++);
    return BPE_OK;
}

static void heap_pop(bpe_wp_trainer *t)
{
    t->heap[0] = t->heap[--t->heap_len];
    if (t->heap_len > 0)
        heap_sift_down(t->heap, t->heap_len, 0);
}

/* One current entry per candidate, when stale entries have piled up (the
 * heap never needs more room than it already has). */
static void heap_rebuild(bpe_wp_trainer *t)
{
    size_t p, i;

    t->heap_len = 0;
    for (p = 0; p < t->npairs; p++)
        if (t->pairs[p].count >= t->min_frequency && t->pairs[p].count > 0)
            t->heap[t->heap_len++] = entry_of(t, (uint32_t)p);
    for (i = t->heap_len / 2; i-- > 0;)
        heap_sift_down(t->heap, t->heap_len, i);
}

/* ---- pairs, symbols, users ---------------------------------------------- */

/* symcount and users cover every ID of the symbol table. */
static int grow_symbols(bpe_wp_trainer *t)
{
    size_t n = bpe_symtab_size(t->symtab);
    int status;

    if (n <= t->nsyms)
        return BPE_OK;
    if ((status = bpe__reserve((void **)&t->symcount, &t->symcount_cap, n,
                               sizeof *t->symcount)) != BPE_OK ||
        (status = bpe__reserve((void **)&t->users, &t->users_cap, n,
                               sizeof *t->users)) != BPE_OK)
        return status;
    memset(t->symcount + t->nsyms, 0, (n - t->nsyms) * sizeof *t->symcount);
    memset(t->users + t->nsyms, 0, (n - t->nsyms) * sizeof *t->users);
    t->nsyms = n;
    return BPE_OK;
}

static int list_add(wp_list *l, uint32_t p)
{
    int status = bpe__reserve((void **)&l->items, &l->cap, l->len + 1,
                              sizeof *l->items);

    if (status == BPE_OK)
        l->items[l->len++] = p;
    return status;
}

/* Puts pair p in the user lists of both its symbols. */
static int list_pair(bpe_wp_trainer *t, uint32_t p)
{
    uint32_t a = t->pairs[p].left, b = t->pairs[p].right;
    int status;

    if ((status = list_add(&t->users[a], p)) != BPE_OK ||
        (b != a && (status = list_add(&t->users[b], p)) != BPE_OK))
        return status;
    t->pairs[p].listed = 1;
    t->nlisted++;
    return BPE_OK;
}

static int touch(bpe_wp_trainer *t, uint32_t p)
{
    int status;

    if (t->pairs[p].touched)
        return BPE_OK;
    if ((status = bpe__reserve((void **)&t->touched, &t->touched_cap,
                               t->ntouched + 1, sizeof *t->touched)) != BPE_OK)
        return status;
    t->pairs[p].touched = 1;
    t->touched[t->ntouched++] = p;
    return BPE_OK;
}

/* The record of (left, right), created (count 0) when new. */
static int pair_get(bpe_wp_trainer *t, uint32_t left, uint32_t right, uint32_t *p)
{
    uint32_t found = bpe__pairmap_get(&t->map, left, right);
    wp_pair *r;
    int status;

    if (found != BPE__NONE) {
        *p = found;
        return BPE_OK;
    }
    if (t->npairs >= BPE__NONE - 1)
        return BPE_ETOOBIG;
    if ((status = bpe__reserve((void **)&t->pairs, &t->pairs_cap, t->npairs + 1,
                               sizeof *t->pairs)) != BPE_OK ||
        (status = bpe__pairmap_put(&t->map, left, right,
                                   (uint32_t)t->npairs)) != BPE_OK)
        return status;
    r = &t->pairs[t->npairs];
    memset(r, 0, sizeof *r);
    r->left = left;
    r->right = right;
    r->key_lb = BPE__NONE;
    r->exact = 1;
    *p = (uint32_t)t->npairs++;
    return BPE_OK;
}

/* (left, right) now occurs at node `key` of a word of frequency f. */
static int occ_add(bpe_wp_trainer *t, uint32_t left, uint32_t right,
                   uint32_t key, uint64_t f)
{
    uint32_t p;
    wp_pair *r;
    int status;

    if ((status = pair_get(t, left, right, &p)) != BPE_OK ||
        (status = bpe__occ_push(&t->pairs[p].occ, key)) != BPE_OK)
        return status;
    r = &t->pairs[p];
    r->count += f;  /* (never past the total weight: see the essay) */
    if (key < r->key_lb)
        r->key_lb = key;  /* below every valid key: the exact key */
    if (r->count > 0 && !r->listed && (status = list_pair(t, p)) != BPE_OK)
        return status;
    return touch(t, p);
}

/* The valid occurrence of (left, right) at node `key` is about to go. */
static int occ_remove(bpe_wp_trainer *t, uint32_t left, uint32_t right,
                      uint32_t key, uint64_t f)
{
    uint32_t p = bpe__pairmap_get(&t->map, left, right);
    wp_pair *r;

    assert(p != BPE__NONE);
    r = &t->pairs[p];
    assert(r->count >= f);
    r->count -= f;
    if (key == r->key_lb)
        r->exact = 0;  /* the bound may now be below every valid key */
    return touch(t, p);
}

/* ---- building ----------------------------------------------------------- */

bpe_wp_trainer *bpe_wp_trainer_new(bpe_symtab *symtab, const bpe_words *words,
                                   uint64_t min_frequency, const char *prefix,
                                   size_t prefix_len, int *status)
{
    bpe_wp_trainer *t = NULL;
    size_t nsym = bpe_symtab_size(symtab), total = 0, k, i;
    uint64_t weight = 0;
    int st = BPE_EINVAL;

    if (symtab == NULL || words == NULL || min_frequency < 1 ||
        (prefix == NULL && prefix_len != 0))
        goto cleanup;
    if ((st = bpe__train_count_nodes(words, nsym, &total, &weight)) != BPE_OK)
        goto cleanup;  /* (validated before allocating) */
    st = BPE_ETOOBIG;
    if (total >= BPE__NONE || words->n >= BPE__NONE)
        goto cleanup;
    st = BPE_ENOMEM;
    if ((t = calloc(1, sizeof *t)) == NULL)
        goto cleanup;
    t->symtab = symtab;
    t->min_frequency = min_frequency;
    t->prefix_len = prefix_len;
    t->prefix = malloc(prefix_len + 1);
    t->nodes = malloc((total + 1) * sizeof *t->nodes);
    t->freq = malloc((words->n + 1) * sizeof *t->freq);
    if (t->prefix == NULL || t->nodes == NULL || t->freq == NULL)
        goto cleanup;
    if (prefix_len != 0)
        memcpy(t->prefix, prefix, prefix_len);
    if ((st = grow_symbols(t)) != BPE_OK ||
        (st = bpe__pairmap_init(&t->map, total / 4)) != BPE_OK)
        goto cleanup;
    bpe__train_lay_out(words, t->nodes, t->freq);
    for (i = 0; i < total; i++)
        t->symcount[t->nodes[i].sym] += t->freq[t->nodes[i].word];
    for (i = 0; i < total; i++) {  /* keys ascend: each occ list is a heap */
        const bpe__node *nd = &t->nodes[i];
        if (nd->next != BPE__NONE &&
            (st = occ_add(t, nd->sym, t->nodes[nd->next].sym, (uint32_t)i,
                          t->freq[nd->word])) != BPE_OK)
            goto cleanup;
    }
    for (k = 0; k < t->ntouched; k++)
        t->pairs[t->touched[k]].touched = 0;
    t->ntouched = 0;
    if ((st = bpe__reserve((void **)&t->heap, &t->heap_cap, t->npairs + 1,
                           sizeof *t->heap)) != BPE_OK)
        goto cleanup;
    heap_rebuild(t);
    st = BPE_OK;
cleanup:
    if (st != BPE_OK) {
        bpe_wp_trainer_free(t);
        t = NULL;
    }
    if (status != NULL)
        *status = st;
    return t;
}

void bpe_wp_trainer_free(bpe_wp_trainer *t)
{
    size_t k;

    if (t == NULL)
        return;
    for (k = 0; k < t->npairs; k++)
        free(t->pairs[k].occ.keys);
    for (k = 0; k < t->nsyms; k++)
        free(t->users[k].items);
    free(t->pairs);
    free(t->users);
    free(t->symcount);
    bpe__pairmap_free(&t->map);
    free(t->prefix);
    free(t->nodes);
    free(t->freq);
    free(t->heap);
    free(t->touched);
    free(t->sort_tmp);
    free(t->scratch);
    free(t);
}

/* ---- one step ----------------------------------------------------------- */

/* The best pair into *best: 1, or 0 when no candidate is left. */
static int choose(bpe_wp_trainer *t, uint32_t *best)
{
    while (t->heap_len > 0) {
        wp_entry e = t->heap[0];
        wp_pair *r = &t->pairs[e.pair];

        if (!current(t, &e)) {
            heap_pop(t);  /* stale */
            continue;
        }
        if (!r->exact) {
            uint32_t first = bpe__occ_first(t->nodes, &r->occ, r->left, r->right);
            assert(first != BPE__NONE);  /* count > 0: a valid one exists */
            r->exact = 1;
            if (first != r->key_lb) {
                r->key_lb = first;
                t->heap[0].key = r->key_lb;  /* re-push, in place */
                heap_sift_down(t->heap, t->heap_len, 0);
                continue;
            }
        }
        heap_pop(t);
        *best = e.pair;
        return 1;
    }
    return 0;
}

/* The ID of left + right without right's prefix, interned when new. */
static int intern_merged(bpe_wp_trainer *t, uint32_t left, uint32_t right,
                         uint32_t *merged)
{
    size_t la, lb;
    const char *a = bpe_symtab_bytes(t->symtab, left, &la);
    const char *b = bpe_symtab_bytes(t->symtab, right, &lb);
    int status;

    if (t->prefix_len <= lb && memcmp(b, t->prefix, t->prefix_len) == 0) {
        b += t->prefix_len;
        lb -= t->prefix_len;
    }
    if ((status = bpe__reserve((void **)&t->scratch, &t->scratch_cap,
                               la + lb + 1, 1)) != BPE_OK)
        return status;
    memcpy(t->scratch, a, la);
    memcpy(t->scratch + la, b, lb);
    if ((status = bpe_symtab_intern(t->symtab, t->scratch, la + lb, merged)) != BPE_OK)
        return status;
    return grow_symbols(t);
}

/* Rewrites every valid occurrence of pair p as `merged`, left to right (the
 * skip-two rule falls out of the validity test in ascending order). */
static int merge_occurrences(bpe_wp_trainer *t, uint32_t p, uint32_t merged)
{
    uint32_t a = t->pairs[p].left, b = t->pairs[p].right;
    uint32_t *occ = t->pairs[p].occ.keys;
    size_t nocc = t->pairs[p].occ.len, k;
    int status = BPE_OK;

    /* Detach the list: occurrences made during this merge (a merge that
     * remakes its left symbol, b being exactly the prefix) go to a fresh one
     * and are not merged in this pass. */
    memset(&t->pairs[p].occ, 0, sizeof t->pairs[p].occ);
    if ((status = bpe__reserve((void **)&t->sort_tmp, &t->sort_cap, nocc,
                               sizeof *t->sort_tmp)) != BPE_OK)
        goto cleanup;
    bpe__sort_keys(occ, nocc, t->sort_tmp);
    for (k = 0; k < nocc; k++) {
        uint32_t i = occ[k], j, pv, nx;
        uint64_t f;
        if ((k > 0 && occ[k - 1] == i) || !bpe__occ_valid(t->nodes, i, a, b))
            continue;  /* a duplicate, or stale */
        j = t->nodes[i].next;
        pv = bpe__prev(t->nodes, i);
        nx = t->nodes[j].next;
        f = t->freq[t->nodes[i].word];
        if ((pv != BPE__NONE &&
             (status = occ_remove(t, t->nodes[pv].sym, a, pv, f)) != BPE_OK) ||
            (status = occ_remove(t, a, b, i, f)) != BPE_OK ||
            (nx != BPE__NONE &&
             (status = occ_remove(t, b, t->nodes[nx].sym, j, f)) != BPE_OK))
            goto cleanup;
        bpe__join(t->nodes, i, j, nx, merged);  /* node j leaves the word */
        t->symcount[a] -= f;
        t->symcount[b] -= f;
        t->symcount[merged] += f;
        if ((pv != BPE__NONE &&
             (status = occ_add(t, t->nodes[pv].sym, merged, pv, f)) != BPE_OK) ||
            (nx != BPE__NONE &&
             (status = occ_add(t, merged, t->nodes[nx].sym, i, f)) != BPE_OK))
            goto cleanup;
    }
    {  /* what is left of (a, b) is in the fresh list: its first key again */
        wp_pair *r = &t->pairs[p];
        r->key_lb = bpe__occ_first(t->nodes, &r->occ, a, b);
        r->exact = 1;
        status = touch(t, p);
    }
cleanup:
    free(occ);
    return status;
}

/* Touches every pair of symbol s with count > 0 (its score moved with
 * count(s)) and drops the others from s's list. */
static int touch_users(bpe_wp_trainer *t, uint32_t s)
{
    wp_list *l = &t->users[s];
    size_t k, kept = 0;
    int status;

    for (k = 0; k < l->len; k++) {
        wp_pair *r = &t->pairs[l->items[k]];
        if (r->count > 0) {
            if (r->seen)
                continue;  /* a pair listed twice (it came back): once is enough */
            r->seen = 1;
            l->items[kept++] = l->items[k];
        } else if (r->listed) {
            r->listed = 0;  /* listed again, in both lists, if it comes back */
            t->nlisted--;
        }
    }
    l->len = kept;
    for (k = 0; k < kept; k++) {  /* (touch only grows its own array) */
        t->pairs[l->items[k]].seen = 0;
        if ((status = touch(t, l->items[k])) != BPE_OK)
            return status;
    }
    return BPE_OK;
}

/* One fresh heap entry per touched candidate; a rebuild when stale entries
 * dominate. */
static int push_touched(bpe_wp_trainer *t)
{
    size_t k;
    int status = BPE_OK;

    for (k = 0; k < t->ntouched; k++) {
        uint32_t p = t->touched[k];
        t->pairs[p].touched = 0;
        if (status == BPE_OK && t->pairs[p].count >= t->min_frequency &&
            t->pairs[p].count > 0)
            status = heap_push(t, p);
    }
    t->ntouched = 0;
    if (status == BPE_OK && t->heap_len > 2 * t->nlisted + HEAP_FLOOR)
        heap_rebuild(t);
    return status;
}

/* One merge: 1 done, 0 nothing left, < 0 a status. */
static int step(bpe_wp_trainer *t, bpe_wp_merge *out)
{
    uint32_t p, merged;
    int status;

    if (!choose(t, &p))
        return 0;
    out->left = t->pairs[p].left;
    out->right = t->pairs[p].right;
    out->count = t->pairs[p].count;
    out->left_count = t->symcount[out->left];
    out->right_count = t->symcount[out->right];
    if ((status = intern_merged(t, out->left, out->right, &merged)) ||
        (status = merge_occurrences(t, p, merged)) ||
        (status = touch_users(t, out->left)) ||
        (status = touch_users(t, out->right)) ||
        (status = touch_users(t, merged)) ||
        (status = push_touched(t)))
        return status;
    out->merged = merged;
    return 1;
}

int bpe_wp_trainer_run(bpe_wp_trainer *trainer, size_t target_size,
                       size_t max_steps, bpe_wp_merge *out, size_t *n_out)
{
    size_t done = 0;
    int status = BPE_OK;

    if (trainer == NULL || n_out == NULL || (out == NULL && max_steps != 0))
        return BPE_EINVAL;
    if (trainer->failed)
        status = trainer->failed;
    while (status == BPE_OK && done < max_steps &&
           bpe_symtab_size(trainer->symtab) < target_size) {
        int r = step(trainer, &out[done]);
        if (r < 0)
            trainer->failed = status = r;
        else if (r == 0)
            break;
        else
            done++;
    }
    *n_out = done;
    return status;
}
