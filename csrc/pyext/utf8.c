/*
 * utf8.c -- the module pybpe._utf8: a str as UTF-8 bytes under tiktoken's
 * rule for surrogates (a pair is the character it spells, a lone one
 * U+FFFD: pybpe/_unicode.py, fix_surrogates), faster than str.encode on
 * text that is mostly ASCII but not all of it.
 *
 * Why.  The C scanners read UTF-8, so every encode of a str starts by
 * encoding it.  A str of ASCII alone is stored as its UTF-8 already
 * (str.encode copies it: ~0.01 ms per 0.5 MB), but one character beyond
 * ASCII -- an "æ" in a slice of Shakespeare, a curly quote or a dash in
 * English from the web, the accents of French or German -- makes CPython
 * store the whole text one or two bytes per character, and str.encode then
 * walks it a character at a time: ~0.2-0.3 ms per 0.5 MB, ~6% of encoding
 * it with o200k (12 of the 19 0.5 MB slices of Shakespeare hold an "æ").
 * Which way is fastest depends on how CPython stores the str (its kind;
 * "By the str's own kind" below): one byte per character goes through
 * its Latin-1 copy (PyUnicode_AsLatin1String), whose ASCII is copied eight
 * bytes a step; two or four bytes per character is left to str.encode.
 * Text with surrogates, which str.encode refuses, and a str whose kind
 * cannot be read are read as code points (PyUnicode_AsUCS4, whole or a
 * chunk at a time: the limited API has no view of a str's own storage),
 * its UTF-8 length counted, and the bytes written straight into the bytes
 * object, sixteen ASCII characters in one step -- unless most of it is
 * beyond ASCII (utf8() looks at the first UTF8_SAMPLE characters: fewer
 * than 3 in 4 of their blocks of sixteen all ASCII), which str.encode does
 * faster.  Either way the bytes are the same, and with surrogates the loop
 * over code points (which knows the rule) does the text.
 *
 * The vector step uses SSE2 where the compiler has it (every x86-64),
 * behind a feature test; the portable loop is always built, and
 * utf8(text, mode) lets the tests run each way on the same text.  Limited
 * API (Python 3.9+), like pybpe._pylists: one build serves every later
 * CPython.  Optional: without it pybpe/_unicode.py uses str.encode.
 */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#define U8_SSE2 1
#endif

/* Code points converted at once: up to 4 MB of UCS4.  Texts up to this
 * long (nearly all) are converted whole, once, with no copy
 * (PyUnicode_Substring of the whole text is the text); a longer one is
 * converted a chunk at a time, each chunk a new str. */
#define UTF8_CHUNK ((Py_ssize_t)1 << 20)
/* Characters utf8() looks at to choose its way (mode 0): 4,096 cost
 * ~0.5 us, ~15% of a 2,048-character text mostly beyond ASCII, where 1,024
 * choose as well. */
#define UTF8_SAMPLE ((Py_ssize_t)1024)

/* The steps run once per block of sixteen characters are inlined into
 * u8_encode's four copies, where `vector` and whether `o` is NULL are
 * constants: out of line, the block test was a quarter of the time, and
 * the tests of o a third of what was left. */
#if defined(__GNUC__)
#define U8_INLINE static inline __attribute__((always_inline))
#else
#define U8_INLINE static inline
#endif

/* What utf8(text, mode) does: 0 chooses (u8_utf8); 1 and 2 take the loop
 * over code points with its vector step and without; 3 the way through the
 * text's Latin-1 (u8_by_latin1), or the loop (1) where it has a character
 * Latin-1 lacks. */
enum { UTF8_AUTO = 0, UTF8_VECTOR = 1, UTF8_PORTABLE = 2, UTF8_LATIN1 = 3 };

/* A high surrogate followed by a low one spells one character (four bytes
 * of UTF-8); any other surrogate becomes U+FFFD (three).  c = u[*i - 1], a
 * surrogate; *i moves past the low one of a pair.  Returns the code point
 * to write. */
static Py_UCS4 u8_surrogate(Py_UCS4 c, const Py_UCS4 *u, size_t n, size_t *i)
{
    if (c < 0xDC00 && *i < n && u[*i] - 0xDC00u < 0x400u)
        return 0x10000 + ((c - 0xD800) << 10) + (u[(*i)++] - 0xDC00);
    return 0xFFFD;
}

/* One character beyond ASCII, c = u[*i - 1], to o (or only counted, when o
 * is NULL); returns its number of bytes. */
