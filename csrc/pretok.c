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
 *
 * How it is fast.  Runs of one class are found a word at a time: pt_load
 * reads eight bytes into a uint64_t (never a byte past the text), pt_lanes
 * classifies the ASCII among them with two additions per range, and
 * pt_first turns the first byte that ends the run into an index with one
 * multiplication -- portable C99 (SWAR), no intrinsics; with SSE2 (a
 * feature test, PT_SSE2) sixteen bytes at a time first.  Characters beyond
 * ASCII go through the class tables one at a time (pt_at).  Many pieces are
 * cut per call (bpe__pretok_cut): 64 bytes are classified at once into bit
 * masks, and where a block of ASCII allows, all its boundaries come from
 * one set of mask operations, a bit per piece ("Sixty-four bytes at once"
 * below).  The portable path is always built: the C self-tests compile it
 * beside the vector one and compare them (csrc/tests/test_pretok_paths.c).
 * What each step gained, what lost, and what limits the scanners now:
 * csrc/NOTES.md, "The scanners".
 */
#include <stdint.h>
#include <string.h>

#include "text_internal.h"
#include "unicode_tables.inc"

/* The one use of compiler vector extensions: where SSE2 is there (every
 * x86-64) and the compiler speaks GCC's dialect, runs of one class are
 * looked for sixteen bytes at a time before eight (pt_ascii_span).
 * Everything else, and all of it elsewhere, is portable C99;
 * BPE_PRETOK_PORTABLE forces the portable path, and the C self-tests build
 * it beside the vector path and compare them
 * (csrc/tests/test_pretok_paths.c). */
#if defined(__SSE2__) && defined(__GNUC__) && !defined(BPE_PRETOK_PORTABLE)
#include <emmintrin.h>
#define PT_SSE2 1
#endif

/* The helpers that run once per character or per word are inlined into
 * each scanner (BPE__ALWAYS_INLINE), where their class masks are constants
 * (without the hint GCC kept pt_at and pt_lanes out of line, and pt_lanes
 * then tested every class for every mask). */
#define PT_INLINE BPE__ALWAYS_INLINE

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

/* The class bit of an ASCII byte (the table's, as pt_at reads it). */
PT_INLINE unsigned pt_ascii_bit(unsigned char b)
{
    return PT_BIT(pt_stage2[b]);
}

/* Decodes the character at text[pos] (pos < len) with text_internal.h's
 * decoder.  A sequence with a bad lead byte or cut short by len is one byte
 * of class "other" (Python never passes one); continuation bytes are not
 * checked, and a lead above F4 decodes past U+10FFFF, which is "other". */
PT_INLINE pt_char pt_at(const unsigned char *t, size_t len, size_t pos)
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

/* ---- ASCII, eight bytes at a time -------------------------------------
 *
 * A word is eight text bytes in a uint64_t, the first byte in the low lane
 * whatever the machine's byte order (pt_load).  A set of lanes is a word
 * with bit 7 of each chosen lane set (PT_HIGH: all eight).  For a byte b
 * below 0x80, b + (0x80 - lo) has bit 7 set exactly when b >= lo, and no
 * carry leaves the lane, so two additions test a range on all eight bytes
 * at once (pt_range).  Bytes of 0x80 and up are masked out first and belong
 * to no ASCII class: they stop every ASCII run. */
#define PT_LANES UINT64_C(0x0101010101010101)
#define PT_HIGH UINT64_C(0x8080808080808080)

PT_INLINE uint64_t pt_bswap(uint64_t x)
{
    x = (x & UINT64_C(0x00FF00FF00FF00FF)) << 8 | ((x >> 8) & UINT64_C(0x00FF00FF00FF00FF));
    x = (x & UINT64_C(0x0000FFFF0000FFFF)) << 16 | ((x >> 16) & UINT64_C(0x0000FFFF0000FFFF));
    return x << 32 | x >> 32;
}

/* The min(8, avail) bytes at p (avail >= 1), zero-padded: no byte past
 * p + avail is read. */
PT_INLINE uint64_t pt_load(const unsigned char *p, size_t avail)
{
    uint64_t w = 0;
    if (avail >= 8)
        memcpy(&w, p, 8);
    else
        memcpy(&w, p, avail);
    return bpe__little_endian() ? w : pt_bswap(w);
}

/* The lanes of x (bytes below 0x80) whose byte is in [lo, hi]. */
PT_INLINE uint64_t pt_range(uint64_t x, unsigned lo, unsigned hi)
{
    return (x + PT_LANES * (0x80 - lo)) & ~(x + PT_LANES * (0x7F - hi)) & PT_HIGH;
}

/* The lanes of w whose byte is ASCII of a class in `mask` (the classes of
 * unicode_tables.inc on ASCII: \t-\r and space are PT_SPACE, 0-9 PT_NUMBER,
 * A-Z PT_UPPER, a-z PT_LOWER, the rest PT_OTHER; tests/test_unicode.py
 * holds the tables to the regex module).  `mask` is a constant wherever
 * this is inlined, so only the tests it needs are compiled. */
PT_INLINE uint64_t pt_lanes(uint64_t w, unsigned mask)
{
    const unsigned both = PT_BIT(PT_UPPER) | PT_BIT(PT_LOWER);
    uint64_t x = w & ~PT_HIGH, in = 0;
    uint64_t letter = pt_range(x | 0x20 * PT_LANES, 'a', 'z'); /* either case */
    uint64_t digit = pt_range(x, '0', '9');
    uint64_t space = pt_range(x, '\t', '\r') | pt_range(x, ' ', ' ');
    if ((mask & both) == both)
        in |= letter;
    else if (mask & PT_BIT(PT_UPPER))
        in |= pt_range(x, 'A', 'Z');
    else if (mask & PT_BIT(PT_LOWER))
        in |= pt_range(x, 'a', 'z');
    if (mask & PT_BIT(PT_NUMBER))
        in |= digit;
    if (mask & PT_BIT(PT_SPACE))
        in |= space;
    if (mask & PT_BIT(PT_OTHER))
        in |= ~(letter | digit | space) & PT_HIGH;
    return in & ~w;
}

