"""Shared test fixtures: where the big corpora live, skipping cleanly without them.

The project's shared data folder sits beside the checkout (../shared/data);
PYBPE_SHARED_DATA points elsewhere (CI uses it when it runs a copy of the
tests outside the source tree).
"""
import functools
import os

import pytest

SHARED_DATA = os.environ.get("PYBPE_SHARED_DATA") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")


def shared_path(name):
    """Path of a file in the shared data folder (it may not exist)."""
    return os.path.join(SHARED_DATA, name)


@functools.lru_cache(maxsize=None)
def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def shakespeare():
    """The 9.5 MB Shakespeare corpus as one str (read once); the calling
    test is skipped without it."""
    path = shared_path("shakespeare.txt")
    if not os.path.exists(path):
        pytest.skip("shared corpus %s is absent" % path)
    return _read(path)


@pytest.fixture(scope="session")
def shakespeare_text():
    """shakespeare() as a fixture."""
    return shakespeare()


def pytest_configure(config):
    # Registered here as well as in pyproject.toml: CI also runs a copy of the
    # tests outside the source tree, where pyproject.toml is not read.
    config.addinivalue_line("markers", "slow: long tests on the full corpus or timing growth")