U8_INLINE size_t u8_put(Py_UCS4 c, const Py_UCS4 *u, size_t n, size_t *i, unsigned char *o)
{
    if (c < 0x800) {
        if (o) {
            o[0] = (unsigned char)(0xC0 | c >> 6);
            o[1] = (unsigned char)(0x80 | (c & 0x3F));
        }
        return 2;
    }
    if (c - 0xD800u < 0x800u)
        c = u8_surrogate(c, u, n, i);
    if (c < 0x10000) {
        if (o) {
            o[0] = (unsigned char)(0xE0 | c >> 12);
            o[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
            o[2] = (unsigned char)(0x80 | (c & 0x3F));
        }
        return 3;
    }
    if (o) {
        o[0] = (unsigned char)(0xF0 | c >> 18);
        o[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
        o[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
        o[3] = (unsigned char)(0x80 | (c & 0x3F));
    }
    return 4;
}

/* Whether the sixteen code points at u are all ASCII, and if so (and o is
 * not NULL) their bytes to o: SSE2 (vector 1) or plain words (portable). */
U8_INLINE int u8_ascii16(const Py_UCS4 *u, unsigned char *o, int vector)
{
    int k;
#ifdef U8_SSE2
    if (vector) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)u);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(u + 4));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(u + 8));
        __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(u + 12));
        __m128i any = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
        if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_srli_epi32(any, 7), _mm_setzero_si128())) != 0xFFFF)
            return 0;
        if (o) /* below 0x80: the saturating packs keep every value */
            _mm_storeu_si128((__m128i *)(void *)o,
                             _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)));
        return 1;
    }
#endif
    (void)vector;
    if ((u[0] | u[1] | u[2] | u[3] | u[4] | u[5] | u[6] | u[7] | u[8] | u[9] | u[10] | u[11] |
         u[12] | u[13] | u[14] | u[15]) >= 0x80)
        return 0;
    if (o)
        for (k = 0; k < 16; k++)
            o[k] = (unsigned char)u[k];
    return 1;
}

/* The code point u[*i] to o, or only counted when o is NULL; *i moves
 * past it (and past a low surrogate it pairs with).  Returns its bytes. */
U8_INLINE size_t u8_step(const Py_UCS4 *u, size_t n, size_t *i, unsigned char *o)
{
    Py_UCS4 c = u[(*i)++];
    if (c < 0x80) {
        if (o)
            *o = (unsigned char)c;
        return 1;
    }
    return u8_put(c, u, n, i, o);
}

/* The UTF-8 of code points u[0..n) to o, or only its length when o is
 * NULL (the same steps, so the count is exactly what is written); returns
 * the number of bytes. */
U8_INLINE size_t u8_encode_with(const Py_UCS4 *u, size_t n, unsigned char *o, int vector)
{
    size_t i = 0, len = 0;
    while (n - i >= 16) {
        size_t stop = i + 16;
        if (u8_ascii16(u + i, o ? o + len : NULL, vector)) {
            len += 16;
            i = stop;
            continue;
        }
        while (i < stop) /* a pair may take one code point past stop */
            len += u8_step(u, n, &i, o ? o + len : NULL);
    }
    while (i < n)
        len += u8_step(u, n, &i, o ? o + len : NULL);
    return len;
}

/* The four copies: writing or counting, with SSE2 or without. */
static size_t u8_write_vector(const Py_UCS4 *u, size_t n, unsigned char *o)
{
    return u8_encode_with(u, n, o, 1);
}

static size_t u8_write_portable(const Py_UCS4 *u, size_t n, unsigned char *o)
{
    return u8_encode_with(u, n, o, 0);
}

static size_t u8_count_vector(const Py_UCS4 *u, size_t n)
{
    return u8_encode_with(u, n, NULL, 1);
}

static size_t u8_count_portable(const Py_UCS4 *u, size_t n)
{
    return u8_encode_with(u, n, NULL, 0);
}

static size_t u8_encode(const Py_UCS4 *u, size_t n, unsigned char *o, int vector)
{
    if (o)
        return vector ? u8_write_vector(u, n, o) : u8_write_portable(u, n, o);
    return vector ? u8_count_vector(u, n) : u8_count_portable(u, n);
}

