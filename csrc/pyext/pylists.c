/*
 * pylists.c -- the module pybpe._pylists: encoder output (a uint32 ID array
 * cut by an array of ends) as Python lists of ints, in one pass, with each
 * ID's int object taken from a table instead of made.
 *
 * Why a CPython extension beside the cffi module: a cffi function cannot
 * return a Python object, so the lists were built in Python from a marshal
 * stream (csrc/py/idlists.c): ~6 ns per ID in all (gpt2, 1.2 MB of
 * Shakespeare in 120 lists: 2.3 ms), ~5 of them in marshal.loads holding
 * the GIL.  Here a list item is one table read, one reference count and one
 * PyList_SetItem: 2.1-2.4 ns per ID (0.8 ms), all of it holding the GIL
 * (object making needs it).  Building the lists is what threads cannot
 * share, so it bounds encode_batch on two threads as well as one.
 *
 * The table (a capsule) holds one int object per ID below its size, made
 * the first time that ID is seen and kept until the table is freed, so a
 * table of n IDs costs n pointers plus the ints met so far.  Ints are
 * immutable, so sharing one object among every list is invisible.  Callers
 * hold the GIL throughout (this is ordinary extension code), so the lazy
 * filling needs no lock.
 *
 * Limited API (Python 3.9+), so one build serves every later CPython.  The
 * ID and end arrays come as addresses (the limited API of 3.9 has no buffer
 * protocol); pybpe/core/native/ranks.py passes the cffi arrays it owns and
 * keeps alive for the call.  The module is optional: without it, ranks.py
 * builds lists through the marshal stream as before.
 *
 * encode_ids is a short text's whole encode in one call: the C encoder
 * (called through its address, handed over by the cffi module), then the
 * list (or the IDs' bytes, for a NumPy array).  Through cffi the same work
 * took a dozen Python-level steps (the output and ends arrays made, the
 * buffer wrapped, addresses taken, the list call), ~2.3 of the ~3.7 us an
 * encode_ordinary of 200 bytes cost.  encode_piece_ids is the same for one
 * piece merged whole, with no pattern (tiktoken's _encode_single_piece).
 *
 * Decoding goes the other way: a list of int IDs to the tokens' bytes
 * (join_bytes) or to a list of them (token_bytes), through a bytes table
 * (new_bytes_table) made once per Encoding from its list of token bytes by
 * ID.  In Python each ID was a list index, then a join: ~57 ns per ID
 * (cl100k, 0.5 MB of Shakespeare's IDs: 6.9 ms, where tiktoken takes 3.3).
 * These take plain ints only and answer None for anything else (a bool, a
 * NumPy integer, a negative or unknown ID): the caller then takes the
 * Python way, which accepts the first two and names the error of the rest.
 */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_NAME "pybpe._pylists.table"

typedef struct {
    Py_ssize_t size;  /* IDs 0 .. size - 1 */
    PyObject **ints;  /* ints[id]: a strong reference, or NULL before first use */
} pl_table;

static void pl_table_free(PyObject *capsule)
{
    pl_table *table = (pl_table *)PyCapsule_GetPointer(capsule, TABLE_NAME);
    Py_ssize_t i;

    if (!table)
        return;
    for (i = 0; i < table->size; i++)
        Py_XDECREF(table->ints[i]);
    free(table->ints);
    free(table);
}

static PyObject *pl_new_table(PyObject *module, PyObject *args)
{
    Py_ssize_t size;
    pl_table *table;
    PyObject *capsule;

    (void)module;
    if (!PyArg_ParseTuple(args, "n:new_table", &size))
        return NULL;
    if (size < 0 || (size_t)size > SIZE_MAX / sizeof(PyObject *)) {
        PyErr_SetString(PyExc_ValueError, "table size out of range");
        return NULL;
    }
    table = (pl_table *)malloc(sizeof *table);
    if (!table)
        return PyErr_NoMemory();
    table->size = size;
    table->ints = (PyObject **)calloc(size ? (size_t)size : 1, sizeof(PyObject *));
    if (!table->ints) {
        free(table);
        return PyErr_NoMemory();
    }
    capsule = PyCapsule_New(table, TABLE_NAME, pl_table_free);
    if (!capsule) {
        free(table->ints);
        free(table);
    }
    return capsule;
}

