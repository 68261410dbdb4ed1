/*
 * pretok.c -- scanners equivalent to the gpt2, cl100k and o200k patterns
 * (text.h).
 *
 * Each scanner tries the pattern's alternatives in order at one position,
 * like the regex engine, but knows their shapes: every alternative is a run
 * of one character class with a fixed prefix or suffix, so one left-to-right
 * pass decides it (o200k's letter rules need one step of backtracking,
 * worked out in the comment above pt_o200k_letters).  The comment above each
 * scanner maps its steps to the alternatives.  Not here: any pattern a user
 * writes (Python's regex module handles those).  Text level (text.h).
 */
#include <stdint.h>

#include "text_internal.h"
#include "unicode_tables.inc"

/* Sets of classes as bit masks over the generated PT_* values. */
#define PT_BIT(c) (1u << (c))
#define M_SPACE PT_BIT(PT_SPACE)
#define M_NUMBER PT_BIT(PT_NUMBER)
#define M_LETTER (PT_BIT(PT_UPPER) | PT_BIT(PT_LOWER) | PT_BIT(PT_CASELESS))  /* \p{L} */
#define M_OTHER (PT_BIT(PT_OTHER) | PT_BIT(PT_MARK))            /* [^\s\p{L}\p{N}] */
#define M_O200K_UPPER (PT_BIT(PT_UPPER) | PT_BIT(PT_CASELESS) | PT_BIT(PT_MARK)) /* [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
#define M_O200K_LOWER (PT_BIT(PT_LOWER) | PT_BIT(PT_CASELESS) | PT_BIT(PT_MARK)) /* [\p{Ll}\p{Lm}\p{Lo}\p{M}] */

/* The one of the four coarse sets (space, number, letter, other) that holds
 * each class: what gpt2 and cl100k see. */
static const unsigned pt_group[7] = {
    M_OTHER, M_SPACE, M_NUMBER, M_LETTER, M_LETTER, M_LETTER, M_OTHER};

/* A decoded character: code point, class, class bit (PT_BIT of the class)
 * and where the next one starts. */
typedef struct {
    uint32_t cp;
    unsigned cls, bit;
    size_t next;
} pt_char;

/* Decodes the character at text[pos] (pos < len) with text_internal.h's
 * decoder.  A sequence with a bad lead byte or cut short by len is one byte
 * of class "other" (Python never passes one); continuation bytes are not
 * checked, and a lead above F4 decodes past U+10FFFF, which is "other". */
static pt_char pt_at(const unsigned char *t, size_t len, size_t pos)
{
    pt_char ch;
    unsigned char b = t[pos];
    size_t n = bpe__utf8_lead_len(b);
    if (n == 1) { /* ASCII: the common case, no decoding */
        ch.cp = b;
        ch.cls = pt_stage2[b];
        ch.bit = PT_BIT(ch.cls);
        ch.next = pos + 1;
        return ch;
    }
    if (n == 0 || n > len - pos) {
        ch.cp = b;
        ch.cls = PT_OTHER;
        ch.bit = PT_BIT(ch.cls);
        ch.next = pos + 1;
        return ch;
    }
    ch.cp = bpe__utf8_decode(t + pos);  /* n == bpe__utf8_len(b) here */
    ch.cls = ch.cp < 0x110000 ? pt_stage2[(size_t)pt_stage1[ch.cp >> 7] * 128 + (ch.cp & 127)]
                              : PT_OTHER;
    ch.bit = PT_BIT(ch.cls);
    ch.next = pos + n;
    return ch;
}

/* End of the run of characters whose class is in `mask`, starting at pos
 * (pos itself is checked too), at most `max` characters (0 = no limit). */
static size_t pt_run(const unsigned char *t, size_t len, size_t pos, unsigned mask,
                     size_t max)
{
    size_t count = 0;
    while (pos < len && (max == 0 || count < max)) {
        pt_char ch = pt_at(t, len, pos);
        if (!(ch.bit & mask))
            break;
        pos = ch.next;
        count++;
    }
    return pos;
}

