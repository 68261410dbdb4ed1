/*
 * idlists.c -- writes encoder output as a marshal stream (idlists.h says
 * why and what the stream looks like), as runs of one repeated ID, or as
 * 16-bit IDs.
 *
 * One pass over the IDs with a table from ID to reference number; the table
 * is sized by the largest ID seen (a first, cheap pass), so a vocabulary of
 * 200,000 tokens costs 800 KB of scratch per call, freed before returning
 * (calloc'd, so pages no ID touches are never written).  IDs above
 * BPE_IDLISTS_MAX_ID are refused rather than given a huge table; the caller
 * then unpacks the plain array.
 * No state outlives a call, so threads may call this at the same time.
 */
#include <stdlib.h>

#include "idlists.h"

#define IL_MAX_INT 0x7fffffffu  /* marshal's 'i' and counts are signed 32-bit */
#define IL_ITEM_BYTES 5         /* one code byte + one 4-byte number */

enum {
    IL_LIST = '[',
    IL_INT_REMEMBERED = 'i' | 0x80,  /* TYPE_INT with FLAG_REF */
    IL_REF = 'r'
};

/* One code byte and a 4-byte little-endian number (marshal's w_long). */
static unsigned char *il_put(unsigned char *p, int code, uint32_t value)
{
    p[0] = (unsigned char)code;
    p[1] = (unsigned char)(value & 0xff);
    p[2] = (unsigned char)((value >> 8) & 0xff);
    p[3] = (unsigned char)((value >> 16) & 0xff);
    p[4] = (unsigned char)((value >> 24) & 0xff);
    return p + IL_ITEM_BYTES;
}

size_t bpe_idlists_bound(size_t n_ids, size_t n_lists)
{
    size_t items = n_ids + n_lists;
    if (items < n_ids || items == SIZE_MAX || items + 1 > SIZE_MAX / IL_ITEM_BYTES)
        return 0;
    return (items + 1) * IL_ITEM_BYTES;  /* + the outer list's header */
}

int bpe_idlists_marshal(const uint32_t *ids, const size_t *ends, size_t n_lists,
                        unsigned char *out, size_t *out_len)
{
    size_t n_ids = n_lists ? ends[n_lists - 1] : 0;
    size_t i, k, start;
    uint32_t max_id = 0, next_ref = 0;
    uint32_t *ref_plus_one;  /* ID -> its reference number + 1; 0: not yet written */
    unsigned char *p = out;

    if (!out || !out_len || (n_lists && !ends) || (n_ids && !ids))
        return BPE_EINVAL;
    for (i = 0, start = 0; i < n_lists; start = ends[i], i++) {
        if (ends[i] < start)
            return BPE_EINVAL;
        if (ends[i] - start > IL_MAX_INT)
            return BPE_ETOOBIG;
    }
    if (n_lists > IL_MAX_INT)
        return BPE_ETOOBIG;
    for (k = 0; k < n_ids; k++)
        if (ids[k] > max_id)
            max_id = ids[k];
    if (max_id > BPE_IDLISTS_MAX_ID)
        return BPE_ETOOBIG;
    ref_plus_one = calloc((size_t)max_id + 1, sizeof *ref_plus_one);
    if (!ref_plus_one)
        return BPE_ENOMEM;

    p = il_put(p, IL_LIST, (uint32_t)n_lists);
    for (i = 0, k = 0; i < n_lists; i++) {
        p = il_put(p, IL_LIST, (uint32_t)(ends[i] - k));
        for (; k < ends[i]; k++) {
            uint32_t id = ids[k];
            if (ref_plus_one[id]) {
                p = il_put(p, IL_REF, ref_plus_one[id] - 1);
            } else {
                /* At most n_ids <= 2^31 - 1 distinct IDs, so next_ref fits. */
                ref_plus_one[id] = ++next_ref;
                p = il_put(p, IL_INT_REMEMBERED, id);
            }
        }
    }
    free(ref_plus_one);
    *out_len = (size_t)(p - out);
    return BPE_OK;
}

int bpe_ids_runs(const uint32_t *ids, size_t n, size_t max_runs,
                 uint32_t *run_ids, size_t *run_ends, size_t *n_runs)
{
    size_t k, runs = 0;
    if (!n_runs || (n && (!ids || (max_runs && (!run_ids || !run_ends)))))
        return BPE_EINVAL;
    *n_runs = 0;
    for (k = 0; k < n; k++) {
        if (k && ids[k] == ids[k - 1])
            continue;
        if (runs == max_runs)
            return BPE_ETOOBIG;
        if (runs)
            run_ends[runs - 1] = k;
        run_ids[runs++] = ids[k];
    }
    if (runs)
        run_ends[runs - 1] = n;
    *n_runs = runs;
    return BPE_OK;
}

int bpe_ids_to_u16(const uint32_t *ids, size_t n, uint16_t *out)
{
    size_t k;
    if (n && (!ids || !out))
        return BPE_EINVAL;
    for (k = 0; k < n; k++) {
        if (ids[k] > UINT16_MAX)
            return BPE_ETOOBIG;
        out[k] = (uint16_t)ids[k];
    }
    return BPE_OK;
}
