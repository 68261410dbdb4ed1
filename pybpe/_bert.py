"""BERT's text preparation: the normalizer and the pre-tokenizer WordPiece runs after.

`normalize` does what BERT's BasicTokenizer (and Hugging Face's
BertNormalizer) does, in the same order: drop control characters and turn
whitespace into spaces (clean_text), put spaces around CJK ideographs
(handle_chinese_chars), NFD and drop nonspacing marks (strip_accents; by
default it follows lowercase), lowercase one character at a time.  `split`
is BERT's pre-tokenizer: cut on whitespace, and every punctuation character
is a word by itself.

    >>> split(normalize("Héllo, WORLD!\\t中文"))
    ['hello', ',', 'world', '!', '中', '文']

What a character is comes from Python's unicodedata (its Unicode version is
`unicodedata.unidata_version`).  Hugging Face's BertNormalizer and
BertPreTokenizer class characters with older tables (Unicode 9-era categories
in tokenizers 0.23), so for a character whose category changed or that was
assigned since (U+2E43.. punctuation, U+08D3.. marks, ...) the two can
differ; every character whose category Unicode 3.2 and this Python agree on
is treated alike (tests/test_wordpiece.py).
Left out: offsets (which character of the input a piece came from).
"""
import re
import unicodedata

__all__ = ["normalize", "split"]

# Unicode's White_Space property (Rust's char::is_whitespace, which BERT's
# Rust port splits on), not str.isspace: that also takes U+001C..U+001F.
_WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")

# The CJK ideograph blocks BERT pads with spaces (its _is_chinese_char):
# the Unified Ideographs and Extensions A-E, and the Compatibility
# Ideographs.  Hangul, kana and the rest are written with spaces already.
_CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
               (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_CJK_RE = re.compile("([%s])" % "".join("%s-%s" % (chr(a), chr(b)) for a, b in _CJK_RANGES))


def _is_control(ch):
    """clean_text removes these: control, format, private-use and surrogate
    characters (Cc, Cf, Co, Cs) except tab, newline and carriage return
    (whitespace, kept as spaces), and U+FFFD, the replacement character.
    Unassigned code points (Cn) stay, as in Hugging Face's BertNormalizer
    (Google's original BERT dropped them too)."""
    if ch in "\t\n\r":
        return False
    return ch == "\ufffd" or unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")


# Runs of neither ASCII whitespace nor ASCII punctuation (other characters
# included), or one ASCII punctuation character.
_ASCII_PUNCT = r"!-/:-@\[-`{-~"
_ASCII_WORDS = re.compile(r"[^\t\n\x0b\x0c\r %s]+|[%s]" % (_ASCII_PUNCT, _ASCII_PUNCT))


def _is_punctuation(ch):
    """BERT's punctuation: every ASCII non-alphanumeric printable (so $, +,
    <, ^, ` and | count, though Unicode calls them symbols) and every
    Unicode P* category."""
    return ("!" <= ch <= "/" or ":" <= ch <= "@" or "[" <= ch <= "`" or "{" <= ch <= "~"
            or unicodedata.category(ch)[0] == "P")


def _clean_ascii(text):
    # The ASCII case of clean_text as one bytes.translate (str.translate with
    # a dict looked every character up: 5.6 s on Shakespeare's 5 MB, this
    # takes milliseconds).
    return text.encode("ascii").translate(_ASCII_SPACES, _ASCII_CONTROLS).decode("ascii")


_ASCII_CONTROLS = bytes(c for c in range(0x80) if _is_control(chr(c)))
_ASCII_SPACES = bytes(0x20 if chr(c) in _WHITE_SPACE else c for c in range(256))


def normalize(text, *, lowercase=True, strip_accents=None, clean_text=True, handle_chinese_chars=True):
    """BERT's normalizer (see the module's docstring).  strip_accents=None
    means "as lowercase", BERT's default."""
    if strip_accents is None:
        strip_accents = lowercase
    options = (lowercase, strip_accents, clean_text, handle_chinese_chars)
    if text.isascii():
        return _normalize_ascii(text, lowercase, clean_text)
    # Every step works character by character, except NFD's reordering of
    # combining marks, which never crosses an ASCII character (combining
    # class 0).  So ASCII runs take the fast path and only the rest is
    # walked in Python.
    pieces, last = [], 0
    for match in _NON_ASCII_RUN.finditer(text):
        pieces.append(_normalize_ascii(text[last:match.start()], lowercase, clean_text))
        pieces.append(_normalize_other(match.group(), *options))
        last = match.end()
    pieces.append(_normalize_ascii(text[last:], lowercase, clean_text))
    return "".join(pieces)


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _normalize_ascii(text, lowercase, clean_text):
    # Nothing to pad, strip or case-map beyond ASCII.
    if clean_text:
        text = _clean_ascii(text)
    return text.lower() if lowercase else text


def _normalize_other(text, lowercase, strip_accents, clean_text, handle_chinese_chars):
    if clean_text:
        text = "".join(" " if ch in _WHITE_SPACE else ch for ch in text if not _is_control(ch))
    if handle_chinese_chars:
        text = _CJK_RE.sub(r" \1 ", text)
    if strip_accents:
        text = "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")
    if lowercase:
        # One character at a time: str.lower() of the whole text would give
        # a final sigma (word-final capital sigma -> U+03C2), BERT gives U+03C3.
        text = text.lower() if "\u03a3" not in text else "".join(ch.lower() for ch in text)
    return text


def split(text):
    """BERT's pre-tokenizer: whitespace separates words (and is dropped);
    each punctuation character is a word of its own.

    >>> split("don't  stop--now")
    ['don', "'", 't', 'stop', '-', '-', 'now']
    """
    # The ASCII regex cuts at ASCII whitespace and punctuation; a run it
    # returns with other characters is cut again, character by character,
    # at Unicode whitespace and punctuation.
    words = _ASCII_WORDS.findall(text)
    if text.isascii():
        return words
    out = []
    for word in words:
        if word.isascii():
            out.append(word)
        else:
            out += _split_other(word)
    return out


def _split_other(chunk):
    words, start = [], 0
    for k, ch in enumerate(chunk):
        if ch in _WHITE_SPACE or _is_punctuation(ch):
            if start < k:
                words.append(chunk[start:k])
            if ch not in _WHITE_SPACE:
                words.append(ch)
            start = k + 1
    if start < len(chunk):
        words.append(chunk[start:])
    return words