/* The whitespace alternatives the patterns end with.  The run of whitespace
 * starting at pos ends at k.  `\s+(?!\S)` takes all of it at the end of the
 * text, else all but its last character (when that leaves one), else `\s+` /
 * `\s` take the single character.  newline_rule 1 (cl100k): at the end of
 * the text all of it (`\s++$`), else first `\s*[\r\n]`, up to the last CR or
 * LF in the run.  newline_rule 2 (o200k): `\s*[\r\n]+` comes first, even at
 * the end of the text. */
static size_t pt_spaces(const unsigned char *t, size_t len, size_t pos,
                        int newline_rule)
{
    size_t k = pos, last = pos, count = 0, after_newline = 0;
    while (k < len) {
        pt_char ch = pt_at(t, len, k);
        if (ch.bit != M_SPACE)
            break;
        if (ch.cp == '\r' || ch.cp == '\n')
            after_newline = ch.next;
        last = k;
        k = ch.next;
        count++;
    }
    if (newline_rule == 2 && after_newline)
        return after_newline;
    if (k == len)
        return k;
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
        if (c1.bit != M_SPACE) /* " ?" then a run of c1's class */
            return pt_run(t, len, c1.next, pt_group[c1.cls], 0);
    }
    if (c0.bit != M_SPACE)
        return pt_run(t, len, c0.next, pt_group[c0.cls], 0);
    return pt_spaces(t, len, pos, 0);
}

/* The letters the (?i:...) contractions accept: ASCII either case, plus
 * U+017F LATIN SMALL LETTER LONG S, which simple case folding makes an "s"
 * (tests/test_unicode.py checks every code point against tiktoken: no other
 * one folds to s, d, m, t, l, v, r or e). */
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

/* `'(?i:[sdmt]|ll|ve|re)` at pos (pos may be len): the end, or 0. */
static size_t pt_contraction(const unsigned char *t, size_t len, size_t pos)
{
    static const char one[] = "sdmt", two[3][3] = {"ll", "ve", "re"};
    size_t a, b;
    int i;
    if (pos >= len || t[pos] != '\'')
        return 0;
    for (i = 0; one[i]; i++)
        if (pt_folds_to(t, len, pos + 1, one[i], &a))
            return a;
    for (i = 0; i < 3; i++)
        if (pt_folds_to(t, len, pos + 1, two[i][0], &a) &&
            pt_folds_to(t, len, a, two[i][1], &b))
            return b;
    return 0;
}

/* What cl100k and o200k try after their letter alternatives:
 * \p{N}{1,3} | ' '?[^\s\p{L}\p{N}]+ then any "\r" and "\n" (and "/" when
 * slash_too: o200k's [\r\n/]*) | their whitespace rules (spaces_mode as
 * pt_spaces takes it).  c0 is the character at pos. */
static size_t pt_numbers_marks_spaces(const unsigned char *t, size_t len, size_t pos,
                                      pt_char c0, int slash_too, int spaces_mode)
{
    size_t a;
    if (c0.bit == M_NUMBER)
        return pt_run(t, len, c0.next, M_NUMBER, 2); /* 1 + 2 more */
    a = pos;
    if (c0.cp == ' ' && c0.next < len && (pt_at(t, len, c0.next).bit & M_OTHER))
        a = c0.next;
    if (pt_at(t, len, a).bit & M_OTHER) {
        a = pt_run(t, len, a, M_OTHER, 0);
        while (a < len && (t[a] == '\r' || t[a] == '\n' || (slash_too && t[a] == '/')))
            a++;
        return a;
    }
    return pt_spaces(t, len, pos, spaces_mode);
}

/* cl100k:  '(?i:[sdmt]|ll|ve|re) | [^\r\n\p{L}\p{N}]?+\p{L}++ |
 *          \p{N}{1,3}+ | ?[^\s\p{L}\p{N}]++[\r\n]*+ | \s++$ | \s*[\r\n] |
 *          \s+(?!\S) | \s                                                 */
static size_t pt_cl100k(const unsigned char *t, size_t len, size_t pos)
{
    pt_char c0 = pt_at(t, len, pos);
    size_t a;
    if (c0.cp == '\'' && (a = pt_contraction(t, len, pos)) != 0)
        return a;
    if (c0.bit & M_LETTER)
        return pt_run(t, len, c0.next, M_LETTER, 0);
    if (c0.bit != M_NUMBER && c0.cp != '\r' && c0.cp != '\n' && c0.next < len) {
        pt_char c1 = pt_at(t, len, c0.next); /* one prefix character */
        if (c1.bit & M_LETTER)
            return pt_run(t, len, c1.next, M_LETTER, 0);
    }
    return pt_numbers_marks_spaces(t, len, pos, c0, 0, 1);
}

