"""Special tokens in text: the one matcher both pillars use.

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
"""
import functools

import regex


@functools.lru_cache(maxsize=128)
def special_regex(tokens):
    """One compiled regex matching any of `tokens` (a frozenset of str),
    longest first."""
    ordered = sorted(tokens, key=lambda t: (-len(t), t))
    return regex.compile("|".join(regex.escape(t) for t in ordered))
