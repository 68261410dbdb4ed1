/*
 * ranks_merge.c -- merging one piece by rank, for the pieces no cache
 * knows (text level; ranks.c calls it).  Short pieces take rk_merge_small,
 * a loop over keys that never move.  Long ones are cut where no token spans the cut, each unit asked
 * of the piece cache, then merged as runs of one repeated byte (merge.h's
 * run engine), in windows whose meeting parts are checked, or, failing
 * both, on the heap.  Each way is exact for any rank file; the proofs are
 * beside the code.  Layout and lookups: ranks_internal.h.
 */
#include "ranks_internal.h"

/* A long piece of at most len / RK_RUNS_SHARE runs of one repeated byte
 * ("a" * 1,000,000, a million spaces) is merged by merge.h's run engine, in
 * O(runs log runs) batched steps instead of O(len log len) single ones
 * (positions must fit its 31-bit keys).  Other long pieces (prose, CJK,
 * random letters: about one run per byte) go to rk_merge_windows. */
#define RK_RUNS_SHARE 4
#define RK_RUNS_MAX_LEN ((size_t)1 << 31)

/* The longest stretch rk_merge_small merges (positions fit a byte). */
#define RK_SMALL_MAX (BPE__MERGE_HEAP_THRESHOLD - 1)
typedef char rk_small_positions_fit_a_byte[RK_SMALL_MAX < 256 ? 1 : -1];

/* A pair's key in rk_merge_small: priority << 32 | position of its left
 * part.  A pair without a priority (RK_NONE, the largest uint32_t) gets a
 * key at or above RK_SMALL_NO_PAIR, above every pair that has one, so the
 * key is made without a branch.  UINT64_MAX pads the keys' array. */
#define RK_SMALL_KEY(prio, pos) ((uint64_t)(prio) << 32 | (uint64_t)(pos))
#define RK_SMALL_NO_PAIR RK_SMALL_KEY(RK_NONE, 0)

/* Pieces up to this long set rk_merge_small's arrays up with copies of
 * this fixed size. */
#define RK_SMALL_COPY 32

/* 0, 1, 2, ...: rk_merge_small's next[], prev[] and slot[] start as
 * slices of it (the table's length is checked against the loop's). */
static const unsigned char rk_positions[RK_SMALL_MAX + 1] = {
#define RK_P4(k) (k), (k) + 1, (k) + 2, (k) + 3
#define RK_P16(k) RK_P4(k), RK_P4((k) + 4), RK_P4((k) + 8), RK_P4((k) + 12)
    RK_P16(0), RK_P16(16), RK_P16(32), RK_P16(48), RK_P16(64), RK_P16(80), RK_P4(96)
#undef RK_P16
#undef RK_P4
};
typedef char rk_positions_cover_the_loop[RK_SMALL_MAX + 1 == 100 ? 1 : -1];

/*
 * The short loop: every piece under BPE__MERGE_HEAP_THRESHOLD bytes, and
 * the windows and meeting checks of rk_merge_windows below.  The same
 * merges as merge.h's bpe__merge_short -- the lowest priority, leftmost
 * among equals, until no pair has one -- for 2 <= len <= RK_SMALL_MAX
 * bytes, found another way.
 * Each pair is one key, priority << 32 | position of its left part, and a
 * part's position never changes: merged-away parts stay in place, skipped
 * through next[] / prev[].  So the lowest key is the lowest priority and,
 * among equals, the smallest position, which (positions keep their order)
 * is the leftmost pair: the pair bpe__merge_short's strict-< scan picks.
 * Same pair each step, same parts after it, same result.
 * Why: the scan's `prio[i] < best` branch went the other way at every new
 * minimum (a misprediction each time), and removing a part moved three
 * arrays (GCC turns bpe__merge_short's plain loops into calls of memmove:
 * three per merge); here the minimum is taken with four independent
 * branch-free chains and nothing moves.  Short pieces took
 * bpe__merge_short until 2026-12-06: this loop instead runs 4.4% fewer
 * instructions on multilingual text (o200k and cl100k), 1.6% on CJK
 * (o200k), 0.8-1.2% on prose and source (callgrind, tools/bench_unseen.c,
 * the encode calls of two unseen 0.5 MB slices after a warm one); same IDs.
 *   The keys scanned are only those of pairs still there: key[] holds them
 * in any order (slot[] says where each part's pair is), and a pair that
 * goes is replaced by the last key, so each scan is shorter by one key per
 * merge so far; the three keys past the last are UINT64_MAX, so the scan
 * takes four at a time to the end without a loop for the rest.  A pair
 * without a priority keeps a key above all others (RK_SMALL_KEY), made
 * without a branch.  Same IDs (checksums: 4 slices of prose, Python source,
 * multilingual text and random letters, each shipped table); CPU time,
 * the builds alternating (tools/bench_unseen.c, medians of 7-9 rounds):
 * 1 MB of random letters (two such pieces, per piece) gpt2 19.8 -> 16.3
 * ms, cl100k 22.5 -> 20.7 (callgrind, cl100k: 359.6M -> 319.0M
 * instructions per two pieces, -11%); 8 unseen 0.5 MB slices after 64 MB
 * of other memory touched, prose gpt2 -4% / o200k -3%, multilingual -2.5%
 * / -5%.
 */
