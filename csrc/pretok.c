/*
 * pretok.c -- scanners equivalent to the gpt2 and cl100k patterns (pretok.h).
 *
 * Each scanner tries the pattern's alternatives in order at one position,
 * like the regex engine, but knows their shapes: every alternative is a run
 * of one character class with a fixed prefix or suffix, so one left-to-right
 * pass decides it.  The comment above each scanner maps its steps to the
 * alternatives.  Not here: o200k's case-split letter rules (Python handles
 * that pattern), and any pattern a user writes.
 */
#include "pretok.h"

#include <stdint.h>

enum { PT_OTHER = 0, PT_LETTER, PT_NUMBER, PT_SPACE };

typedef struct {
    uint32_t lo, hi;
    unsigned char cls;
} pt_range;

#include "unicode_tables.inc"

/* Class of code point c: ASCII by table lookup, the rest by binary search. */
static int pt_class(uint32_t c)
{
    size_t lo = 0, hi = sizeof pt_ranges / sizeof pt_ranges[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c < pt_ranges[mid].lo)
            hi = mid;
        else if (c > pt_ranges[mid].hi)
            lo = mid + 1;
        else
            return pt_ranges[mid].cls;
    }
    return PT_OTHER;
}

/* A decoded character: code point, class and where the next one starts. */
typedef struct {
    uint32_t cp;
    int cls;
    size_t next;
} pt_char;

/* Decodes the character at text[pos] (pos < len).  A malformed or truncated
 * sequence is one byte of class "other" (Python never passes one). */
static pt_char pt_at(const unsigned char *t, size_t len, size_t pos)
{
    pt_char ch;
    unsigned char b = t[pos];
    size_t n = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3
             : (b & 0xF8) == 0xF0 ? 4 : 0;
    size_t k;
    ch.cp = n == 1 ? b : n == 2 ? (uint32_t)(b & 0x1F) : n == 3 ? (uint32_t)(b & 0x0F)
          : (uint32_t)(b & 0x07);
    if (n == 0 || n > len - pos) {
        ch.cp = b;
        ch.cls = PT_OTHER;
        ch.next = pos + 1;
        return ch;
    }
    for (k = 1; k < n; k++)
        ch.cp = ch.cp << 6 | (uint32_t)(t[pos + k] & 0x3F);
    if (ch.cp < 0x80) /* ASCII without the search */
        ch.cls = ((b | 0x20) >= 'a' && (b | 0x20) <= 'z') ? PT_LETTER
               : (b >= '0' && b <= '9') ? PT_NUMBER
               : ((b >= 0x09 && b <= 0x0D) || b == ' ') ? PT_SPACE : PT_OTHER;
    else
        ch.cls = pt_class(ch.cp);
    ch.next = pos + n;
    return ch;
}

/* End of the run of characters of class `cls` starting at pos (pos itself
 * is not checked), at most `max` characters (0 = no limit). */
static size_t pt_run(const unsigned char *t, size_t len, size_t pos, int cls,
                     size_t max)
{
    size_t count = 0;
    while (pos < len && (max == 0 || count < max)) {
        pt_char ch = pt_at(t, len, pos);
        if (ch.cls != cls)
            break;
        pos = ch.next;
        count++;
    }
    return pos;
}

/* The whitespace alternatives both patterns end with.  The run of
 * whitespace starting at pos ends at k; `\s+(?!\S)` takes all of it at the
 * end of the text, else all but its last character (when that leaves one),
 * else `\s+` / `\s` take the single character.  cl100k first tries
 * `\s*[\r\n]`: up to the last CR or LF in the run. */
static size_t pt_spaces(const unsigned char *t, size_t len, size_t pos,
                        int newline_rule)
{
    size_t k = pos, last = pos, count = 0, after_newline = 0;
    while (k < len) {
        pt_char ch = pt_at(t, len, k);
        if (ch.cls != PT_SPACE)
            break;
        if (ch.cp == '\r' || ch.cp == '\n')
            after_newline = ch.next;
        last = k;
        k = ch.next;
        count++;
    }
    if (k == len)
        return k; /* gpt2: \s+(?!\S); cl100k: \s++$ */
    if (newline_rule && after_newline)
        return after_newline;
    return count >= 2 ? last : k;
}

/* gpt2:  '(?:[sdmt]|ll|ve|re) | ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+ |
 *        \s+(?!\S) | \s+                                                  */
