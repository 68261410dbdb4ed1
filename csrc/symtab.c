/*
 * symtab.c -- the symbol table: byte strings interned to dense uint32 IDs.
 *
 * The C form of the chapter's token_to_id / id_to_token pair (listings
 * 063-065 grow it as merges are learned).  IDs are handed out in insertion
 * order and never removed.  It knows nothing about text: a symbol is any
 * byte string, the empty one included.
 *
 * Layout: bytes live in an arena of blocks that never move (a full block is
 * left behind, not reallocated), so the pointer bpe_symtab_bytes returns
 * stays valid until the table is freed; symbol i is ptr[i][0 .. len[i]).
 * An open-addressing hash (linear probing, load <= 1/2) maps bytes -> ID;
 * slot value BPE__NONE is empty, and each ID's hash is kept so growing
 * never re-reads the bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Bytes per arena block; a longer string gets a block of its own.  Big
 * enough that block headers are noise, small enough for tiny tables. */
#define ARENA_BLOCK 65536

struct bpe_symtab {
    char **blocks;      /* every arena block, for freeing */
    size_t nblocks, blocks_cap;
    char *cur;          /* free space of the newest block ... */
    size_t cur_left;    /* ... and how much of it is left */
    const char **ptr;   /* bytes of each ID (never moves) */
    size_t *len;        /* length of each ID */
    uint64_t *hash;     /* hash of each ID's bytes */
    size_t n, cap;      /* IDs in use; room in ptr/len/hash */
    uint32_t *slots;    /* ID, or BPE__NONE */
    size_t mask;        /* slot count - 1 (a power of two) */
};

/* FNV-1a over the bytes, then a final mix so the low bits are good. */
static uint64_t hash_bytes(const char *bytes, size_t len)
{
    return bpe__mix64(bpe__fnv1a64(bytes, len) ^ len);
}

bpe_symtab *bpe_symtab_new(void)
{
    bpe_symtab *t = calloc(1, sizeof *t);
    size_t nslots = 64;

    if (t == NULL)
        return NULL;
    if ((t->slots = bpe__slots_new(nslots)) == NULL) {
        free(t);
        return NULL;
    }
    t->mask = nslots - 1;
    return t;
}

void bpe_symtab_free(bpe_symtab *table)
{
    size_t i;

    if (table == NULL)
        return;
    for (i = 0; i < table->nblocks; i++)
        free(table->blocks[i]);
    free(table->blocks);
    free((void *)table->ptr);
    free(table->len);
    free(table->hash);
    free(table->slots);
    free(table);
}

/* The slot holding the string (h, bytes, len), or the empty slot where it
 * would go. */
static size_t find_slot(const bpe_symtab *t, uint64_t h, const char *bytes,
                        size_t len)
{
    size_t i = (size_t)h & t->mask;

    for (;;) {
        uint32_t id = t->slots[i];
        if (id == BPE__NONE)
            return i;
        if (t->hash[id] == h && t->len[id] == len &&
            (len == 0 || memcmp(t->ptr[id], bytes, len) == 0))
            return i;
        i = (i + 1) & t->mask;
    }
}

uint32_t bpe_symtab_lookup(const bpe_symtab *table, const char *bytes,
                           size_t len)
{
    if (table == NULL || (bytes == NULL && len != 0))
        return BPE_NO_SYMBOL;
    return table->slots[find_slot(table, hash_bytes(bytes, len), bytes, len)];
}

/* Doubles the slot array, re-placing every ID by its stored hash.  On
 * failure the old slots stay as they were. */
static int grow_slots(bpe_symtab *t)
{
    return bpe__grow_slots(&t->slots, &t->mask, t->hash, t->n, sizeof *t->hash, 0);
}

/* Makes room for `len` more bytes in the arena (a new block when the
 * current one is too small).  The table is unchanged on failure. */
static int reserve_bytes(bpe_symtab *t, size_t len)
{
    size_t size = len > ARENA_BLOCK ? len : ARENA_BLOCK;
    char *block;
    int status;

    if (len <= t->cur_left)
        return BPE_OK;
    status = bpe__reserve((void **)&t->blocks, &t->blocks_cap,
                          t->nblocks + 1, sizeof *t->blocks);
    if (status != BPE_OK)
        return status;
    block = malloc(size);
    if (block == NULL)
        return BPE_ENOMEM;
    t->blocks[t->nblocks++] = block;
    t->cur = block;
    t->cur_left = size;
    return BPE_OK;
}

/* Makes room for one more ID of `len` bytes; on failure the table may hold
 * bigger arrays than it needs, but is otherwise unchanged. */
static int reserve_one(bpe_symtab *t, size_t len)
{
    int status;

    if (t->n >= (size_t)BPE_NO_SYMBOL - 1)
        return BPE_ETOOBIG;  /* IDs must stay below BPE_NO_SYMBOL */
    if (t->n + 1 > t->cap) {
        size_t cap_ptr = t->cap, cap_len = t->cap, cap_hash = t->cap;
        if ((status = bpe__reserve((void **)&t->ptr, &cap_ptr, t->n + 1,
                                   sizeof *t->ptr)) != BPE_OK ||
            (status = bpe__reserve((void **)&t->len, &cap_len, t->n + 1,
                                   sizeof *t->len)) != BPE_OK ||
            (status = bpe__reserve((void **)&t->hash, &cap_hash, t->n + 1,
                                   sizeof *t->hash)) != BPE_OK)
            return status;
        t->cap = cap_ptr;  /* all three grew to the same capacity */
    }
    if ((status = reserve_bytes(t, len)) != BPE_OK)
        return status;
    if ((t->n + 1) * 2 > t->mask + 1)
        return grow_slots(t);
    return BPE_OK;
}

int bpe_symtab_intern(bpe_symtab *table, const char *bytes, size_t len,
                      uint32_t *id_out)
{
    uint64_t h;
    size_t s;
    int status;

    if (table == NULL || id_out == NULL || (bytes == NULL && len != 0))
        return BPE_EINVAL;
    h = hash_bytes(bytes, len);
    s = find_slot(table, h, bytes, len);
    if (table->slots[s] != BPE__NONE) {
        *id_out = table->slots[s];
        return BPE_OK;
    }
    status = reserve_one(table, len);
    if (status != BPE_OK)
        return status;
    s = find_slot(table, h, bytes, len);  /* the slots may have moved */
    if (len != 0)
        memcpy(table->cur, bytes, len);
    table->ptr[table->n] = len != 0 ? table->cur : "";
    table->cur += len;
    table->cur_left -= len;
    table->len[table->n] = len;
    table->hash[table->n] = h;
    table->slots[s] = (uint32_t)table->n;
    *id_out = (uint32_t)table->n;
    table->n++;
    return BPE_OK;
}

size_t bpe_symtab_size(const bpe_symtab *table)
{
    return table == NULL ? 0 : table->n;
}

size_t bpe_symtab_export(const bpe_symtab *table, char *bytes_out,
                         size_t *lengths_out)
{
    size_t id, total = 0;

    if (table == NULL)
        return 0;
    for (id = 0; id < table->n; id++) {
        if (bytes_out != NULL) {
            if (table->len[id] != 0)
                memcpy(bytes_out + total, table->ptr[id], table->len[id]);
            lengths_out[id] = table->len[id];
        }
        total += table->len[id];
    }
    return total;
}

const char *bpe_symtab_bytes(const bpe_symtab *table, uint32_t id,
                             size_t *len_out)
{
    if (table == NULL || id >= table->n)
        return NULL;
    if (len_out != NULL)
        *len_out = table->len[id];
    return table->ptr[id];
}