static size_t rk_merge_small(const bpe_ranks *r, const unsigned char *p, size_t len,
                             rk_scratch *s)
{
    uint64_t key[RK_SMALL_MAX + 3];
    uint32_t sym[RK_SMALL_MAX], res[RK_SMALL_MAX];
    unsigned char next[RK_SMALL_MAX], prev[RK_SMALL_MAX], slot[RK_SMALL_MAX];
    size_t i, out = 0, nk = len - 1;
    assert(len >= 2 && len <= RK_SMALL_MAX);
    if (len <= RK_SMALL_COPY) { /* a copy of fixed size: a few moves, no call */
        memcpy(next, rk_positions + 1, RK_SMALL_COPY);   /* next[i] = i + 1 */
        memcpy(prev + 1, rk_positions, RK_SMALL_COPY);   /* prev[i] = i - 1; prev[0] unused */
        memcpy(slot, rk_positions, RK_SMALL_COPY);       /* slot[i] = i */
    } else {
        memcpy(next, rk_positions + 1, len);
        memcpy(prev + 1, rk_positions, nk);
        memcpy(slot, rk_positions, nk);
    }
    if (r->byte_pairs) {
        for (i = 0; i < nk; i++) {
            const rk_byte_pair *e = &r->byte_pairs[(size_t)p[i] << 8 | p[i + 1]];
            sym[i] = r->byte_part[p[i]];
            res[i] = e->result;
            key[i] = RK_SMALL_KEY(e->prio, i);
        }
        sym[nk] = r->byte_part[p[nk]];
    } else {
        for (i = 0; i < len; i++)
            sym[i] = r->byte_part[p[i]];
        for (i = 0; i < nk; i++)
            key[i] = RK_SMALL_KEY(rk_pair_get(r, sym[i], sym[i + 1], &res[i]), i);
    }
    key[nk] = key[nk + 1] = key[nk + 2] = UINT64_MAX; /* the scan reads four at a time */
    while (nk > 0) {
        uint64_t m0 = UINT64_MAX, m1 = UINT64_MAX, m2 = UINT64_MAX, m3 = UINT64_MAX, m, last;
        size_t a, b, c, j;
        for (i = 0; i < nk; i += 4) {
            m0 = key[i] < m0 ? key[i] : m0;
            m1 = key[i + 1] < m1 ? key[i + 1] : m1;
            m2 = key[i + 2] < m2 ? key[i + 2] : m2;
            m3 = key[i + 3] < m3 ? key[i + 3] : m3;
        }
        m0 = m1 < m0 ? m1 : m0;
        m2 = m3 < m2 ? m3 : m2;
        m = m2 < m0 ? m2 : m0;
        if (m >= RK_SMALL_NO_PAIR)
            break; /* no pair left has a priority */
        a = (size_t)(m & 0xffffffffu);
        b = next[a];
        c = next[b];
        sym[a] = res[a];
        next[a] = (unsigned char)c;
        /* b's pair goes (if b had a right neighbour), or a's (if not) */
        j = slot[c < len ? b : a];
        last = key[--nk];
        key[j] = last;
        key[nk] = UINT64_MAX; /* padding again (j may be nk) */
        slot[last & 0xff] = (unsigned char)j;
        if (c < len) {
            prev[c] = (unsigned char)a;
            key[slot[a]] = RK_SMALL_KEY(rk_pair_get(r, sym[a], sym[c], &res[a]), a);
        }
        if (a > 0) {
            b = prev[a];
            key[slot[b]] = RK_SMALL_KEY(rk_pair_get(r, sym[b], sym[a], &res[b]), b);
        }
    }
    for (i = 0; i < len; i = next[i]) /* part 0 is never merged away */
        s->sym[out++] = sym[i];
    return out;
}

/* The number of bytes part k covers (results_concatenate holds). */
static size_t rk_part_len(const bpe_ranks *r, uint32_t k)
{
    return k < r->n_tokens ? rk_len(r, k) : 1;
}

