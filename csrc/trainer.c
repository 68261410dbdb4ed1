/*
 * trainer.c -- the incremental BPE trainer (Chapter 11, listing 064).
 *
 * Learns exactly the merges that repeating find_best_pair + merge_pair
 * (words.c) would learn, in the same order, with the same first-encountered
 * tie-break -- but after a merge it touches only the occurrences of the
 * merged pair.  It does not decide what the initial symbols are, and it does
 * not apply merges to new text (merger.c does).
 *
 * THE STRUCTURE.  All distinct words are laid out one after another in one
 * flat array of nodes, in first-appearance order, so a node's global index
 * orders occurrences exactly as (word index, position in word) does.  Each
 * node has sym (BPE__DEAD once merged away), prev and next (global indices,
 * BPE__NONE at the ends of a word) and word (for the frequency).  When the
 * pair at node i merges, node i keeps the merged symbol and its right
 * neighbour j dies.
 *
 * The KEY of a pair occurrence is the global index of its left node.  It
 * never moves when other parts of the word merge, and the smallest valid
 * key of a pair is exactly where a Counter rebuilt from scratch would first
 * meet it: the SPEC's first-encountered tie-break.
 *
 * An occurrence (P, i) is VALID iff node i is alive, sym[i] == P.left,
 * next[i] != NONE and sym[next[i]] == P.right.  Invariants:
 *   (1) P.count = sum of word frequencies over P's valid occurrences.
 *   (2) Every valid occurrence of P is in P's occurrence min-heap (which
 *       may also hold stale ones: the lists are lazy).
 *   (3) P.key_lb <= every valid key of P; if P.exact, key_lb IS the
 *       smallest valid key (or BPE__NONE when there is none).
 *   (4) Every pair with count > 0 and count >= t->floor that is not
 *       banned has an entry {count, key_lb} in the main max-heap; other
 *       entries are stale and are dropped when they surface.
 * A stale occurrence never becomes valid again when symbols are non-empty:
 * every change to the pair at node i lengthens its left string (i merges
 * with its right neighbour) or keeps the left and lengthens the right (the
 * neighbour merges with its own right neighbour), so (len left, len right)
 * grows strictly, (sym[i], sym[next[i]]) never returns to an earlier pair,
 * and each (pair, node) is pushed at most once.  The empty string is a legal
 * symbol, though: merging (a, "") gives a again, so a pair can come back and
 * a node can be pushed twice.  Two guards make that harmless: a merge skips
 * a node it meets twice in a row, and occurrences created while a pair is
 * being merged go to a fresh list, not to the one being walked (merge_pair
 * never re-merges what it just made either).
 *
 * BPE_NO_SYMBOL ("unknown") never pairs: it gets no node, and the word is
 * cut there, as if it were two words of the same frequency.
 *
 * Choosing: pop the main heap (count desc, key_lb asc), skipping stale
 * entries.  If the top pair's key is only a lower bound, find the true one
 * (pop stale occurrences off its heap); if it moved, re-push and pop again.
 * An exact top wins: every other pair has a lower count, or the same count
 * and a lower bound >= our true key (and no two pairs share a valid key).
 *
 * THE FLOOR.  Only pairs of count >= floor are in the main heap.  A pair
 * below it cannot win, nor tie, while any valid entry is left (every valid
 * entry's count is >= floor > its count), so leaving it out changes no
 * merge.  When the heap runs dry the floor halves (never below
 * min_frequency) and one pass over the pair records pushes those that now
 * reach it; it starts at half the best initial count.  Without it the heap
 * held an entry for every live pair -- ~100k on Shakespeare, most with
 * counts of 1 or 2 that never win -- so each stale pop walked ~17 levels
 * of a 2-4 MB array, a cache miss a level.  Measured on Shakespeare to
 * 8,000 (C alone, CPU time, best of 3, three rounds alternating): the merge
 * loop 0.121-0.125 -> 0.104-0.107 s (chapter flavour), 0.054 -> 0.045 s
 * (byte level); ~10 passes over the pairs in all.
 *
 * WHERE THE TIME GOES, and what was tried: csrc/NOTES.md, "The trainer".
 *
 * COUNTS NEVER WRAP.  A pair's count is a sum of uint64 word frequencies and
 * may pass 2^64 - 1 (two words of 2^63 share a pair; or a merge joins the
 * counts of two pairs that build the same string).  Within a step a count
 * goes up and down as occurrences are added and removed, so an intermediate
 * sum may pass 2^64 - 1 although the count after the step fits.  Each
 * record therefore keeps `carry`, the count's bits above 64 (modulo 2^32,
 * which is exact: a count is below 2^32 occurrences times 2^64): the true
 * count is carry * 2^64 + count.  After building and after every step a
 * touched pair with carry != 0 fails the trainer with BPE_EOVERFLOW --
 * exactly when a true count passes 2^64 - 1, which is the rule the Python
 * twin checks on its unbounded ints.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "train_core.h"

/* How far ahead the merge loop prefetches nodes (occurrences are sorted,
 * but sparse: each one is a cache miss without it), and how far ahead it
 * follows a prefetched node's links to what merging it will read: its
 * word's frequency and its neighbours (by then the node is in cache, so
 * following them costs no wait).  The second stage made the merge loop
 * ~8% faster on Shakespeare, both flavours (min of 5 runs, three rounds
 * alternating: chapter 100-113 -> 95-101 ms, byte-level 51-52 -> 46-49).
 * PREFETCH is in internal.h. */
