/*
 * 061_char_tokenizer.c -- the character tokenizer, on pybpe's symbol table.
 *
 * Mirrors: Chapter 11, listing 061.  Every byte of the text is one token and
 * its ID is the byte's value, so the vocabulary is the 256 byte values --
 * the same base vocabulary byte-level BPE (GPT-2) starts from.
 * Core functions: bpe_symtab_new / bpe_symtab_intern (build the vocabulary),
 * bpe_symtab_lookup (token_to_id), bpe_symtab_bytes (id_to_token),
 * bpe_symtab_size.
 * Watch: 'h' -> 104 and ' ' -> 32 (the ASCII table); vocabulary 256; length
 * 11 for 11 characters; decoding gives the text back.  The last lines show
 * what the listing leaves out: a character outside ASCII is several bytes,
 * so it becomes several tokens.
 */
#include <stdio.h>
#include <string.h>

#include "bpe.h"
#include "book.h"

/* The 256 one-byte symbols, interned in byte order, so that the symbol
 * table's dense IDs (first interned = 0) are exactly the byte values. */
static int build_byte_vocab(bpe_symtab *vocab)
{
    unsigned b;
    uint32_t id;
    int status;

    for (b = 0; b < 256; b++) {
        char byte = (char)b;
        if ((status = bpe_symtab_intern(vocab, &byte, 1, &id)) != BPE_OK)
            return status;
        if (id != b)
            return BPE_EINVAL;  /* a fresh table must hand out 0, 1, 2, ... */
    }
    return BPE_OK;
}

/* token_to_id for one byte: a lookup in the vocabulary. */
static uint32_t token_to_id(const bpe_symtab *vocab, char byte)
{
    return bpe_symtab_lookup(vocab, &byte, 1);
}

/* Encodes `text` byte by byte and prints the IDs in the chapter's list form. */
static void encode_and_print(const bpe_symtab *vocab, const char *label,
                             const char *text)
{
    size_t i, n = strlen(text);

    printf("%-9s[", label);
    for (i = 0; i < n; i++)
        printf("%s%lu", i ? ", " : "", (unsigned long)token_to_id(vocab, text[i]));
    printf("]\n");
}

/* One row per character: position, the character, its ID. */
static void print_table(const bpe_symtab *vocab, const char *text)
{
    size_t i, n = strlen(text);

    printf("  pos  char   id\n");
    for (i = 0; i < n; i++)
        printf("  %3lu  '%c'   %3lu\n", (unsigned long)i, text[i],
               (unsigned long)token_to_id(vocab, text[i]));
}

/* id_to_token for every ID, concatenated: the inverse of encoding. */
static void decode_and_print(const bpe_symtab *vocab, const char *text)
{
    size_t i, n = strlen(text), len;
    const char *bytes;

    printf("decoded: \"");
    for (i = 0; i < n; i++) {
        bytes = bpe_symtab_bytes(vocab, token_to_id(vocab, text[i]), &len);
        fwrite(bytes, 1, len, stdout);
    }
    printf("\"\n");
}

int main(void)
{
    const char *text = "hello world";
    const char *cafe = "caf\xc3\xa9";  /* "cafe" with e-acute, in UTF-8 */
    bpe_symtab *vocab = bpe_symtab_new();
    int status;

    if (vocab == NULL)
        return book_fail("bpe_symtab_new", BPE_ENOMEM);
    if ((status = build_byte_vocab(vocab)) != BPE_OK) {
        bpe_symtab_free(vocab);
        return book_fail("building the byte vocabulary", status);
    }

    printf("text: \"%s\"\n\n", text);
    print_table(vocab, text);
    printf("\n");
    encode_and_print(vocab, "ids:", text);
    printf("vocabulary size: %lu (one ID per byte value)\n",
           (unsigned long)bpe_symtab_size(vocab));
    printf("length: %lu tokens for %lu characters\n",
           (unsigned long)strlen(text), (unsigned long)strlen(text));
    decode_and_print(vocab, text);

    printf("\nbeyond ASCII: \"caf\\u00e9\" is 4 characters but %lu bytes,\n",
           (unsigned long)strlen(cafe));
    encode_and_print(vocab, "ids:", cafe);
    printf("so the e-acute costs two tokens (195, 169): the price of a 256-entry vocabulary.\n");

    bpe_symtab_free(vocab);
    return 0;
}
