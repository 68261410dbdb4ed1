/*
 * train_core.h -- the machinery the two incremental trainers share.
 *
 * trainer.c (BPE: the pair with the highest count wins) and wordpiece.c
 * (WordPiece: the highest count(ab) / (count(a) * count(b)) wins) learn by
 * the same mechanism; only the priority rule and WordPiece's per-symbol
 * counts differ.  What is the same lives here, once:
 *   - the NODES: every symbol of every word in one flat array, words in
 *     first-appearance order (bpe__train_count_nodes, bpe__train_lay_out),
 *     so the index of a pair occurrence's left node, its KEY, orders
 *     occurrences as a Counter rebuilt from scratch would meet them;
 *   - a pair's OCCURRENCE LIST, a lazy min-heap of keys (bpe__occ_*), its
 *     validity test and the search for its first valid key;
 *   - the sort of a detached occurrence list (bpe__sort_keys);
 *   - the step that rewrites one occurrence (bpe__join).
 * trainer.c's header essay gives the invariants and why they hold.
 *
 * Why static inline functions in a header and not functions in a .c file:
 * these run once or more per occurrence in the merge loop of both trainers,
 * the hottest loop of training; inlined in each trainer they cost what the
 * two private copies cost (checked with cachegrind on Shakespeare, see the
 * commit).  Book level: no Python, no Unicode.
 */
#ifndef BPE_TRAIN_CORE_H
#define BPE_TRAIN_CORE_H

#include <assert.h>
#include <string.h>

#include "internal.h"

/* sym of a node that was merged into its left neighbour.  Live symbols
 * are IDs of the symbol table, which stay below BPE_NO_SYMBOL. */
#define BPE__DEAD UINT32_MAX

/* One node, 16 bytes: a node and its right neighbour usually share a cache
 * line, and a merge touches a few adjacent nodes.  (Separate sym/next
 * arrays cost one miss each per occurrence: 1.6x slower on Shakespeare.)
 * `pair` is trainer.c's (see its header); wordpiece.c never reads it.
 *
 * No left link: a live node's left neighbour is found from node i - 1
 * (bpe__prev), which is the last node of that neighbour's span -- itself
 * when alive, else a node it absorbed, whose `next` then names it (the
 * OWNER link, kept by bpe__join).  Dropping the link took the nodes from
 * 20 to 16 bytes: on Shakespeare (chapter flavour, ~1M nodes) 4 MB, ~1,000
 * pages, fewer to fault in and to miss in. */
typedef struct {
    uint32_t sym;   /* symbol ID, or BPE__DEAD */
    uint32_t next;  /* right neighbour, or BPE__NONE; dead: see bpe__prev */
    uint32_t word;  /* index into the trainer's per-word frequencies */
    uint32_t pair;  /* trainer.c: its record of the pair starting here */
} bpe__node;

/* The left neighbour of live node i, or BPE__NONE when i starts its word.
 * Node i - 1 ends the span of i's left neighbour when there is one.  Alive,
 * it is that neighbour exactly when its next is i.  Dead, its `next` is
 * the OWNER link: bpe__join(o, j, nx) sets node nx - 1's next to o, and
 * only there, so a link at i - 1 means i was o's right neighbour -- and
 * still is while i lives (o's next changes only when o absorbs i; when o
 * is absorbed in turn, its right neighbour i is that join's nx, and the
 * link moves to the new owner).  A dead node d that got no link keeps the
 * next it had when it died: BPE__NONE when it ended its word (then i
 * starts the next one), or its right neighbour nx then, with d < nx - 1
 * (nx - 1 got the link) -- so d + 1 is dead, and d is not i - 1. */
static inline uint32_t bpe__prev(const bpe__node *nodes, uint32_t i)
{
    const bpe__node *left;

    if (i == 0)
        return BPE__NONE;
    left = &nodes[i - 1];
    if (left->sym != BPE__DEAD)
        return left->next == i ? i - 1 : BPE__NONE;
    assert(left->next == BPE__NONE || nodes[left->next].next == i);
    return left->next;
}

/* A pair's occurrences: a min-heap of keys, lazy (it may hold stale keys,
 * dropped when they surface).  len and cap are 32-bit (a list never holds
 * more keys than there are nodes, fewer than BPE__NONE, except that with
 * the empty symbol a node can be pushed twice: bpe__occ_grow refuses past
 * UINT32_MAX): 16 bytes, so trainer.c's pair record fits 32. */