/* The index (0-7) of the first lane of a non-empty set of lanes: the
 * lowest lane isolated, moved to bit 0 of its byte and multiplied by a
 * constant whose byte 7 - i is i, so the top byte of the product is the
 * index (no count-trailing-zeros in C99, and this is as fast). */
PT_INLINE size_t pt_first(uint64_t lanes)
{
    uint64_t low = lanes & (0 - lanes);
    return (size_t)(((low >> 7) * UINT64_C(0x0001020304050607)) >> 56);
}

/* The index of the last lane of a non-empty set of lanes. */
PT_INLINE size_t pt_last(uint64_t lanes)
{
    return 7 - pt_first(pt_bswap(lanes));
}

/* The lanes from `n` on (0 <= n <= 8): where a word loaded from fewer than
 * eight bytes has padding. */
PT_INLINE uint64_t pt_from(size_t n)
{
    return n >= 8 ? 0 : PT_HIGH << (8 * n);
}

/* The end of the run of ASCII bytes of a class in `mask` starting at pos
 * (pos <= len): the first byte from pos that is not one of them (0x80 and
 * up included), or len. */
#ifdef PT_SSE2
/* pt_lanes for sixteen bytes (SSE2): a bit per byte of the class set
 * `mask` (bits 0-15 of the result).  Signed compares: bytes of 0x80 and up
 * are negative, below every range and outside "other" (v > -1). */
PT_INLINE int pt_sse_lanes(const unsigned char *p, unsigned mask)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p), in = _mm_setzero_si128();
    __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)),
                                   _mm_cmplt_epi8(folded, _mm_set1_epi8('z' + 1)));
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                  _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    __m128i space = _mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(8)),
                                               _mm_cmplt_epi8(v, _mm_set1_epi8(14))),
                                 _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
    if ((mask & (PT_BIT(PT_UPPER) | PT_BIT(PT_LOWER))) == (PT_BIT(PT_UPPER) | PT_BIT(PT_LOWER)))
        in = letter;
    else if (mask & PT_BIT(PT_UPPER))
        in = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('A' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('Z' + 1)));
    else if (mask & PT_BIT(PT_LOWER))
        in = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('z' + 1)));
    if (mask & PT_BIT(PT_NUMBER))
        in = _mm_or_si128(in, digit);
    if (mask & PT_BIT(PT_SPACE))
        in = _mm_or_si128(in, space);
    if (mask & PT_BIT(PT_OTHER))
        in = _mm_or_si128(in, _mm_andnot_si128(_mm_or_si128(_mm_or_si128(letter, digit), space),
                                               _mm_cmpgt_epi8(v, _mm_set1_epi8(-1))));
    return _mm_movemask_epi8(in);
}
#endif

PT_INLINE size_t pt_ascii_span(const unsigned char *t, size_t len, size_t pos, unsigned mask)
{
#ifdef PT_SSE2
    while (len - pos >= 16) {
        int in = pt_sse_lanes(t + pos, mask);
        if (in != 0xFFFF)
            return pos + (size_t)__builtin_ctz((unsigned)~in);
        pos += 16;
    }
#endif
    while (pos < len) {
        size_t avail = len - pos;
        uint64_t stop = (~pt_lanes(pt_load(t + pos, avail), mask) & PT_HIGH) | pt_from(avail);
        if (stop)
            return pos + pt_first(stop);
        pos += 8;
    }
    return pos;
}

/* End of the run of characters whose class is in `mask`, starting at pos
 * (pos itself is checked too).  ASCII goes eight bytes at a time; other
 * characters one at a time through the tables, as long as they come. */
PT_INLINE size_t pt_run(const unsigned char *t, size_t len, size_t pos, unsigned mask)
{
    while (pos < len) {
        pt_char ch;
        if (t[pos] < 0x80) {
            pos = pt_ascii_span(t, len, pos, mask);
            if (pos >= len || t[pos] < 0x80)
                break; /* the end, or ASCII outside the run */
        }
        ch = pt_at(t, len, pos);
        if (!(ch.bit & mask))
            break;
        pos = ch.next;
    }
    return pos;
}

/* The same for at most `max` characters (\p{N}{1,3}). */
static size_t pt_run_max(const unsigned char *t, size_t len, size_t pos, unsigned mask,
                         size_t max)
{
    size_t count = 0;
    while (pos < len && count < max) {
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
        if (t[k] < 0x80) { /* ASCII whitespace, eight bytes at a time */
            size_t avail = len - k, n;
            uint64_t w = pt_load(t + k, avail), run, newlines;
            uint64_t stop = (~pt_lanes(w, M_SPACE) & PT_HIGH) | pt_from(avail);
            n = stop ? pt_first(stop) : 8;
            if (n == 0)
                break;
            run = ~pt_from(n); /* the lanes before the stop */
            newlines = (pt_range(w, '\n', '\n') | pt_range(w, '\r', '\r')) & ~w & run;
            if (newlines)
                after_newline = k + pt_last(newlines) + 1;
            last = k + n - 1;
            k += n;
            count += n;
            if (n < 8 && (k >= len || t[k] < 0x80))
                break; /* stopped at ASCII that is not whitespace, or the end */
            continue;
        }
        {
            pt_char ch = pt_at(t, len, k);
            if (ch.bit != M_SPACE)
                break;
            last = k;
            k = ch.next;
            count++;
        }
    }
    if (newline_rule == 2 && after_newline)
        return after_newline;
    if (k == len)
        return k;
    if (newline_rule && after_newline)
        return after_newline;
    return count >= 2 ? last : k;
}

