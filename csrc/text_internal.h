/*
 * text_internal.h -- helpers shared by the text-level C files; not part of
 * the API.
 *
 * Text level (bpe.h names the layers): everything here reads UTF-8 text.
 *   - UTF-8: one decoder and one validator, for counter.c, encode_text.c,
 *     pretok.c and ranks.c.  Text arrives as Python's str.encode("utf-8",
 *     "surrogatepass") writes it, so lone surrogates are ordinary
 *     characters.
 *   - str.split(): the whitespace test and the word scanner, so the counter
 *     (counter.c) and the one-call encoder (encode_text.c) cut the same
 *     words.
 *   - the word hash both of them key their tables by.
 *   - word -> initial symbols (counter.c): the BPE_UNITS_* modes, used by
 *     bpe_counter_word_table and bpe_encode_text alike.
 * The scanner and the hash run once per word of the text, so they are
 * static inline here; the rest is declared here and defined in counter.c.
 */
#ifndef PYBPE_TEXT_INTERNAL_H
#define PYBPE_TEXT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "text.h"

/* ---- Pre-tokenizers ------------------------------------------------------ */

/* Cuts text[pos..len) with `pattern` (BPE_PRETOK_*), as bpe_pretok_next
 * piece after piece would, into at most max pieces: writes the end offset
 * of each to ends and returns their number, 0 for an unknown pattern or
 * pos >= len.  Many pieces per call let pretok.c classify 64 bytes at once
 * and keep the call off the per-piece path (ranks.c's encode loop). */
size_t bpe__pretok_cut(int pattern, const unsigned char *text, size_t len, size_t pos,
                       size_t *ends, size_t max);

/* ---- UTF-8 ------------------------------------------------------------ */

/* Byte length of the UTF-8 sequence that starts with lead byte b (for
 * validated input, where b is a lead byte). */