static size_t pt_gpt2(const unsigned char *t, size_t len, size_t pos)
{
    pt_char c0 = pt_at(t, len, pos);
    if (c0.cp == '\'' && pos + 1 < len) {
        unsigned char a = t[pos + 1], b = pos + 2 < len ? t[pos + 2] : 0;
        if (a == 's' || a == 'd' || a == 'm' || a == 't')
            return pos + 2;
        if ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e'))
            return pos + 3;
    }
    if (c0.cp == ' ' && c0.next < len) {
        pt_char c1 = pt_at(t, len, c0.next);
        if (c1.cls != PT_SPACE) /* " ?" then a run of c1's class */
            return pt_run(t, len, c1.next, c1.cls, 0);
    }
    if (c0.cls != PT_SPACE)
        return pt_run(t, len, c0.next, c0.cls, 0);
    return pt_spaces(t, len, pos, 0);
}

/* The letters cl100k's (?i:...) contractions accept: ASCII either case,
 * plus U+017F LATIN SMALL LETTER LONG S, which simple case folding makes an
 * "s" (the regex engines agree on this). */
static int pt_folds_to(const unsigned char *t, size_t len, size_t pos, char lower,
                       size_t *next)
{
    if (pos >= len)
        return 0;
    if ((t[pos] | 0x20) == (unsigned char)lower && t[pos] < 0x80) {
        *next = pos + 1;
        return 1;
    }
    if (lower == 's' && pos + 1 < len && t[pos] == 0xC5 && t[pos + 1] == 0xBF) {
        *next = pos + 2;
        return 1;
    }
    return 0;
}

/* cl100k:  '(?i:[sdmt]|ll|ve|re) | [^\r\n\p{L}\p{N}]?+\p{L}++ |
 *          \p{N}{1,3}+ | ?[^\s\p{L}\p{N}]++[\r\n]*+ | \s++$ | \s*[\r\n] |
 *          \s+(?!\S) | \s                                                 */
static size_t pt_cl100k(const unsigned char *t, size_t len, size_t pos)
{
    pt_char c0 = pt_at(t, len, pos);
    size_t a, b;
    if (c0.cp == '\'') {
        const char *one = "sdmt", *two[3] = {"ll", "ve", "re"};
        int i;
        for (i = 0; one[i]; i++)
            if (pt_folds_to(t, len, c0.next, one[i], &a))
                return a;
        for (i = 0; i < 3; i++)
            if (pt_folds_to(t, len, c0.next, two[i][0], &a) &&
                pt_folds_to(t, len, a, two[i][1], &b))
                return b;
    }
    if (c0.cls == PT_LETTER)
        return pt_run(t, len, c0.next, PT_LETTER, 0);
    if (c0.cls != PT_NUMBER && c0.cp != '\r' && c0.cp != '\n' && c0.next < len) {
        pt_char c1 = pt_at(t, len, c0.next); /* one prefix character */
        if (c1.cls == PT_LETTER)
            return pt_run(t, len, c1.next, PT_LETTER, 0);
    }
    if (c0.cls == PT_NUMBER)
        return pt_run(t, len, c0.next, PT_NUMBER, 2); /* 1 + 2 more */
    a = pos;
    if (c0.cp == ' ' && c0.next < len && pt_at(t, len, c0.next).cls == PT_OTHER)
        a = c0.next;
    if (pt_at(t, len, a).cls == PT_OTHER) {
        a = pt_run(t, len, a, PT_OTHER, 0);
        while (a < len && (t[a] == '\r' || t[a] == '\n'))
            a++;
        return a;
    }
    return pt_spaces(t, len, pos, 1);
}

size_t bpe_pretok_next(int pattern, const unsigned char *text, size_t len,
                       size_t pos)
{
    if (!text || pos >= len)
        return 0;
    if (pattern == BPE_PRETOK_GPT2)
        return pt_gpt2(text, len, pos);
    if (pattern == BPE_PRETOK_CL100K)
        return pt_cl100k(text, len, pos);
    return 0;
}

size_t bpe_pretok_split(int pattern, const unsigned char *text, size_t len,
                        size_t *ends)
{
    size_t pos = 0, n = 0;
    while (pos < len) {
        size_t end = bpe_pretok_next(pattern, text, len, pos);
        if (end <= pos)
            return 0;
        ends[n++] = end;
        pos = end;
    }
    return n;
}
