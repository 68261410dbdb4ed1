"""The word-at-a-time paths of the C scanners (csrc/pretok.c) against the
regex module, for all three patterns.  The scanners classify ASCII eight
bytes at a time (sixteen with SSE2, 64 at once in the window that cuts a run
of pieces), so what could go wrong is where a word starts or stops: runs
of each class of every length across the 8-byte lanes, runs that end at the
end of the text, ASCII runs that meet a non-ASCII character (which may or may
not continue the run), the apostrophe contractions in either case, digit runs
of 1-3 and more, whitespace runs before letters and newlines.  (Reads past
the end of the text are the C self-tests' job, under ASan: csrc/tests/.)"""
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pybpe import _unicode

from conftest import c_core, c_scanners




# The C scanners cut a run of pieces with a 64-byte window of classified
# ASCII (pretok.c), which they start only where eight ASCII bytes follow, and
# gpt2 cuts whole blocks of 64 bytes where 64 bytes are left: so each text is
# also tried after this ASCII lead-in, which puts the window over all of it,
# and then before a tail that gives every block in it its 64 bytes.
LEAD = "a window, "
TAIL = " and then a tail of plain words, long enough for a block of 64 bytes"


def _assert_all_patterns(texts):
    c = c_core()
    for preset, pattern in c_scanners():
        for text in texts:
            for whole in (text, LEAD + text, LEAD + text + TAIL):
                assert c.split(whole, preset) == _unicode.split(pattern, whole), (preset, whole)


# One character of each ASCII class the scanners' lanes tell apart (and the
# ones the patterns single out: apostrophe, CR, LF, "/"), and non-ASCII
# characters of every class: letters of each case and caseless, a mark, a
# digit, punctuation, spaces (NBSP, NEL, ideographic space).
RUNS = ["a", "Z", "aB", "Ab", "0", " ", "\t", "\n", "\r", "\r\n", " \t", ".", "!?", "'", "/", "\x00", "\x7f"]
NON_ASCII = ["é", "É", "ǅ", "ʰ", "漢", "\u0301", "٣", "½", "—", "\u00a0", "\x85", "\u3000", "\U0001f642", "ſ"]
FOLLOWERS = [""] + RUNS + NON_ASCII


def test_runs_across_every_lane_and_to_the_end():
    # A run of 1..19 characters (more than two words), after 0..8 bytes of
    # something else (every start lane), followed by the end of the text or
    # by a character of any class.
    texts = []
    for run, length, lead in itertools.product(RUNS, range(1, 20), range(9)):
        body = (run * length)[:max(length, len(run))]
        for before in ("x" * lead, "." * lead, " " * lead):
            for after in FOLLOWERS:
                texts.append(before + body + after)
    _assert_all_patterns(texts)


def test_non_ascii_at_every_lane_of_an_ascii_run():
    # A non-ASCII character inside or right after an ASCII run, at each of
    # the 16 positions of two words: it may continue the run (a letter after
    # letters, a mark, a non-ASCII space), end it, or take the prefix.
    texts = []
    for run in ("abcdefghijklmnopq", "ABCDEFGHIJKLMNOPQ", "HTTPServerHandler", "0123456789012345",
                "                 ", "...,,,;;;!!!???..", "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"):
        for k, ch in itertools.product(range(17), NON_ASCII):
            texts.append(run[:k] + ch + run[k:])
            texts.append(" " + run[:k] + ch)
    _assert_all_patterns(texts)


def test_contractions_in_every_case():
    # 's 't 're 've 'm 'll 'd, each letter in either case (cl100k and o200k
    # take them case-insensitively, gpt2 only in lower case), after letters
    # of each kind, after nothing, a space or a digit, before the end,
    # letters, a space or a non-ASCII letter.
    texts = []
    for suffix in ("s", "t", "re", "ve", "m", "ll", "d", "x", "S'"):
        for cased in {"".join(c) for c in itertools.product(*[(ch, ch.upper()) for ch in suffix])}:
            for before in ("", "don", "DON", "Don", " it", "é", "漢", " ", "1", "'", "abcdefgh"):
                for after in ("", "a", "A", " ", "é", "'", "\n", "1"):
                    texts.append(before + "'" + cased + after)
    _assert_all_patterns(texts)


def test_digit_runs_of_every_length():
    # cl100k and o200k take digits three at a time, gpt2 the whole run.
    texts = []
    for n in range(1, 20):
        for before in ("", " ", "a", "x ", "$", "٣"):
            for after in ("", "a", " ", ".", "٣", "½", "\n"):
                texts.append(before + "1234567890123456789"[:n] + after)
    _assert_all_patterns(texts)


def test_whitespace_runs_before_letters_and_newlines():
    # \s+(?!\S) leaves the last space to the word after; cl100k and o200k cut
    # runs that hold CR or LF after the last of them.
    texts = []
    spaces = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\u00a0", "\u3000", "\x85"]
    for n in range(1, 18):
        for fill in spaces:
            for tail in ("", " ", "\n", "\r\n", "\t"):
                run = fill * n + tail
                for after in ("", "a", "A", "é", "1", ".", "'s", "漢", "\u0301"):
                    texts.append(run + after)
                    texts.append("x" + run + after)
    _assert_all_patterns(texts)


# Random texts built from runs of one class, of any length, with the
# characters above between them.
_run = st.builds(lambda s, n: s * n, st.sampled_from(RUNS + NON_ASCII + ["'s", "'LL", "'Re", "'ve"]),
                 st.integers(1, 17))
_text = st.lists(st.one_of(_run, st.sampled_from(FOLLOWERS)), max_size=12).map("".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_text)
def test_runs_of_random_classes_match_regex(text):
    _assert_all_patterns([text])