/* *out = the address an int holds (0 when it is 0); -1 with the error set
 * when it holds none. */
static int pl_address(PyObject *number, const void **out)
{
    *out = PyLong_AsVoidPtr(number);
    return !*out && PyErr_Occurred() ? -1 : 0;
}

/* A hint to start loading the line at address a, to be read (rw 0) or
 * written (1), where the compiler has one (GCC, Clang); elsewhere nothing,
 * which changes no result. */
#if defined(__GNUC__) || defined(__clang__)
#define PL_PREFETCH(a, rw) __builtin_prefetch((a), (rw))
#else
#define PL_PREFETCH(a, rw) ((void)(a))
#endif

/*
 * How far ahead pl_list starts loading.  On text no call has seen, with the
 * core's caches full of other work (what tools/bench_encode_table.py
 * measures: the other encoders run between two of pybpe's calls), each ID
 * waited on two misses in a row: its slot in the table, then its int's
 * reference count.  So the slot of the ID PL_AHEAD * 2 places on is
 * fetched, and the int of the one PL_AHEAD on, whose slot has arrived by
 * then.  One list of a 0.5 MB slice, after 64 MB of other memory was
 * touched, medians of 12 slices, builds alternating in one process: gpt2
 * prose 1.25-1.44 -> 0.61-0.63 ms (8.0-9.2 -> 3.9-4.0 ns per ID); o200k
 * multilingual 2.02 -> 0.91 ms.  Fetching only the int (the slot read
 * first): 1.09 ms; both, 8 / 16 / 32 / 48 / 128 places on: 1.05 / 0.89 /
 * 0.69 / 0.67 / 0.64 ms; the int fetched to be written, not read: 3-5%
 * faster.
 */
#define PL_AHEAD 64

/* One list of ids[0 .. n), or NULL with an exception set. */
static PyObject *pl_list(pl_table *table, const uint32_t *ids, Py_ssize_t n)
{
    PyObject *list = PyList_New(n);
    Py_ssize_t k;

    if (!list)
        return NULL;
    for (k = 0; k < n; k++) {
        uint32_t id = ids[k];
        PyObject *value;
        if (k + 2 * PL_AHEAD < n && (size_t)ids[k + 2 * PL_AHEAD] < (size_t)table->size)
            PL_PREFETCH(&table->ints[ids[k + 2 * PL_AHEAD]], 0);
        if (k + PL_AHEAD < n && (size_t)ids[k + PL_AHEAD] < (size_t)table->size &&
            table->ints[ids[k + PL_AHEAD]])
            PL_PREFETCH(table->ints[ids[k + PL_AHEAD]], 1); /* its count is written */
        if ((size_t)id >= (size_t)table->size) {
            PyErr_Format(PyExc_ValueError, "ID %lu is outside the table (%zd IDs)", (unsigned long)id,
                         table->size);
            Py_DECREF(list);
            return NULL;
        }
        value = table->ints[id];
        if (!value) {
            value = PyLong_FromUnsignedLong(id);
            if (!value) {
                Py_DECREF(list);
                return NULL;
            }
            table->ints[id] = value;
        }
        Py_INCREF(value);
        PyList_SetItem(list, k, value);  /* steals the reference; cannot fail here */
    }
    return list;
}

static PyObject *pl_id_lists(PyObject *module, PyObject *args)
{
    PyObject *capsule, *outer, *ids_address, *ends_address;
    const uint32_t *ids;
    const size_t *ends;
    pl_table *table;
    Py_ssize_t n_lists, i;
    size_t start = 0;

    (void)module;
    if (!PyArg_ParseTuple(args, "OOOn:id_lists", &capsule, &ids_address, &ends_address, &n_lists))
        return NULL;
    table = (pl_table *)PyCapsule_GetPointer(capsule, TABLE_NAME);
    if (!table)
        return NULL;
    if (pl_address(ids_address, (const void **)&ids) < 0 ||
        pl_address(ends_address, (const void **)&ends) < 0)
        return NULL;
    if (n_lists < 0 || (n_lists && (!ids || !ends))) {
        PyErr_SetString(PyExc_ValueError, "id_lists: bad arguments");
        return NULL;
    }
    for (i = 0; i < n_lists; start = ends[i], i++) {
        if (ends[i] < start || ends[i] - start > (size_t)PY_SSIZE_T_MAX) {
            PyErr_SetString(PyExc_ValueError, "id_lists: ends must not decrease");
            return NULL;
        }
    }
    outer = PyList_New(n_lists);
    if (!outer)
        return NULL;
    for (i = 0, start = 0; i < n_lists; start = ends[i], i++) {
        PyObject *list = pl_list(table, ids + start, (Py_ssize_t)(ends[i] - start));
        if (!list) {
            Py_DECREF(outer);
            return NULL;
        }
        PyList_SetItem(outer, i, list);
    }
    return outer;
}

