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
    not allowed.  A str other than "all" is a TypeError (it is not a
    collection of tokens: "<pad>" would be five characters).

        >>> special_sets({"<a>"}, "all", ["<a>", "<b>"])
        (frozenset({'<a>'}), frozenset({'<b>'}))
    """
    if allowed_special == ALL:
        allowed_special = specials
    if disallowed_special == ALL:
        disallowed_special = set(specials) - set(allowed_special)
    if isinstance(allowed_special, str) or isinstance(disallowed_special, str):
        raise TypeError('allowed_special / disallowed_special must be "all" or a collection of str')
    return frozenset(allowed_special), frozenset(disallowed_special)


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
