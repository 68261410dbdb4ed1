"""Special tokens in text: the one matcher and the one set of rules both pillars use.

A special token such as <|endoftext|> is never split or merged; where the
caller allows it, its text stands for its ID.  BPETokenizer (when it cuts its
training corpus around special tokens and when it encodes) and Encoding (when
it checks for disallowed tokens and when it encodes) all find them with
special_regex, so training and encoding agree on overlapping tokens.

Where two special tokens start at the same place the longer one wins; among
tokens of one length the order is by text, so the result never depends on
the order in which the tokens were given.  (tiktoken's order there is a hash
order, i.e. unspecified.)

    >>> special_regex(frozenset(["<a>", "<a><b>"])).findall("x<a><b><a>")
    ['<a><b>', '<a>']

Which tokens a call allows and which it refuses to meet as text is
tiktoken's rule, for BPETokenizer as for Encoding (special_sets,
check_disallowed): by default every special token is disallowed, and text
holding one raises ValueError, so a user's text cannot smuggle in a
control token; allow it to encode it as the token, or pass
disallowed_special=() to encode it as text.
"""
import functools
import os

import regex


@functools.lru_cache(maxsize=128)
def special_regex(tokens):
    """One compiled regex matching any of `tokens` (a frozenset of str),
    longest first."""
    ordered = sorted(tokens, key=lambda t: (-len(t), t))
    return regex.compile("|".join(regex.escape(t) for t in ordered))


ALL = "all"


def special_sets(allowed_special, disallowed_special, specials):
    """(allowed, disallowed) as frozensets, by tiktoken's rules: "all"
    allowed is every one of `specials`; "all" disallowed is every one that is
    not allowed; None disallowed is none (tiktoken's reading of a falsy
    value).  A str other than "all" is a TypeError (it is not a collection
    of tokens: "<pad>" would be five characters).

        >>> special_sets({"<a>"}, "all", ["<a>", "<b>"])
        (frozenset({'<a>'}), frozenset({'<b>'}))
    """
    if disallowed_special is None:  # tiktoken tests it for truth: None checks nothing
        disallowed_special = ()
    if allowed_special == ALL:
        allowed_special = specials
    if disallowed_special == ALL:
        disallowed_special = set(specials) - set(allowed_special)
    if isinstance(allowed_special, str) or isinstance(disallowed_special, str):
        raise TypeError('allowed_special / disallowed_special must be "all" or a collection of str')
    return frozenset(allowed_special), frozenset(disallowed_special)


# Characters by how common they are in text, most common first: the order
# _anchors tries them in (it decides speed only, never the answer).  A
# character not listed counts as rarer than all of them.
_COMMON = (" \netaoinsrhldcumfpgwybvkxjqz_ETAOINSRHLDCUMFPGWYBVKXJQZ.,()0123456789=:'\"-/[]*#"
           "\t<>{};+%!?&@$^~`\\|")
# Occurrences of an anchor visited before the next one is tried (~0.2 us
# each), and anchors tried before the regex: at most ~0.1 ms spent in vain.
_ANCHOR_HITS = 256
_ANCHORS_TRIED = 2


@functools.lru_cache(maxsize=128)
def _anchors(tokens):
    """(prefix, ((character, offset), ...)): the longest prefix every one of
    `tokens` (a frozenset of str) starts with, and the places in it of its
    _ANCHORS_TRIED rarest characters; () when that prefix is empty."""
    prefix = os.path.commonprefix(sorted(tokens))
    order = sorted(range(len(prefix)),
                   key=lambda i: (-_COMMON.find(prefix[i]) if prefix[i] in _COMMON else -len(_COMMON) - 1, i))
    return (prefix, tuple((prefix[i], i) for i in order[:_ANCHORS_TRIED])) if prefix else ()


def _prefix_absent(text, prefix, places):
    """True when `prefix` (the one _anchors gives) is nowhere in `text`, so
    no token is; False when it is somewhere; None when every anchor occurs
    too often to tell cheaply.  Each occurrence of an anchor character
    (memchr) is the one place the prefix could hold it."""
    for anchor, off in places:
        j = text.find(anchor, off)
        hits = 0
        while j >= 0:
            hits += 1
            if hits > _ANCHOR_HITS:
                break
            if text.startswith(prefix, j - off):
                return False
            j = text.find(anchor, j + 1)
        else:
            return True
    return None


@functools.lru_cache(maxsize=128)
def _first_chars(tokens):
    """The distinct first characters of `tokens` (a frozenset of str), or
    None when one is empty (it is found everywhere)."""
    if "" in tokens:
        return None
    return tuple(sorted({t[0] for t in tokens}))


def check_disallowed(text, disallowed):
    """ValueError when `text` holds one of the `disallowed` tokens (a frozenset)."""
    if disallowed:
        # A text without any token's first character holds no token: one
        # character's `in` is a memchr (0.5 MB of prose: ~4 us, where the
        # regex search took ~0.3 ms, ~5% of encode_to_numpy).
        firsts = _first_chars(disallowed)
        if firsts is not None and len(firsts) <= 4 and not any(c in text for c in firsts):
            return
        # Python source holds "<" and ">", so the regex ran there: 0.14 ms
        # (gpt2, cl100k) to 0.26 ms (o200k) per 0.5 MB, 3-5% of
        # encode_to_numpy.  A character every token holds (its "|") is far
        # rarer: every token starts with "<|", so each "|" found by memchr
        # is the one place such a prefix could hold it; where none does,
        # there is no token.
        anchors = _anchors(disallowed)
        if anchors and _prefix_absent(text, *anchors):
            return
        match = special_regex(disallowed).search(text)
        if match:
            raise_disallowed(match.group())


def raise_disallowed(token):
    raise ValueError(
        "Encountered text corresponding to disallowed special token %r.\n"
        "To encode it as the special token, allow it: allowed_special={%r, ...}.\n"
        "To encode it as ordinary text, exclude it from the check: "
        "disallowed_special=(enc.special_tokens_set - {%r}).\n"
        "To turn the check off for every special token, pass disallowed_special=()." % (token, token, token)
    )
