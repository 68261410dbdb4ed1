/*
 * util.c -- the small helpers every part of the C core shares, each written
 * once: freeing what the core hands out, growing an array, and making and
 * growing an open-addressing slot array.  Declared in internal.h (bpe_free in bpe.h),
 * with the inline ones (the FNV-1a and splitmix64 hashes, PREFETCH).  Book
 * level: nothing here knows about text, Unicode or Python.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void bpe_free(void *p)
{
    free(p);
}

int bpe__reserve(void **array, size_t *cap, size_t need, size_t elem)
{
    size_t new_cap;
    void *p;

    if (need <= *cap)
        return BPE_OK;
    new_cap = *cap ? *cap : 8;
    while (new_cap < need) {
        if (new_cap > SIZE_MAX / 2)
            return BPE_ETOOBIG;
        new_cap *= 2;
    }
    if (new_cap > SIZE_MAX / elem)
        return BPE_ETOOBIG;
    p = realloc(*array, new_cap * elem);
    if (p == NULL)
        return BPE_ENOMEM;
    *array = p;
    *cap = new_cap;
    return BPE_OK;
}

uint32_t *bpe__slots_new(size_t nslots)
{
    uint32_t *slots;

    if (nslots > SIZE_MAX / sizeof *slots ||
        (slots = malloc(nslots * sizeof *slots)) == NULL)
        return NULL;
    memset(slots, 0xff, nslots * sizeof *slots);  /* every slot BPE__NONE */
    return slots;
}

int bpe__grow_slots(uint32_t **slots_io, size_t *mask_io, const void *items,
                    size_t n, size_t stride, size_t hash_offset)
{
    size_t nslots = (*mask_io + 1) * 2, i;
    uint32_t *slots;

    if (nslots > SIZE_MAX / sizeof *slots)
        return BPE_ETOOBIG;
    if ((slots = bpe__slots_new(nslots)) == NULL)
        return BPE_ENOMEM;
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