/* pt_run over the coarse set that holds class `cls` (pt_group), with the
 * set a constant in each call so that pt_lanes keeps only its tests. */
static size_t pt_run_group(const unsigned char *t, size_t len, size_t pos, unsigned cls)
{
    switch (pt_group[cls]) {
    case M_LETTER:
        return pt_run(t, len, pos, M_LETTER);
    case M_NUMBER:
        return pt_run(t, len, pos, M_NUMBER);
    case M_SPACE:
        return pt_run(t, len, pos, M_SPACE);
    default:
        return pt_run(t, len, pos, M_OTHER);
    }
}

/* gpt2:  '(?:[sdmt]|ll|ve|re) | ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+ |
 *        \s+(?!\S) | \s+                                                  */
/* gpt2's contractions (case-sensitive) at the apostrophe at pos: the end,
 * or 0. */
PT_INLINE size_t pt_gpt2_contraction(const unsigned char *t, size_t len, size_t pos)
{
    if (pos + 1 < len) {
        unsigned char a = t[pos + 1], b = pos + 2 < len ? t[pos + 2] : 0;
        if (a == 's' || a == 'd' || a == 'm' || a == 't')
            return pos + 2;
        if ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e'))
            return pos + 3;
    }
    return 0;
}

static size_t pt_gpt2(const unsigned char *t, size_t len, size_t pos)
{
    pt_char c0 = pt_at(t, len, pos);
    size_t a;
    if (c0.cp == '\'' && (a = pt_gpt2_contraction(t, len, pos)) != 0)
        return a;
    if (c0.cp == ' ' && c0.next < len) {
        pt_char c1 = pt_at(t, len, c0.next);
        if (c1.bit != M_SPACE) /* " ?" then a run of c1's class */
            return pt_run_group(t, len, c1.next, c1.cls);
    }
    if (c0.bit != M_SPACE)
        return pt_run_group(t, len, c0.next, c0.cls);
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
        return pt_run_max(t, len, c0.next, M_NUMBER, 2); /* 1 + 2 more */
    a = pos;
    if (c0.cp == ' ' && c0.next < len && (pt_at(t, len, c0.next).bit & M_OTHER))
        a = c0.next;
    if (pt_at(t, len, a).bit & M_OTHER) {
        a = pt_run(t, len, a, M_OTHER);
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
        return pt_run(t, len, c0.next, M_LETTER);
    if (c0.bit != M_NUMBER && c0.cp != '\r' && c0.cp != '\n' && c0.next < len) {
        pt_char c1 = pt_at(t, len, c0.next); /* one prefix character */
        if (c1.bit & M_LETTER)
            return pt_run(t, len, c1.next, M_LETTER);
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
        end = pt_run(t, len, u, M_O200K_LOWER);
    } else if (u < len && (pt_at(t, len, u).bit & M_O200K_LOWER)) {
        end = pt_run(t, len, u, M_O200K_LOWER);
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

/* The other o200k alternatives at an ASCII character where no letter
 * alternative can match (pt_o200k_ascii saw to that for ASCII letters):
 * digits, punctuation, spaces and newlines -- a third of the pieces of
 * English prose.  They are pt_numbers_marks_spaces's, as in the general
 * scanner, but without its four attempts at the letter alternatives --
 * except where the next character is not ASCII: it may be a letter that
 * this character is the prefix of (not after a digit, CR or LF, which are
 * no prefix).  Then 0: the general scanner decides. */
static size_t pt_o200k_ascii_other(const unsigned char *t, size_t len, size_t pos)
{
    unsigned char b = t[pos];
    if (pos + 1 < len && t[pos + 1] >= 0x80 && b != '\r' && b != '\n' &&
        pt_ascii_bit(b) != M_NUMBER)
        return 0;
    return pt_numbers_marks_spaces(t, len, pos, pt_at(t, len, pos), 1, 2);
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
    u = pt_ascii_span(t, len, s, PT_BIT(PT_UPPER));
    w = pt_ascii_span(t, len, u, PT_BIT(PT_LOWER));
    if (w < len && t[w] >= 0x80)
        return 0;
    c = w < len && t[w] == '\'' ? pt_contraction(t, len, w) : 0;
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

/* ---- Sixty-four bytes at once: the window ----------------------------
 *
 * The scanners above decide one piece per call, classifying bytes as they
 * go.  Cutting many pieces in a row (bpe__pretok_cut), the ASCII bytes of
 * a window of 64 text bytes are classified once, into one bit mask per
 * class (bit k: the byte at base + k), and each piece that starts in the
 * first half of the window is cut with a few mask operations: its first
 * byte's class picks the alternative, and the run it takes ends at the
 * first byte outside the run's class (pt_stop: one count of trailing
 * zeros).  The window moves on when a piece starts in its second half, so
 * every piece sees at least 32 bytes ahead.  Anything the masks cannot
 * settle returns 0 and goes to the general scanner above: a piece that
 * starts at, or whose run stops at, a byte of 0x80 and up (a non-ASCII
 * character may continue the run, or be a letter after a prefix), a run
 * longer than the window, the end of the text (bytes past it are masked
 * as 0x80 and up, so the end-of-text rules of the whitespace alternatives
 * are the general scanner's), an apostrophe followed by a letter that no
 * contraction takes (pt_contraction reads those bytes itself).  What the
 * masks settle is exactly what the general scanner would return there:
 * csrc/tests/test_pretok_paths.c compares the two on every class of run
 * and at every offset, and tests/test_scanner_words.py compares them with
 * the regex module. */

/* The classes the masks keep.  Bits past the end of the text are in
 * `high` only; "other" ([^\s\p{L}\p{N}] in ASCII) is what is in none. */
typedef struct {
    size_t base;          /* text offset of bit 0 */
    uint64_t letter;      /* A-Z a-z */
    uint64_t upper, lower; /* A-Z, a-z (o200k only) */
    uint64_t number;      /* 0-9 */
    uint64_t space;       /* \t-\r and space */
    uint64_t newline;     /* \r \n (cl100k, o200k) */
    uint64_t tail;        /* \r \n / (o200k: [\r\n/]* after punctuation) */
    uint64_t high;        /* 0x80 and up, or past the end of the text */
    uint64_t blank, quote; /* the space itself, the apostrophe (gpt2 only) */
} pt_window;

/* The index of the lowest set bit of x (x != 0): the compiler's count of
 * trailing zeros where there is one, else a de Bruijn multiplication (the
 * lowest bit times the constant puts a distinct pattern in the top six
 * bits, which the table turns back into the index). */
#if defined(__GNUC__) && !defined(BPE_PRETOK_PORTABLE)
#define PT_BUILTIN_BITS 1
#else
static const unsigned char pt_debruijn[64] = {
    0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51,
    43, 22, 45, 39, 33, 30, 24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21,
    44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6};
#define PT_DEBRUIJN UINT64_C(0x03F79D71B4CB0A89)
#endif

PT_INLINE unsigned pt_ctz64(uint64_t x)
{
#ifdef PT_BUILTIN_BITS
    return (unsigned)__builtin_ctzll(x);
#else
    return pt_debruijn[((x & (0 - x)) * PT_DEBRUIJN) >> 58];
#endif
}

/* The index of the highest set bit of x (x != 0). */
PT_INLINE unsigned pt_top64(uint64_t x)
{
#ifdef PT_BUILTIN_BITS
    return 63 - (unsigned)__builtin_clzll(x);
#else
    x |= x >> 1;
    x |= x >> 2;
    x |= x >> 4;
    x |= x >> 8;
    x |= x >> 16;
    x |= x >> 32;
    return pt_debruijn[((x ^ (x >> 1)) * PT_DEBRUIJN) >> 58];
#endif
}

/* The first bit from `from` (< 64) on that is not in `in`, or 64. */
PT_INLINE unsigned pt_stop(uint64_t in, unsigned from)
{
    uint64_t out = ~in & (~(uint64_t)0 << from);
    return out ? pt_ctz64(out) : 64;
}

/* Bit k of a set of lanes (pt_lanes) for byte k, in the low 8 bits: lane
 * k's bit 7 moved to bit 8k, then multiplied to bit 56 + k (the partial
 * products never meet, so nothing carries). */
PT_INLINE uint64_t pt_pack(uint64_t lanes)
{
    return ((lanes >> 7) * UINT64_C(0x0102040810204080)) >> 56;
}

#ifdef PT_SSE2
PT_INLINE __m128i pt_sse_range(__m128i v, char lo, char hi)
{
    return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8((char)(lo - 1))),
                         _mm_cmplt_epi8(v, _mm_set1_epi8((char)(hi + 1))));
}

PT_INLINE uint64_t pt_sse_bits(__m128i m)
{
    return (uint64_t)(unsigned)_mm_movemask_epi8(m);
}
#endif

/* Classifies the 32 bytes p[0..32) (all readable) into bits at..at + 31
 * of w's masks (zero there before), keeping the classes `pattern` needs (a
 * constant wherever this is inlined), and the space and the apostrophe
 * masks for a block (always for gpt2). */
PT_INLINE void pt_classify(pt_window *w, const unsigned char *p, unsigned at, int pattern,
                           int block)
{
    int k;
#ifdef PT_SSE2
    for (k = 0; k < 2; k++, at += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        __m128i nl = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
                                  _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')));
        w->high |= pt_sse_bits(v) << at;
        w->number |= pt_sse_bits(pt_sse_range(v, '0', '9')) << at;
        w->space |= pt_sse_bits(_mm_or_si128(pt_sse_range(v, '\t', '\r'),
                                             _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')))) << at;
        if (pattern == BPE_PRETOK_O200K) {
            uint64_t upper = pt_sse_bits(pt_sse_range(v, 'A', 'Z')) << at;
            uint64_t lower = pt_sse_bits(pt_sse_range(v, 'a', 'z')) << at;
            w->upper |= upper;
            w->lower |= lower;
            w->letter |= upper | lower;
            w->tail |= pt_sse_bits(_mm_or_si128(nl, _mm_cmpeq_epi8(v, _mm_set1_epi8('/')))) << at;
        } else {
            w->letter |= pt_sse_bits(pt_sse_range(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'z')) << at;
        }
        if (pattern != BPE_PRETOK_GPT2)
            w->newline |= pt_sse_bits(nl) << at;
        if (pattern == BPE_PRETOK_GPT2 || block) {
            w->blank |= pt_sse_bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(' '))) << at;
            w->quote |= pt_sse_bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\''))) << at;
        }
    }