/*
 * Long pieces in windows.  Merging a long piece whole takes the heap, whose
 * arrays (20 bytes per byte of the piece) leave the core's caches past a
 * few KB: 1 MB of random letters took ~330 ms (cl100k).  Instead the piece
 * is merged in windows of RK_WINDOW bytes on the short loop, and where two
 * windows meet, the two parts on either side are checked.  Write BPE(x) for
 * the parts the engine makes of bytes x (tiktoken's rule, or any rule that
 * is a function of the two parts).  Two facts make this exact:
 *
 * (1) Windows of a result.  If BPE(x) = t1 .. tk, then for a <= b the bytes
 *     that t_a .. t_b cover merge alone to t_a .. t_b.  The whole run merges
 *     inside that span exactly when its lowest pair, leftmost among equals,
 *     lies there; that pair is then also the lowest, leftmost, of the span's
 *     own pairs (fewer pairs), so the span alone makes the same merges in
 *     the same order (no merge crosses a final boundary), and ends where the
 *     whole run leaves no mergeable pair among them.
 * (2) Pairs suffice.  Let parts t1 .. tk cover x (t_i covers [e_{i-1},
 *     e_i)) such that every two neighbours, merged alone, give themselves:
 *     BPE(x[e_{i-1} .. e_{i+1})) = t_i t_{i+1}.  Then BPE(x) = t1 .. tk.
 *     Proof: suppose some merge of the whole run crosses a boundary e_i and
 *     let M be the first one; before M every merge lies inside one t's
 *     span.  Compare the run on the pair of spans A B around e_i alone (the
 *     "pair run", which by assumption never crosses e_i): by induction the
 *     whole run's merges inside A B before M are the pair run's first ones,
 *     in order -- from the same state of A B, the whole run's next merge
 *     there is the lowest, leftmost, of all pairs, so of A B's pairs, which
 *     is the pair run's next merge (merges elsewhere change no pair with
 *     both parts in A B).  At M, A B is in a state of the pair run, and M is
 *     the lowest, leftmost, of A B's pairs too: the pair run would cross e_i
 *     there.  Contradiction, so no merge crosses a boundary.  Each span then
 *     merges as it would alone (as in (1)), which by (1) on the pair run
 *     ends in its t; and the pair (t_i, t_{i+1}) has no priority, or the
 *     pair run would have merged it.
 *
 * The loop keeps a prefix of committed parts in which every two neighbours
 * pass the test of (2).  It merges the next window, parts R (neighbours in
 * R pass by (1)), and tests the last committed part with R's first; when
 * they fail, the last committed part is taken back and the window, now
 * starting where that part started, is merged again.  At the end all
 * neighbours pass, so by (2) the parts are BPE(piece): exact for any rank
 * file.  A window that would outgrow the short loop (RK_WINDOW_MAX) gives
 * up and the piece goes to the heap, which is always exact.
 *
 * 1 MB of random lowercase letters (one piece), CPU time, best of 5, whole
 * encode_ordinary: cl100k ~260 -> ~76 ms, gpt2 ~205 -> ~62 ms, o200k ~313
 * -> ~84 ms.  Windows of 16 to 32 bytes measured the same; 48 and 64 slower
 * (the short loop rescans its window after every merge).  What limits it
 * (perf, cl100k): rk_pair_get ~29% and the short loop ~28% -- random
 * letters are ~1.85 bytes per token, so ~460,000 merges per MB, each asking
 * the pair table (4 MB) about its new neighbours, a cache miss when the
 * filter lets the question through.  Dead end: rk_pair_get inlined into
 * the loop (no change).
 *
 * Where a window ends (rk_window_end) turned out to matter more: a window
 * cut at a fixed width splits a part often, the test then fails and the
 * window is merged again.  Ending it between the two bytes least eager to
 * merge (of the last nine places) took 1 MB of random letters, NumPy
 * output, CPU best of 5, four alternating processes each against the build
 * before: cl100k ~62 -> ~42 ms, gpt2 ~48 -> ~36 ms, o200k ~70 -> ~50 ms
 * (about 1 window in 10 is merged twice now).  Windows of 12 to 32 bytes
 * then measure the same (24 kept).  Dead ends, measured the same way:
 *   - A merge-free method, as GitHub's bpe crate does it: at each position
 *     the longest token, tested against the part before it by (2) without
 *     merging (for parts whose merges rise in priority all the way down,
 *     the test is a walk down x's right and y's left halves, a pair
 *     question per step), the next shorter token when it fails, and a
 *     position from which nothing passes marked dead for good (the parts
 *     before any position are unique, by (2)), so it stays linear and
 *     exact.  It ran ~2x slower than these windows (cl100k ~120 ms): the
 *     longest token is wrong at ~1 position in 4 (~160,000 dead positions
 *     per MB), and each test is a chain of dependent cache misses (pair
 *     table, the per-call memos of splits and answers, token lengths).
 *   - A per-call memo of pair answers in front of the pair table for the
 *     windows' merges (direct-mapped, up to 32,768 slots): ~5% before the
 *     cuts moved, nothing after.
 * What limited it then (perf, cl100k): the short loop's rescans and its
 * pair-table questions (the filter's and the table's cache lines), ~460,000
 * merges per MB.  The rescan itself was most of the loop: its `<` branch
 * mispredicted at each new minimum, and each merge moved three arrays.
 * rk_merge_small (same merges, keys that never move, a branch-free
 * minimum) took 1 MB of random lowercase letters, one piece, C alone
 * (bpe_ranks_encode_text, CPU time, best of 7, the two builds alternating
 * in one shell): gpt2 29.6 -> 23.9 ms, cl100k 36.2 -> 26.0, o200k 40.4 ->
 * 28.2; same IDs (checksums).  Dead end: 32-bit keys (priority << 8 |
 * position) in one chain, 27.7 ms against the 64-bit keys' four chains
 * (cl100k).  Counted per MB (cl100k): 578,000 merges in windows and
 * meeting checks, 1.07 million pair questions, of which the filter
 * answers 836,000; ~54,000 windows.
 * What limits it now: instructions.  callgrind counts 195.5 million per
 * MB (cl100k, the encode call): rk_merge_small's own 131 million (the
 * scans for the lowest key ~60, setting windows up ~37), rk_pair_get ~39
 * million; at the ~2.6 instructions per cycle the time implies, that is
 * the 26 ms.  Issue 13's 10 ms would need under ~80 instructions per byte
 * including the pair questions.  Dead ends, measured the same way
 * (interleaved builds, best of 9-11):
 *   - 32-bit keys (priority << 8 | position) with an SSE2 minimum, four
 *     keys per compare: 123 million instructions in the loop instead of
 *     131, yet 27.8 ms against 26.0 -- the vector load reads keys just
 *     written by scalar stores, which the core cannot forward to it.
 *   - Two windows merged a step each in turn, so that one's pair questions
 *     overlap the other's: 24.4-26.2 ms against 24.4-25.6 (no change; the
 *     loop is not waiting on memory).
 *   - Windows of 12, 16, 32 bytes with this loop: 29.5, 27.0, 24.5-24.9 ms
 *     against 24.8-26.9 for 24.  rk_window_end without its branch, and
 *     the window's setup from a table of next/prev: within noise (the
 *     setup's instruction count did not move).
 *   - Not built: the backtracking encoder (above), counted first in a
 *     Python model against this merge (cl100k, 100 KB of random letters):
 *     54,000 tokens, 99,000 pair tests, 263,000 pair-table questions
 *     (~2.6 per test, walking both tokens' merge trees) where the windows
 *     ask ~107,000 per 100 KB; 30,000 retries with a shorter token and
 *     15,500 dead positions.  More questions, and no fewer instructions.
 */
