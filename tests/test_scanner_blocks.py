"""The C scanners' blocks (csrc/pretok.c, pt_block_gpt2 and pt_block_wide)
against the regex module.  Where 64 ASCII bytes follow a piece start, the
scanners cut every piece among them from bit masks in one pass, so what
could go wrong is at the edges of a block and in the rules that reach
across a run: pieces that straddle the 64th byte, digit runs counted three
at a time across an edge, the last space of a run before a letter at an
edge, contractions at an edge (cl100k takes them at a piece start, o200k
after a letter, in either case), the newlines after marks, blank lines with
trailing spaces, a "/" after a newline after a mark (o200k's [\r\n/]*),
and a non-ASCII character that stops a block.  Each shape is put at every
offset of two blocks behind plain text, and random texts of such shapes
are compared too.  (Reads past the end of the text: csrc/tests/
test_pretok_paths.c, under ASan, which compares the blocks with the
general scanner the same way.)"""
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pybpe import _unicode

from conftest import c_core, c_scanners




def _assert_all_patterns(texts):
    c = c_core()
    for preset, pattern in c_scanners():
        for text in texts:
            assert c.split(text, preset) == _unicode.split(pattern, text), (preset, text)


# Shapes the block rules single out, each one run or a few.
SHAPES = [
    "HTTPServer", "fooBarBaz", "XMLHttp", "The", "abcdefghijklmnopqrstuvwxyz" * 3,  # longer than a block
    "1", "12", "123", "1234", "12345678", "1" * 70,
    " a", "  a", "   a", "\ta", " \ta", "\x0ba", "  1", "  .", " .a", ".a", "..a", "\t.a", "1.a",
    "\n", "\n\n", "\r\n", "\n    x", "\n    \n    x", "  \n  \n", " \n\t y", "\n" * 70, " " * 70,
    ".\n\n", ".\n  x", ".\r\n\r\n  \n x", ":\n    def", "(\n", "...\n/x", ".\n/\n//y", "/usr/bin", "a // b",
    "'s", "'S", "'t", "'ll", "'LL", "'lL", "'re", "'Ve", "'d", "'m", "'x", "''", "'sure", "'llama",
    "don't", "DON'T", "it's's", "we'll", "they'Re", "I'm", "rock'n", "O'Neil", "x'sT", "5's", " 's", ".'s",
    "\t's", "\n'll", "'", "é", "ſ", "'ſ", "\u00a0", "\x85", "漢字",
]
PLAIN = "the quick brown fox jumps over the lazy dog, and then some more text "


def test_each_shape_at_every_offset_of_two_blocks():
    # The shape after 0..129 bytes of plain text (a block starts at a piece
    # start, so the shape meets each edge of the first two blocks), then
    # plain text again so that blocks are tried to the end.
    texts = []
    for shape in SHAPES:
        for lead in range(130):
            head = (PLAIN * 3)[:lead]
            texts.append(head + shape + PLAIN)
            texts.append(head + shape + shape + PLAIN[:20])
    _assert_all_patterns(texts)


def test_random_texts_of_shapes():
    # Seeded, so a failure repeats: 2,000 texts of ~300 bytes, non-ASCII in
    # a quarter of them.
    rng = random.Random(2026)
    ascii_shapes = [s for s in SHAPES if s.isascii()]
    texts = []
    for k in range(2000):
        pool = SHAPES if k % 4 == 0 else ascii_shapes
        parts, size = [PLAIN[:rng.randrange(64)]], 0
        while size < 300:
            part = rng.choice(pool + ["a", "b", " ", "  ", ".", ",", "\n", "x", "Y", "7"])
            parts.append(part)
            size += len(part)
        texts.append("".join(parts))
    _assert_all_patterns(texts)


_piece = st.sampled_from(SHAPES + ["a", "B", " ", "\t", "\n", "\r", ".", "/", "'", "0", "é"])
_text = st.lists(_piece, min_size=20, max_size=80).map("".join)


@settings(max_examples=800, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_text)
def test_hypothesis_texts_of_shapes_match_regex(text):
    _assert_all_patterns([text, PLAIN + text])