/* id_spans: lists i = first .. stop - 1 of ids[starts[i] .. ends[i]), where
 * the items of one list need not follow the last one's (a shared batch
 * writes each text's IDs at its text's offset: ranks.c,
 * bpe_ranks_encode_shared). */
static PyObject *pl_id_spans(PyObject *module, PyObject *args)
{
    PyObject *capsule, *outer, *ids_address, *starts_address, *ends_address;
    const uint32_t *ids;
    const size_t *starts, *ends;
    pl_table *table;
    Py_ssize_t first, stop, i;

    (void)module;
    if (!PyArg_ParseTuple(args, "OOOOnn:id_spans", &capsule, &ids_address, &starts_address,
                          &ends_address, &first, &stop))
        return NULL;
    table = (pl_table *)PyCapsule_GetPointer(capsule, TABLE_NAME);
    if (!table)
        return NULL;
    if (pl_address(ids_address, (const void **)&ids) < 0 ||
        pl_address(starts_address, (const void **)&starts) < 0 ||
        pl_address(ends_address, (const void **)&ends) < 0)
        return NULL;
    if (first < 0 || stop < first || (stop > first && (!ids || !starts || !ends))) {
        PyErr_SetString(PyExc_ValueError, "id_spans: bad arguments");
        return NULL;
    }
    for (i = first; i < stop; i++) {
        if (ends[i] < starts[i] || ends[i] - starts[i] > (size_t)PY_SSIZE_T_MAX) {
            PyErr_SetString(PyExc_ValueError, "id_spans: an end before its start");
            return NULL;
        }
    }
    outer = PyList_New(stop - first);
    if (!outer)
        return NULL;
    for (i = first; i < stop; i++) {
        PyObject *list = pl_list(table, ids + starts[i], (Py_ssize_t)(ends[i] - starts[i]));
        if (!list) {
            Py_DECREF(outer);
            return NULL;
        }
        PyList_SetItem(outer, i - first, list);
    }
    return outer;
}

/* bpe_ranks_encode_cached and bpe_ranks_encode (csrc/text.h), whose
 * addresses encode_ids and encode_piece_ids are given: the same types,
 * with the same opaque structs, so a call through one is an ordinary call
 * of that function.  tests/test_c_layers.py checks that these copies of
 * the declarations match text.h's. */
typedef struct bpe_ranks bpe_ranks;
typedef struct bpe_piece_cache bpe_piece_cache;
typedef int (*pl_encode_cached)(const bpe_ranks *ranks, bpe_piece_cache *cache, int pattern,
                                const unsigned char *text, size_t text_len,
                                const size_t *text_ends, size_t n_texts,
                                uint32_t *out, size_t *out_ends);
typedef int (*pl_encode_pieces)(const bpe_ranks *ranks, const unsigned char *text,
                                size_t text_len, const uint32_t *lens, size_t n_pieces,
                                int lens_in_chars, uint32_t *out, size_t *n_out);

/* IDs a text of up to this many bytes can have (at most one per byte) fit
 * on the stack; longer texts take memory from the heap. */
#define PL_STACK_IDS 1024

/* Room for the IDs of a text of len bytes: `stack` when they fit, else
 * heap memory the caller frees with PyMem_Free; NULL with MemoryError. */
static uint32_t *pl_ids_room(uint32_t *stack, Py_ssize_t len)
{
    uint32_t *ids;

    if ((size_t)len <= PL_STACK_IDS)
        return stack;
    if ((size_t)len > SIZE_MAX / sizeof *ids) {
        PyErr_NoMemory();
        return NULL;
    }
    if (!(ids = (uint32_t *)PyMem_Malloc((size_t)len * sizeof *ids)))
        PyErr_NoMemory();
    return ids;
}