#define RK_WINDOW 24
#define RK_WINDOW_MAX RK_SMALL_MAX
#define RK_GIVE_UP 1  /* rk_merge_windows: take the heap instead */
/* A window ends within this many bytes before RK_WINDOW (rk_window_end). */
#define RK_CUT_SPAN 8

/* The priority of the two bytes a, b as a pair (RK_NONE when none). */
static uint32_t rk_byte_pair_prio(const bpe_ranks *r, unsigned char a, unsigned char b)
{
    uint32_t merged;
    if (r->byte_pairs)
        return r->byte_pairs[(size_t)a << 8 | b].prio;
    return rk_pair_get(r, r->byte_part[a], r->byte_part[b], &merged);
}

/* Where the window starting at pos ends (pos < len).  A window's last
 * part is only a guess (the bytes after it are missing), and a guess the
 * test of (2) rejects costs a second merge of the window; so the window
 * ends between the two bytes least eager to merge -- the highest priority
 * of the last RK_CUT_SPAN + 1 places before a character's first byte, the
 * last of equals -- where a part is least likely to straddle the cut.
 * (1 MB of random letters, cl100k: ending at a fixed RK_WINDOW bytes, ~a
 * third of the windows were merged twice, now ~1 in 10.)  Any end is
 * exact; this one is cheap: the byte-pair array, in cache. */
static size_t rk_window_end(const bpe_ranks *r, const unsigned char *p, size_t pos,
                            size_t len)
{
    size_t stop = pos + RK_WINDOW, q, best = 0;
    uint32_t highest = 0;
    if (stop >= len)
        return len;
    for (q = stop - RK_CUT_SPAN; q <= stop; q++) {
        uint32_t prio;
        if ((p[q] & 0xc0) == 0x80)
            continue; /* inside a character */
        prio = rk_byte_pair_prio(r, p[q - 1], p[q]);
        if (best == 0 || prio >= highest) {
            highest = prio;
            best = q;
        }
    }
    if (best != 0)
        return best;
    while (stop > pos + 1 && (p[stop] & 0xc0) == 0x80)
        stop--; /* no character starts there: end before one further back */
    return stop;
}

/* Whether parts x then y, covering p[a..b) then p[b..c), are what p[a..c)
 * merges to alone (the test of (2) above); -1 when p[a..c) is too long
 * for the short loop. */
static int rk_neighbours_pass(const bpe_ranks *r, const unsigned char *p, size_t a,
                              size_t c, uint32_t x, uint32_t y, rk_scratch *s)
{
    uint32_t merged;
    if (c - a > RK_WINDOW_MAX)
        return -1;
    if (rk_pair_get(r, x, y, &merged) != RK_NONE)
        return 0; /* they would merge */
    return rk_merge_small(r, p + a, c - a, s) == 2 && s->sym[0] == x && s->sym[1] == y;
}

/* Merges p[0..len) window by window (above) into out as parts (not IDs);
 * *count gets their number.  RK_GIVE_UP when a window outgrew the short
 * loop.  Uses s->sym, prio, res (merging).  Where the last committed part
 * starts is found back from the window's start and the part's length, at
 * the meeting place only, instead of an array of where each part ends (4 MB
 * written per MB of text and a length looked up per part; CPU time the
 * same within noise, one array fewer). */
