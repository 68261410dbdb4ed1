/*
 * book.h -- small helpers shared by the Chapter 11 companion programs.
 *
 * The programs in this folder (061-066) mirror the C book's listings, but
 * every step of the algorithm is a call into pybpe's core (../bpe.h).  What
 * is left for the programs -- and collected here -- is the plumbing a
 * listing would not print: splitting a line on spaces, turning a word into
 * one symbol per byte, rendering a segmentation, reporting an error code.
 *
 * Deliberately not here: anything that counts, picks or merges pairs.
 * Text is treated as bytes (the listings' corpora are ASCII); a UTF-8
 * character outside ASCII would become several symbols.
 *
 * Everything is `static inline`, so a program that uses only part of the
 * header compiles warning-clean.
 */
#ifndef PYBPE_EXAMPLES_BOOK_H
#define PYBPE_EXAMPLES_BOOK_H

#include <stdio.h>
#include <string.h>

#include "bpe.h"

/* The longest word, and the longest rendered segmentation, the programs
 * handle.  The listings' words are a dozen bytes; the limits are checked. */
#define BOOK_MAX_SYMBOLS 64
#define BOOK_MAX_TEXT 256

/* A core status code as a word a student can look up in bpe.h. */
static inline const char *book_status_name(int status)
{
    switch (status) {
    case BPE_OK: return "BPE_OK";
    case BPE_ENOMEM: return "BPE_ENOMEM (out of memory)";
    case BPE_EINVAL: return "BPE_EINVAL (argument out of range)";
    case BPE_ETOOBIG: return "BPE_ETOOBIG (size too large)";
    default: return "unknown status";
    }
}

/* Reports a failed core call on stderr and returns 1, the exit status the
 * programs use for "the core said no". */
static inline int book_fail(const char *what, int status)
{
    fprintf(stderr, "error: %s failed: %s\n", what, book_status_name(status));
    return 1;
}

/* Interns a NUL-terminated string: its existing ID, or the next free one. */
static inline int book_intern(bpe_symtab *table, const char *s, uint32_t *id)
{
    return bpe_symtab_intern(table, s, strlen(s), id);
}

/* The next word of a line split on spaces (the listings' `split`): returns
 * its start and sets *len, or returns NULL at the end.  *cursor advances.
 *   "the cat" -> "the" (3), then "cat" (3), then NULL */
static inline const char *book_next_word(const char **cursor, size_t *len)
{
    const char *p = *cursor, *start;

    while (*p == ' ')
        p++;
    if (*p == '\0')
        return NULL;
    start = p;
    while (*p != '\0' && *p != ' ')
        p++;
    *len = (size_t)(p - start);
    *cursor = p;
    return start;
}

/* A word's initial symbols: one per byte, then `marker` as a symbol of its
 * own when it is not NULL (the C book's "low" -> l o w _).  New strings are
 * interned, so a letter never seen before simply gets the next ID.
 * Returns BPE_EINVAL when the word does not fit in `cap` symbols. */
static inline int book_word_symbols(bpe_symtab *table, const char *word,
                                    size_t len, const char *marker,
                                    uint32_t *out, size_t cap, size_t *n_out)
{
    size_t i, n = len + (marker != NULL);
    int status;

    if (n > cap)
        return BPE_EINVAL;
    for (i = 0; i < len; i++)
        if ((status = bpe_symtab_intern(table, word + i, 1, &out[i])) != BPE_OK)
            return status;
    if (marker != NULL && (status = book_intern(table, marker, &out[len])) != BPE_OK)
        return status;
    *n_out = n;
    return BPE_OK;
}

/* Renders symbols as their strings separated by spaces ("n e w es t _")
 * into buf, so callers can align it with printf("%-20s").  A string too
 * long for buf ends in "...".  cap must be at least 4. */
static inline const char *book_render(const bpe_symtab *table,
                                      const uint32_t *symbols, size_t n,
                                      char *buf, size_t cap)
{
    size_t used = 0, i, len;
    const char *bytes;

    buf[0] = '\0';
    for (i = 0; i < n; i++) {
        bytes = bpe_symtab_bytes(table, symbols[i], &len);
        if (bytes == NULL) {
            bytes = "?";  /* BPE_NO_SYMBOL: a character the table never saw */
            len = 1;
        }
        if (used + len + 2 >= cap) {  /* room for ' ', the bytes, NUL */
            if (used > cap - 4)
                used = cap - 4;
            strcpy(buf + used, "...");
            return buf;
        }
        if (i > 0)
            buf[used++] = ' ';
        memcpy(buf + used, bytes, len);
        used += len;
        buf[used] = '\0';
    }
    return buf;
}

/* One symbol's string, for printf("%s"): at most BOOK_MAX_TEXT - 1 bytes. */
static inline const char *book_symbol(const bpe_symtab *table, uint32_t id,
                                      char *buf, size_t cap)
{
    return book_render(table, &id, 1, buf, cap);
}

#endif /* PYBPE_EXAMPLES_BOOK_H */