#define PREFETCH_AHEAD 16
#define PREFETCH_NEAR 8

/* Stale main-heap entries pile up (one push per touched pair per step).
 * When the heap holds more than HEAP_SLACK entries per live pair, plus
 * HEAP_FLOOR, it is rebuilt from the live pairs: linear time, and it keeps
 * the heap within a constant factor of what is needed. */
/* The build indexes pairs of initial symbols by a table of nsym^2 entries
 * when there are at most this many symbols (1 MB at most). */
#define DENSE_SYMBOLS 512

#define HEAP_SLACK 4
#define HEAP_FLOOR 1024

/* bpe__reserve with its common case -- room already there -- inline: the
 * heap, occurrence-list and touched-list pushes run once or more per
 * occurrence, and the out-of-line call was ~5% of a Shakespeare run's
 * instructions (cachegrind). */
#define RESERVE(array, cap, need)                                        \
    ((need) <= (cap) ? BPE_OK                                            \
                     : bpe__reserve((void **)&(array), &(cap), (need),    \
                                    sizeof *(array)))

/* A pair's record is split in two.  What the merge loop reads and writes
 * per occurrence is pair_rec, 32 bytes in an array aligned to PAIR_ALIGN,
 * so a record is one cache line, never two; its left and right symbols
 * and the carry (read once per merge, or only after a count wrapped) are
 * pair_side, a parallel array.  The 56-byte record it replaces straddled
 * two lines 7 times in 8, and a merge touches ~4 records per occurrence. */
typedef struct {
    uint64_t count;          /* invariant (1), the low 64 bits */
    bpe__occ occ;            /* min-heap of keys (left-node indices) */
    uint32_t key_lb;         /* invariant (3) */
    unsigned char exact;     /* key_lb is the true first key */
    unsigned char banned;    /* would exceed max_token_units: never merged */
    unsigned char touched;   /* on the touched list of the current step */
    unsigned char small;     /* occ.keys is a block of the trainer's pool */
} pair_rec;

typedef struct {
    uint32_t left, right;
    uint32_t carry;          /* the bits above count (see COUNTS NEVER WRAP) */
} pair_side;

#define PAIR_ALIGN 64

typedef struct {
    uint64_t count;
    uint32_t key, pair;
} heap_entry;

/* A direct-mapped cache in front of the pair map: a merge looks up the same
 * few neighbour pairs again and again, and the map itself (hundreds of
 * thousands of pairs) is a cache miss per probe.  Entries never go stale:
 * pair indices are never reused.  key = (uint64_t)left << 32 | right;
 * an empty slot holds EMPTY_KEY, which no real pair has (IDs < BPE__DEAD). */
#define PAIR_CACHE 4096
#define EMPTY_KEY UINT64_MAX
typedef struct {
    uint64_t key;
    uint32_t index;
} pair_cache_slot;

struct bpe_trainer {
    bpe_symtab *symtab;      /* borrowed */
    uint64_t min_frequency;
    uint32_t max_units;      /* 0 = no limit */
    int failed;              /* a status once a step failed half-way */

    bpe__node *nodes;
    size_t nnodes;
    uint64_t *freq;          /* per word */

    uint32_t *units;         /* per symbol ID: initial symbols it spans */
    size_t units_len, units_cap;

    pair_rec *pairs;         /* PAIR_ALIGN-aligned, inside pairs_block */
    void *pairs_block;       /* what malloc returned: pairs, then side */
    pair_side *side;         /* per pair, parallel to pairs (same block) */
    size_t npairs, pairs_cap, nlive; /* nlive: count > 0 and not banned */
    size_t ncarry;           /* pairs whose carry is not 0 */
    uint64_t *slots;         /* the pair map (see THE PAIR MAP) */
    size_t slot_mask;        /* slot count - 1 (a power of two) */
    pair_cache_slot cache[PAIR_CACHE];  /* recently used map entries */

    heap_entry *heap;        /* main max-heap, invariant (4) */
    size_t heap_len, heap_cap;
    uint64_t floor;          /* invariant (4) holds for counts >= floor */

    uint32_t *touched;       /* pairs whose count or key changed this step */
    size_t ntouched, touched_cap;

    /* The first SMALL_KEYS keys of every occurrence list live in a block
     * of this pool (see SMALL LISTS); freed blocks are chained through
     * their first bytes for reuse. */
    uint32_t **chunks;
    size_t nchunks, chunks_cap, chunk_used;
    uint32_t *free_small;

    char *scratch;           /* bytes(left) + bytes(right) */
    size_t scratch_cap;
    uint32_t *sort_tmp;      /* radix sort buffer */
    size_t sort_cap;
};

/* ---- the main heap ---------------------------------------------------- */

/* x comes out before y: higher count, then smaller key (then pair index,
 * only so the order is total). */
static int entry_before(const heap_entry *x, const heap_entry *y)
{
    if (x->count != y->count)
        return x->count > y->count;
    if (x->key != y->key)
        return x->key < y->key;
    return x->pair < y->pair;
}