/* ---- By the str's own kind ----------------------------------------------
 *
 * CPython stores a str one, two or four bytes per character (its kind: the
 * fewest that hold its largest character), and the limited API has no view
 * of that storage.  Which way is fastest depends on it (0.5 MB slices, each
 * call on a str of its own after 32 MB of other memory was touched, medians;
 * hot, with nothing between the calls, in brackets):
 *   - one byte (Latin-1: Shakespeare's "æ"): PyUnicode_AsLatin1String
 *     copies the storage, and its UTF-8 is made here eight bytes a step
 *     where they are ASCII: 0.22 ms (0.09), where the loop over code points
 *     took 0.54 (0.24) and str.encode 0.33 (0.19);
 *   - two bytes (a dash, a curly quote, CJK): str.encode, 0.49 ms (0.22)
 *     against the loop's 0.58 (0.26) on Python source that is nearly all
 *     ASCII, and far ahead on text mostly beyond ASCII; a way through
 *     PyUnicode_AsUTF16String was tried and lost to both (0.58 / 2.4 ms);
 *   - four bytes (an emoji): str.encode too.  Alone it is slower than the
 *     loop where the text is mostly ASCII (0.66 against 0.50 ms), but the
 *     loop's 2 MB of UCS4 cost the encoder after it more: encode_to_numpy
 *     on such slices (Python source with an emoji in front, cl100k / o200k,
 *     the two ways alternating) took 0.976-0.996x / 0.963x the time.
 * The kind is read from the str's size (str.__sizeof__: a header, then
 * (length + 1) * kind bytes), against a short str of the same layout made
 * for the purpose; a str whose size says anything else (its UTF-8 kept
 * inside it, a subclass, an old-style str) is left to the sample of
 * u8_mostly_ascii.
 * The guess only picks the way: each gives the same bytes for any text, and
 * a Latin-1 encode or str.encode that fails (a character above U+00FF, a
 * surrogate) falls back to the loop, so a wrong guess costs time only. */

static Py_ssize_t u8_sizeof(PyObject *o)
{
    PyObject *size = PyObject_CallMethod(o, "__sizeof__", NULL);
    Py_ssize_t n;
    if (!size)
        return -1;
    n = PyLong_AsSsize_t(size);
    Py_DECREF(size);
    return n;
}

/* The kind of an exact str of n characters (1, 2 or 4 bytes each), or 0
 * when its size fits none; -1 with the error set. */
static int u8_kind(PyObject *text, Py_ssize_t n)
{
    /* "éé", made here: one byte per character, not ASCII, and a str of
     * its own (the one-character "é" is shared, and other code may have
     * left its UTF-8 inside it, which would count in its size) */
    PyObject *probe;
    Py_ssize_t header, size;
    int kind;
    if (!PyUnicode_CheckExact(text))
        return 0; /* a subclass's size may hold more (its __dict__), or run its code */
    if (!(probe = PyUnicode_DecodeUTF8("\xc3\xa9\xc3\xa9", 4, NULL)))
        return -1;
    header = u8_sizeof(probe);
    Py_DECREF(probe);
    if (header < 0 || (size = u8_sizeof(text)) < 0)
        return -1;
    header -= 3; /* (2 + 1) * 1 byte */
    for (kind = 1; kind <= 4; kind *= 2)
        if (size - header == (n + 1) * kind)
            return kind;
    return 0;
}

/* Whether the eight bytes at p are all ASCII (below 0x80). */
U8_INLINE int u8_ascii8(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return (w & UINT64_C(0x8080808080808080)) == 0;
}

/* Latin-1 bytes b[0..n) as UTF-8 to o, or only counted when o is NULL. */
U8_INLINE size_t u8_latin1_with(const unsigned char *b, size_t n, unsigned char *o)
{
    size_t i = 0, len = 0;
    while (i < n) {
        if (n - i >= 8 && u8_ascii8(b + i)) {
            if (o)
                memcpy(o + len, b + i, 8);
            len += 8;
            i += 8;
            continue;
        }
        if (b[i] < 0x80) {
            if (o)
                o[len] = b[i];
            len++;
        } else {
            if (o) {
                o[len] = (unsigned char)(0xC0 | b[i] >> 6);
                o[len + 1] = (unsigned char)(0x80 | (b[i] & 0x3F));
            }
            len += 2;
        }
        i++;
    }
    return len;
}

static size_t u8_latin1_count(const unsigned char *b, size_t n)
{
    return u8_latin1_with(b, n, NULL);
}

static size_t u8_latin1_write(const unsigned char *b, size_t n, unsigned char *o)
{
    return u8_latin1_with(b, n, o);
}