typedef struct {
    uint32_t *keys;
    uint32_t len, cap;
} bpe__occ;

/* ---- building ----------------------------------------------------------- */

/* Checks every symbol of `words` (BPE_NO_SYMBOL, which gets no node, or an
 * ID below nsym: else BPE_EINVAL) and counts the nodes into *total.  With
 * weight != NULL it also sums the frequencies of all nodes into *weight,
 * BPE_EOVERFLOW when that passes 2^64 - 1.  Errors in the order met. */
static inline int bpe__train_count_nodes(const bpe_words *words, size_t nsym,
                                         size_t *total, uint64_t *weight)
{
    size_t w, k, n = 0;
    uint64_t sum = 0;

    for (w = 0; w < words->n; w++) {
        for (k = 0; k < words->len[w]; k++) {
            uint32_t s = words->syms[words->start[w] + k];
            if (s == BPE_NO_SYMBOL)
                continue;  /* no node */
            if (s >= nsym)
                return BPE_EINVAL;  /* not an ID of the table */
            n++;
            if (weight != NULL) {
                if (sum > UINT64_MAX - words->freq[w])
                    return BPE_EOVERFLOW;
                sum += words->freq[w];
            }
        }
    }
    *total = n;
    if (weight != NULL)
        *weight = sum;
    return BPE_OK;
}

/* Lays one word, syms[0..n) of word index w, out as nodes from nodes[i]
 * on; returns the index after its last node.  BPE_NO_SYMBOL gets no node
 * and cuts the word: as if it were two words of the same frequency. */
static inline size_t bpe__train_lay_word(bpe__node *nodes, size_t i,
                                         const uint32_t *syms, size_t n,
                                         size_t w)
{
    size_t k;
    int linked = 0;  /* is node i - 1 the left neighbour of node i? */

    for (k = 0; k < n; k++) {
        uint32_t s = syms[k];
        if (s == BPE_NO_SYMBOL) {
            linked = 0;  /* cut the word here */
            continue;
        }
        nodes[i].sym = s;
        nodes[i].word = (uint32_t)w;
        nodes[i].next = BPE__NONE;
        nodes[i].pair = BPE__NONE;
        if (linked)
            nodes[i - 1].next = (uint32_t)i;
        linked = 1;
        i++;
    }
    return i;
}

/* Lays the words out as nodes (room for bpe__train_count_nodes' total) and
 * copies their frequencies into freq (room for words->n). */
static inline void bpe__train_lay_out(const bpe_words *words, bpe__node *nodes,
                                      uint64_t *freq)
{
    size_t w, i;

    for (w = 0, i = 0; w < words->n; w++) {
        freq[w] = words->freq[w];
        if (words->len[w] != 0)  /* (syms may be NULL when every word is empty) */
            i = bpe__train_lay_word(nodes, i, words->syms + words->start[w],
                                    words->len[w], w);
    }
}

/* trainer.c: the BPE trainer over `total` nodes laid out as
 * bpe__train_lay_out lays them, with their words' frequencies (both arrays
 * malloc'd; they become the trainer's, and are freed here on failure).
 * bpe_trainer_new lays out a word table; bpe_counter_trainer (counter.c)
 * a counter's words, with no word table between.  NULL and *status on
 * failure. */
bpe_trainer *bpe__trainer_from_nodes(bpe_symtab *symtab, bpe__node *nodes,
                                     size_t total, uint64_t *freq,
                                     uint64_t min_frequency,
                                     uint32_t max_token_units, int *status);

/* ---- occurrence lists --------------------------------------------------- */

/* Room for at least `need` keys in o (bpe__reserve: at least doubling).
 * BPE_OK, or BPE_ENOMEM / BPE_ETOOBIG with o unchanged. */
static inline int bpe__occ_grow(bpe__occ *o, size_t need)
{
    size_t cap = o->cap;
    int status;

    if (need > UINT32_MAX)
        return BPE_ETOOBIG;
    if ((status = bpe__reserve((void **)&o->keys, &cap, need,
                               sizeof *o->keys)) != BPE_OK)
        return status;
    o->cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
    return BPE_OK;
}

static inline int bpe__occ_push(bpe__occ *o, uint32_t key)
{
    size_t i;

    /* The common case, room already there, inline: this runs once per
     * occurrence made. */
    if (o->len + (size_t)1 > o->cap) {
        int status = bpe__occ_grow(o, o->len + (size_t)1);
        if (status != BPE_OK)
            return status;
    }
    for (i = o->len++; i > 0 && o->keys[(i - 1) / 2] > key; i = (i - 1) / 2)
        o->keys[i] = o->keys[(i - 1) / 2];
    o->keys[i] = key;
    return BPE_OK;
}

