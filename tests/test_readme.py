"""The README's Python examples are real: run them as doctests.

Skipped only when the tests run from a copy without the README next to them
(CI's installed-package run).
"""
import doctest
import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def test_readme_examples(tmp_path, monkeypatch):
    if not os.path.exists(README):
        pytest.skip("README.md is not beside this copy of the tests")
    with open(README, encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)
    assert blocks, "the README should show Python examples"
    monkeypatch.chdir(tmp_path)  # the examples save files
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    test = parser.get_doctest("\n".join(blocks), {}, "README.md", README, 0)
    assert test.examples
    result = runner.run(test)
    assert result.failed == 0, "%d README example(s) failed (see output above)" % result.failed