/* What an encoder's call gives Python: its status (an int) when it failed,
 * else the n_ids IDs as a list of table's ints, or as bytes of native
 * uint32 when table is NULL.  Frees ids unless it is `stack`. */
static PyObject *pl_ids_result(int status, uint32_t *ids, const uint32_t *stack, size_t n_ids,
                               Py_ssize_t len, pl_table *table)
{
    PyObject *result;

    if (status != 0)
        result = PyLong_FromLong(status);
    else if (n_ids > (size_t)len)
        result = PyErr_Format(PyExc_SystemError, "encode: %zu IDs from %zd bytes", n_ids, len);
    else if (table)
        result = pl_list(table, ids, (Py_ssize_t)n_ids);
    else
        result = PyBytes_FromStringAndSize((const char *)ids, (Py_ssize_t)(n_ids * sizeof *ids));
    if (ids != stack)
        PyMem_Free(ids);
    return result;
}

/* The table of a capsule, or NULL for None (*table NULL too); -1 with an
 * error set when it is neither. */
static int pl_table_or_none(PyObject *capsule, pl_table **table)
{
    *table = NULL;
    if (capsule == Py_None)
        return 0;
    *table = (pl_table *)PyCapsule_GetPointer(capsule, TABLE_NAME);
    return *table ? 0 : -1;
}

/* encode_ids(encode, ranks, cache, pattern, table, data): the IDs of UTF-8
 * `data` (bytes) as one list of ints from `table`, or, when table is None,
 * as a bytes object of native uint32 (for numpy.frombuffer); when the
 * encoder fails, its status (an int) for the caller to raise.  encode,
 * ranks and cache are addresses (of bpe_ranks_encode_cached, a rank table
 * and a piece cache only this thread uses, all alive for the call).  The
 * encoder runs without the GIL. */
static PyObject *pl_encode_ids(PyObject *module, PyObject *args)
{
    PyObject *encode_address, *ranks_address, *cache_address, *capsule, *data;
    const void *encode_p, *ranks_p, *cache_p;
    pl_encode_cached encode;
    pl_table *table;
    char *bytes;
    Py_ssize_t len;
    uint32_t stack_ids[PL_STACK_IDS], *ids;
    size_t text_end, n_ids = 0;
    int pattern, status;

    (void)module;
    if (!PyArg_ParseTuple(args, "OOOiOO:encode_ids", &encode_address, &ranks_address, &cache_address,
                          &pattern, &capsule, &data))
        return NULL;
    if (pl_table_or_none(capsule, &table) < 0)
        return NULL;
    if (pl_address(encode_address, &encode_p) < 0 || pl_address(ranks_address, &ranks_p) < 0 ||
        pl_address(cache_address, &cache_p) < 0)
        return NULL;
    if (!encode_p || !ranks_p || !cache_p) {
        PyErr_SetString(PyExc_ValueError, "encode_ids: bad arguments");
        return NULL;
    }
    if (PyBytes_AsStringAndSize(data, &bytes, &len) < 0)
        return NULL;
    if (len == 0)
        return table ? PyList_New(0) : PyBytes_FromStringAndSize(NULL, 0);
    if (!(ids = pl_ids_room(stack_ids, len)))
        return NULL;
    /* An object address to a function pointer by way of an integer: what
     * ISO C leaves to the implementation, and every platform CPython runs
     * on does (dlsym's results are used the same way). */
    encode = (pl_encode_cached)(uintptr_t)encode_p;
    text_end = (size_t)len;
    Py_BEGIN_ALLOW_THREADS
    status = encode((const bpe_ranks *)ranks_p, (bpe_piece_cache *)(uintptr_t)cache_p, pattern,
                    (const unsigned char *)bytes, (size_t)len, &text_end, 1, ids, &n_ids);
    Py_END_ALLOW_THREADS
    return pl_ids_result(status, ids, stack_ids, n_ids, len, table);
}

/* encode_piece_ids(encode, ranks, table, data): the IDs of `data` (bytes)
 * merged whole as one piece, with no pattern (tiktoken's
 * _encode_single_piece), as encode_ids gives them.  encode and ranks are
 * addresses (of bpe_ranks_encode and a rank table alive for the call).
 * Through cffi the call's arrays, views and unpacking cost ~2.5 us of
 * Python steps around ~0.3 us of C. */