#else
    for (k = 0; k < 4; k++, at += 8) {
        uint64_t v = pt_load(p + 8 * k, 8), x = v & ~PT_HIGH;
        uint64_t nl = (pt_range(x, '\n', '\n') | pt_range(x, '\r', '\r')) & ~v;
        w->high |= pt_pack(v & PT_HIGH) << at;
        w->number |= pt_pack(pt_lanes(v, M_NUMBER)) << at;
        w->space |= pt_pack(pt_lanes(v, M_SPACE)) << at;
        if (pattern == BPE_PRETOK_O200K) {
            uint64_t upper = pt_pack(pt_lanes(v, PT_BIT(PT_UPPER))) << at;
            uint64_t lower = pt_pack(pt_lanes(v, PT_BIT(PT_LOWER))) << at;
            w->upper |= upper;
            w->lower |= lower;
            w->letter |= upper | lower;
            w->tail |= pt_pack(nl | (pt_range(x, '/', '/') & ~v)) << at;
        } else {
            w->letter |= pt_pack(pt_lanes(v, M_LETTER)) << at;
        }
        if (pattern != BPE_PRETOK_GPT2)
            w->newline |= pt_pack(nl) << at;
        if (pattern == BPE_PRETOK_GPT2 || block) {
            w->blank |= pt_pack(pt_range(x, ' ', ' ') & ~v) << at;
            w->quote |= pt_pack(pt_range(x, '\'', '\'') & ~v) << at;
        }
    }
