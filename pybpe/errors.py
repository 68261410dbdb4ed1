"""pybpe's exceptions and warnings, and the error texts both backends must share.

pybpe's own exceptions: FormatError, for vocabulary and model files that are
corrupt, truncated or hostile -- a ValueError, so code that already catches
ValueError keeps working; its message names the file and the problem -- and
PatternTimeout, a TimeoutError for a pattern from such a file that would
backtrack for too long -- and InvalidTokenError, for a token ID that is not
in the vocabulary (both BPETokenizer and Encoding raise it: a KeyError, as
tiktoken's decode raises, and a ValueError) -- and NoTokenError, a ValueError
for a text byte the vocabulary has no token for.  COUNT_OVERFLOW is the text of the OverflowError both
cores raise when a word or pair count would pass 2**64 - 1 (C's
BPE_EOVERFLOW), kept here so the two spellings cannot drift apart;
byte_without_token likewise makes the one error both encoders raise for a
text byte the vocabulary has no token for.  One
warning: UnicodeVersionWarning, for a model trained with other Unicode
tables than the running ones.

raise_for_status is the one map from a C status code (csrc/bpe.h's BPE_E*)
to a Python exception, used by both cffi wrappers (pybpe/core/native/).  It
reads the codes from the compiled library it is given, so this module never
imports the extension (pybpe works without it) and no number is copied.
"""

COUNT_OVERFLOW = "a count would pass 2**64 - 1 (counts are 64-bit and never wrap around)"

TOO_BIG = "a size does not fit the core's 32-bit indices"


class NoTokenError(ValueError):
    """A byte of the text has no token in the vocabulary (one without some of
    the 256 one-byte tokens): the text cannot be encoded with it."""


def byte_without_token(lacking):
    """The NoTokenError (a ValueError) for a text byte with no token (a vocabulary without
    some of the 256 one-byte tokens, e.g. a GPT-2 vocab.json with one
    deleted).  `lacking`: the byte values with no one-byte token, which the
    message names -- a fact of the vocabulary, so both backends say the
    same whichever byte of the text they met first."""
    lacking = sorted(lacking)
    named = ", ".join(repr(bytes([b])) for b in lacking[:8])
    if len(lacking) > 8:
        named += " and %d more" % (len(lacking) - 8)
    return NoTokenError("a byte of the text has no token in this vocabulary (it has none for %s)" % named)


def raise_for_status(status, what, lib, invalid="invalid argument"):
    """Return a C status that is not an error (>= 0); raise for the others.

    `lib` is the compiled library (it holds the BPE_E* codes), `what` names
    the call for the message, `invalid` says what BPE_EINVAL means there.
    """
    if status >= 0:
        return status
    errors = {
        lib.BPE_ENOMEM: (MemoryError, "out of memory"),
        lib.BPE_EINVAL: (ValueError, invalid),
        lib.BPE_ETOOBIG: (OverflowError, TOO_BIG),
        lib.BPE_EOVERFLOW: (OverflowError, COUNT_OVERFLOW),
    }
    cls, message = errors.get(status, (RuntimeError, "C core status %d" % status))
    raise cls("%s: %s" % (what, message))


class FormatError(ValueError):
    """A vocabulary or model file could not be read: the message says which and why."""


class InvalidTokenError(KeyError, ValueError):
    """A token ID that is not in the vocabulary (out of range, negative, or a
    gap in it).  Both classes raise it from decode, decode_bytes and the
    streaming decoder: a KeyError, as tiktoken's decode raises, and a
    ValueError, as a bad argument value is."""

    def __str__(self):  # the message itself, not KeyError's repr of it
        return str(self.args[0]) if self.args else ""


class PatternTimeout(TimeoutError):
    """A pre-tokenizer pattern read from a file ran past its time bound
    (pybpe/_bounded.py, docs/limits.md): the message names the file."""


class UnicodeVersionWarning(UserWarning):
    """A model file's pre-tokenizer used another Unicode version than this
    installation's: text with code points assigned or re-classified between
    the two may be cut into other words (everything else encodes as before)."""
