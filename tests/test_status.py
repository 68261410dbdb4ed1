"""The one C status -> exception map (errors.raise_for_status), read from the compiled library's codes."""
import pytest

from pybpe.errors import COUNT_OVERFLOW, TOO_BIG, raise_for_status

bpe_c = pytest.importorskip("pybpe._bpe_c", reason="the C extension is not built")
lib = bpe_c.lib


def test_success_codes_pass_through():
    assert raise_for_status(0, "x", lib) == 0
    assert raise_for_status(7, "x", lib) == 7


@pytest.mark.parametrize("code, cls, text", [
    ("BPE_ENOMEM", MemoryError, "out of memory"),
    ("BPE_EINVAL", ValueError, "invalid argument"),
    ("BPE_ETOOBIG", OverflowError, TOO_BIG),
    ("BPE_EOVERFLOW", OverflowError, COUNT_OVERFLOW),
])
def test_each_code_has_its_exception(code, cls, text):
    with pytest.raises(cls) as info:
        raise_for_status(getattr(lib, code), "Thing.call", lib)
    assert str(info.value) == "Thing.call: " + text


def test_invalid_text_is_the_callers_and_unknown_codes_are_named():
    with pytest.raises(ValueError, match="^encoding: a byte has no token$"):
        raise_for_status(lib.BPE_EINVAL, "encoding", lib, "a byte has no token")
    unknown = min(getattr(lib, n) for n in ("BPE_ENOMEM", "BPE_EINVAL", "BPE_ETOOBIG", "BPE_EOVERFLOW")) - 1
    with pytest.raises(RuntimeError, match="C core status %d" % unknown):
        raise_for_status(unknown, "x", lib)