static int rk_merge_windows(const bpe_ranks *r, const unsigned char *p, size_t len,
                            rk_scratch *s, uint32_t *out, size_t *count)
{
    size_t k = 0, pos = 0, i;
    while (pos < len) {
        size_t stop = rk_window_end(r, p, pos, len), start = pos, m;
        for (;;) {
            size_t last;
            int pass;
            if (stop - start > RK_WINDOW_MAX)
                return RK_GIVE_UP;
            m = stop - start >= 2 ? rk_merge_small(r, p + start, stop - start, s) : 1;
            if (stop - start < 2)
                s->sym[0] = r->byte_part[p[start]];
            for (i = 0; i < m; i++) /* staged after the committed parts */
                out[k + i] = s->sym[i];
            if (k == 0)
                break;
            last = start - rk_part_len(r, out[k - 1]); /* where the last committed part starts */
            pass = rk_neighbours_pass(r, p, last, start + rk_part_len(r, out[k]), out[k - 1],
                                      out[k], s);
            if (pass < 0)
                return RK_GIVE_UP;
            if (pass)
                break;
            k--; /* take the last committed part back into the window */
            start = last;
        }
        k += m;
        pos = stop;
    }
    *count = k;
    return BPE_OK;
}

/* Merges one piece p[0..len) (len >= 2) into out; *count gets the number
 * of IDs.  The scratch grows to the piece only on the ways that index it by
 * position (the short loop, the run engine, the heap: 44 bytes per byte);
 * the windows need room for one window, and write the parts straight to
 * out -- a piece of 256 MB merged in windows used to reserve 11 GB of
 * address space first, which a limit on it (ulimit -v, overcommit off)
 * refused. */
static int rk_merge_piece(const bpe_ranks *r, const unsigned char *p, size_t len,
                          rk_scratch *s, uint32_t *out, size_t *count)
{
    size_t i, n;
    uint32_t *parts;
    int status;
    if (len >= RK_NONE)
        return BPE_ETOOBIG;
    if (len < BPE__MERGE_HEAP_THRESHOLD) {
        if ((status = rk_scratch_reserve(s, len)) != BPE_OK)
            return status;
        n = rk_merge_small(r, p, len, s);
        parts = s->sym; /* (after the reserve, which may move it) */
        goto done;
    }
    if (len < RK_RUNS_MAX_LEN) {
        size_t runs = 1;
        for (i = 1; i < len; i++)
            runs += p[i] != p[i - 1];
        if (runs * RK_RUNS_SHARE <= len) {
            if ((status = rk_scratch_reserve(s, len)) != BPE_OK)
                return status;
            parts = s->sym;
            for (i = 0; i < len; i++)
                s->sym[i] = r->byte_part[p[i]];
            /* cnt and wid in prio and res, which the long paths leave alone;
             * the heap has 3 * cap >= 2 * len + BPE__RUN_PUSHES entries */
            n = bpe__merge_runs(rk_rule, r, s->sym, s->prio, s->res, s->next,
                                s->prev, s->heap, 3 * s->cap, len);
            goto done;
        }
        if (r->results_concatenate) {
            /* a window, or a meeting check, is at most RK_WINDOW_MAX bytes */
            if ((status = rk_scratch_reserve(s, RK_WINDOW_MAX)) != BPE_OK)
                return status;
            if (rk_merge_windows(r, p, len, s, out, &n) == BPE_OK) {
                parts = out;
                goto done;
            }
        }
    }
    if ((status = rk_scratch_reserve(s, len)) != BPE_OK)
        return status;
    parts = s->sym;
    for (i = 0; i < len; i++)
        s->sym[i] = r->byte_part[p[i]];
    n = bpe__merge_heap(rk_rule, r, s->sym, NULL, s->next, s->prev, s->heap, len);
done:
    for (i = 0; i < n; i++) {
        if (parts[i] >= r->n_tokens)
            return BPE_EINVAL; /* a byte with no token was left alone */
        out[i] = rk_id(r, parts[i]);
    }
    *count = n;
    return BPE_OK;
}