#endif
}

/* Classifies the 32 text bytes from offset off (which may reach past the
 * end) into bits at..at + 31.  Near the end the bytes are copied into a
 * block padded with 0x80, which stops every ASCII run and sends the piece
 * to the general scanner. */
PT_INLINE void pt_half(pt_window *w, const unsigned char *t, size_t len, size_t off,
                       unsigned at, int pattern, int block)
{
    if (off < len && len - off >= 32) {
        pt_classify(w, t + off, at, pattern, block);
    } else {
        unsigned char pad[32];
        memset(pad, 0x80, sizeof pad);
        if (off < len)
            memcpy(pad, t + off, len - off);
        pt_classify(w, pad, at, pattern, block);
    }
}

/* Moves the window so that pos (>= w->base) is in its first half: by 32
 * bytes when pos is in its second half (the second half's masks become
 * the first's, and only 32 new bytes are classified), else to pos. */
PT_INLINE void pt_advance(pt_window *w, const unsigned char *t, size_t len, size_t pos,
                          int pattern)
{
    unsigned at = 32;
    if (pos - w->base < 64) {
        w->base += 32;
        w->letter >>= 32, w->upper >>= 32, w->lower >>= 32, w->number >>= 32;
        w->space >>= 32, w->newline >>= 32, w->tail >>= 32, w->high >>= 32;
        w->blank >>= 32, w->quote >>= 32;
    } else {
        w->base = pos;
        w->letter = w->upper = w->lower = w->number = 0;
        w->space = w->newline = w->tail = w->high = w->blank = w->quote = 0;
        pt_half(w, t, len, pos, 0, pattern, 0);
    }
    pt_half(w, t, len, w->base + 32, at, pattern, 0);
}

/* The end of a run of class `cls`'s coarse set (pt_group) whose first
 * byte outside the window's ASCII run is bit e: there, unless that is past
 * the window or a byte of 0x80 and up -- then the run goes on through the
 * general pt_run (a non-ASCII letter continues a letter run; past the end
 * of the text it stops at once). */
PT_INLINE size_t pt_run_end(const pt_window *w, const unsigned char *t, size_t len, unsigned e,
                            unsigned cls)
{
    if (e < 64 && !(w->high >> e & 1))
        return w->base + e;
    return pt_run_group(t, len, w->base + e, cls);
}

/* The whitespace alternatives on an ASCII run from bit i that does not
 * reach the end of the text (pt_spaces, newline_rule 0/1/2: on such a run
 * rules 1 and 2 agree). */
PT_INLINE size_t pt_fast_spaces(const pt_window *w, unsigned i, int newline_rule)
{
    unsigned e = pt_stop(w->space, i);
    uint64_t newlines;
    if (e >= 64 || (w->high >> e & 1))
        return 0;
    newlines = newline_rule ? w->newline & (~(uint64_t)0 << i) & ~(~(uint64_t)0 << e) : 0;
    if (newlines)
        return w->base + pt_top64(newlines) + 1;
    return w->base + (e - i >= 2 ? e - 1 : e);
}

/* gpt2 at pos (ASCII byte b, pos - w->base < 32): the end, or 0.  A
 * space before a letter, digit or mark is its " ?" prefix. */
PT_INLINE size_t pt_fast_gpt2(const pt_window *w, const unsigned char *t, size_t len, size_t pos,
                              unsigned char b)
{
    unsigned i = (unsigned)(pos - w->base), from = i;
    uint64_t other = ~(w->letter | w->number | w->space | w->high);
    size_t a;
    if (b == '\'' && (a = pt_gpt2_contraction(t, len, pos)) != 0)
        return a;
    if (b == ' ' && !((w->space | w->high) >> (i + 1) & 1))
        from = i + 1;
    if (w->letter >> from & 1)
        return pt_run_end(w, t, len, pt_stop(w->letter, from + 1), PT_LOWER);
    if (w->number >> from & 1)
        return pt_run_end(w, t, len, pt_stop(w->number, from + 1), PT_NUMBER);
    if (other >> from & 1)
        return pt_run_end(w, t, len, pt_stop(other, from + 1), PT_OTHER);
    return pt_fast_spaces(w, i, 0);
}

/* What cl100k and o200k share after their letter alternatives, on ASCII:
 * \p{N}{1,3}, ' '?[^\s\p{L}\p{N}]+ then [\r\n]* (o200k: [\r\n/]*, slash_too),
 * and the whitespace rules. */