/* The text's UTF-8 by way of its Latin-1 bytes: counted, then written
 * into the bytes object, *result.  Returns 1 when done, 0 when the text
 * has a character Latin-1 lacks (no error set), -1 with the error set. */
static int u8_by_latin1(PyObject *text, PyObject **result)
{
    PyObject *raw = PyUnicode_AsLatin1String(text);
    const unsigned char *b;
    size_t n, len;
    *result = NULL;
    if (!raw) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    b = (const unsigned char *)PyBytes_AsString(raw);
    n = (size_t)PyBytes_Size(raw);
    len = u8_latin1_count(b, n); /* at most 2n: Latin-1 was allocated */
    *result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
    if (*result && u8_latin1_write(b, n, (unsigned char *)PyBytes_AsString(*result)) != len) {
        /* cannot happen: both passes take the same steps */
        Py_CLEAR(*result);
        PyErr_SetString(PyExc_SystemError, "utf8: the two passes disagree");
    }
    Py_DECREF(raw);
    return *result ? 1 : -1;
}

/* Code points text[start..stop) into buf (room for stop - start + 1);
 * -1 with the error set. */
static int u8_code_points(PyObject *text, Py_ssize_t start, Py_ssize_t stop, Py_UCS4 *buf)
{
    PyObject *part = PyUnicode_Substring(text, start, stop);
    Py_UCS4 *got;
    if (!part)
        return -1;
    got = PyUnicode_AsUCS4(part, buf, stop - start + 1, 1);
    Py_DECREF(part);
    return got ? 0 : -1;
}

/* Whether the text's first UTF8_SAMPLE characters are mostly ASCII: at
 * least 3 in 4 of their blocks of sixteen.  -1 with the error set. */
static int u8_mostly_ascii(PyObject *text, Py_ssize_t n, Py_UCS4 *buf)
{
    Py_ssize_t m = n < UTF8_SAMPLE ? n : UTF8_SAMPLE, k;
    size_t blocks = 0, ascii = 0;
    if (u8_code_points(text, 0, m, buf) < 0)
        return -1;
    for (k = 0; k + 16 <= m; k += 16) {
        blocks++;
        ascii += (size_t)u8_ascii16(buf + k, NULL, 1);
    }
    return blocks > 0 && 4 * ascii >= 3 * blocks;
}

/* One pass over the text a chunk at a time: its UTF-8 to out, or only its
 * length when out is NULL; *len gets the bytes.  A high surrogate ending a
 * chunk is left to the next one, with its pair.  -1 with the error set. */
static int u8_pass(PyObject *text, Py_ssize_t n, Py_UCS4 *buf, unsigned char *out, int vector,
                   size_t *len)
{
    Py_ssize_t pos = 0;
    *len = 0;
    while (pos < n) {
        Py_ssize_t stop = n - pos > UTF8_CHUNK ? pos + UTF8_CHUNK : n, m;
        if (u8_code_points(text, pos, stop, buf) < 0)
            return -1;
        m = stop - pos;
        if (stop < n && buf[m - 1] - 0xD800u < 0x400u)
            m--;
        *len += u8_encode(buf, (size_t)m, out ? out + *len : NULL, vector);
        pos += m;
    }
    return 0;
}

/* The text's UTF-8 (tiktoken's rule for surrogates) as bytes, through this
 * module's loop: its length counted first, then the bytes written straight
 * into the bytes object.  A text of one chunk is converted once; longer
 * ones a chunk at a time, twice (counting, then writing), which bounds the
 * memory taken beside the result.  A single output buffer, copied into the
 * bytes object at the end, cost more: ~1 MB of fresh memory per 0.5 MB of
 * text, ~0.5 ms of page faults, where the whole of this takes ~0.1 ms. */
static PyObject *u8_transcode(PyObject *text, Py_ssize_t n, Py_UCS4 *buf, int vector)
{
    PyObject *result;
    size_t len, written;
    int one_chunk = n <= UTF8_CHUNK;
    if (one_chunk) {
        if (u8_code_points(text, 0, n, buf) < 0)
            return NULL;
        len = u8_encode(buf, (size_t)n, NULL, vector);
    } else if (u8_pass(text, n, buf, NULL, vector, &len) < 0) {
        return NULL;
    }
    if (len > (size_t)PY_SSIZE_T_MAX)
        return PyErr_NoMemory();
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
    if (!result)
        return NULL;
    if (one_chunk) {
        written = u8_encode(buf, (size_t)n, (unsigned char *)PyBytes_AsString(result), vector);
    } else if (u8_pass(text, n, buf, (unsigned char *)PyBytes_AsString(result), vector,
                       &written) < 0) {
        Py_DECREF(result);
        return NULL;
    }
    if (written != len) { /* cannot happen: both passes take the same steps */
        Py_DECREF(result);
        PyErr_SetString(PyExc_SystemError, "utf8: the two passes disagree");
        return NULL;
    }
    return result;
}