static inline void bpe__occ_pop(bpe__occ *o)
{
    uint32_t last = o->keys[--o->len];
    size_t i = 0, n = o->len;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && o->keys[c + 1] < o->keys[c])
            c++;
        if (o->keys[c] >= last)
            break;
        o->keys[i] = o->keys[c];
        i = c;
    }
    if (n > 0)
        o->keys[i] = last;
}

/* Is (left, right) the pair at node i right now? */
static inline int bpe__occ_valid(const bpe__node *nodes, uint32_t i,
                                 uint32_t left, uint32_t right)
{
    return nodes[i].sym == left && nodes[i].next != BPE__NONE &&
           nodes[nodes[i].next].sym == right;
}

/* Drops stale keys off the top of o; its smallest valid key for the pair
 * (left, right), or BPE__NONE when none is left. */
static inline uint32_t bpe__occ_first(const bpe__node *nodes, bpe__occ *o,
                                      uint32_t left, uint32_t right)
{
    while (o->len > 0 && !bpe__occ_valid(nodes, o->keys[0], left, right))
        bpe__occ_pop(o);
    return o->len > 0 ? o->keys[0] : BPE__NONE;
}

/* ---- merging ------------------------------------------------------------ */

/* Occurrence lists shorter than this are insertion-sorted; longer ones
 * radix-sorted.  (glibc's qsort was 6% of a Shakespeare run.) */
#define BPE__SORT_SMALL 64
#define BPE__RADIX_BITS 8

/* Sorts keys[0..n) ascending; tmp has room for n keys.  Most lists arrive
 * sorted: keys are pushed in ascending order while building and within one
 * merge pass, and a binary heap filled in ascending order is its insertion
 * order.  So the sort first checks; on Shakespeare (chapter flavour) that
 * took sorting from ~10% of the instructions to ~1%. */
static inline void bpe__sort_keys(uint32_t *keys, size_t n, uint32_t *tmp)
{
    size_t count[1u << BPE__RADIX_BITS];
    size_t i;
    uint32_t max = 0, *src = keys, *dst = tmp;
    unsigned shift;

    for (i = 1; i < n && keys[i - 1] <= keys[i]; i++)
        ;
    if (i >= n)
        return;  /* already sorted: the common case (see above) */
    if (n < BPE__SORT_SMALL) {
        for (i = 1; i < n; i++) {
            uint32_t k = keys[i];
            size_t j = i;
            for (; j > 0 && keys[j - 1] > k; j--)
                keys[j] = keys[j - 1];
            keys[j] = k;
        }
        return;
    }
    for (i = 0; i < n; i++)
        max = keys[i] > max ? keys[i] : max;
    for (shift = 0; shift < 32 && (max >> shift) != 0;
         shift += BPE__RADIX_BITS) {
        size_t sum = 0;
        uint32_t *swap;
        memset(count, 0, sizeof count);
        for (i = 0; i < n; i++)
            count[(src[i] >> shift) & ((1u << BPE__RADIX_BITS) - 1)]++;
        for (i = 0; i < (1u << BPE__RADIX_BITS); i++) {
            size_t c = count[i];
            count[i] = sum;
            sum += c;
        }
        for (i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & ((1u << BPE__RADIX_BITS) - 1)]++] =
                src[i];
        swap = src;
        src = dst;
        dst = swap;
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof *keys);
}

/* Node i takes the symbol `merged` of the pair at i, and its right
 * neighbour j (whose right neighbour is nx) leaves the word: its sym
 * becomes BPE__DEAD.  Node nx - 1, the last of j's span and now of i's,
 * gets the owner link to i (see bpe__prev).  The caller has read j and nx
 * already, to remove the occurrences this destroys (and adds the ones it
 * makes); passing them saves reloading them per occurrence. */
static inline void bpe__join(bpe__node *nodes, uint32_t i, uint32_t j,
                             uint32_t nx, uint32_t merged)
{
    nodes[i].sym = merged;
    nodes[i].next = nx;
    nodes[j].sym = BPE__DEAD;
    if (nx != BPE__NONE)
        nodes[nx - 1].next = i;  /* nx - 1 >= j: dead now */
}

#endif /* BPE_TRAIN_CORE_H */