static PyObject *pl_encode_piece_ids(PyObject *module, PyObject *args)
{
    PyObject *encode_address, *ranks_address, *capsule, *data;
    const void *encode_p, *ranks_p;
    pl_encode_pieces encode;
    pl_table *table;
    char *bytes;
    Py_ssize_t len;
    uint32_t stack_ids[PL_STACK_IDS], *ids, piece_len;
    size_t n_ids = 0;
    int status;

    (void)module;
    if (!PyArg_ParseTuple(args, "OOOO:encode_piece_ids", &encode_address, &ranks_address, &capsule, &data))
        return NULL;
    if (pl_table_or_none(capsule, &table) < 0)
        return NULL;
    if (pl_address(encode_address, &encode_p) < 0 || pl_address(ranks_address, &ranks_p) < 0)
        return NULL;
    if (!encode_p || !ranks_p) {
        PyErr_SetString(PyExc_ValueError, "encode_piece_ids: bad arguments");
        return NULL;
    }
    if (PyBytes_AsStringAndSize(data, &bytes, &len) < 0)
        return NULL;
    if ((size_t)len > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "encode_piece_ids: a piece of 4 GB or more");
        return NULL;
    }
    if (len == 0)
        return table ? PyList_New(0) : PyBytes_FromStringAndSize(NULL, 0);
    if (!(ids = pl_ids_room(stack_ids, len)))
        return NULL;
    encode = (pl_encode_pieces)(uintptr_t)encode_p; /* see encode_ids */
    piece_len = (uint32_t)len;
    Py_BEGIN_ALLOW_THREADS
    status = encode((const bpe_ranks *)ranks_p, (const unsigned char *)bytes, (size_t)len, &piece_len, 1, 0,
                    ids, &n_ids);
    Py_END_ALLOW_THREADS
    return pl_ids_result(status, ids, stack_ids, n_ids, len, table);
}

/* ---------------------------------------------------------------------
 * Decoding: IDs to bytes.
 *
 * A bytes table holds every token's bytes end to end in one block, and
 * per ID where its bytes lie (start << 32 | length; PB_GAP for an ID that
 * is no token), plus a strong reference to the list it was made from
 * (token_bytes hands out that list's own bytes objects, as the Python way
 * does).  The block has PB_PAD bytes of slack at its end, so a short token
 * is copied as 16 bytes at once, whatever its length: one fixed-size move
 * instead of a memcpy call per ID.
 */
#define BYTES_TABLE_NAME "pybpe._pylists.bytes_table"
#define PB_GAP UINT64_MAX
#define PB_PAD 16

typedef struct {
    Py_ssize_t size;     /* IDs 0 .. size - 1 */
    uint64_t *spans;     /* spans[id]: start << 32 | length, or PB_GAP */
    unsigned char *block;
    PyObject *by_id;     /* the list of bytes (or None) by ID, a strong reference */
} pb_table;

static void pb_table_free(PyObject *capsule)
{
    pb_table *table = (pb_table *)PyCapsule_GetPointer(capsule, BYTES_TABLE_NAME);

    if (!table)
        return;
    Py_XDECREF(table->by_id);
    free(table->spans);
    free(table->block);
    free(table);
}

/* new_bytes_table(by_id): by_id a list whose item i is the bytes of the
 * token with ID i, or None where no token has that ID. */
