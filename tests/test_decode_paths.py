"""Decoding's C way (pybpe._pylists' bytes table: join_bytes, token_bytes)
against the plain one: every shipped encoding's tokens looked up one by one
in its decoder dict.  The C way takes lists and tuples of plain ints that
name tokens; anything else (a bool, a NumPy integer, a gap, a negative or
too large ID) must come out exactly as the Python way has it, which the
C way hands it to by answering None."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pybpe
from pybpe import core as backends
from pybpe.registry import get_encoding

BACKENDS = backends.available()
NAMES = ["gpt2", "cl100k_base", "o200k_base"]


def _pylists():
    if "c" not in BACKENDS:
        pytest.skip("the C backend is not built")
    from pybpe import _pylists  # late: built with the C extension
    if not hasattr(_pylists, "join_bytes"):
        pytest.skip("pybpe._pylists is not built")
    return _pylists


_DECODERS = {}


def _reference(enc, ids):
    # The plain way: each ID in the decoder dict, in order (the dict made
    # once per encoding: o200k's takes a while under valgrind).
    decoder = _DECODERS.get(enc.name)
    if decoder is None:
        decoder = {i: t for t, i in enc._mergeable_ranks.items()}
        decoder.update((i, s.encode("utf-8")) for s, i in enc.special_tokens.items())
        _DECODERS[enc.name] = decoder
    return [decoder[i] for i in ids]


def _outcome(call):
    # A result, or the type of what was raised, to compare two ways by.
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 -- the type is what is compared
        return type(exc)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_c_decoding_equals_the_decoder_dict_on_every_encoding(name, data):
    encs = {b: get_encoding(name, backend=b) for b in BACKENDS}
    top = max(encs[BACKENDS[0]].special_tokens.values())
    valid = st.integers(0, encs[BACKENDS[0]].n_vocab - 1).filter(
        lambda i: i in encs[BACKENDS[0]]._decoder)
    ids = data.draw(st.lists(st.one_of(valid, st.sampled_from(sorted(encs[BACKENDS[0]].special_tokens.values()))),
                             max_size=300))
    expected = _reference(encs[BACKENDS[0]], ids)
    for enc in encs.values():
        assert enc.decode_bytes(ids) == b"".join(expected)
        assert enc.decode_bytes(tuple(ids)) == b"".join(expected)
        assert enc.decode_tokens_bytes(ids) == expected
        assert enc.decode(ids, errors="surrogateescape") == b"".join(expected).decode("utf-8", "surrogateescape")
        assert enc.decode_batch([ids, ids[:7]]) == [enc.decode(ids), enc.decode(ids[:7])]
    # One bad item anywhere: the same outcome on every backend, the Python
    # way's (a gap, a negative, too large, a float, a str; bool and NumPy
    # ints are IDs there).
    bad = data.draw(st.sampled_from([-1, top + 1, 2**40, 2**70, -2**70, 1.0, "1", None, True, False]))
    at = data.draw(st.integers(0, len(ids)))
    mixed = ids[:at] + [bad] + ids[at:]
    outcomes = {b: (_outcome(lambda: e.decode_bytes(mixed)), _outcome(lambda: e.decode_tokens_bytes(mixed)),
                    _outcome(lambda: e.decode(mixed))) for b, e in encs.items()}
    assert len(set(map(repr, outcomes.values()))) == 1, outcomes


def test_c_decoding_handles_every_gap_of_cl100k_and_numpy_ids():
    # cl100k has no token at 100256 nor at 100261-100275, between its
    # specials: the dict says so on both ways, with the same error.
    numpy = pytest.importorskip("numpy")
    for backend in BACKENDS:
        enc = get_encoding("cl100k_base", backend=backend)
        for gap in [100256] + list(range(100261, 100276)):
            with pytest.raises(pybpe.InvalidTokenError):
                enc.decode([15339, gap])
            with pytest.raises(pybpe.InvalidTokenError):
                enc.decode_tokens_bytes([gap])
        ids = enc.encode("hello <|endoftext|> world", allowed_special="all")
        as_numpy = [numpy.int64(i) for i in ids]
        assert enc.decode(as_numpy) == enc.decode(ids) == "hello <|endoftext|> world"
        assert enc.decode_tokens_bytes(as_numpy) == enc.decode_tokens_bytes(ids)


def test_only_the_c_backend_decodes_through_the_bytes_table():
    _pylists()
    enc = get_encoding("gpt2", backend="c")
    enc.decode([31373])  # the first decode makes the table
    assert enc._join_ids is not None and enc._each_id is not None
    assert enc._join_ids([31373, 995]) == b"hello world"
    assert enc._each_id((31373, 995)) == [b"hello", b" world"]
    assert enc._join_ids([True]) is None and enc._join_ids([-1]) is None
    if "python" in BACKENDS:
        py = get_encoding("gpt2", backend="python")
        py.decode([31373])
        assert py._join_ids is None and py._each_id is None  # the pure-Python backend stays pure


@settings(max_examples=200, deadline=None)
@given(lengths=st.lists(st.integers(0, 40), min_size=1, max_size=24), data=st.data())
def test_join_bytes_copies_tokens_of_every_length_exactly(lengths, data):
    # Tokens of 0-40 bytes, gaps among them: join_bytes copies a short token
    # as 16 bytes at once where the output has room, so every length at
    # every distance from the output's end must come out exact.
    pl = _pylists()
    by_id = [None if n == 0 and k % 2 else bytes((k * 7 + j) % 256 for j in range(n))
             for k, n in enumerate(lengths)]
    table = pl.new_bytes_table(by_id)
    named = [k for k, t in enumerate(by_id) if t is not None]
    if not named:
        assert pl.join_bytes(table, [0]) is None
        return
    ids = data.draw(st.lists(st.sampled_from(named), max_size=60))
    assert pl.join_bytes(table, ids) == b"".join(by_id[i] for i in ids)
    assert pl.join_bytes(table, tuple(ids)) == b"".join(by_id[i] for i in ids)
    assert pl.token_bytes(table, ids) == [by_id[i] for i in ids]
    assert all(a is b for a, b in zip(pl.token_bytes(table, ids), (by_id[i] for i in ids)))


def test_join_bytes_answers_none_for_what_it_does_not_take():
    pl = _pylists()
    table = pl.new_bytes_table([b"a", None, b"bc"])
    assert pl.join_bytes(table, [0, 2, 0]) == b"abca"
    for ids in ([1], [3], [-1], [True], [2**63], [2**80], [0.0], ["0"], [None]):
        assert pl.join_bytes(table, ids) is None, ids
        assert pl.token_bytes(table, ids) is None, ids
    for ids in ("ab", b"ab", range(2), iter([0]), {0: 1}):
        assert pl.join_bytes(table, ids) is None
    assert pl.join_bytes(table, []) == b"" and pl.token_bytes(table, ()) == []
    with pytest.raises(TypeError):
        pl.new_bytes_table([b"a", "b"])
    with pytest.raises(TypeError):
        pl.new_bytes_table((b"a",))
    with pytest.raises(ValueError):  # no bytes table: what every capsule of the module says
        pl.join_bytes(object(), [0])
    with pytest.raises(ValueError):
        pl.join_bytes(pl.new_table(4), [0])


def test_numpy_arrays_of_ids_decode_in_place_as_their_lists_do():
    # join_at reads 4- and 8-byte integers in place; every other array (other
    # widths, strided, swapped bytes, a masked array, two dimensions) and any
    # negative, gap or unknown ID go the Python way.  Every backend, every
    # case: the same bytes, or the same error, as the array's tolist().
    numpy = pytest.importorskip("numpy")
    ids = get_encoding("cl100k_base").encode("hello <|endoftext|> world of ids", allowed_special="all")
    in_place = [numpy.array(ids, dtype=d) for d in (numpy.uint32, numpy.int32, numpy.uint64, numpy.int64)]
    in_place.append(numpy.array([ids, ids], dtype=numpy.uint32)[1])  # a row: contiguous
    other_way = [numpy.array(ids, dtype=numpy.int64)[::2],
                 numpy.array(ids, dtype=numpy.uint32).byteswap().view(numpy.dtype(numpy.uint32).newbyteorder()),
                 numpy.ma.masked_array(ids, mask=[0] * len(ids)), numpy.array([15339, 1917], dtype=numpy.uint16)]
    failing = [numpy.array(ids + [-1], dtype=numpy.int64), numpy.array(ids + [-1], dtype=numpy.int32),
               numpy.array(ids + [100256], dtype=numpy.uint32), numpy.array(ids + [2**40], dtype=numpy.uint64),
               numpy.array(ids + [2**32 - 1], dtype=numpy.uint32), numpy.array([ids, ids], dtype=numpy.uint32)]
    arrays = in_place + other_way + failing + [numpy.array([], dtype=numpy.uint32)]
    for backend in BACKENDS:
        enc = get_encoding("cl100k_base", backend=backend)
        enc.decode([15339])  # the first decode makes the C table
        for array in arrays:
            expected = _outcome(lambda: enc.decode_bytes(array.tolist()))
            assert _outcome(lambda: enc.decode_bytes(array)) == expected, (backend, array.dtype, array)
            assert _outcome(lambda: enc.decode(array)) == _outcome(lambda: enc.decode(array.tolist()))
    if "c" in BACKENDS:
        enc = get_encoding("cl100k_base", backend="c")
        for array in in_place:  # read in place, not through tolist()
            assert enc._join_array(array) == enc.decode_bytes(ids)
        for array in other_way + failing:
            assert enc._join_array(array) is None


def _offsets_by_definition(pieces):
    # tiktoken's decode_with_offsets, written plainly: a token's offset is
    # the number of characters begun before it, less one when it starts
    # inside a character, never below 0.
    offsets, begun = [], 0
    for piece in pieces:
        offsets.append(max(0, begun - (len(piece) > 0 and 0x80 <= piece[0] < 0xC0)))
        begun += sum(1 for b in piece if not 0x80 <= b < 0xC0)
    return offsets


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.characters(codec="utf-8"), max_size=60), data=st.data())
def test_byte_offsets_follow_tiktokens_definition(text, data):
    from pybpe.flavours import byte_offsets

    raw = text.encode("utf-8")
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=20)))
    pieces = [raw[a:b] for a, b in zip([0] + cuts, cuts + [len(raw)])]
    pieces += data.draw(st.lists(st.sampled_from(pieces), max_size=5)) if raw else []  # pieces come again
    joined = b"".join(pieces)
    try:
        expected = joined.decode("utf-8")
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            byte_offsets(pieces)
        return
    assert byte_offsets(pieces) == (expected, _offsets_by_definition(pieces))