/* o200k's two letter alternatives from s (the optional prefix character
 * already skipped), with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
 * W = [\p{Ll}\p{Lm}\p{Lo}\p{M}] (they share Lm, Lo and M):
 *   alternative 1, U*W+:  U* takes the whole U-run s..u.  If the character
 *     at u is in W, W+ takes the W-run from u.  Otherwise U* gives back
 *     characters one at a time until W+ can start: at the last character j
 *     of the run that is in W; W+ then ends right after j (what follows j
 *     in the run is Lu/Lt, not W).  No such j: no match.
 *   alternative 2, U+W*:  a non-empty U-run, then the W-run after it.
 * Both may end with a contraction (?i:'s|'t|'re|'ve|'m|'ll|'d).
 * Returns the end, or 0 when the alternative does not match at s. */
static size_t pt_o200k_letters(const unsigned char *t, size_t len, size_t s,
                               int alternative)
{
    size_t u = s, end = 0, c;
    while (u < len) { /* the U-run, remembering the end of its last W char */
        pt_char ch = pt_at(t, len, u);
        if (!(ch.bit & M_O200K_UPPER))
            break;
        if (ch.bit & M_O200K_LOWER)
            end = ch.next;
        u = ch.next;
    }
    if (alternative == 2) {
        if (u == s)
            return 0;
        end = pt_run(t, len, u, M_O200K_LOWER, 0);
    } else if (u < len && (pt_at(t, len, u).bit & M_O200K_LOWER)) {
        end = pt_run(t, len, u, M_O200K_LOWER, 0);
    } else if (end == 0) {
        return 0;
    }
    c = pt_contraction(t, len, end);
    return c ? c : end;
}

static int pt_ascii_upper(unsigned char b)
{
    return b >= 'A' && b <= 'Z';
}

static int pt_ascii_lower(unsigned char b)
{
    return b >= 'a' && b <= 'z';
}

/* The class bit of an ASCII byte (the table's, as pt_at reads it). */
static unsigned pt_ascii_bit(unsigned char b)
{
    return PT_BIT(pt_stage2[b]);
}

/* The other o200k alternatives on ASCII, at a position where no letter
 * alternative can match (pt_o200k_ascii saw to that for ASCII letters):
 * digits, punctuation, spaces and newlines -- a third of the pieces of
 * English prose, which went through pt_at's decoding and the general
 * scanner one character at a time (the scanner was ~30% of o200k's time on
 * Shakespeare).  Mirrors pt_numbers_marks_spaces and pt_spaces for ASCII
 * bytes; returns 0 to leave the position to the general scanner wherever a
 * non-ASCII character could change the outcome (it might be a letter after
 * a prefix, a number, punctuation or a space). */
static size_t pt_o200k_ascii_other(const unsigned char *t, size_t len, size_t pos)
{
    unsigned char b = t[pos];
    unsigned bit = pt_ascii_bit(b);
    size_t a = pos, k, last, after_newline = 0;
    if (bit == M_NUMBER) { /* \p{N}{1,3} */
        for (k = pos + 1; k < len && k < pos + 3; k++) {
            if (t[k] >= 0x80)
                return 0;
            if (pt_ascii_bit(t[k]) != M_NUMBER)
                break;
        }
        return k;
    }
    if (pos + 1 < len && t[pos + 1] >= 0x80)
        return 0; /* a letter after a prefix, or after " " punctuation */
    if (b == ' ' && pos + 1 < len && (pt_ascii_bit(t[pos + 1]) & M_OTHER))
        a = pos + 1;
    if (pt_ascii_bit(t[a]) & M_OTHER) { /* " ?[^\s\p{L}\p{N}]+[\r\n/]*" */
        for (k = a; k < len && t[k] < 0x80 && (pt_ascii_bit(t[k]) & M_OTHER); k++)
            ;
        if (k < len && t[k] >= 0x80)
            return 0;
        while (k < len && (t[k] == '\r' || t[k] == '\n' || t[k] == '/'))
            k++;
        return k;
    }
    if (bit != M_SPACE)
        return 0;
    /* the whitespace rules, as pt_spaces(newline_rule 2) takes them */
    for (k = last = pos; k < len; k++) {
        if (t[k] >= 0x80)
            return 0;
        if (pt_ascii_bit(t[k]) != M_SPACE)
            break;
        if (t[k] == '\r' || t[k] == '\n')
            after_newline = k + 1;
        last = k;
    }
    if (after_newline)
        return after_newline;
    if (k == len)
        return k;
    return k - pos >= 2 ? last : k;
}