static PyObject *pl_new_bytes_table(PyObject *module, PyObject *args)
{
    PyObject *by_id, *capsule;
    pb_table *table;
    Py_ssize_t size, i;
    size_t total = 0;

    (void)module;
    if (!PyArg_ParseTuple(args, "O!:new_bytes_table", &PyList_Type, &by_id))
        return NULL;
    size = PyList_Size(by_id);
    for (i = 0; i < size; i++) {
        PyObject *item = PyList_GetItem(by_id, i);
        if (item == Py_None)
            continue;
        if (!PyBytes_Check(item)) {
            PyErr_Format(PyExc_TypeError, "new_bytes_table: item %zd is neither bytes nor None", i);
            return NULL;
        }
        total += (size_t)PyBytes_Size(item);
        if (total > UINT32_MAX) {  /* a span's start is 32 bits */
            PyErr_SetString(PyExc_ValueError, "new_bytes_table: tokens of more than 4 GB in all");
            return NULL;
        }
    }
    if ((size_t)size > SIZE_MAX / sizeof(uint64_t))
        return PyErr_NoMemory();
    table = (pb_table *)calloc(1, sizeof *table);
    if (!table)
        return PyErr_NoMemory();
    table->size = size;
    table->spans = (uint64_t *)malloc((size ? (size_t)size : 1) * sizeof(uint64_t));
    table->block = (unsigned char *)calloc(total + PB_PAD, 1);
    if (!table->spans || !table->block) {
        free(table->spans);
        free(table->block);
        free(table);
        return PyErr_NoMemory();
    }
    total = 0;
    for (i = 0; i < size; i++) {
        PyObject *item = PyList_GetItem(by_id, i);
        size_t len;
        if (item == Py_None) {
            table->spans[i] = PB_GAP;
            continue;
        }
        len = (size_t)PyBytes_Size(item);
        memcpy(table->block + total, PyBytes_AsString(item), len);
        table->spans[i] = (uint64_t)total << 32 | (uint64_t)len;
        total += len;
    }
    Py_INCREF(by_id);
    table->by_id = by_id;
    capsule = PyCapsule_New(table, BYTES_TABLE_NAME, pb_table_free);
    if (!capsule) {
        Py_DECREF(by_id);
        free(table->spans);
        free(table->block);
        free(table);
    }
    return capsule;
}

/* The table and the items of `ids` (a list or a tuple), or 0 with *table
 * NULL when ids is neither (the caller answers None), -1 with an error set
 * when the capsule is no bytes table. */
static int pb_args(PyObject *args, const char *format, pb_table **table, PyObject **ids,
                   Py_ssize_t *n)
{
    PyObject *capsule;

    *table = NULL;
    if (!PyArg_ParseTuple(args, format, &capsule, ids))
        return -1;
    if (!(*table = (pb_table *)PyCapsule_GetPointer(capsule, BYTES_TABLE_NAME)))
        return -1;
    if (PyList_Check(*ids))
        *n = PyList_Size(*ids);
    else if (PyTuple_Check(*ids))
        *n = PyTuple_Size(*ids);
    else
        *table = NULL;
    return 0;
}

/* Item k of ids (a list, or else a tuple). */
static PyObject *pb_item(PyObject *ids, int is_list, Py_ssize_t k)
{
    return is_list ? PyList_GetItem(ids, k) : PyTuple_GetItem(ids, k);
}

/* `item` as an ID with a token (0 <= id < size, no gap), or -1 when it is
 * anything else: not a plain int (bool is a subclass), out of range, a
 * gap.  Leaves no error set. */
static long pb_id(const pb_table *table, PyObject *item)
{
    int overflow = 0;
    long id;

    if (!item || !PyLong_CheckExact(item))
        return -1;
    id = PyLong_AsLongAndOverflow(item, &overflow);
    if (overflow || id < 0 || id >= table->size || table->spans[id] == PB_GAP)
        return -1;
    return id;
}

/* The bytes of tokens ids[0 .. n) end to end, `total` of them (all IDs
 * checked), as a new bytes object; NULL with an error set. */
static PyObject *pb_join(const pb_table *table, const uint32_t *ids, Py_ssize_t n, size_t total)
{
    PyObject *result;
    unsigned char *out, *end;
    Py_ssize_t k;

    if (total > (size_t)PY_SSIZE_T_MAX)
        return PyErr_NoMemory();
    if (!(result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total)))
        return NULL;
    out = (unsigned char *)PyBytes_AsString(result);
    end = out + total;
    for (k = 0; k < n; k++) {
        uint64_t span = table->spans[ids[k]];
        size_t len = (size_t)(span & UINT32_MAX);
        const unsigned char *from = table->block + (span >> 32);
        /* Up to 16 bytes as one 16-byte move where the output has room
         * for it (the block's slack covers the read). */
        if (len <= PB_PAD && (size_t)(end - out) >= PB_PAD)
            memcpy(out, from, PB_PAD);
        else
            memcpy(out, from, len);
        out += len;
    }
    return result;
}

/* IDs that fit on the stack for the joins' two passes; more take the heap. */
#define PB_STACK_IDS 256

