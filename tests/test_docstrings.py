"""The examples in pybpe's docstrings are real: run each module's doctests,
and they leave nothing behind in the temporary folder (a user copies them).

The C-wrapper modules (pybpe.core.native) need the extension and are skipped
without it; their pure-Python twins always run.
"""
import doctest
import importlib
import os
import pkgutil
import tempfile

import pytest

import pybpe
from pybpe import core as backends

_NEEDS_C = {"pybpe.core.native", "pybpe.core.native.core", "pybpe.core.native.ranks", "pybpe._bpe_c"}
MODULES = sorted(m.name for m in pkgutil.walk_packages(pybpe.__path__, "pybpe.")
                 if m.name not in ("pybpe.__main__", "pybpe._build"))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name, tmp_path, monkeypatch):
    if name in _NEEDS_C and "c" not in backends.available():
        pytest.skip("the C extension is not built")
    module = importlib.import_module(name)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=True)
    assert result.failed == 0, "%d of %d doctests failed in %s" % (result.failed, result.attempted, name)
    assert sorted(os.listdir(scratch)) == [], "%s's examples left files in the temporary folder" % name
