/*
 * failalloc.c -- an LD_PRELOAD shim that makes the n-th allocation from one
 * shared object fail, for `make faults` (tools/faults.py drives it).
 *
 * It replaces malloc, calloc and realloc.  Each call looks at its return
 * address: a call made from code inside the watched address range (the pybpe
 * extension's mappings, which the driver reads from /proc/self/maps) is
 * counted, and the call whose count equals the armed number returns NULL
 * with errno = ENOMEM.  Every other call -- CPython's, libc's, the cffi
 * backend's, the extension's own before arming -- goes straight to glibc's
 * allocator through its __libc_* entry points (no dlsym, which itself
 * allocates on first use).  free is glibc's, untouched.
 *
 * The driver calls the exported failalloc_* functions through ctypes.  The
 * state is a handful of process-wide counters, updated atomically because
 * the extension allocates from several threads during batch encodes; a
 * preload shim has nowhere else to keep them.
 *
 * Build: cc -std=c99 -pedantic -Wall -Wextra -Werror -O2 -fPIC -shared \
 *        -o failalloc.so tools/failalloc.c
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);

static uintptr_t watch_lo, watch_hi;   /* [lo, hi): the code being tested */
static unsigned long long fail_at;     /* the count that fails; 0: none */
static unsigned long long counted;     /* allocations from [lo, hi) since arming */
static unsigned long long injected;    /* failures returned since arming */

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

/* True when this allocation, made from `caller`, is the one to fail. */
static int must_fail(const void *caller)
{
    uintptr_t at = (uintptr_t)caller;
    unsigned long long n, nth;

    if (at < __atomic_load_n(&watch_lo, __ATOMIC_RELAXED) || at >= __atomic_load_n(&watch_hi, __ATOMIC_RELAXED))
        return 0;
    n = __atomic_add_fetch(&counted, 1, __ATOMIC_SEQ_CST);
    nth = __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST);
    if (nth == 0 || n != nth)
        return 0;
    __atomic_add_fetch(&injected, 1, __ATOMIC_SEQ_CST);
    errno = ENOMEM;
    return 1;
}

void *malloc(size_t size)
{
    if (must_fail(__builtin_return_address(0)))
        return NULL;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size)
{
    if (must_fail(__builtin_return_address(0)))
        return NULL;
    return __libc_calloc(count, size);
}

void *realloc(void *ptr, size_t size)
{
    if (must_fail(__builtin_return_address(0)))
        return NULL;  /* as a real failure: the old block stays valid */
    return __libc_realloc(ptr, size);
}