/* Room for n checked IDs: `stack` when they fit, else memory the caller
 * frees with PyMem_Free; NULL with MemoryError set. */
static uint32_t *pb_ids(uint32_t *stack, Py_ssize_t n)
{
    if (n <= PB_STACK_IDS)
        return stack;
    if ((size_t)n > SIZE_MAX / sizeof *stack) {
        PyErr_NoMemory();
        return NULL;
    }
    return (uint32_t *)PyMem_Malloc((size_t)n * sizeof *stack);
}

/* Takes `id` as the k-th ID of a join into seen[k], adding its length to
 * *total: 0, or -1 when no token has it (out of range, or a gap). */
static int pb_take(const pb_table *table, uint64_t id, uint32_t *seen, Py_ssize_t k, size_t *total)
{
    if (id >= (uint64_t)table->size || table->spans[id] == PB_GAP)
        return -1;
    seen[k] = (uint32_t)id;
    *total += (size_t)(table->spans[id] & UINT32_MAX);
    return 0;
}

/* A join's end: the bytes of seen[0 .. n) when all n IDs were taken
 * (taken == n), else None; frees seen unless it is `stack`. */
static PyObject *pb_finish(const pb_table *table, uint32_t *seen, const uint32_t *stack, Py_ssize_t taken,
                           Py_ssize_t n, size_t total)
{
    PyObject *result;

    if (taken == n) {
        result = pb_join(table, seen, n, total);
    } else {
        result = Py_None;
        Py_INCREF(result);
    }
    if (seen != stack)
        PyMem_Free(seen);
    return result;
}

/* join_bytes(table, ids) -> the bytes of the tokens of ids (a list or tuple
 * of ints) end to end, or None when ids holds anything but IDs with tokens
 * (see the top of the file).  Two passes: the IDs checked and the length
 * summed, then the bytes copied into a bytes object of that length. */
static PyObject *pl_join_bytes(PyObject *module, PyObject *args)
{
    PyObject *ids;
    pb_table *table;
    Py_ssize_t n, k;
    int is_list;
    uint32_t stack_ids[PB_STACK_IDS], *seen;
    size_t total = 0;

    (void)module;
    if (pb_args(args, "OO:join_bytes", &table, &ids, &n) < 0)
        return NULL;
    if (!table)
        Py_RETURN_NONE;
    is_list = PyList_Check(ids);
    if (!(seen = pb_ids(stack_ids, n)))
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    for (k = 0; k < n; k++) {
        long id = pb_id(table, pb_item(ids, is_list, k));
        if (id < 0 || pb_take(table, (uint64_t)id, seen, k, &total) < 0)
            break;
    }
    return pb_finish(table, seen, stack_ids, k, n, total);
}

/* join_at(table, address, n, width, signed) -> join_bytes of the n integers
 * of `width` bytes (4 or 8; two's complement when signed) in native order
 * at address (a NumPy array's memory, alive for the call), or None as
 * join_bytes. */
static PyObject *pl_join_at(PyObject *module, PyObject *args)
{
    PyObject *capsule, *address;
    const void *at;
    pb_table *table;
    Py_ssize_t n, k;
    int width, is_signed;
    uint32_t stack_ids[PB_STACK_IDS], *seen;
    size_t total = 0;

    (void)module;
    if (!PyArg_ParseTuple(args, "OOnii:join_at", &capsule, &address, &n, &width, &is_signed))
        return NULL;
    if (!(table = (pb_table *)PyCapsule_GetPointer(capsule, BYTES_TABLE_NAME)))
        return NULL;
    if (pl_address(address, &at) < 0)
        return NULL;
    if (n < 0 || (n && !at) || (width != 4 && width != 8)) {
        PyErr_SetString(PyExc_ValueError, "join_at: bad arguments");
        return NULL;
    }
    if (!(seen = pb_ids(stack_ids, n)))
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    for (k = 0; k < n; k++) {
        uint64_t value; /* a negative one becomes UINT64_MAX, which no token has */
        if (width == 4) {
            uint32_t v;
            memcpy(&v, (const unsigned char *)at + 4 * (size_t)k, 4);
            value = is_signed && (v >> 31) ? UINT64_MAX : v;
        } else {
            memcpy(&value, (const unsigned char *)at + 8 * (size_t)k, 8);
            if (is_signed && (value >> 63))
                value = UINT64_MAX;
        }
        if (pb_take(table, value, seen, k, &total) < 0)
            break;
    }
    return pb_finish(table, seen, stack_ids, k, n, total);
}