/*
 * Long pieces cut into units.  Under cl100k's pattern a CJK sentence is one
 * piece (20-300 bytes), too long or with too many IDs for the piece cache,
 * so each new sentence, and each old one again in the next call, was merged
 * whole: ~1,000 merges of ~75 KB per 0.5 MB call, ~55% of the time.  Yet
 * the sentences are made of the same few words.
 *
 * The cut.  Let k be a place in a piece p that no token occurring in p
 * spans: no token p[i..j) of two bytes or more with i < k < j.  Then p
 * merges as its two halves do, one after the other: BPE(p) = BPE(p[0..k))
 * BPE(p[k..)), for any rank file whose results concatenate.  Every part
 * merging forms is one byte or a token occurring at its place in p (its
 * bytes are its halves' bytes), so no part ever covers both p[k-1] and
 * p[k]; the pair of parts across k never has a priority (its result would
 * be a token spanning k), so no merge crosses k; and the lowest, leftmost
 * pair of one side is that side's lowest, leftmost pair alone, so each side
 * makes the merges it makes alone, in the same order.
 *   A special case, and cheap: a place between two bytes no token holds
 * side by side (cut_ok, a 64 Kbit map of byte pairs): no token spans it.
 * gpt2 and cl100k cut there only (81% and 40% of the boundaries between
 * CJK characters).  Under o200k nearly every pair of CJK bytes occurs in
 * some token, so that cut ~0.7% of them; the general rule cuts ~65%.
 *   Finding the places: for each start i, the farthest end of a token
 * starting there, by walking p[i..j) while some token starts with it (the
 * span filter: a bit per string that some longer token starts with and a
 * bit per token, in cells picked by a rolling hash -- no false negatives, so
 * the walk finds every token; a false "token" only loses a cut, so it is
 * not confirmed in the token table: ~10% faster on o200k CJK).  k is a cut
 * when no start before k reaches past it.  CJK text walks ~2-3 bytes per
 * byte under every shipped vocabulary; a run of spaces ~126 (o200k's long
 * space tokens), so the walk stops cutting past RK_SPAN_STEPS per byte.
 * The filter is 16 cells of 2 bits per token (o200k: 1 MB, ~1 cell in 9
 * used), built with the table (o200k load: no change within noise), for
 * tables whose byte pairs cut too rarely (RK_DENSE_PAIRS_DIV: o200k, and
 * small dense vocabularies); the others keep cut_ok.
 *
 * The units between cuts (a few characters) recur where whole sentences
 * do not, so each unit is asked of the piece cache and only the ones it
 * does not know are merged -- with merging's answer, never the
 * whole-piece rule's (that rule is for whole pieces: a unit that is a token
 * merging does not reach must merge).  So a one-ID entry is trusted only
 * when it says merged (piece_cache.h): an entry the whole-piece rule made is
 * checked by merging the unit once, and a unit that merges to several IDs
 * but is a token is not stored (its whole-piece answer differs).
 */
#define RK_CUT_MIN 17    /* shorter pieces are merged whole, but: */
/* Pieces of RK_CUT_MIN_WIDE to RK_CUT_MIN - 1 bytes that end in a wide
 * character (below: CJK, kana, Hangul) are cut too: such a piece
 * is a few characters that recur in other combinations (a Chinese phrase),
 * where a short Latin or Cyrillic piece is a word that recurs whole.
 * tools/bench_unseen.c, unseen 0.5 MB slices, 64 MB touched before each
 * call, medians of five alternating runs, before -> after (ms): CJK 6
 * slices o200k 73.4 -> 68.4, gpt2 40.7 -> 34.7; multilingual 8 slices
 * o200k 129.6 -> 125.8, cl100k 92.3 -> 72.0 (noisy); o200k prose the same
 * (38.5 / 37.5).  Callgrind, two slices: CJK cl100k -4.9%, gpt2 -5.4%,
 * o200k -1.4% instructions, multilingual cl100k -3.6%, o200k +0.9%.  The
 * same for all pieces (RK_CUT_MIN 5 or 9): CJK as fast, but o200k prose
 * 39.1 -> 50.1 ms (its words walked and cut instead of merged whole).
 * Same IDs (checksums): a cut is exact at any length. */
#define RK_CUT_MIN_WIDE 6
/* "Wide" is narrower since 2026-12-08: a character from U+3000 on (lead
 * byte 0xE3 or more: CJK, kana, Hangul), not every three-byte character.
 * And under the span rule (o200k: no cut_ok) a piece that is not wide is
 * cut only from RK_SPAN_CUT_MIN bytes, past what rk_merge_small merges in
 * one go.  Under o200k's pattern a word of an Indic script, Georgian or
 * Thai keeps its marks (\p{M} is part of a letter run), so such words are
 * whole pieces of 10-60 bytes; walked and cut, their units were merged
 * more often than the words themselves (merges + unit merges per 8 unseen
 * multilingual slices 91,320 + 27,471 -> 89,770 + 8,975) and the walk
 * cost more than it saved.  tools/bench_unseen.c, 64 MB touched and a 30
 * ms spin before each call, medians of 5 alternating rounds, after /
 * before: o200k multilingual 0.939-0.949, CJK 1.003, Python source 0.996;
 * cl100k multilingual 1.012, CJK 1.000; gpt2 multilingual 0.991 (narrowing
 * wide alone, o200k multilingual 0.996; the span rule's minimum alone,
 * 0.964).  Callgrind, two slices, o200k multilingual 208.2M -> 197.6M
 * instructions.  Same IDs (checksums). */