PT_INLINE size_t pt_fast_after_letters(const pt_window *w, const unsigned char *t, size_t len,
                                       unsigned i, unsigned char b, int slash_too)
{
    uint64_t bit = (uint64_t)1 << i, other = ~(w->letter | w->number | w->space | w->high);
    unsigned from = i, e;
    if (w->number & bit) {
        e = pt_stop(w->number, i + 1);
        if (e - i >= 3)
            return w->base + i + 3;
        if (e < 64 && !(w->high >> e & 1))
            return w->base + e;
        return pt_run_max(t, len, w->base + e, M_NUMBER, 3 - (e - i));
    }
    if (w->high >> (i + 1) & 1)
        return 0; /* b may be the prefix of a letter beyond ASCII */
    if (b == ' ' && (other >> (i + 1) & 1))
        from = i + 1;
    if (other >> from & 1) {
        size_t end = pt_run_end(w, t, len, pt_stop(other, from + 1), PT_OTHER);
        if (end - w->base < 64) {
            e = pt_stop(slash_too ? w->tail : w->newline, (unsigned)(end - w->base));
            if (e < 64)
                return w->base + e;
            end = w->base + 64;
        }
        while (end < len && (t[end] == '\r' || t[end] == '\n' || (slash_too && t[end] == '/')))
            end++;
        return end;
    }
    return pt_fast_spaces(w, i, 1);
}

/* cl100k at pos (ASCII byte b, pos - w->base < 32): the end, or 0. */
PT_INLINE size_t pt_fast_cl100k(const pt_window *w, const unsigned char *t, size_t len,
                                size_t pos, unsigned char b)
{
    unsigned i = (unsigned)(pos - w->base);
    size_t a;
    if (b == '\'' && (a = pt_contraction(t, len, pos)) != 0)
        return a;
    if (w->letter >> i & 1)
        return pt_run_end(w, t, len, pt_stop(w->letter, i + 1), PT_LOWER);
    if ((w->letter >> (i + 1) & 1) && !((w->number | w->newline) >> i & 1))
        return pt_run_end(w, t, len, pt_stop(w->letter, i + 2), PT_LOWER); /* a prefix */
    return pt_fast_after_letters(w, t, len, i, b, 0);
}

/* o200k at pos (ASCII byte b, pos - w->base < 32): the end, or 0.  On
 * ASCII its letter alternatives take the upper-case run and the lower-case
 * run after it (pt_o200k_ascii says why), then perhaps a contraction. */
PT_INLINE size_t pt_fast_o200k(const pt_window *w, const unsigned char *t, size_t len,
                               size_t pos, unsigned char b)
{
    unsigned i = (unsigned)(pos - w->base), s, u, e;
    size_t end;
    if (w->letter >> i & 1)
        s = i;
    else if ((w->letter >> (i + 1) & 1) && !((w->number | w->newline) >> i & 1))
        s = i + 1; /* a prefix, then letters */
    else
        return pt_fast_after_letters(w, t, len, i, b, 1);
    u = pt_stop(w->upper, s);
    if (u >= 64 || (e = pt_stop(w->lower, u)) >= 64 || (w->high >> e & 1))
        return 0; /* the general scanner, for what may continue the runs */
    end = w->base + e;
    if (end < len && t[end] == '\'') {
        size_t c = pt_contraction(t, len, end);
        if (c)
            return c;
    }
    return end;
}

/* gpt2 a block at a time.  Where 64 bytes of ASCII follow, every gpt2
 * piece boundary among them is a local matter, and all of them come out
 * of a few mask operations at once:
 *   - a letter, digit or mark starts a piece where the byte before is not
 *     of its class, unless that byte is a space (" ?" takes it along);
 *   - whitespace starts a piece where its run starts, and at the run's
 *     last byte when a non-space follows (\s+(?!\S) leaves that byte to
 *     the next piece, or \s+ takes it alone);
 *   - an apostrophe is a mark to the rules above, except where it starts a
 *     piece (no mark or space before it) and a contraction follows: then
 *     the contraction is the piece (pt_gpt2_contraction), so its letters
 *     start nothing and the byte after it starts a piece.
 * A start at bit k reads bytes k - 1 and k + 1, so bits 1..62 are known
 * from one window; the window is placed at pos, a start.  Bytes of 0x80
 * and up (other classes, other lengths) end what the masks may decide: a
 * start is taken only where the byte after it is before the first of
 * them.  Writes the first `room` starts after pos (the ends of the pieces
 * before them) to ends and returns their number; *stop is the text offset
 * of the first byte that ended the block (past what it decided), or pos
 * when nothing did (the next block may start at the last start). */
PT_INLINE size_t pt_block_gpt2(const unsigned char *t, size_t len, size_t pos, size_t *ends,
                               size_t room, size_t *stop)
{
    pt_window w;
    uint64_t other, starts, bad, quotes;
    unsigned limit;
    size_t n = 0;
    w.letter = w.upper = w.lower = w.number = w.space = w.newline = w.tail = w.high = 0;
    w.blank = w.quote = 0;
    w.base = pos;
    pt_half(&w, t, len, pos, 0, BPE_PRETOK_GPT2, 1);
    if (w.high) /* no use for the second half (CJK: 10% of the time) */
        w.high |= ~(uint64_t)0 << 32;
    else
        pt_half(&w, t, len, pos + 32, 32, BPE_PRETOK_GPT2, 1);
    bad = w.high;
    limit = bad ? pt_ctz64(bad) : 64;
    *stop = pos + limit;
    if (limit < 4)
        return 0;
    if (limit == 64)
        *stop = pos; /* nothing stopped it: the next block may start at once */
    other = ~(w.letter | w.number | w.space | w.high);
    starts = ((w.letter & ~(w.letter << 1)) | (w.number & ~(w.number << 1)) |
              (other & ~(other << 1))) & ~(w.blank << 1);
    starts |= w.space & (~(w.space << 1) | ~(w.space >> 1));
    /* apostrophes that start a piece, a letter after them (a + 1 < limit) */
    quotes = w.quote & ~(other << 1) & ~(w.blank << 1) & (w.letter >> 1) &
             ~(~(uint64_t)0 << (limit - 1));
    while (quotes) {
        unsigned a = pt_ctz64(quotes), e;
        size_t end = pt_gpt2_contraction(t, len, pos + a);
        quotes &= quotes - 1;
        if (!end)
            continue;
        e = (unsigned)(end - pos); /* a + 2 or a + 3 */
        starts &= ~((~(uint64_t)0 << (a + 1)) & ~(~(uint64_t)0 << (e < 64 ? e : 63)));
        if (e < 64)
            starts |= (uint64_t)1 << e;
    }
    starts &= ~(~(uint64_t)0 << (limit - 1)) & ~(uint64_t)1; /* bits 1 .. limit - 2 */
    while (starts && n < room) {
        ends[n++] = pos + pt_ctz64(starts);
        starts &= starts - 1;
    }
    return n;
}

