"""Benchmark fixtures: the shared corpus (skipping cleanly without it).

Benchmarks live apart from tests/ so `make test` stays quick; `make bench`
runs them.  Each benchmark checks that the backends it compares give the same
output before it times anything.
"""
import os

import pytest

SHARED_DATA = os.environ.get("PYBPE_SHARED_DATA") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")


def shared_path(name):
    return os.path.join(SHARED_DATA, name)


@pytest.fixture(scope="session")
def shakespeare_text():
    path = shared_path("shakespeare.txt")
    if not os.path.exists(path):
        pytest.skip("shared corpus %s is absent" % path)
    with open(path, encoding="utf-8") as f:
        return f.read()