#define RK_WIDE_LEAD 0xE3
#define RK_SPAN_CUT_MIN (RK_SMALL_MAX + 1)
/* Under the byte-pair rule (gpt2, cl100k: a cut costs a bit per place) a
 * piece that ends in any character beyond ASCII is cut from
 * RK_CUT_MIN_WIDE bytes too: a Cyrillic, Greek or Arabic word of three
 * letters or more, an Indic or Georgian one.  Its units recur across
 * words, and merging whole words of 6-16 bytes cost more.  Callgrind, two
 * unseen multilingual slices after a warm one: gpt2 144.3M -> 137.0M
 * instructions, cl100k 151.8M -> 144.6M; prose, Python source, CJK and
 * o200k within 0.4%.  Same IDs (checksums). */
#define RK_CUT_MAX 4096  /* longer ones too: rk_merge_piece's run engine and windows */
/* Walk steps per byte of a piece before bpe__ranks_merge_cut stops cutting it (CJK
 * text takes ~2-3 under every shipped vocabulary, Python source ~3.5-5). */
#define RK_SPAN_STEPS 16

/* Whether a piece may be cut between bytes a and b (bpe_ranks' cut_ok). */
static int rk_cut_ok(const bpe_ranks *r, unsigned a, unsigned b)
{
    size_t ab = (size_t)a << 8 | b;
    return (int)(r->cut_ok[ab / 64] >> (ab % 64) & 1);
}

/* The farthest end, beyond `reach`, of what the span filter takes for a
 * token of two bytes or more starting at p[i], in p[0..len) -- every token,
 * perhaps a few strings more; `reach` when there is none.  Walks p[i..j)
 * while the filter says some token starts with it (bpe__ranks_merge_cut), adding
 * the bytes walked to *steps.
 *   The loop does only what each step needs: the last end the filter
 * calls a token is kept as a value (no branch), and the count of steps
 * and the new reach are settled after it; inlined in its two callers
 * (BPE__ALWAYS_INLINE: GCC otherwise kept it out of line once the loop got
 * smaller).  The walk counted its steps through the pointer and tested the
 * reach three ways each step: callgrind on tools/bench_unseen.c (o200k,
 * the encode calls of two unseen 0.5 MB slices after a warm one), CJK
 * 218.1M -> 206.5M instructions, multilingual 232.7M -> 223.5M; CPU time,
 * two runs of five alternating processes, 64 MB touched before each call:
 * CJK 6 slices 89.0 / 126.1 -> 90.9 / 106.4 ms, multilingual 8 slices
 * 161.5 / 176.4 -> 149.7 / 147.3 ms; same IDs (checksums). */
BPE__ALWAYS_INLINE size_t rk_span_reach(const bpe_ranks *r, const unsigned char *p, size_t i,
                                   size_t len, size_t reach, size_t *steps)
{
    const uint64_t *filter = r->span_filter;
    const unsigned shift = r->span_shift;
    uint64_t h = RK_SPAN_SEED;
    size_t j, last = i, end = len - i > r->max_token_len ? i + r->max_token_len : len;
    for (j = i; j < end; j++) {
        size_t c;
        unsigned cell;
        h = rk_span_step(h, p[j]);
        c = (size_t)(h >> shift);
        cell = (unsigned)(filter[c / 32] >> (2 * (c % 32)) & 3);
        last = (cell & 2) ? j : last; /* p[i..j] may be a token */
        if (!(cell & 1))
            break;
    }
    *steps += j - i + (j < end); /* the step that stopped the walk counts */
    return last > i && last >= reach ? last + 1 : reach; /* a token of 2+ bytes */
}

/* Whether a token of two bytes or more starting at p[i] (i < len) could
 * end past `reach`, by the longest token that starts with p[i], p[i + 1]
 * (span_longest).  When not, rk_span_reach from i would change nothing
 * (it finds only such tokens), so the walk is skipped: most walks from
 * the bytes inside a CJK character, whose tokens are short, would end
 * where the walk from its first byte already reached.  o200k (the only
 * shipped table with the span filter), callgrind on tools/bench_unseen.c,
 * two unseen 0.5 MB slices after a warm one: CJK 203.7M -> 177.0M
 * instructions, multilingual 225.5M -> 210.3M; CPU time, medians of five
 * alternating runs, 64 MB touched before each call: CJK 6 slices 63.2 ->
 * 57.8 ms, multilingual 8 slices 115.3 / 130.4 -> 117.3 / 121.1, prose
 * and source the same; same IDs.  A longest token of RK_SPAN_LONG bytes
 * or more bounds nothing: walk. */
static inline int rk_span_may_reach(const bpe_ranks *r, const unsigned char *p, size_t i,
                                    size_t len, size_t reach)
{
    size_t longest;
    if (i + 1 >= len)
        return 0; /* one byte left: no token of two bytes starts here */
    longest = r->span_longest[(size_t)p[i] << 8 | p[i + 1]];
    return longest == RK_SPAN_LONG || (longest != 0 && i + longest > reach);
}

/* The IDs merging gives the unit text[pos..pos+len) (len >= 1), through
 * the piece cache, into dst; *count gets their number. */
