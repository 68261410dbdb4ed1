/*
 * pairmap.c -- a map from a pair of symbol IDs to a uint32.
 *
 * The Counter of the chapter's listings 063-065 is keyed by pairs; this is
 * its C form for count_pairs, the trainer and the merger.  It stores values
 * only (callers keep their records in their own arrays) and never deletes:
 * every user builds a map and drops it whole.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Allocates `capacity` empty slots (a power of two). */
static int alloc_slots(bpe__pairmap *map, size_t capacity)
{
    map->keys = malloc(capacity * sizeof *map->keys);
    map->vals = malloc(capacity * sizeof *map->vals);
    if (map->keys == NULL || map->vals == NULL) {
        free(map->keys);
        free(map->vals);
        map->keys = NULL;
        map->vals = NULL;
        return BPE_ENOMEM;
    }
    memset(map->vals, 0xff, capacity * sizeof *map->vals); /* BPE__NONE */
    map->mask = capacity - 1;
    map->used = 0;
    return BPE_OK;
}

int bpe__pairmap_init(bpe__pairmap *map, size_t hint)
{
    size_t capacity = 16;

    while (capacity / 2 < hint) {
        if (capacity > (SIZE_MAX / sizeof(uint64_t)) / 4)
            return BPE_ETOOBIG;
        capacity *= 2;
    }
    return alloc_slots(map, capacity);
}

void bpe__pairmap_free(bpe__pairmap *map)
{
    if (map == NULL)
        return;
    free(map->keys);
    free(map->vals);
    map->keys = NULL;
    map->vals = NULL;
    map->mask = 0;
    map->used = 0;
}

/* The slot holding `key`, or the empty slot where it would go. */
static size_t find_slot(const bpe__pairmap *map, uint64_t key)
{
    size_t i = (size_t)bpe__mix64(key) & map->mask;

    while (map->vals[i] != BPE__NONE && map->keys[i] != key)
        i = (i + 1) & map->mask;
    return i;
}

uint32_t bpe__pairmap_get(const bpe__pairmap *map, uint32_t left,
                          uint32_t right)
{
    return map->vals[find_slot(map, bpe__pair_key(left, right))];
}

uint32_t *bpe__pairmap_find(bpe__pairmap *map, uint32_t left, uint32_t right)
{
    size_t s = find_slot(map, bpe__pair_key(left, right));

    return map->vals[s] == BPE__NONE ? NULL : &map->vals[s];
}

/* Doubles the capacity; on failure the old slots are kept (nothing was
 * touched before the new arrays were allocated). */
static int grow(bpe__pairmap *map)
{
    bpe__pairmap bigger;
    size_t i, old_cap = map->mask + 1;

    if (old_cap > (SIZE_MAX / sizeof(uint64_t)) / 2)
        return BPE_ETOOBIG;
    if (alloc_slots(&bigger, old_cap * 2) != BPE_OK)
        return BPE_ENOMEM;
    for (i = 0; i < old_cap; i++) {
        if (map->vals[i] != BPE__NONE) {
            size_t s = find_slot(&bigger, map->keys[i]);
            bigger.keys[s] = map->keys[i];
            bigger.vals[s] = map->vals[i];
        }
    }
    bigger.used = map->used;
    bpe__pairmap_free(map);
    *map = bigger;
    return BPE_OK;
}

int bpe__pairmap_put(bpe__pairmap *map, uint32_t left, uint32_t right,
                     uint32_t val)
{
    uint64_t key = bpe__pair_key(left, right);
    size_t s;

    if ((map->used + 1) * 2 > map->mask + 1) {
        int status = grow(map);
        if (status != BPE_OK)
            return status;
    }
    s = find_slot(map, key);
    map->keys[s] = key;
    map->vals[s] = val;
    map->used++;
    return BPE_OK;
}