static PyObject *u8_kind_of(PyObject *module, PyObject *text)
{
    Py_ssize_t n;
    int kind;
    (void)module;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "kind: a str is needed");
        return NULL;
    }
    if ((n = PyUnicode_GetLength(text)) < 0 || (kind = u8_kind(text, n)) < 0)
        return NULL;
    return PyLong_FromLong(kind);
}

/* utf8(text, mode) once its arguments are read: a new bytes object, or
 * NULL with the error set. */
static PyObject *u8_convert(PyObject *text, int mode)
{
    PyObject *result = NULL;
    int tried_str_encode = 0;
    Py_ssize_t n;
    Py_UCS4 *buf;
    if ((n = PyUnicode_GetLength(text)) < 0)
        return NULL;
    if (mode == UTF8_AUTO || mode == UTF8_LATIN1) {
        /* the way for the str's kind (above) */
        int kind = mode == UTF8_LATIN1 ? 1 : u8_kind(text, n);
        if (kind < 0)
            return NULL;
        if (kind == 1 && u8_by_latin1(text, &result) != 0)
            return result; /* done, or the error */
        if (kind == 2 || kind == 4) {
            result = PyUnicode_AsUTF8String(text);
            if (result || !PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
                return result;
            PyErr_Clear(); /* surrogates: the loop knows what to make of them */
            tried_str_encode = 1;
        }
    }
    buf = (Py_UCS4 *)PyMem_Malloc(((size_t)(n < UTF8_CHUNK ? n : UTF8_CHUNK) + 1) * sizeof *buf);
    if (!buf)
        return PyErr_NoMemory();
    if (mode == UTF8_AUTO && !tried_str_encode) {
        int mostly = u8_mostly_ascii(text, n, buf);
        if (mostly < 0)
            goto done;
        if (!mostly) {
            result = PyUnicode_AsUTF8String(text);
            if (result || !PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
                goto done;
            PyErr_Clear(); /* surrogates: the loop below knows what to make of them */
        }
    }
    result = u8_transcode(text, n, buf, mode != UTF8_PORTABLE);
done:
    PyMem_Free(buf);
    return result;
}

static PyObject *u8_utf8(PyObject *module, PyObject *args)
{
    PyObject *text;
    int mode = UTF8_AUTO;
    (void)module;
    if (!PyArg_ParseTuple(args, "U|i:utf8", &text, &mode))
        return NULL;
    if (mode < UTF8_AUTO || mode > UTF8_LATIN1) {
        PyErr_SetString(PyExc_ValueError, "utf8: mode must be 0, 1, 2 or 3");
        return NULL;
    }
    return u8_convert(text, mode);
}

/* ---- Many texts at once -------------------------------------------------
 *
 * A batch of texts (encode_ordinary_batch) went to C as one buffer: each
 * text's UTF-8 made by a Python call of utf8(), the bytes joined, and the
 * ends summed in Python, all on the calling thread before any other thread
 * could start.  For 4,782 texts of 200 characters (~0.94 MB) those steps
 * took ~1.1 ms of a ~13.7 ms call on two threads.  joined() takes the list
 * in one call: each text converted as pybpe._unicode.utf8 does it (below
 * UTF8_MODULE_MIN characters or all ASCII, str.encode; longer, this
 * module's way by its kind; surrogates by tiktoken's rule either way), then
 * copied once into the joined buffer. */

/* pybpe/_unicode.py's _UTF8_MODULE_MIN: shorter texts take str.encode. */
#define UTF8_MODULE_MIN 2048

/* pybpe._unicode.utf8(text) for one str. */
static PyObject *u8_auto(PyObject *text)
{
    PyObject *result;
    Py_ssize_t n = PyUnicode_GetLength(text);
    if (n < 0)
        return NULL;
    if (n >= UTF8_MODULE_MIN) {
        PyObject *ascii = PyObject_CallMethod(text, "isascii", NULL);
        int is_ascii;
        if (!ascii)
            return NULL;
        is_ascii = PyObject_IsTrue(ascii);
        Py_DECREF(ascii);
        if (is_ascii < 0)
            return NULL;
        if (!is_ascii)
            return u8_convert(text, UTF8_AUTO);
    }
    result = PyUnicode_AsUTF8String(text);
    if (result || !PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
        return result;
    PyErr_Clear(); /* surrogates: the module's way knows what to make of them */
    return u8_convert(text, UTF8_AUTO);
}

/* Item i of seq, a list or a tuple (PySequence_Fast's), borrowed. */
static PyObject *u8_item(PyObject *seq, Py_ssize_t i)
{
    return PyList_Check(seq) ? PyList_GetItem(seq, i) : PyTuple_GetItem(seq, i);
}

static PyObject *u8_joined(PyObject *module, PyObject *texts)
{
    PyObject *seq, **parts = NULL, *data = NULL, *starts = NULL, *result = NULL;
    Py_ssize_t n, i;
    size_t total = 0, *at;
    char *out;
    (void)module;
    if (!(seq = PySequence_Fast(texts, "joined: a list of str is needed")))
        return NULL;
    if ((n = PySequence_Size(seq)) < 0)
        goto done;
    for (i = 0; i < n; i++) {
        PyObject *item = u8_item(seq, i);
        if (!item)
            goto done;
        if (!PyUnicode_Check(item)) { /* the caller names the error */
            result = PyLong_FromSsize_t(i);
            goto done;
        }
    }
    if ((size_t)n > ((size_t)PY_SSIZE_T_MAX - 1) / sizeof(size_t) ||
        !(parts = (PyObject **)PyMem_Calloc(n ? (size_t)n : 1, sizeof *parts))) {
        PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i < n; i++) {
        if (!(parts[i] = u8_auto(u8_item(seq, i))))
            goto done;
        total += (size_t)PyBytes_Size(parts[i]);
    }
    if (total > (size_t)PY_SSIZE_T_MAX) {
        PyErr_NoMemory();
        goto done;
    }
    data = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    starts = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(((size_t)n + 1) * sizeof(size_t)));
    if (!data || !starts)
        goto done;
    out = PyBytes_AsString(data);
    at = (size_t *)(void *)PyBytes_AsString(starts); /* bytes objects are aligned for size_t */
    at[0] = 0;
    for (i = 0; i < n; i++) {
        size_t len = (size_t)PyBytes_Size(parts[i]);
        memcpy(out + at[i], PyBytes_AsString(parts[i]), len);
        at[i + 1] = at[i] + len;
    }
    result = PyTuple_Pack(2, data, starts);
done:
    if (parts) {
        for (i = 0; i < n; i++)
            Py_XDECREF(parts[i]);
        PyMem_Free(parts);
    }
    Py_XDECREF(data);
    Py_XDECREF(starts);
    Py_DECREF(seq);
    return result;
}

static PyMethodDef u8_methods[] = {
    {"utf8", u8_utf8, METH_VARARGS,
     "utf8(text, mode=0) -> the UTF-8 bytes of str text, surrogate pairs joined into the character\n"
     "they spell and lone surrogates made U+FFFD (tiktoken's rule).  mode 0 picks the faster way\n"
     "for the text (by the str's kind: its Latin-1, str.encode, or this module's loop); 1 and 2\n"
     "force the loop, with its vector step (where built) and without it; 3 the way through\n"
     "Latin-1 (the loop where the text has a character Latin-1 lacks)."},
    {"joined", u8_joined, METH_O,
     "joined(texts) -> (data, starts): the UTF-8 of each str of the list texts (as utf8 makes it,\n"
     "surrogates by tiktoken's rule), end to end in the bytes data, and starts, the bytes of n + 1\n"
     "native size_t: 0, then where each text ends.  The index of the first item that is not a\n"
     "str instead, as an int, when there is one (nothing converted after it)."},
    {"kind", u8_kind_of, METH_O,
     "kind(text) -> 1, 2 or 4: the bytes per character CPython stores str text in, as utf8's\n"
     "mode 0 reads it from the str's size; 0 when that size fits no kind."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef u8_module = {
    PyModuleDef_HEAD_INIT, "pybpe._utf8",
    "A str as UTF-8 under tiktoken's rule for surrogates (csrc/pyext/utf8.c).", -1, u8_methods,
    NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__utf8(void)
{
    return PyModule_Create(&u8_module);
}