static inline size_t bpe__utf8_len(unsigned char b)
{
    return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

/* The same for a byte that may not be a lead byte (text not validated):
 * 0 for a continuation byte or F8-FF, which start no sequence.  The length
 * is still not checked against what follows. */
static inline size_t bpe__utf8_lead_len(unsigned char b)
{
    return b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3
         : (b & 0xF8) == 0xF0 ? 4 : 0;
}

/* 1 for a continuation byte (10xxxxxx): counting the bytes that are not
 * counts the characters. */
static inline int bpe__utf8_is_cont(unsigned char b)
{
    return (b & 0xC0) == 0x80;
}

/* The code point of the sequence at p, of bpe__utf8_len(p[0]) bytes, which
 * must be there to read.  Only shapes are decoded, nothing is checked: a
 * four-byte lead above F4 gives a value above U+10FFFF, which callers that
 * may see malformed text (pretok.c) test for. */
static inline uint32_t bpe__utf8_decode(const unsigned char *p)
{
    switch (bpe__utf8_len(p[0])) {
    case 1:
        return p[0];
    case 2:
        return (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
    case 3:
        return (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 |
               (p[2] & 0x3F);
    default:
        return (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
               (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
    }
}

/* Checks that s[0..len) is UTF-8 as str.encode("utf-8", "surrogatepass")
 * writes it (shortest forms, at most U+10FFFF, surrogates allowed) and
 * counts its characters into *nchars.  Returns 1 when valid. */
static inline int bpe__utf8_validate(const unsigned char *s, size_t len,
                                     size_t *nchars)
{
    size_t i = 0, n = 0;

    while (i < len) {
        unsigned char b = s[i];
        size_t k = bpe__utf8_len(b);
        uint64_t eight, more[3];
        if (b < 0x80 && len - i >= 32) {  /* 32 ASCII bytes at once */
            memcpy(&eight, s + i, 8);
            memcpy(more, s + i + 8, 24);
            if (((eight | more[0] | more[1] | more[2]) &
                 UINT64_C(0x8080808080808080)) == 0) {
                i += 32;
                n += 32;
                continue;
            }
        }
        if (b < 0x80 && len - i >= 8) {  /* 8 ASCII bytes at once */
            memcpy(&eight, s + i, 8);
            if ((eight & UINT64_C(0x8080808080808080)) == 0) {
                i += 8;
                n += 8;
                continue;
            }
        }
        if (b >= 0x80) {
            if (b < 0xC2 || b > 0xF4 || len - i < k)
                return 0;
            if (!bpe__utf8_is_cont(s[i + 1]) ||
                (k > 2 && !bpe__utf8_is_cont(s[i + 2])) ||
                (k > 3 && !bpe__utf8_is_cont(s[i + 3])))
                return 0;
            if ((b == 0xE0 && s[i + 1] < 0xA0) ||   /* overlong */
                (b == 0xF0 && s[i + 1] < 0x90) ||   /* overlong */
                (b == 0xF4 && s[i + 1] > 0x8F))     /* > U+10FFFF */
                return 0;
        }
        i += k;
        n++;
    }
    *nchars = n;
    return 1;
}

/* ---- str.split() ------------------------------------------------------- */

/* 1 for the ASCII characters str.split() treats as whitespace:
 * \t \n \v \f \r (9-13), the separators \x1c-\x1f (28-31) and space. */
static const unsigned char bpe__ascii_space[128] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
    1
};

/* Byte length of the whitespace character at p, 0 when p[0] starts some
 * other character.  p points into validated UTF-8, so a lead byte's
 * continuation bytes are there to read.  Beyond ASCII, Python's str.split()
 * splits at U+0085, U+00A0 (C2 xx), U+1680 (E1 9A 80), U+2000-U+200A,
 * U+2028, U+2029, U+202F (E2 80 xx), U+205F (E2 81 9F), U+3000 (E3 80 80):
 * Unicode's White_Space minus nothing, plus the four ASCII separators. */
static inline size_t bpe__space_at(const unsigned char *p)
{
    switch (p[0]) {
    case 0xC2:
        return p[1] == 0x85 || p[1] == 0xA0 ? 2 : 0;
    case 0xE1:
        return p[1] == 0x9A && p[2] == 0x80 ? 3 : 0;
    case 0xE2:
        if (p[1] == 0x80)
            return p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 ||
                   p[2] == 0xAF ? 3 : 0;
        return p[1] == 0x81 && p[2] == 0x9F ? 3 : 0;
    case 0xE3:
        return p[1] == 0x80 && p[2] == 0x80 ? 3 : 0;
    default:
        return p[0] < 0x80 ? bpe__ascii_space[p[0]] : 0;
    }
}

static inline int bpe__little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;

    memcpy(&first, &one, 1);
    return first;  /* a constant to the compiler */
}

/* The index (0-7) of the first byte of the little-endian word x whose high
 * bit is set; x != 0 and has no other bits. */
static inline unsigned bpe__first_flagged(uint64_t x)
{
#if defined(__GNUC__)
    return (unsigned)__builtin_ctzll(x) >> 3;
#else
    unsigned k = 0;
    while ((x & 0x80) == 0) {
        x >>= 8;
        k++;
    }
    return k;
#endif
}

/* The end of the word that starts at p (< end, not whitespace): the next
 * whitespace character or end.  Eight bytes at a time first: a byte can
 * end a word only when it is below 0x21 (ASCII whitespace, a control
 * character) or at least 0x80 (a lead byte of U+0085, U+00A0, U+2000...),
 * and an English word's end is usually within the first eight.  The flag
 * (b & 0x7F) + 0x5F sets bit 7 exactly when (b & 0x7F) >= 0x21 and never
 * carries into the next byte.  The byte it stops at, and whatever is not
 * plain ASCII, goes through the table and bpe__space_at.  (The loop a byte
 * at a time was half of word counting on Shakespeare: one mispredicted
 * exit per word and a branch per byte.) */
static inline const unsigned char *bpe__word_end(const unsigned char *p,
                                                 const unsigned char *end)
{
    const uint64_t high = UINT64_C(0x8080808080808080);
    const uint64_t low7 = UINT64_C(0x7F7F7F7F7F7F7F7F);
    const uint64_t add = UINT64_C(0x5F5F5F5F5F5F5F5F);

    while (p < end) {
        if (bpe__little_endian() && end - p >= 8) {
            uint64_t x, stop;
            memcpy(&x, p, 8);
            stop = (~((x & low7) + add) | x) & high;
            if (stop == 0) {
                p += 8;
                continue;
            }
            p += bpe__first_flagged(stop);
        }
        if (*p < 0x80) {
            if (bpe__ascii_space[*p])
                break;
            p++;
        } else {
            if (bpe__space_at(p) != 0)
                break;
            p += bpe__utf8_len(*p);
        }
    }
    return p;
}

/* str.split()'s step over validated UTF-8: skips the whitespace at *pp,
 * then takes the word there.  Sets *start to it, moves *pp past it and
 * returns its length (> 0); returns 0 (and *pp == end) when only
 * whitespace was left.  Example: "  to be" gives "to", then "be", then 0. */
static inline size_t bpe__next_word(const unsigned char **pp,
                                    const unsigned char *end,
                                    const unsigned char **start)
{
    const unsigned char *p = *pp;
    size_t k;

    while (p < end) {  /* ASCII by the table alone: most spaces are ASCII */
        if (*p < 0x80) {
            if (!bpe__ascii_space[*p])
                break;
            p++;
        } else {
            if ((k = bpe__space_at(p)) == 0)
                break;
            p += k;
        }
    }
    *start = p;
    *pp = p == end ? end : bpe__word_end(p, end);
    return (size_t)(*pp - p);
}

/* ---- the word hash ----------------------------------------------------- */

/* Slots of a new word table (the counter's, the encode cache's): a small
 * table grows fast enough. */
#define BPE__WORD_SLOTS 1024

/* The first min(len, 8) bytes of w as an integer, zero-padded: the same
 * value for the same bytes whatever follows them in memory.  `room` is how
 * many bytes may be read from w (>= len).  Words of at most 8 bytes (most
 * of them) are compared by this value and their length alone. */
static inline uint64_t bpe__word_head(const unsigned char *w, size_t len,
                                      size_t room)
{
    uint64_t x = 0;
    size_t k = len < 8 ? len : 8;

    if (room < 8) {
        if (k != 0)
            memcpy(&x, w, k);
        return x;
    }
    memcpy(&x, w, 8);
    if (k == 8)
        return x;
    return bpe__little_endian() ? x & ((UINT64_C(1) << (8 * k)) - 1)
                                : x & ~(UINT64_MAX >> (8 * k));
}

/* The hash of a word from its head and length: FNV-1a's constants, but
 * eight bytes at a time past the first 8 (the head stands for those), then
 * a final mix so the low bits that pick the slot are good.  Not
 * bpe__fnv1a64, which reads a byte at a time: its values key only the
 * counter's and the encode cache's own tables, so any good hash will do. */
static inline uint64_t bpe__word_hash(const unsigned char *w, size_t len,
                                      uint64_t head)
{
    uint64_t h = (head ^ BPE__FNV_OFFSET) +
                 len * BPE__GOLDEN64;
    size_t i = 8;

    for (; i + 8 <= len; i += 8) {
        uint64_t chunk;
        memcpy(&chunk, w + i, 8);
        h = (h ^ chunk) * BPE__FNV_PRIME;
        h ^= h >> 29;
    }
    for (; i < len; i++)
        h = (h ^ w[i]) * BPE__FNV_PRIME;
    return bpe__mix64(h);
}

/* ---- word -> initial symbols (counter.c) -------------------------------- */

/* Direct-mapped cache of code point -> symbol ID for characters beyond
 * ASCII (ASCII has a full table). */
#define BPE__CHAR_CACHE 4096

/* What turning words into initial symbols needs: the mode, the marker and
 * its ID, a full table for ASCII (plain and with the marker glued on), the
 * ID of every byte (BPE_UNITS_BYTES), a direct-mapped cache for the other
 * characters, and a scratch buffer for "character + marker". */
typedef struct {
    const bpe_symtab *symtab;
    int units;                      /* BPE_UNITS_* */
    const char *marker;
    size_t marker_len;
    uint32_t marker_id;             /* BPE_UNITS_SYMBOL: the marker's ID */
    uint32_t ascii[128], ascii_suffix[128];
    uint32_t byte_ids[256];         /* BPE_UNITS_BYTES: ID of each byte */
    uint32_t *cache_cp, *cache_id;  /* BPE__CHAR_CACHE each; cp UINT32_MAX = empty */
    char *buf;                      /* 4 + marker_len bytes */
} bpe__units;

/* Checks a units mode and its marker: BPE_EINVAL for an unknown mode or a
 * missing marker where one is needed, BPE_ETOOBIG for a marker too long to
 * build symbols with.  Modes without a marker get *marker_len = 0. */
int bpe__units_check(int units, const char *marker, size_t *marker_len);

/* Prepares u for `units` (checked by bpe__units_check) over symtab, which
 * is only read.  BPE_OK or BPE_ENOMEM; call bpe__units_close either way. */
int bpe__units_open(bpe__units *u, const bpe_symtab *symtab, int units,
                    const char *marker, size_t marker_len);

void bpe__units_close(bpe__units *u);

/* Writes the initial symbols of word w[0..len) (validated UTF-8) to out
 * -- room for len + 1 -- and returns how many; a symbol absent from the
 * table is BPE_NO_SYMBOL.  Example, BPE_UNITS_SUFFIX with marker " ":
 * "low" -> IDs of "l", "o", "w ". */
size_t bpe__word_units(bpe__units *u, const unsigned char *w, size_t len,
                       uint32_t *out);

#endif /* PYBPE_TEXT_INTERNAL_H */
