/*
 * idlists.h -- encoder output in the forms Python asks for: a byte
 * stream that Python's `marshal` module turns into lists of ints quickly,
 * runs of one repeated ID (lists made by repetition), and 16-bit arrays for
 * Encoding.encode_file's uint16 files.
 *
 * The Python level of the C (bpe.h names the layers): the only C file that
 * knows a CPython format, kept in csrc/py/ so the core beside it stays free
 * of Python.  It uses nothing of the core but bpe.h's status codes.
 *
 * Why it exists: once the C encoder is done, what is left is making the
 * Python result, one int object per ID (~30 ns each), and that part holds
 * the GIL.  On Shakespeare it was 40% of encode_ordinary_batch's time on one
 * thread, which capped two threads at ~1.6x.  marshal.loads can refer back
 * to an object it has already read, so a stream that spells each distinct
 * ID once and refers back to it afterwards makes one int object per distinct
 * ID (a few thousand) instead of one per token (millions); ints are
 * immutable, so the sharing is invisible.  The stream is written here
 * without the GIL; reading it holds the GIL for 6-9 ns per ID, where
 * unpacking the IDs one by one took 11-30 (on 630,000 IDs: 5.5 ms in all
 * against 12.1).  pybpe/_cranks.py checks at import time that marshal reads a sample
 * stream as expected and otherwise unpacks the plain array as before.
 *
 * The stream (marshal format 3 and later, Python 3.4+; numbers are 4-byte
 * little-endian):
 *     '['  n_lists            a list of n_lists lists, then each list:
 *     '['  n_ids              a list of n_ids items, then each item:
 *     'i' | 0x80  id          first time this ID appears: an int, remembered
 *                             as reference number 0, 1, 2, ... in order
 *     'r'  ref                later: the int remembered as number `ref`
 */
#ifndef PYBPE_IDLISTS_H
#define PYBPE_IDLISTS_H

#include <stddef.h>
#include <stdint.h>

#include "bpe.h"

/* cffi-begin: pybpe/_build.py makes Python's declarations from here */
/* The largest ID bpe_idlists_marshal takes (its scratch table has one
 * 4-byte entry per ID up to the largest one present: 16 MB at most). */
#define BPE_IDLISTS_MAX_ID 0x3fffffu

/* Bytes bpe_idlists_marshal may write for n_ids IDs in n_lists lists (each
 * item and each list header takes 5 bytes), or 0 if that overflows. */
size_t bpe_idlists_bound(size_t n_ids, size_t n_lists);

/* Writes the stream for n_lists lists: list i is ids[ends[i-1] .. ends[i])
 * (ends[-1] taken as 0), ends non-decreasing.  out has room for
 * bpe_idlists_bound(ends[n_lists - 1], n_lists) bytes; the length written
 * goes to *out_len.  Example: ids {5, 7, 5}, ends {2, 3} -> [[5, 7], [5]].
 * Returns BPE_OK, BPE_EINVAL (NULL pointers, ends decreasing),
 * BPE_ETOOBIG (an ID above BPE_IDLISTS_MAX_ID, or a list of 2^31 IDs or
 * more: marshal's counts are signed 32-bit) or BPE_ENOMEM. */
int bpe_idlists_marshal(const uint32_t *ids, const size_t *ends, size_t n_lists,
                        unsigned char *out, size_t *out_len);

/* Cuts ids[0..n) into runs of one repeated ID, for lists that are mostly
 * runs (a million spaces are a million IDs of 220 under gpt2): Python
 * builds those by list repetition, ~0.3 ns an ID, where the marshal stream
 * costs ~7.  Run k is run_ids[k] repeated up to index run_ends[k] (from the
 * end of run k - 1, or 0); *n_runs gets the count.  Stops as soon as there
 * are more than max_runs runs (run_ids and run_ends hold max_runs entries)
 * and returns BPE_ETOOBIG, so text without runs costs a short scan.
 * Example: ids {5, 5, 7}, max_runs 2 -> run_ids {5, 7}, run_ends {2, 3}.
 * Returns BPE_OK, BPE_EINVAL (NULL pointers with n > 0) or BPE_ETOOBIG. */
int bpe_ids_runs(const uint32_t *ids, size_t n, size_t max_runs,
                 uint32_t *run_ids, size_t *run_ends, size_t *n_runs);

/* Copies n IDs into 16-bit storage (encode_file's uint16 files: narrowing
 * through Python ints cost a third of encode_file's time).  ids and out may
 * not overlap.  Returns BPE_OK, BPE_EINVAL (NULL with n > 0) or BPE_ETOOBIG
 * if an ID is above 65535 (out is then partly written). */
int bpe_ids_to_u16(const uint32_t *ids, size_t n, uint16_t *out);
/* cffi-end */

#endif
