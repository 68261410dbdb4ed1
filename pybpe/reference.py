"""The chapter's BPE algorithm, written literally: the test oracle.

This is TinyTorch Module 10's training loop and Chapter 11's listings 063
(count pairs), 064 (merge the best pair everywhere) and 065 (replay merges on
new text), with nothing clever.  It is deliberately slow -- every step
rebuilds a Counter of all pairs from scratch and rewrites every word -- so
that it is obviously right.  Tokens may be str or bytes (joined with `+`).
It leaves out IDs, text splitting and files; the backends do those.  The
WordPiece trainer and encoder (learn_wordpiece, wordpiece_encode_word) follow
at the end, as literal.
"""
from collections import Counter
from fractions import Fraction


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


# ---------------------------------------------------------------------------
# WordPiece (the C book's section 11.8), just as literally.
# ---------------------------------------------------------------------------

def wordpiece_merged(left, right, prefix="##"):
    """The token a WordPiece merge makes: right loses its continuation prefix.

    >>> wordpiece_merged("l", "##o"), wordpiece_merged("##o", "##w")
    ('lo', '##ow')
    """
    return left + (right[len(prefix):] if right.startswith(prefix) else right)


def learn_wordpiece(words, base_vocab, vocab_size, min_frequency=1, prefix="##"):
    """Learn WordPiece merges until the vocabulary has vocab_size entries.

    Like `learn`, but each step scores every pair by the likelihood ratio
    count(ab) / (count(a) * count(b)) instead of by count(ab): symbols are
    counted, like pairs, over the current segmentation of every word,
    weighted by frequency.  Only pairs with count >= min_frequency are
    candidates.  The highest score wins, compared exactly (Fraction); on a
    tie the pair encountered first in the Counter's order (words in order,
    each left to right) -- the BPE rule.  The merged token is
    wordpiece_merged(left, right, prefix).  Returns (vocab, merges) with
    merges as (left, right, count, count(left), count(right)).

    >>> words = [(("a", "##b"), 3), (("a", "##c"), 1), (("d", "##b"), 1)]
    >>> vocab, merges = learn_wordpiece(words, ["a", "d", "##b", "##c"], 6)
    >>> merges[0]   # 1/(4*1) beats (a,##b): 3/(4*4) and (d,##b): 1/(1*4)
    ('a', '##c', 1, 4, 1)
    >>> merges[1]   # now a counts 3: (a,##b) 3/(3*4) ties (d,##b) 1/(1*4); first wins
    ('a', '##b', 3, 3, 4)
    >>> vocab[4:]
    ['ac', 'ab']
    """
    if min_frequency < 1:
        raise ValueError("min_frequency must be at least 1")
    vocab = list(base_vocab)
    known = set(vocab)
    words = [(list(symbols), freq) for symbols, freq in words]
    merges = []
    while len(vocab) < vocab_size:
        pairs, symbols = Counter(), Counter()
        for word, freq in words:
            for symbol in word:
                symbols[symbol] += freq
            for left, right in zip(word, word[1:]):
                pairs[left, right] += freq
        best = best_score = None
        for pair, count in pairs.items():  # first-encountered order
            if count < min_frequency:
                continue
            score = Fraction(count, symbols[pair[0]] * symbols[pair[1]])
            if best is None or score > best_score:  # strict: a tie keeps the first
                best, best_score = pair, score
        if best is None:
            break
        left, right = best
        merged = wordpiece_merged(left, right, prefix)
        if merged not in known:  # an existing token keeps its place
            vocab.append(merged)
            known.add(merged)
        merges.append((left, right, pairs[best], symbols[left], symbols[right]))
        words = [(merge_word(word, best, merged), freq) for word, freq in words]
    return vocab, merges


def wordpiece_encode_word(word, vocab, unk="[UNK]", prefix="##", max_chars=100):
    """Greedy longest-match-first over one word (BERT's WordPiece).

    From the left, take the longest vocabulary entry that starts here (with
    the prefix after the first piece); when nothing matches, or the word is
    longer than max_chars characters, the whole word is [unk].

    >>> wordpiece_encode_word("unaffable", {"un", "##aff", "##able", "##a"})
    ['un', '##aff', '##able']
    >>> wordpiece_encode_word("xyz", {"x", "##y"})
    ['[UNK]']
    """
    if len(word) > max_chars:
        return [unk]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                break
        else:
            return [unk]
        pieces.append(piece)
        start = end
    return pieces