/* o200k's letter alternatives on ASCII letters, the shape of most pieces of
 * English and code ("Hello", " world", "HTTPServer", "'s").  In ASCII, U is
 * [A-Z] and W is [a-z] (no Lt, Lm, Lo or M),
 * so alternative 1 (U*W+) is the upper-case run then a non-empty lower-case
 * run, and where no lower-case letter follows, alternative 2 (U+W*) takes
 * the upper-case run alone: either way the piece ends where the lower-case
 * run after the upper-case run ends.  The prefix is taken when the first
 * character is ASCII and neither a letter, a digit, CR nor LF, and a letter
 * follows.  Returns the end, or 0 to leave the position to the general
 * scanner: no ASCII letter where a piece would start, or a run that meets a
 * non-ASCII character (which may continue it). */
static size_t pt_o200k_ascii(const unsigned char *t, size_t len, size_t pos)
{
    size_t s = pos, u, w, c;
    unsigned char b = t[pos];
    if (b >= 0x80)
        return 0;
    if (!pt_ascii_upper(b) && !pt_ascii_lower(b)) {
        if ((b >= '0' && b <= '9') || b == '\r' || b == '\n' || pos + 1 >= len ||
            !(pt_ascii_upper(t[pos + 1]) || pt_ascii_lower(t[pos + 1])))
            return pt_o200k_ascii_other(t, len, pos);
        s = pos + 1;
    }
    for (u = s; u < len && pt_ascii_upper(t[u]); u++)
        ;
    for (w = u; w < len && pt_ascii_lower(t[w]); w++)
        ;
    if (w < len && t[w] >= 0x80)
        return 0;
    c = pt_contraction(t, len, w);
    return c ? c : w;
}

/* o200k:  [^\r\n\p{L}\p{N}]?U*W+C? | [^\r\n\p{L}\p{N}]?U+W*C? | \p{N}{1,3} |
 *         ?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
 * (U, W, C: see pt_o200k_letters).  The optional prefix is greedy, so each
 * letter alternative is tried with it first, then without. */
static size_t pt_o200k(const unsigned char *t, size_t len, size_t pos)
{
    size_t a = pt_o200k_ascii(t, len, pos);
    pt_char c0;
    int prefix, alt;
    if (a)
        return a;
    c0 = pt_at(t, len, pos);
    prefix = !(c0.bit & (M_LETTER | M_NUMBER)) && c0.cp != '\r' && c0.cp != '\n' && c0.next < len;
    /* Both letter alternatives need a U or W character where they start
     * (with the prefix or without): when neither place has one, skip the
     * four attempts (spaces and punctuation, half of all pieces). */
    if (!(c0.bit & (M_O200K_UPPER | M_O200K_LOWER)) &&
        !(prefix && (pt_at(t, len, c0.next).bit & (M_O200K_UPPER | M_O200K_LOWER))))
        return pt_numbers_marks_spaces(t, len, pos, c0, 1, 2);
    for (alt = 1; alt <= 2; alt++) {
        if (prefix && (a = pt_o200k_letters(t, len, c0.next, alt)) != 0)
            return a;
        if ((a = pt_o200k_letters(t, len, pos, alt)) != 0)
            return a;
    }
    return pt_numbers_marks_spaces(t, len, pos, c0, 1, 2);
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
    if (pattern == BPE_PRETOK_O200K)
        return pt_o200k(text, len, pos);
    return 0;
}

void bpe_pretok_classes(unsigned long first, size_t n, unsigned char *out)
{
    size_t k;
    for (k = 0; k < n; k++) {
        unsigned long cp = first + k;
        out[k] = (unsigned char)(cp < 0x110000 ? pt_stage2[(size_t)pt_stage1[cp >> 7] * 128 + (cp & 127)]
                                               : PT_OTHER);
    }
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
