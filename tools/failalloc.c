/*
 * failalloc.c -- an LD_PRELOAD shim that makes the n-th allocation from one
 * shared object fail, for `make faults` (tools/faults.py drives it).
 *
 * It replaces malloc, calloc and realloc, and mmap and munmap (the rank
 * table's arrays live in mappings on huge pages: csrc/arena.c).  Each call looks at its return
 * address: a call made from code inside the watched address range (the pybpe
 * extension's mappings, which the driver reads from /proc/self/maps) is
 * counted, and the call whose count equals the armed number returns NULL
 * with errno = ENOMEM.  Every other call -- CPython's, libc's, the cffi
 * backend's, the extension's own before arming -- goes straight to glibc's
 * allocator through its __libc_* entry points (no dlsym, which itself
 * allocates on first use).  free is glibc's, untouched.
 *
 * It also keeps the set of blocks the watched code allocated and nobody has
 * freed yet (free is wrapped only to forget a block), so the driver can see
 * an error path that leaks: after a failed call and a garbage collection the
 * number of live blocks must come back to what it was.  A mapping counts
 * as a block from mmap to the munmap of its start.  The real mmap and
 * munmap are the system calls themselves (glibc's own entry points are
 * private to it).
 *
 * The driver calls the exported failalloc_* functions through ctypes.  The
 * state is process-wide (a preload shim has nowhere else to keep it):
 * counters updated atomically and a spin-locked table, because the
 * extension allocates from several threads during batch encodes.
 *
 * Build: cc -std=c99 -pedantic -Wall -Wextra -Werror -O2 -fPIC -shared \
 *        -o failalloc.so tools/failalloc.c
 */
#define _DEFAULT_SOURCE 1  /* syscall(), mmap's flags */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);

static uintptr_t watch_lo, watch_hi;   /* [lo, hi): the code being tested */
static unsigned long long fail_at;     /* the count that fails; 0: none */
static unsigned long long counted;     /* allocations from [lo, hi) since arming */
static unsigned long long injected;    /* failures returned since arming */

/* The live blocks: an open-addressing set of pointers (linear probing,
 * deletion by backward shift, so no tombstones pile up).  Blocks past its
 * capacity are not tracked and `untracked` says so. */
#define LIVE_BITS 18
#define LIVE_SLOTS ((size_t)1 << LIVE_BITS)
static void *live[LIVE_SLOTS];
static size_t live_count;
static int live_untracked;
static char live_lock;

static size_t slot_of(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (LIVE_SLOTS - 1);
}

static void lock(void)
{
    while (__atomic_test_and_set(&live_lock, __ATOMIC_ACQUIRE))
        ;
}

static void unlock(void)
{
    __atomic_clear(&live_lock, __ATOMIC_RELEASE);
}

static void remember(void *p)
{
    size_t i;

    lock();
    if (live_count >= LIVE_SLOTS / 2) {
        live_untracked = 1;
    } else {
        for (i = slot_of(p); live[i] != NULL; i = (i + 1) & (LIVE_SLOTS - 1))
            ;
        live[i] = p;
        live_count++;
    }
    unlock();
}

/* Forget block p; 1 when it was remembered. */
static int forget(void *p)
{
    size_t i, j, home;
    int found = 0;

    if (__atomic_load_n(&live_count, __ATOMIC_RELAXED) == 0)
        return 0;  /* the common case: none of ours is alive */
    lock();
    for (i = slot_of(p); live[i] != NULL && live[i] != p; i = (i + 1) & (LIVE_SLOTS - 1))
        ;
    if (live[i] == p) {
        found = 1;
        live_count--;
        /* Shift later members of the probe run back over the hole. */
        for (j = (i + 1) & (LIVE_SLOTS - 1); live[j] != NULL; j = (j + 1) & (LIVE_SLOTS - 1)) {
            home = slot_of(live[j]);
            if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
                live[i] = live[j];
                i = j;
            }
        }
        live[i] = NULL;
    }
    unlock();
    return found;
}

/* Blocks allocated from the watched range and not freed (-1: too many to track). */
long long failalloc_live(void)
{
    long long n;

    lock();
    n = live_untracked ? -1 : (long long)live_count;
    unlock();
    return n;
}

/* Watch [lo, hi) and fail its nth allocation from now on (nth = 0: count only). */
void failalloc_arm(uintptr_t lo, uintptr_t hi, unsigned long long nth)
{
    __atomic_store_n(&fail_at, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&counted, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&injected, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&watch_lo, lo, __ATOMIC_SEQ_CST);
    __atomic_store_n(&watch_hi, hi, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fail_at, nth, __ATOMIC_SEQ_CST);
}

/* Stop failing (counting goes on until the next arm). */
void failalloc_disarm(void)
{
    __atomic_store_n(&fail_at, 0, __ATOMIC_SEQ_CST);
}

unsigned long long failalloc_counted(void)
{
    return __atomic_load_n(&counted, __ATOMIC_SEQ_CST);
}

unsigned long long failalloc_injected(void)
{
    return __atomic_load_n(&injected, __ATOMIC_SEQ_CST);
}

static int watched(const void *caller)
{
    uintptr_t at = (uintptr_t)caller;

    return at >= __atomic_load_n(&watch_lo, __ATOMIC_RELAXED) && at < __atomic_load_n(&watch_hi, __ATOMIC_RELAXED);
}

/* True when this allocation, made from `caller`, is the one to fail. */
static int must_fail(const void *caller)
{
    unsigned long long n, nth;

    if (!watched(caller))
        return 0;
    n = __atomic_add_fetch(&counted, 1, __ATOMIC_SEQ_CST);
    nth = __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST);
    if (nth == 0 || n != nth)
        return 0;
    __atomic_add_fetch(&injected, 1, __ATOMIC_SEQ_CST);
    errno = ENOMEM;
    return 1;
}

/* The block `p` just allocated for `caller`: remembered when it is ours. */
static void *track(void *p, const void *caller)
{
    if (p != NULL && watched(caller))
        remember(p);
    return p;
}

void *malloc(size_t size)
{
    const void *caller = __builtin_return_address(0);

    if (must_fail(caller))
        return NULL;
    return track(__libc_malloc(size), caller);
}

void *calloc(size_t count, size_t size)
{
    const void *caller = __builtin_return_address(0);

    if (must_fail(caller))
        return NULL;
    return track(__libc_calloc(count, size), caller);
}

void *realloc(void *ptr, size_t size)
{
    const void *caller = __builtin_return_address(0);
    void *p;
    int ours;

    if (must_fail(caller))
        return NULL;  /* as a real failure: the old block stays valid */
    /* Forgotten first: once realloc frees the block, another thread may be
     * given its address by malloc. */
    ours = ptr != NULL && forget(ptr);
    p = __libc_realloc(ptr, size);
    if (p == NULL) {
        if (ours && size != 0)
            remember(ptr);  /* a real failure: the old block lives on */
        return NULL;
    }
    if (ours || watched(caller))
        remember(p);
    return p;
}

void free(void *ptr)
{
    if (ptr != NULL)
        forget(ptr);
    __libc_free(ptr);
}

void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
    const void *caller = __builtin_return_address(0);
    long p;

    if (must_fail(caller))
        return MAP_FAILED;
    p = syscall(SYS_mmap, addr, length, prot, flags, fd, offset);
    if (p == -1)
        return MAP_FAILED;
    return track((void *)p, caller);
}

int munmap(void *addr, size_t length)
{
    forget(addr);
    return (int)syscall(SYS_munmap, addr, length);
}