/* The bits below n (0 <= n <= 64). */
PT_INLINE uint64_t pt_below(unsigned n)
{
    return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

/* cl100k and o200k a block at a time (pattern a constant).  Where 64
 * bytes of ASCII follow, their piece boundaries come out of the masks in
 * one pass, as gpt2's do, though fewer of them are local.  With L, N, S
 * the letters, digits and whitespace, NL = [\r\n], SP = " ", X = S minus
 * NL and O the rest ([^\s\p{L}\p{N}]), and bit 0 a start (pos), a piece
 * starts at bit k exactly where (each rule checked against the
 * alternatives in order; bit -1 counts as nothing):
 *   - a run of O starts at k and k - 1 is not SP (an SP before it is its
 *     " ?" prefix and starts the piece, by the whitespace rules below);
 *   - a run of N starts at k, or k is 3, 6, ... digits into it
 *     (\p{N}{1,3}+);
 *   - a run of L starts at k + 1 and k is a prefix that starts a piece:
 *     X (the last S of a run before a letter always starts one), or an O
 *     whose run is that one byte and has no SP before it (a longer run, or
 *     " ?" with it, takes the O into the mark piece, which then ends at the
 *     letter); else the run of L starts at k;
 *   - whitespace: a run of S from q, taken from q unless an O comes
 *     before it -- the mark piece ends with [\r\n]*, so then from its first
 *     byte that is not NL (if any); then `\s*[\r\n]` ends a piece after the
 *     run's last NL, and `\s+(?!\S)` / `\s` start one at the run's last
 *     byte when that is not NL (`\s++$` cannot match: the block never
 *     reaches the end of the text).  A start after the last NL is an X
 *     right after an NL whose run of X ends at a byte outside S (an
 *     addition carries each such start to the end of its run); where the
 *     run ends at another NL (a blank line with trailing spaces) or past
 *     what the block knows, the block stops before it.
 *   - o200k: also k where a lower-case letter is followed by an upper-case
 *     one (on ASCII its letter alternatives take the upper-case run, then
 *     the lower-case run: pt_o200k_ascii).
 * Apostrophes: with the rules above an apostrophe is an O.  cl100k tries a
 * contraction at every piece start, so at an apostrophe that starts a
 * piece (no O or SP before it) and is followed by a letter, the
 * contraction found by pt_contraction also ends a piece (the letters after
 * it are a piece of their own; without them, the rules already agree).
 * o200k's contractions end a letter piece: after a letter, a contraction
 * joins the piece before it, so the apostrophe starts nothing, nor does
 * anything inside, and the contraction's end starts a piece -- unless that
 * letter ended a contraction itself (C? takes one).  o200k's [\r\n/]* after
 * marks differs from cl100k's [\r\n]* only at a "/" right after an NL: the
 * block stops there.
 * A start at bit k reads bytes up to k + 1, so bits 1 .. limit - 2 are
 * decided (limit: the first byte of 0x80 and up, at most 63, as in
 * pt_block_gpt2).  Writes the first `room` starts after pos (the ends of the pieces
 * before them) to ends and returns their number; *stop is the text offset
 * of the first byte that ended the block, the start of a run of spaces
 * after a newline that it could not settle, or pos when nothing stopped
 * it. */
PT_INLINE size_t pt_block_wide(int pattern, const unsigned char *t, size_t len, size_t pos,
                               size_t *ends, size_t room, size_t *stop)
{
    const int o200k = pattern == BPE_PRETOK_O200K;
    pt_window w;
    uint64_t letter, number, space, newline, blank, other, x, bad, starts, d, run3;
    uint64_t runs, after_mark, cand, c;
    unsigned limit, lim, last, prev = 0;
    size_t n = 0;
    w.letter = w.upper = w.lower = w.number = w.space = w.newline = w.tail = w.high = 0;
    w.blank = w.quote = 0;
    w.base = pos;
    pt_half(&w, t, len, pos, 0, pattern, 1);
    if (w.high) /* no use for the second half */
        w.high |= ~(uint64_t)0 << 32;
    else
        pt_half(&w, t, len, pos + 32, 32, pattern, 1);
    letter = w.letter, number = w.number, space = w.space, newline = w.newline;
    blank = w.blank;
    other = ~(letter | number | space | w.high);
    bad = w.high;
    if (o200k)
        bad |= w.tail & ~newline & (newline << 1); /* "/" after \r or \n */
    limit = bad ? pt_ctz64(bad) : 64;
    *stop = pos + limit;
    lim = limit < 63 ? limit : 63;
    if (lim < 4)
        return 0;
    last = lim - 2;
    if (limit == 64)
        *stop = pos; /* nothing stopped it: the next block may start at once */
    x = space & ~newline;
    /* letters: the run's start, or the prefix before it */
    runs = letter & ~(letter << 1);
    d = x | (other & ~(other << 1) & ~(blank << 1)); /* prefixes that start a piece */
    starts = (runs & ~(d << 1)) | ((runs >> 1) & d);
    if (o200k)
        starts |= w.upper & (w.lower << 1);
    /* digits, three at a time */
    d = number & ~(number << 1);
    run3 = number & (number << 1) & (number << 2);
    starts |= d;
    while ((d = (d << 3) & run3) != 0)
        starts |= d;
    /* marks */
    starts |= other & ~(other << 1) & ~(blank << 1);
    /* whitespace: where a run starts (after a mark, past its NLs), its last
     * byte when not NL, and after its last NL */
    runs = space & ~(space << 1);
    after_mark = runs & (other << 1);
    starts |= (runs & ~after_mark) | (after_mark & ~newline) |
              ((newline + (after_mark & newline)) & ~newline);
    starts |= space & ~(space >> 1) & ~newline;
    c = x & (newline << 1) & pt_below(lim);
    if (c) {
        uint64_t xl = x & pt_below(lim), e = (xl + c) & ~xl;
        uint64_t wrong = e & (newline | ~pt_below(lim));
        starts |= c;
        if (wrong) { /* the block stops before the start of that run */
            unsigned k = pt_top64(c & ((wrong & (0 - wrong)) - 1));
            if (k < last + 1)
                last = k - 1;
            *stop = pos + k;
        }
    }
    /* apostrophes */
    cand = w.quote & pt_below(last + 1) &
           (o200k ? letter << 1 : ~(other << 1) & ~(blank << 1) & (letter >> 1));
    while (cand) {
        unsigned a = pt_ctz64(cand), e;
        size_t end;
        cand &= cand - 1;
        if (o200k && a == prev && a != 0)
            continue; /* the letter before ended a contraction */
        end = pt_contraction(t, len, pos + a);
        if (!end)
            continue;
        e = (unsigned)(end - pos);
        if (o200k)
            starts &= ~(pt_below(e) & ~pt_below(a));
        if (e < 64)
            starts |= (uint64_t)1 << e;
        prev = e;
    }
    starts &= pt_below(last + 1) & ~(uint64_t)1;
    while (starts && n < room) {
        ends[n++] = pos + pt_ctz64(starts);
        starts &= starts - 1;
    }
    return n;
}

/* Whether the piece at pos (an ASCII byte) goes to the window, moving it
 * on when pos is past its first half.  Past the whole window, the window
 * is classified anew only when the next eight bytes are ASCII: in text of
 * other scripts (CJK, Korean, Cyrillic) the ASCII pieces are spaces and
 * punctuation between non-ASCII words, and a new window for each cost
 * more than the general scanner (multilingual text 15-20% slower). */
PT_INLINE int pt_use_window(pt_window *w, const unsigned char *t, size_t len, size_t pos,
                            int pattern)
{
    size_t d = pos - w->base;
    if (d < 32)
        return 1;
    if (d >= 64 && (len - pos < 8 || (pt_load(t + pos, 8) & PT_HIGH)))
        return 0;
    pt_advance(w, t, len, pos, pattern);
    return 1;
}

/* A block writes at most the room left in ends, its first starts (a block
 * decides up to 62): callers ask for a few pieces at a time (ranks.c,
 * RK_CUT = 128), and a block that waited for room for 64 left the last
 * half of each call to the window. */
#define PT_BLOCK_ROOM 8

/* Cuts up to max pieces from pos with `pattern` (a constant wherever this
 * is inlined): the window where it can decide, the general scanner where
 * it cannot. */
PT_INLINE size_t pt_cut(int pattern, const unsigned char *t, size_t len, size_t pos,
                        size_t *ends, size_t max)
{
    pt_window w;
    size_t n = 0;
    size_t block_from = pos;
    w.base = pos - 64; /* (modulo SIZE_MAX + 1: the first advance goes to pos) */
    pt_advance(&w, t, len, pos, pattern);
    while (n < max && pos < len) {
        unsigned char b = t[pos];
        size_t end = 0;
        if (pos >= block_from && max - n >= PT_BLOCK_ROOM && len - pos >= 64 &&
            !(pt_load(t + pos, 8) & PT_HIGH)) {
            size_t got = pattern == BPE_PRETOK_GPT2
                             ? pt_block_gpt2(t, len, pos, ends + n, max - n, &block_from)
                             : pt_block_wide(pattern, t, len, pos, ends + n, max - n, &block_from);
            if (got) {
                n += got;
                pos = ends[n - 1];
                continue;
            }
            block_from++; /* past the byte that stopped the block */
        }
        if (b < 0x80 && pt_use_window(&w, t, len, pos, pattern)) {
            end = pattern == BPE_PRETOK_GPT2     ? pt_fast_gpt2(&w, t, len, pos, b)
                  : pattern == BPE_PRETOK_CL100K ? pt_fast_cl100k(&w, t, len, pos, b)
                                                 : pt_fast_o200k(&w, t, len, pos, b);
        }
        if (!end)
            end = pattern == BPE_PRETOK_GPT2     ? pt_gpt2(t, len, pos)
                  : pattern == BPE_PRETOK_CL100K ? pt_cl100k(t, len, pos)
                                                 : pt_o200k(t, len, pos);
        ends[n++] = end;
        pos = end;
    }
    return n;
}

size_t bpe__pretok_cut(int pattern, const unsigned char *text, size_t len, size_t pos,
                       size_t *ends, size_t max)
{
    if (!text || !ends || pos >= len)
        return 0;
    switch (pattern) {
    case BPE_PRETOK_GPT2:
        return pt_cut(BPE_PRETOK_GPT2, text, len, pos, ends, max);
    case BPE_PRETOK_CL100K:
        return pt_cut(BPE_PRETOK_CL100K, text, len, pos, ends, max);
    case BPE_PRETOK_O200K:
        return pt_cut(BPE_PRETOK_O200K, text, len, pos, ends, max);
    default:
        return 0;
    }
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
    return bpe__pretok_cut(pattern, text, len, 0, ends, len);
}