static void heap_sift_down(heap_entry *h, size_t n, size_t i)
{
    heap_entry e = h[i];

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && entry_before(&h[c + 1], &h[c]))
            c++;
        if (!entry_before(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

static int heap_push(bpe_trainer *t, uint64_t count, uint32_t key,
                     uint32_t pair)
{
    heap_entry e;
    size_t i;
    int status;

    status = RESERVE(t->heap, t->heap_cap, t->heap_len + 1);
    if (status != BPE_OK)
        return status;
    e.count = count;
    e.key = key;
    e.pair = pair;
    for (i = t->heap_len++; i > 0; i = (i - 1) / 2) {
        size_t parent = (i - 1) / 2;
        if (!entry_before(&e, &t->heap[parent]))
            break;
        t->heap[i] = t->heap[parent];
    }
    t->heap[i] = e;
    return BPE_OK;
}

static void heap_pop(bpe_trainer *t)
{
    assert(t->heap_len > 0);
    t->heap[0] = t->heap[--t->heap_len];
    if (t->heap_len > 0)
        heap_sift_down(t->heap, t->heap_len, 0);
}

/* Replaces the main heap by one entry per live pair of count >= floor
 * (invariant (4) with no stale entries).  Never allocates: nlive <= the
 * current heap length. */
static void heap_rebuild(bpe_trainer *t)
{
    size_t p, i;

    t->heap_len = 0;
    for (p = 0; p < t->npairs; p++) {
        const pair_rec *r = &t->pairs[p];
        if (r->count > 0 && r->count >= t->floor && !r->banned) {
            t->heap[t->heap_len].count = r->count;
            t->heap[t->heap_len].key = r->key_lb;
            t->heap[t->heap_len].pair = (uint32_t)p;
            t->heap_len++;
        }
    }
    for (i = t->heap_len / 2; i-- > 0;)
        heap_sift_down(t->heap, t->heap_len, i);
}

/* ---- occurrence lists: the small-block pool ----------------------------
 *
 * SMALL LISTS.  Most occurrence lists stay short: of the ~133k pairs of a
 * Shakespeare run (chapter flavour, 8,000 tokens), most are made by merges
 * late in the run and hold one to three occurrences.  With each list its
 * own malloc'd array, malloc, realloc and free were ~15% of the merge
 * loop's instructions (callgrind, the last 7,500 merges) and the 133k
 * frees ~5 ms of dropping the trainer.  So a list starts in a block of
 * SMALL_KEYS keys carved from the trainer's chunks; only a list that
 * outgrows it moves to a malloc'd array (which then doubles as before).
 * A block given back (its list moved out, or merged and dropped) is chained
 * onto free_small and handed out again. */
#define SMALL_KEYS 4
#define CHUNK_BLOCKS 8192

/* A free block of the pool for a new list, or NULL (out of memory). */
static uint32_t *small_take(bpe_trainer *t)
{
    uint32_t *block = t->free_small;

    if (block != NULL) {
        memcpy(&t->free_small, block, sizeof t->free_small);
        return block;
    }
    if (t->nchunks == 0 || t->chunk_used == CHUNK_BLOCKS) {
        uint32_t *chunk;
        if (bpe__reserve((void **)&t->chunks, &t->chunks_cap, t->nchunks + 1,
                         sizeof *t->chunks) != BPE_OK)
            return NULL;
        chunk = malloc((size_t)CHUNK_BLOCKS * SMALL_KEYS * sizeof *chunk);
        if (chunk == NULL)
            return NULL;
        t->chunks[t->nchunks++] = chunk;
        t->chunk_used = 0;
    }
    return t->chunks[t->nchunks - 1] + SMALL_KEYS * t->chunk_used++;
}

static void small_give(bpe_trainer *t, uint32_t *block)
{
    memcpy(block, &t->free_small, sizeof t->free_small);
    t->free_small = block;
}

/* Makes room for one more key in r's list: a pool block for an empty
 * list, a malloc'd array of twice the room for a full block, doubling
 * after that. */
static int occ_room(bpe_trainer *t, pair_rec *r)
{
    uint32_t *keys;

    if (r->occ.len < r->occ.cap)
        return BPE_OK;
    if (r->occ.cap == 0) {
        if ((r->occ.keys = small_take(t)) == NULL)
            return BPE_ENOMEM;
        r->occ.cap = SMALL_KEYS;
        r->small = 1;
        return BPE_OK;
    }
    if (!r->small)
        return bpe__occ_grow(&r->occ, r->occ.len + (size_t)1);
    if ((keys = malloc(2 * SMALL_KEYS * sizeof *keys)) == NULL)
        return BPE_ENOMEM;
    memcpy(keys, r->occ.keys, SMALL_KEYS * sizeof *keys);
    small_give(t, r->occ.keys);
    r->occ.keys = keys;
    r->occ.cap = 2 * SMALL_KEYS;
    r->small = 0;
    return BPE_OK;
}

/* Gives back a list's keys, whichever kind they are. */
static void occ_release(bpe_trainer *t, uint32_t *keys, int small)
{
    if (small)
        small_give(t, keys);
    else
        free(keys);
}

/* ---- pair records ------------------------------------------------------- */

/* Room for `need` pair records and sides, at least doubling.  Both live
 * in one malloc'd block, records first (PAIR_ALIGN-aligned), so growing is
 * one realloc (two arrays growing in turn could not extend in place: ~1,100
 * more page faults on Shakespeare).  On failure nothing changes. */
static int pairs_reserve(bpe_trainer *t, size_t need)
{
    size_t cap = t->pairs_cap, old_off, new_off, rec = sizeof *t->pairs,
           sides = sizeof *t->side;
    char *block;

    if (need <= cap)
        return BPE_OK;
    cap = cap * 2 > need ? cap * 2 : need;
    cap = cap < 1024 ? 1024 : cap;
    if (cap > (SIZE_MAX - PAIR_ALIGN) / (rec + sides))
        return BPE_ETOOBIG;
    old_off = t->pairs_block == NULL
              ? 0 : (size_t)((char *)t->pairs - (char *)t->pairs_block);
    if ((block = realloc(t->pairs_block, cap * (rec + sides) + PAIR_ALIGN)) == NULL)
        return BPE_ENOMEM;
    new_off = (PAIR_ALIGN - (size_t)((uintptr_t)block % PAIR_ALIGN)) % PAIR_ALIGN;
    /* realloc kept the bytes, not their place: the sides move up past the
     * records' new room first (they never overlap what the records need),
     * then the records shift to the alignment. */
    memmove(block + new_off + cap * rec,
            block + old_off + t->pairs_cap * rec, t->npairs * sides);
    if (new_off != old_off)
        memmove(block + new_off, block + old_off, t->npairs * rec);
    t->pairs_block = block;
    t->pairs = (pair_rec *)(void *)(block + new_off);
    t->side = (pair_side *)(void *)(block + new_off + cap * rec);
    t->pairs_cap = cap;
    return BPE_OK;
}

/* ---- the pair map ------------------------------------------------------
 *
 * THE PAIR MAP.  (left, right) -> pair index, open addressing with linear
 * probing.  A slot is 8 bytes, the hash's high half (a tag) above the pair
 * index, EMPTY_SLOT when empty; a tag that matches is confirmed against
 * the pair's side record, which holds its symbols.  It replaced the
 * shared pairmap (8-byte keys and 4-byte values in two arrays, load at
 * most 1/2, sized for total / 4 pairs: 6 MB on Shakespeare, ~1,500 pages
 * to fault in, and a new pair missed in both arrays): here a new pair
 * misses one slot, and the load may reach 5/8, so Shakespeare's ~133k
 * pairs fit 262,144 slots (2 MB).  Growing re-hashes the pairs from their
 * side records. */
#define EMPTY_SLOT UINT64_MAX
#define SLOT_LOAD_NUM 5
#define SLOT_LOAD_DEN 8

/* The tag hash h leaves in a slot (its low bits choose the slot). */
#define SLOT_TAG(h) ((h) >> 32)

static int slots_alloc(bpe_trainer *t, size_t count)
{
    uint64_t *slots;

    if (count > SIZE_MAX / sizeof *slots ||
        (slots = malloc(count * sizeof *slots)) == NULL)
        return BPE_ENOMEM;
    memset(slots, 0xff, count * sizeof *slots);  /* every slot EMPTY_SLOT */
    free(t->slots);
    t->slots = slots;
    t->slot_mask = count - 1;
    return BPE_OK;
}

/* Puts pair p, hash h, in a free slot (there is one: load < 1). */
static void slot_place(bpe_trainer *t, uint64_t h, uint32_t p)
{
    size_t i = (size_t)h & t->slot_mask;

    while (t->slots[i] != EMPTY_SLOT)
        i = (i + 1) & t->slot_mask;
    t->slots[i] = SLOT_TAG(h) << 32 | p;
}

/* Doubles the map (pairs 0..npairs - 1 re-placed).  On failure the old
 * slots are kept. */
static int slots_grow(bpe_trainer *t)
{
    uint64_t *old = t->slots;
    size_t count = t->slot_mask + 1, p;

    t->slots = NULL;
    if (count > SIZE_MAX / 2 || slots_alloc(t, 2 * count) != BPE_OK) {
        t->slots = old;
        t->slot_mask = count - 1;
        return BPE_ENOMEM;
    }
    free(old);
    for (p = 0; p < t->npairs; p++)
        slot_place(t, bpe__mix64(bpe__pair_key(t->side[p].left, t->side[p].right)),
                   (uint32_t)p);
    return BPE_OK;
}

/* The index of the pair with hash h, (left, right), or BPE__NONE. */
static uint32_t slot_find(const bpe_trainer *t, uint64_t h, uint32_t left,
                          uint32_t right)
{
    size_t i = (size_t)h & t->slot_mask;
    uint64_t s;

    while ((s = t->slots[i]) != EMPTY_SLOT) {
        uint32_t p = (uint32_t)s;
        if (s >> 32 == SLOT_TAG(h) && t->side[p].left == left &&
            t->side[p].right == right)
            return p;
        i = (i + 1) & t->slot_mask;
    }
    return BPE__NONE;
}

/* The index of pair (left, right), hash h, or BPE__NONE when it has no
 * record. */
static uint32_t pair_find(bpe_trainer *t, uint64_t h, uint32_t left,
                          uint32_t right)
{
    uint64_t key = bpe__pair_key(left, right);
    pair_cache_slot *c = &t->cache[h & (PAIR_CACHE - 1)];
    uint32_t at;

    if (c->key == key)
        return c->index;
    at = slot_find(t, h, left, right);
    if (at != BPE__NONE) {
        c->key = key;
        c->index = at;
    }
    return at;
}

/* The index of pair (left, right), creating an empty record if needed. */
static int pair_get(bpe_trainer *t, uint32_t left, uint32_t right,
                    uint32_t *index_out)
{
    uint64_t h = bpe__mix64(bpe__pair_key(left, right));
    uint32_t at = pair_find(t, h, left, right);
    pair_cache_slot *c;
    pair_rec *r;
    int status;

    if (at != BPE__NONE) {
        *index_out = at;
        return BPE_OK;
    }
    if (t->npairs >= BPE__NONE)
        return BPE_ETOOBIG;
    status = pairs_reserve(t, t->npairs + 1);
    if (status == BPE_OK &&
        (t->npairs + 1) * SLOT_LOAD_DEN > (t->slot_mask + 1) * SLOT_LOAD_NUM)
        status = slots_grow(t);
    if (status != BPE_OK)
        return status;
    slot_place(t, h, (uint32_t)t->npairs);
    c = &t->cache[h & (PAIR_CACHE - 1)];  /* (a new pair is often met again soon) */
    c->key = bpe__pair_key(left, right);
    c->index = (uint32_t)t->npairs;
    r = &t->pairs[t->npairs];
    memset(r, 0, sizeof *r);
    t->side[t->npairs].left = left;
    t->side[t->npairs].right = right;
    t->side[t->npairs].carry = 0;
    r->key_lb = BPE__NONE;  /* no valid occurrence yet: exactly known */
    r->exact = 1;
    r->banned = t->max_units != 0 &&
                (uint64_t)t->units[left] + t->units[right] > t->max_units;
    *index_out = (uint32_t)t->npairs++;
    return BPE_OK;
}

/* Puts pair p on this step's touched list (once). */
static int touch(bpe_trainer *t, uint32_t p)
{
    int status;

    if (t->pairs[p].touched)
        return BPE_OK;
    status = RESERVE(t->touched, t->touched_cap, t->ntouched + 1);
    if (status != BPE_OK)
        return status;
    t->touched[t->ntouched++] = p;
    t->pairs[p].touched = 1;
    return BPE_OK;
}

/* Pair p's carry goes up (up != 0) or down by one, ncarry in step. */
/* (Out of line: it runs only when a count wraps or borrows.) */
static void carry_step(bpe_trainer *t, uint32_t p, int up)
{
    uint32_t old = t->side[p].carry;

    t->side[p].carry = up ? old + 1 : old - 1;
    if (old == 0)
        t->ncarry++;
    else if (t->side[p].carry == 0)
        t->ncarry--;
}

/* Is pair p's true count 0?  (Its carry is read only when some carry is
 * not 0: the side array stays out of the merge loop.) */
static inline int count_zero(const bpe_trainer *t, uint32_t p)
{
    return t->pairs[p].count == 0 && (t->ncarry == 0 || t->side[p].carry == 0);
}

/* Adds frequency f to the count of pair p, keeping nlive in step.  (nlive
 * may drift while a count is past 2^64 - 1; the trainer fails right after
 * such a step, so it is never used then.) */
static inline void count_add(bpe_trainer *t, uint32_t p, uint64_t f)
{
    pair_rec *r = &t->pairs[p];

    if (f > 0 && !r->banned && count_zero(t, p))
        t->nlive++;
    r->count += f;
    if (r->count < f)
        carry_step(t, p, 1);  /* wrapped: the true count went past 2^64 - 1 */
}

/* The valid occurrence of pair p at node `key` of a word of frequency f is
 * about to be destroyed. */
static int occ_remove(bpe_trainer *t, uint32_t p, uint32_t key, uint64_t f)
{
    pair_rec *r;

    assert(p != BPE__NONE);  /* a valid occurrence has a record */
    r = &t->pairs[p];
    assert(r->count >= f || t->side[p].carry != 0);
    if (r->count < f)
        carry_step(t, p, 0);  /* borrow from the bits above 64 */
    r->count -= f;
    if (f > 0 && !r->banned && count_zero(t, p))
        t->nlive--;
    if (key == r->key_lb)
        r->exact = 0;  /* the bound may now be below every valid key */
    return touch(t, p);
}

/* Pair p now occurs at node `key` of a word of frequency f. */
static int occ_record_at(bpe_trainer *t, uint32_t p, uint32_t key, uint64_t f)
{
    pair_rec *r = &t->pairs[p];
    int status;

    t->nodes[key].pair = p;
    if (!r->banned) {  /* (a banned pair is never chosen: no list) */
        if ((status = occ_room(t, r)) != BPE_OK)
            return status;
        (void)bpe__occ_push(&r->occ, key);  /* (room made: cannot fail) */
    }
    count_add(t, p, f);
    if (key < r->key_lb)
        r->key_lb = key;  /* a valid key below the old minimum: exact stays */
    return BPE_OK;
}

/* Within a step: (left, right) now occurs at node `key` of a word of
 * frequency f, and its pair goes on the touched list. */
static int occ_add(bpe_trainer *t, uint32_t left, uint32_t right,
                   uint32_t key, uint64_t f)
{
    uint32_t p;
    int status;

    if ((status = pair_get(t, left, right, &p)) != BPE_OK ||
        (status = occ_record_at(t, p, key, f)) != BPE_OK)
        return status;
    return touch(t, p);
}

/* ---- building ----------------------------------------------------------- */

bpe_trainer *bpe_trainer_new(bpe_symtab *symtab, const bpe_words *words,
                             uint64_t min_frequency, uint32_t max_token_units,
                             int *status)
{
    bpe__node *nodes = NULL;
    uint64_t *freq = NULL;
    size_t total = 0;
    int st = BPE_EINVAL;

    if (symtab == NULL || words == NULL || min_frequency < 1)
        goto fail;
    if ((st = bpe__train_count_nodes(words, bpe_symtab_size(symtab), &total,
                                     NULL)) != BPE_OK)
        goto fail;  /* (validated before allocating) */
    st = BPE_ETOOBIG;
    if (total >= BPE__NONE || words->n >= BPE__NONE)
        goto fail;
    st = BPE_ENOMEM;
    nodes = malloc((total + 1) * sizeof *nodes);
    freq = malloc((words->n + 1) * sizeof *freq);
    if (nodes == NULL || freq == NULL)
        goto fail;
    bpe__train_lay_out(words, nodes, freq);
    return bpe__trainer_from_nodes(symtab, nodes, total, freq, min_frequency,
                                   max_token_units, status);
fail:
    free(nodes);
    free(freq);
    if (status != NULL)
        *status = st;
    return NULL;
}

/* (train_core.h) The trainer over `total` nodes laid out as
 * bpe__train_lay_out lays them, with their words' frequencies: both arrays
 * become the trainer's (freed with it, or here on failure). */
bpe_trainer *bpe__trainer_from_nodes(bpe_symtab *symtab, bpe__node *nodes,
                                     size_t total, uint64_t *freq,
                                     uint64_t min_frequency,
                                     uint32_t max_token_units, int *status)
{
    bpe_trainer *t = NULL;
    size_t nsym = bpe_symtab_size(symtab), k, i;
    uint32_t *dense = NULL;  /* pair index by left * nsym + right, or NONE */
    int st = BPE_ENOMEM;

    if ((t = calloc(1, sizeof *t)) == NULL) {
        free(nodes);
        free(freq);
        goto cleanup;
    }
    t->nodes = nodes;
    t->freq = freq;
    t->symtab = symtab;
    memset(t->cache, 0xff, sizeof t->cache);  /* every key EMPTY_KEY */
    t->min_frequency = min_frequency;
    t->max_units = max_token_units;
    t->nnodes = total;
    t->units_cap = nsym + 1;
    t->units = malloc(t->units_cap * sizeof *t->units);
    if (t->units == NULL)
        goto cleanup;
    for (k = 16; k < total / 4; k *= 2)
        ;  /* (Shakespeare: 262,144 slots, enough for all its pairs) */
    if ((st = slots_alloc(t, k)) != BPE_OK)
        goto cleanup;
    for (i = 0; i < nsym; i++)
        t->units[i] = 1;  /* symbols that exist before training */
    t->units_len = nsym;

    /* With few symbols (Shakespeare's characters: 175; bytes: 256) a pair
     * of them indexes a table: no hashing per node while building. */
    if (nsym <= DENSE_SYMBOLS) {
        if ((dense = malloc((nsym * nsym + 1) * sizeof *dense)) == NULL) {
            st = BPE_ENOMEM;
            goto cleanup;
        }
        memset(dense, 0xff, (nsym * nsym + 1) * sizeof *dense);  /* BPE__NONE */
    }
    /* Three passes, so that every list is allocated once at its final
     * length (pushed one by one, lists grew by doubling: ~37k reallocs
     * copying ~3 MB into fresh pages, and a sift-up test per key).  First
     * each node's pair, the pairs' counts and first keys, and each list's
     * length (counted in occ.len for now). */
    for (i = 0; i < total; i++) {
        bpe__node *nd = &t->nodes[i];
        pair_rec *r;
        uint32_t p, right;
        if (nd->next == BPE__NONE)
            continue;
        right = t->nodes[nd->next].sym;
        if (dense == NULL)
            st = pair_get(t, nd->sym, right, &p);
        else if ((p = dense[nd->sym * nsym + right]) == BPE__NONE &&
                 (st = pair_get(t, nd->sym, right, &p)) == BPE_OK)
            dense[nd->sym * nsym + right] = p;
        if (st != BPE_OK)
            goto cleanup;
        nd->pair = p;
        r = &t->pairs[p];
        count_add(t, p, t->freq[nd->word]);
        if (r->occ.len++ == 0)
            r->key_lb = (uint32_t)i;  /* keys ascend: the first is the least */
    }
    for (k = 0; k < t->npairs; k++) {  /* then room for each list, exactly */
        pair_rec *r = &t->pairs[k];
        size_t n = r->occ.len;
        r->occ.len = 0;
        if (r->banned)
            continue;  /* (a banned pair is never chosen: no list) */
        if (n <= SMALL_KEYS) {
            r->occ.keys = small_take(t);
            r->occ.cap = SMALL_KEYS;
            r->small = 1;
        } else {  /* (n < total < BPE__NONE: no overflow) */
            r->occ.keys = malloc(n * sizeof *r->occ.keys);
            r->occ.cap = (uint32_t)n;
        }
        if (r->occ.keys == NULL) {
            r->occ.cap = 0;
            r->small = 0;
            st = BPE_ENOMEM;
            goto cleanup;
        }
    }
    for (i = 0; i < total; i++) {  /* keys in ascending order: each is a heap */
        uint32_t p = t->nodes[i].pair;
        if (p != BPE__NONE && !t->pairs[p].banned) {
            bpe__occ *o = &t->pairs[p].occ;
            o->keys[o->len++] = (uint32_t)i;
        }
    }
    if (t->ncarry != 0)  /* (every pair is new: none is touched) */
        st = BPE_EOVERFLOW;  /* a pair's count passed 2^64 - 1 */
    if (st != BPE_OK)
        goto cleanup;
    if ((st = bpe__reserve((void **)&t->heap, &t->heap_cap, t->nlive + 1,
                           sizeof *t->heap)) != BPE_OK)
        goto cleanup;
    for (k = 0; k < t->npairs; k++)  /* the floor: half the best count */
        if (!t->pairs[k].banned && t->pairs[k].count / 2 > t->floor)
            t->floor = t->pairs[k].count / 2;
    heap_rebuild(t);
    st = BPE_OK;
cleanup:
    free(dense);
    if (st != BPE_OK) {
        bpe_trainer_free(t);
        t = NULL;
    }
    if (status != NULL)
        *status = st;
    return t;
}

void bpe_trainer_free(bpe_trainer *t)
{
    size_t p;

    if (t == NULL)
        return;
    for (p = 0; p < t->npairs; p++)
        if (!t->pairs[p].small)
            free(t->pairs[p].occ.keys);
    for (p = 0; p < t->nchunks; p++)
        free(t->chunks[p]);
    free(t->chunks);
    free(t->pairs_block);
    free(t->slots);
    free(t->nodes);
    free(t->freq);
    free(t->units);
    free(t->heap);
    free(t->touched);
    free(t->scratch);
    free(t->sort_tmp);
    free(t);
}

/* ---- one training step -------------------------------------------------- */

/* Lowers the floor (halves it, but not below min_frequency) and pushes
 * the live pairs that now reach it: invariant (4) again.  0 when the floor
 * was already as low as it goes, 1 when lowered, < 0 a status. */
static int lower_floor(bpe_trainer *t)
{
    uint64_t old = t->floor, low = old / 2;
    size_t p;
    int status;

    if (old <= t->min_frequency || old <= 1)
        return 0;
    t->floor = low < t->min_frequency ? t->min_frequency : low;
    for (p = 0; p < t->npairs; p++) {
        const pair_rec *r = &t->pairs[p];
        if (r->count >= t->floor && r->count < old && !r->banned &&
            (status = heap_push(t, r->count, r->key_lb, (uint32_t)p)) != BPE_OK)
            return status;
    }
    return 1;
}

/* The best pair by (count desc, first key asc) into *best; 1 when there is
 * one with count >= min_frequency, 0 when training is over, < 0 a status.
 * Only pairs of count >= floor are in the heap: one that is not has a count
 * below every count in the heap, so it cannot win, nor tie. */
static int choose(bpe_trainer *t, uint32_t *best)
{
    for (;;) {
        heap_entry e;
        pair_rec *r;
        int lowered;

        if (t->heap_len == 0) {  /* every pair left is below the floor */
            if ((lowered = lower_floor(t)) <= 0)
                return lowered;
            continue;
        }
        e = t->heap[0];
        r = &t->pairs[e.pair];
        if (e.count != r->count || e.key != r->key_lb) {
            heap_pop(t);  /* stale */
            continue;
        }
        if (e.count < t->min_frequency)
            return 0;  /* the best count is too low */
        if (!r->exact) {
            r->key_lb = bpe__occ_first(t->nodes, &r->occ, t->side[e.pair].left,
                                       t->side[e.pair].right);
            assert(r->key_lb != BPE__NONE);  /* count > 0: a valid one exists */
            r->exact = 1;
            if (r->key_lb != e.key) {
                t->heap[0].key = r->key_lb;  /* re-push, in place */
                heap_sift_down(t->heap, t->heap_len, 0);
                continue;
            }
        }
        heap_pop(t);
        *best = e.pair;
        return 1;
    }
}

/* The ID of bytes(left) + bytes(right), interning it when new, with its
 * units recorded. */
static int intern_merged(bpe_trainer *t, uint32_t left, uint32_t right,
                         uint32_t *merged)
{
    size_t la, lb, known = t->units_len, i;
    const char *a = bpe_symtab_bytes(t->symtab, left, &la);
    const char *b = bpe_symtab_bytes(t->symtab, right, &lb);
    int status;

    if ((status = bpe__reserve((void **)&t->scratch, &t->scratch_cap,
                               la + lb + 1, 1)) != BPE_OK)
        return status;
    memcpy(t->scratch, a, la);
    memcpy(t->scratch + la, b, lb);
    if ((status = bpe_symtab_intern(t->symtab, t->scratch, la + lb,
                                    merged)) != BPE_OK)
        return status;
    if ((status = bpe__reserve((void **)&t->units, &t->units_cap,
                               bpe_symtab_size(t->symtab),
                               sizeof *t->units)) != BPE_OK)
        return status;
    for (i = t->units_len; i < bpe_symtab_size(t->symtab); i++)
        t->units[i] = 1;  /* (interned by someone else between runs) */
    t->units_len = bpe_symtab_size(t->symtab);
    if (*merged >= known) {  /* new to us: made of left and right */
        uint64_t u = (uint64_t)t->units[left] + t->units[right];
        t->units[*merged] = u > UINT32_MAX ? UINT32_MAX : (uint32_t)u;
    }
    return BPE_OK;
}

/* Whether symbol s is the empty string. */
static int sym_empty(const bpe_trainer *t, uint32_t s)
{
    size_t len;

    (void)bpe_symtab_bytes(t->symtab, s, &len);
    return len == 0;
}

/* Rewrites every valid occurrence of pair p as `merged`; for (a, a) left to
 * right across the table (the skip-two rule: in "a a a" the occurrence at
 * node 1 dies with node 1 when node 0 merges). */
static int merge_occurrences(bpe_trainer *t, uint32_t p, uint32_t merged)
{
    uint32_t a = t->side[p].left, b = t->side[p].right;
    uint32_t *occ = t->pairs[p].occ.keys;
    size_t nocc = t->pairs[p].occ.len, k;
    int status = BPE_OK, small = t->pairs[p].small;

    /* Detach the list: occurrences of (a, b) created while it is merged
     * (only possible with the empty symbol) go to a fresh one, and are not
     * merged in this pass.  (Also, pairs[] may move under us.) */
    memset(&t->pairs[p].occ, 0, sizeof t->pairs[p].occ);
    t->pairs[p].small = 0;
    if ((status = bpe__reserve((void **)&t->sort_tmp, &t->sort_cap, nocc,
                               sizeof *t->sort_tmp)) != BPE_OK)
        goto cleanup;
    /* Left to right matters only where occurrences can overlap -- (a, a):
     * "a a a" -- or meet a node twice (the empty symbol).  Two occurrences
     * of (a, b), a != b, never share a node, and whichever is merged first,
     * each ends with the same pairs and counts; so such a list is merged in
     * heap order, unsorted.  (Lists filled over many steps are out of key
     * order: sorting them was ~12% of the last 7,500 merges' instructions.) */
    if (a == b || sym_empty(t, a) || sym_empty(t, b))
        bpe__sort_keys(occ, nocc, t->sort_tmp);
    /* The loop's first prefetch stage starts PREFETCH_AHEAD keys in; most
     * late lists are shorter than that, so their nodes are asked for here. */
    for (k = 0; k < nocc && k < PREFETCH_AHEAD; k++)
        PREFETCH(&t->nodes[occ[k]]);
    for (k = 0; k < nocc; k++) {
        uint32_t i = occ[k], j, pv, nx;
        uint64_t f;
        if (k + PREFETCH_AHEAD < nocc)
            PREFETCH(&t->nodes[occ[k + PREFETCH_AHEAD]]);
        if (k + PREFETCH_NEAR < nocc) {
            const bpe__node *soon = &t->nodes[occ[k + PREFETCH_NEAR]];
            PREFETCH(&t->freq[soon->word]);
            if (occ[k + PREFETCH_NEAR] > 0)  /* (for bpe__prev) */
                PREFETCH(soon - 1);
            if (soon->next != BPE__NONE)
                PREFETCH(&t->nodes[soon->next]);
        }
        if ((k > 0 && occ[k - 1] == i) || !bpe__occ_valid(t->nodes, i, a, b))
            continue;  /* a duplicate (empty symbols only), or stale */
        j = t->nodes[i].next;
        pv = bpe__prev(t->nodes, i);
        nx = t->nodes[j].next;
        f = t->freq[t->nodes[i].word];
        if ((pv != BPE__NONE &&
             (status = occ_remove(t, t->nodes[pv].pair, pv, f)) != BPE_OK) ||
            (status = occ_remove(t, p, i, f)) != BPE_OK ||
            (nx != BPE__NONE &&
             (status = occ_remove(t, t->nodes[j].pair, j, f)) != BPE_OK))
            goto cleanup;
        bpe__join(t->nodes, i, j, nx, merged);  /* node j leaves the word */
        if ((pv != BPE__NONE &&
             (status = occ_add(t, t->nodes[pv].sym, merged, pv, f)) != BPE_OK) ||
            (nx != BPE__NONE &&
             (status = occ_add(t, merged, t->nodes[nx].sym, i, f)) != BPE_OK))
            goto cleanup;
    }
    {  /* what is left of (a, b) is in the fresh list: find its first key */
        pair_rec *r = &t->pairs[p];
        r->key_lb = bpe__occ_first(t->nodes, &r->occ, a, b);
        r->exact = 1;
        assert(r->count == 0 || r->key_lb != BPE__NONE);
        status = touch(t, p);  /* its key changed: a fresh heap entry */
    }
cleanup:
    if (occ != NULL)
        occ_release(t, occ, small);
    return status;
}

/* Invariant (4) again: one fresh entry per pair touched this step, and a
 * rebuild when stale entries dominate.  BPE_EOVERFLOW when a touched
 * pair's count passed 2^64 - 1 (only touched counts changed). */
static int push_touched(bpe_trainer *t)
{
    size_t k;
    /* Only touched pairs' counts changed, and every carry was 0 before the
     * step (else the trainer failed): a carry now is a touched pair's. */
    int status = t->ncarry != 0 ? BPE_EOVERFLOW : BPE_OK;

    for (k = 0; k < t->ntouched; k++) {
        pair_rec *r = &t->pairs[t->touched[k]];
        r->touched = 0;
        if (status == BPE_OK && r->count > 0 && r->count >= t->floor &&
            !r->banned)
            status = heap_push(t, r->count, r->key_lb, t->touched[k]);
    }
    t->ntouched = 0;
    if (status == BPE_OK && t->heap_len > HEAP_SLACK * t->nlive + HEAP_FLOOR)
        heap_rebuild(t);
    return status;
}

/* One merge: 1 done (written to *out), 0 nothing left, < 0 a status. */
static int step(bpe_trainer *t, bpe_merge *out)
{
    uint32_t p, merged;
    int status;

    if ((status = choose(t, &p)) <= 0)
        return status;
    out->left = t->side[p].left;
    out->right = t->side[p].right;
    out->count = t->pairs[p].count;
    if ((status = intern_merged(t, out->left, out->right, &merged)) ||
        (status = merge_occurrences(t, p, merged)) ||
        (status = push_touched(t)))
        return status;
    out->merged = merged;
    return 1;
}

/* On failure the trainer is marked failed and every later call returns the
 * same status: a step that stopped half-way leaves counts that no longer
 * describe the words.  Merges completed before the failure are in out. */
int bpe_trainer_run(bpe_trainer *trainer, size_t target_size,
                    size_t max_steps, bpe_merge *out, size_t *n_out)
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
