/*
 * arena.c -- memory for the rank table's lookup arrays (ranks_build.c: the
 * token slots and tails, the pair table, the filters, the byte pairs),
 * which are built once, read at random for every piece no cache knows, and
 * freed together with their table.  Where the system has transparent huge
 * pages (Linux's madvise(MADV_HUGEPAGE); a feature test below) the arrays
 * are carved out of fresh mappings aligned to 2 MiB and advised for huge
 * pages, so that one TLB entry covers 2 MiB of a table instead of 4 KiB.
 * Why: o200k's token, tail and pair tables (8 MB) span ~2,000 small pages,
 * more than the core's TLB holds, and after other work (another encoder,
 * a pause) a random probe missed twice, for the page's entry and then for
 * the line (csrc/NOTES.md, "Huge pages", has the figures).  Elsewhere, in
 * AddressSanitizer builds (which then keep each array's bounds) and with
 * BPE_NO_HUGE_PAGES defined, each array is a calloc of its own, as before.
 * Either way an array comes zeroed, and NULL means out of memory.  Book
 * level: nothing here knows what the arrays hold.
 */
#if defined(__linux__) && !defined(BPE_NO_HUGE_PAGES)
#define _DEFAULT_SOURCE 1  /* mmap's MAP_ANONYMOUS and madvise, before any include */
#endif

#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

#if defined(__linux__) && !defined(BPE_NO_HUGE_PAGES)
#include <sys/mman.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define AR_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AR_SANITIZED 1
#endif
#endif

#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS) && !defined(AR_SANITIZED)
#define AR_HUGE 1
#else
#define AR_HUGE 0
#endif

/* The huge page size the mappings are aligned to (x86-64 and arm64 with
 * 4 KiB base pages; elsewhere the advice is only a smaller win). */
#define AR_HUGE_BYTES ((size_t)2 << 20)
/* Smaller arrays are a calloc of their own even with huge pages: a small
 * vocabulary (a test's, a chapter's) should not map and touch 2 MiB. */
#define AR_SHARED_MIN ((size_t)256 << 10)
/* Arrays are carved at multiples of a cache line. */
#define AR_ALIGN ((size_t)64)

#if AR_HUGE
/* A fresh mapping of at least `bytes` (a multiple of AR_HUGE_BYTES) whose
 * start is aligned to AR_HUGE_BYTES, advised for huge pages; recorded in
 * the arena's next chunk.  Its pages are zero (anonymous memory). */
static unsigned char *ar_map(bpe__arena *a, size_t bytes)
{
    size_t mapped = bytes + AR_HUGE_BYTES; /* room to slide to an aligned start */
    unsigned char *raw, *start;
    raw = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    start = raw + (AR_HUGE_BYTES - (size_t)((uintptr_t)raw % AR_HUGE_BYTES)) % AR_HUGE_BYTES;
    /* A refusal (huge pages switched off) leaves small pages: still right. */
    (void)madvise(start, bytes, MADV_HUGEPAGE);
    a->chunk[a->n_chunks] = raw;
    a->chunk_bytes[a->n_chunks] = mapped;
    a->n_chunks++;
    return start;
}
#endif

void *bpe__arena_calloc(bpe__arena *a, size_t n, size_t size)
{
    size_t bytes;
    void *p;
    if (size && n > SIZE_MAX / size)
        return NULL;
    bytes = n * size;
    if (bytes > SIZE_MAX - 2 * AR_HUGE_BYTES)
        return NULL;
    bytes = bytes ? (bytes + AR_ALIGN - 1) / AR_ALIGN * AR_ALIGN : AR_ALIGN;
#if AR_HUGE
    if (bytes >= AR_SHARED_MIN) {
        size_t whole;
        unsigned char *start;
        if (a->room_left >= bytes) {
            p = a->room;
            a->room += bytes;
            a->room_left -= bytes;
            return p;
        }
        if (a->n_chunks == BPE__ARENA_CHUNKS)
            return NULL; /* more arrays than any table has */
        whole = (bytes + AR_HUGE_BYTES - 1) / AR_HUGE_BYTES * AR_HUGE_BYTES;
        if (!(start = ar_map(a, whole)))
            return NULL;
        /* The rest of the new mapping is the room for the next arrays when
         * it is more than the older mapping has left. */
        if (whole - bytes > a->room_left) {
            a->room = start + bytes;
            a->room_left = whole - bytes;
        }
        return start;
    }
#endif
    if (a->n_chunks == BPE__ARENA_CHUNKS || !(p = calloc(1, bytes)))
        return NULL;
    a->chunk[a->n_chunks] = p;
    a->chunk_bytes[a->n_chunks] = 0; /* a calloc: free, not munmap */
    a->n_chunks++;
    return p;
}

void bpe__arena_free(bpe__arena *a)
{
    size_t i;
    for (i = 0; i < a->n_chunks; i++) {
#if AR_HUGE
        if (a->chunk_bytes[i]) {
            (void)munmap(a->chunk[i], a->chunk_bytes[i]);
            continue;
        }
#endif
        free(a->chunk[i]);
    }
    a->n_chunks = 0;
    a->room = NULL;
    a->room_left = 0;
}