/* token_bytes(table, ids) -> [the bytes of each ID of ids] (the bytes
 * objects of the list the table was made from), or None as join_bytes. */
static PyObject *pl_token_bytes(PyObject *module, PyObject *args)
{
    PyObject *ids, *list;
    pb_table *table;
    Py_ssize_t n, k;
    int is_list;

    (void)module;
    if (pb_args(args, "OO:token_bytes", &table, &ids, &n) < 0)
        return NULL;
    if (!table)
        Py_RETURN_NONE;
    is_list = PyList_Check(ids);
    if (!(list = PyList_New(n)))
        return NULL;
    for (k = 0; k < n; k++) {
        long id = pb_id(table, pb_item(ids, is_list, k));
        PyObject *item;
        if (id < 0) {
            Py_DECREF(list);
            Py_RETURN_NONE;
        }
        item = PyList_GetItem(table->by_id, id);
        Py_INCREF(item);
        PyList_SetItem(list, k, item);  /* steals the reference */
    }
    return list;
}

static PyMethodDef pl_methods[] = {
    {"new_table", pl_new_table, METH_VARARGS,
     "new_table(size) -> a table of int objects for IDs below size, each made when first needed."},
    {"id_lists", pl_id_lists, METH_VARARGS,
     "id_lists(table, ids_address, ends_address, n_lists) -> n_lists lists: list i holds the\n"
     "uint32 IDs at ids_address[ends[i-1] .. ends[i]) (ends: size_t at ends_address, ends[-1]\n"
     "taken as 0).  The addresses must point at arrays that long, alive for the call."},
    {"id_spans", pl_id_spans, METH_VARARGS,
     "id_spans(table, ids_address, starts_address, ends_address, first, stop) -> lists i = first\n"
     "... stop - 1: list i holds the uint32 IDs at ids_address[starts[i] .. ends[i]) (starts and\n"
     "ends: size_t arrays at those addresses).  The arrays must be that long, alive for the call."},
    {"encode_ids", pl_encode_ids, METH_VARARGS,
     "encode_ids(encode, ranks, cache, pattern, table, data) -> the IDs of UTF-8 data (bytes) as a\n"
     "list of table's ints, or as bytes of native uint32 when table is None; the encoder's status\n"
     "(an int) when it failed.  encode, ranks, cache: the addresses of bpe_ranks_encode_cached, a\n"
     "rank table and a piece cache of this thread's, alive for the call.  The encoder runs\n"
     "without the GIL."},
    {"encode_piece_ids", pl_encode_piece_ids, METH_VARARGS,
     "encode_piece_ids(encode, ranks, table, data) -> the IDs of data (bytes) merged whole as one\n"
     "piece, as encode_ids gives them; encode, ranks: the addresses of bpe_ranks_encode and a rank\n"
     "table, alive for the call.  The encoder runs without the GIL."},
    {"new_bytes_table", pl_new_bytes_table, METH_VARARGS,
     "new_bytes_table(by_id) -> a table for join_bytes and token_bytes; by_id: a list whose item\n"
     "i is the bytes of the token with ID i, or None where no token has it."},
    {"join_bytes", pl_join_bytes, METH_VARARGS,
     "join_bytes(table, ids) -> the bytes of the tokens of ids (a list or tuple of ints) end to\n"
     "end, or None when ids is not that or holds anything but IDs with tokens."},
    {"join_at", pl_join_at, METH_VARARGS,
     "join_at(table, address, n, width, signed) -> join_bytes of the n integers of width bytes\n"
     "(4 or 8, native order, two's complement when signed) at address, alive for the call; None\n"
     "as join_bytes."},
    {"token_bytes", pl_token_bytes, METH_VARARGS,
     "token_bytes(table, ids) -> [the bytes of each ID of ids], or None as join_bytes."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef pl_module = {
    PyModuleDef_HEAD_INIT, "pybpe._pylists",
    "Encoder output as Python lists of ints (csrc/pyext/pylists.c).", -1, pl_methods,
    NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__pylists(void)
{
    return PyModule_Create(&pl_module);
}
