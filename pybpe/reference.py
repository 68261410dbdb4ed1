"""The chapter's BPE algorithm, written literally: the test oracle.

This is TinyTorch Module 10's training loop and Chapter 11's listings 063
(count pairs), 064 (merge the best pair everywhere) and 065 (replay merges on
new text), with nothing clever.  It is deliberately slow -- every step
rebuilds a Counter of all pairs from scratch and rewrites every word -- so
that it is obviously right.  Tokens may be str or bytes (joined with `+`).
It leaves out IDs, text splitting and files; the backends do those.
"""
from collections import Counter


def merge_word(symbols, pair, merged):
    """Replace each (left, right) in `symbols`, left to right, skip-two.

    >>> merge_word(["a", "a", "a"], ("a", "a"), "aa")
    ['aa', 'a']
    """
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(merged)
            i += 2  # both symbols are used up
        else:
            out.append(symbols[i])
            i += 1
    return out


def learn(words, base_vocab, vocab_size, min_frequency=1, max_token_length=0):
    """Learn merges until the vocabulary has vocab_size entries.

    `words` is a list of (tuple of symbols, frequency) in first-appearance
    order.  Each step counts every adjacent pair (weighted by frequency) in
    a fresh Counter and takes most_common(1): the highest count, ties to the
    pair encountered first.  With max_token_length > 0, a pair whose merged
    token would span more than that many initial symbols is not a candidate.
    Returns (vocab, merges).

    >>> vocab, merges = learn([(("a", "b", "c"), 2), (("a", "b"), 1)], ["a", "b", "c"], 5)
    >>> merges, vocab
    ([('a', 'b'), ('ab', 'c')], ['a', 'b', 'c', 'ab', 'abc'])
    """
    if min_frequency < 1:
        raise ValueError("min_frequency must be at least 1")
    vocab = list(base_vocab)
    units = {token: 1 for token in vocab}  # initial symbols per token
    words = [(list(symbols), freq) for symbols, freq in words]
    merges = []
    while len(vocab) < vocab_size:
        stats = Counter()
        for symbols, freq in words:
            for left, right in zip(symbols, symbols[1:]):
                if max_token_length and units.get(left, 1) + units.get(right, 1) > max_token_length:
                    continue
                stats[left, right] += freq
        if not stats:
            break
        (left, right), count = stats.most_common(1)[0]
        if count < min_frequency:
            break
        merged = left + right
        if merged not in units:  # an existing token keeps its place (and length)
            vocab.append(merged)
            units[merged] = units.get(left, 1) + units.get(right, 1)
        merges.append((left, right))
        words = [(merge_word(symbols, (left, right), merged), freq) for symbols, freq in words]
    return vocab, merges


def apply_merges(symbols, merges):
    """Replay every merge over the word, in rank order (listing 065).

    >>> apply_merges(["l", "o", "w", "e", "s", "t "], [("l", "o"), ("w", "e"), ("s", "t ")])
    ['lo', 'we', 'st ']
    """
    symbols = list(symbols)
    for left, right in merges:
        symbols = merge_word(symbols, (left, right), left + right)
    return symbols
