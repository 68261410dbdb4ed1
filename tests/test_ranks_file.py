"""pybpe._ranks_file.parse (csrc/pyext/ranks_file.c) against the loader's
Python loop (pybpe.formats._tiktoken_lines): on every shipped rank file and
on files of every odd shape, load_tiktoken_bpe must give what the loop
gives -- the same dict in the same order, or the same FormatError --
whichever of the two read it."""
import base64
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pybpe
from pybpe import formats

DATA = os.path.join(os.path.dirname(pybpe.__file__), "data")


def _parse():
    try:
        from pybpe._ranks_file import parse
    except ImportError:
        pytest.skip("pybpe._ranks_file is not built")
    return parse


def _outcome(call):
    try:
        result = call()
    except formats.FormatError as exc:
        return ("error", str(exc))
    return ("ranks", list(result.items()))


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(DATA) if f.endswith(".tiktoken")))
def test_every_shipped_rank_file_reads_the_same_in_c(name):
    parse = _parse()
    path = os.path.join(DATA, name)
    with open(path, "rb") as f:
        data = f.read()
    ranks = parse(data, formats._MAX_ID)
    assert ranks is not None  # the shipped files are all plain lines
    assert list(ranks.items()) == list(formats._tiktoken_lines(path, data).items())
    assert list(formats.load_tiktoken_bpe(path).items()) == list(ranks.items())


def test_parse_answers_none_for_every_line_it_does_not_take():
    parse = _parse()
    good = b"YQ== 0\nYg== 1\n"
    assert parse(good, 10) == {b"a": 0, b"b": 1}
    assert parse(b"YQ== 0\r\n\r\n\nYg== 007\r\r\n", 10) == {b"a": 0, b"b": 7}
    for odd in (b"", b"\n\n", b"YQ==  0\n", b"YQ==\t0\n", b" YQ== 0\n", b"YQ== 0 \n", b"YQ 0\n", b"YQ= 0\n",
                b"YR== 0\n", b"YWJ= 0\n", b"=YQ= 0\n", b"Y=Q= 0\n", b"YQ==YQ== 0\n", b"YQ== \n", b"YQ== -1\n",
                b"YQ== 1a\n", b"YQ== 12345678901\n", b"YQ== 11\n", b"YQ== 0\nYQ== 1\n", b"YQ== 0\nYg==\n",
                b"\xff== 0\n", b"YQ== \xd9\xa1\n", b"YQ== 0 1\n", b"   \n"):
        assert parse(odd, 10) is None, odd
    assert parse(b"YQ== 0\nYg== 0\n", 10) == {b"a": 0, b"b": 0}  # ranks twice: the caller's check
    with pytest.raises(TypeError):
        parse("YQ== 0\n", 10)


_TOKENS = st.binary(min_size=1, max_size=6)
_LINE_STYLES = ["plain", "crlf", "blank", "spaces", "tab", "lead", "trail", "nopad", "badbits", "zeros",
                "letters", "huge", "long", "empty"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=st.lists(_TOKENS, min_size=0, max_size=12), data=st.data())
def test_load_tiktoken_bpe_reads_odd_files_as_its_loop_does(tmp_path_factory, tokens, data):
    lines = []
    for rank, token in enumerate(tokens):
        style = data.draw(st.sampled_from(_LINE_STYLES))
        b64 = base64.b64encode(token)
        number = b"%d" % rank
        if style == "nopad":
            b64 = b64.rstrip(b"=")
        elif style == "badbits" and b64.endswith(b"="):
            b64 = b64[:-3] + bytes([b64[-3] ^ 1]) + b64[-2:] if b64.endswith(b"==") else b64
        elif style == "zeros":
            number = b"000" + number
        elif style == "letters":
            number = number + b"x"
        elif style == "huge":
            number = b"%d" % (2**32 + rank)
        elif style == "long":
            number = b"12345678901"
        separator = {"spaces": b"   ", "tab": b"\t"}.get(style, b" ")
        line = b64 + separator + number
        line = {"lead": b" " + line, "trail": line + b"  ", "empty": b""}.get(style, line)
        lines.append(line + (b"\r\n" if style == "crlf" else b"\n") + (b"\n" if style == "blank" else b""))
    if tokens and data.draw(st.booleans()):
        lines.append(data.draw(st.sampled_from(lines)))  # a line again: a token (and rank) twice
    path = str(tmp_path_factory.mktemp("ranks") / "odd.tiktoken")
    with open(path, "wb") as f:
        f.write(b"".join(lines))
    with open(path, "rb") as f:
        raw = f.read()
    assert _outcome(lambda: formats.load_tiktoken_bpe(path)) == _outcome(lambda: formats._tiktoken_lines(path, raw))