static int rk_encode_unit(const bpe_ranks *r, const unsigned char *text, size_t text_len,
                          size_t pos, size_t len, bpe_piece_cache *c, rk_scratch *s,
                          uint32_t *dst, size_t *count)
{
    const unsigned char *p = text + pos;
    uint8_t *merged = NULL;
    uint32_t single = RK_NONE;
    size_t n = 0;
    rk_key key;
    int status;
    if (len == 1) {
        uint32_t k = r->byte_part[p[0]];
        if (k >= r->n_tokens)
            return BPE_EINVAL; /* a byte with no token, which no neighbour joins */
        dst[0] = rk_id(r, k);
        *count = 1;
        return BPE_OK;
    }
    key = rk_key_of(p, len, text + text_len);
    if (len <= 8 && r->whole_piece) {
        bpe__pc_tok *e = bpe__pc_tok_find(c, key.hash, key.head, len);
        if (e) {
            dst[0] = e->id;
            n = 1;
            merged = &e->merged;
        }
    }
    if (n == 0 && len <= BPE__PC_LONG_BYTES)
        n = bpe__pc_find(c, key.hash, p, len, key.head, key.tail, dst, &merged);
    if (n > 1 || (n == 1 && *merged)) {
        *count = n;
        return BPE_OK;
    }
    if (n == 1)
        single = dst[0]; /* the whole-piece rule's token: does merging reach it? */
    c->stats[BPE_PIECE_CACHE_UNIT_MERGES]++;
    if ((status = rk_merge_piece(r, p, len, s, dst, count)) != BPE_OK)
        return status;
    if (n == 1) {
        if (*count == 1 && dst[0] == single)
            *merged = 1;
        return BPE_OK;
    }
    if (*count == 1) {
        if (len <= 8 && r->whole_piece)
            bpe__pc_tok_put(c, key.hash, key.head, len, dst[0], 1);
        else if (len <= BPE__PC_LONG_BYTES)
            bpe__pc_put(c, key.hash, p, len, key.head, key.tail, dst, 1, 1);
    } else if (len <= BPE__PC_LONG_BYTES &&
               !(r->whole_piece && len <= r->max_token_len && rk_maybe_token(r, key.hash) &&
                 rk_lookup_key(r, p, len, &key) != RK_NONE)) {
        bpe__pc_put(c, key.hash, p, len, key.head, key.tail, dst, *count, 1);
    }
    return BPE_OK;
}

/* rk_merge_piece of the piece text[pos..pos+len), cut into units (above)
 * when it is RK_CUT_MIN to RK_CUT_MAX bytes long, or from RK_CUT_MIN_WIDE
 * when it ends in a character beyond ASCII; under the span rule only a
 * piece that ends in a wide character is cut below RK_SPAN_CUT_MIN bytes.
 * `reach` is the farthest
 * end of the tokens of two bytes or more starting before k, so k is a cut
 * when it is <= k.  Past RK_SPAN_STEPS walk steps per byte (a long run of
 * spaces walks ~126 bytes from each start under cl100k and o200k) the rest
 * of the piece, from the last cut on, is one unit: exact either way. */
int bpe__ranks_merge_cut(const bpe_ranks *r, const unsigned char *text, size_t text_len,
                         size_t pos, size_t len, bpe_piece_cache *c, rk_scratch *s,
                         uint32_t *dst, size_t *count)
{
    const unsigned char *p = text + pos;
    size_t start = 0, k, n = 0, m, reach = 0, steps = 0;
    int status, wide, span;
    if ((!r->span_filter && !r->cut_ok) || len > RK_CUT_MAX || len < RK_CUT_MIN_WIDE)
        return rk_merge_piece(r, p, len, s, dst, count);
    wide = p[len - 3] >= RK_WIDE_LEAD; /* p[len - 3]: a 3-byte character's lead */
    span = r->span_filter && (!r->cut_ok || wide); /* which rule (ranks_build.c) */
    if (span ? !wide && len < RK_SPAN_CUT_MIN : len < RK_CUT_MIN && p[len - 1] < 0x80)
        return rk_merge_piece(r, p, len, s, dst, count); /* not cut (above) */
    for (k = 0; k <= len; k++) {
        if (!span) { /* the byte-pair rule */
            if (k < len && (k == 0 || !rk_cut_ok(r, p[k - 1], p[k])))
                continue;
            goto cut;
        }
        if (k < len && steps > RK_SPAN_STEPS * len)
            k = len; /* walked too far: no more cuts */
        if (k < len && (k == 0 || reach > k)) {
            if (rk_span_may_reach(r, p, k, len, reach))
                reach = rk_span_reach(r, p, k, len, reach, &steps);
            continue;
        }
    cut:
        if (start == 0 && k == len) /* no cut: the piece is one unit */
            return rk_merge_piece(r, p, len, s, dst, count);
        status = rk_encode_unit(r, text, text_len, pos + start, k - start, c, s, dst + n, &m);
        if (status != BPE_OK)
            return status;
        n += m;
        start = k;
        if (k < len && span && rk_span_may_reach(r, p, k, len, reach))
            reach = rk_span_reach(r, p, k, len, reach, &steps);
    }
    *count = n;
    return BPE_OK;
}
