/*
 * ranks_file.c -- the module pybpe._ranks_file: the bytes of a .tiktoken
 * file to {token bytes: rank} in one pass of C, for
 * pybpe.formats.load_tiktoken_bpe.
 *
 * Why: the loader's Python loop (a split, a base64 decode and five checks
 * per line) took ~215 ms of o200k's 200,000 lines, ~40% of
 * get_encoding("o200k_base").  parse() takes only what is plainly right --
 * every line a canonical base64 token, one space and a rank of 1-10
 * digits, ended by LF or CR LF, empty lines skipped -- and answers None for
 * anything else (an odd line, a token given twice, a rank above the
 * largest, an empty file), so that the Python loader reads the file itself
 * and names the first error by its line.  What this accepts, the Python
 * loop accepts too and makes the same dict of; ranks given twice are left
 * to the caller (a set of the values), which can tell in one step.
 *
 * Limited API (Python 3.9+), like the other modules here; optional: without
 * it the Python loop reads every file.
 */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>

/* The value of a base64 digit, or -1. */
static int rf_digit(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decodes canonical base64 text[0..len) to out (room for len / 4 * 3
 * bytes): a multiple of four characters, padding only as the last one or
 * two, and the bits padding drops all zero (so no other spelling means the
 * same bytes).  The number of bytes, or -1 for anything else. */
static Py_ssize_t rf_base64(const unsigned char *text, size_t len, unsigned char *out)
{
    size_t i, n = 0;

    if (len == 0 || len % 4 != 0)
        return -1;
    for (i = 0; i < len; i += 4) {
        int a = rf_digit(text[i]), b = rf_digit(text[i + 1]), c, d;
        int last = i + 4 == len;
        if (a < 0 || b < 0)
            return -1;
        if (last && text[i + 2] == '=' && text[i + 3] == '=') {
            if (b & 15)
                return -1;
            out[n++] = (unsigned char)(a << 2 | b >> 4);
            break;
        }
        c = rf_digit(text[i + 2]);
        if (c < 0)
            return -1;
        if (last && text[i + 3] == '=') {
            if (c & 3)
                return -1;
            out[n++] = (unsigned char)(a << 2 | b >> 4);
            out[n++] = (unsigned char)((b & 15) << 4 | c >> 2);
            break;
        }
        d = rf_digit(text[i + 3]);
        if (d < 0)
            return -1;
        out[n++] = (unsigned char)(a << 2 | b >> 4);
        out[n++] = (unsigned char)((b & 15) << 4 | c >> 2);
        out[n++] = (unsigned char)((c & 3) << 6 | d);
    }
    return (Py_ssize_t)n;
}

/* One line p[0..len) (its LF gone) into dict; 1 when it was added, 0 when
 * the line is not one parse() takes, -1 with an error set. */
static int rf_line(PyObject *dict, const unsigned char *p, size_t len, unsigned long long max_rank,
                   unsigned char *scratch)
{
    size_t space = 0, k;
    unsigned long long rank = 0;
    Py_ssize_t n, before;
    PyObject *token, *value;
    int status;

    while (len > 0 && p[len - 1] == '\r')
        len--;
    while (space < len && p[space] != ' ')
        space++;
    if (space == len || len - space - 1 < 1 || len - space - 1 > 10)
        return 0;
    for (k = space + 1; k < len; k++) {
        if (p[k] < '0' || p[k] > '9')
            return 0;
        rank = rank * 10 + (unsigned long long)(p[k] - '0');
    }
    if (rank > max_rank || (n = rf_base64(p, space, scratch)) <= 0)
        return 0;
    if (!(token = PyBytes_FromStringAndSize((const char *)scratch, n)))
        return -1;
    if (!(value = PyLong_FromUnsignedLongLong(rank))) {
        Py_DECREF(token);
        return -1;
    }
    before = PyDict_Size(dict);
    status = PyDict_SetItem(dict, token, value);
    Py_DECREF(token);
    Py_DECREF(value);
    if (status < 0)
        return -1;
    return PyDict_Size(dict) > before; /* 0: the token was there already */
}

/* parse(data, max_rank) -> {token: rank}, or None (see the top). */
static PyObject *rf_parse(PyObject *module, PyObject *args)
{
    PyObject *data, *dict;
    unsigned long long max_rank;
    char *bytes;
    Py_ssize_t size;
    const unsigned char *p, *end;
    unsigned char *scratch;

    (void)module;
    if (!PyArg_ParseTuple(args, "OK:parse", &data, &max_rank))
        return NULL;
    if (PyBytes_AsStringAndSize(data, &bytes, &size) < 0)
        return NULL;
    if (!(scratch = (unsigned char *)PyMem_Malloc((size_t)size / 4 * 3 + 3)))
        return PyErr_NoMemory();
    if (!(dict = PyDict_New())) {
        PyMem_Free(scratch);
        return NULL;
    }
    p = (const unsigned char *)bytes;
    end = p + size;
    while (p < end) {
        const unsigned char *line_end = p;
        int added;
        while (line_end < end && *line_end != '\n')
            line_end++;
        /* an empty line (or one of CRs only) is skipped, as the loop does */
        if (line_end > p) {
            const unsigned char *q = p;
            while (q < line_end && *q == '\r')
                q++;
            if (q < line_end) {
                added = rf_line(dict, p, (size_t)(line_end - p), max_rank, scratch);
                if (added <= 0) {
                    PyMem_Free(scratch);
                    Py_DECREF(dict);
                    if (added < 0)
                        return NULL;
                    Py_RETURN_NONE;
                }
            }
        }
        p = line_end + 1;
    }
    PyMem_Free(scratch);
    if (PyDict_Size(dict) == 0) {
        Py_DECREF(dict);
        Py_RETURN_NONE;
    }
    return dict;
}

static PyMethodDef rf_methods[] = {
    {"parse", rf_parse, METH_VARARGS,
     "parse(data, max_rank) -> {token bytes: rank} of a .tiktoken file's bytes, or None when a\n"
     "line is not 'canonical-base64 SP digits' (LF or CR LF ends), a token comes twice, a rank\n"
     "exceeds max_rank, or there is no line; ranks given twice are not checked."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef rf_module = {
    PyModuleDef_HEAD_INIT, "pybpe._ranks_file",
    "A .tiktoken file's bytes to {token: rank} (csrc/pyext/ranks_file.c).", -1, rf_methods,
    NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__ranks_file(void)
{
    return PyModule_Create(&rf_module);
}
