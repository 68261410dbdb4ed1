"""The README's examples are real: its Python examples run as doctests, its
command-line session (```console blocks) runs through bash.

Skipped only when the tests run from a copy without the README next to them
(CI's installed-package run).
"""
import doctest
import os
import re
import shutil
import subprocess
import sys

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


def console_examples(text):
    """[(command, expected output)] from the README's ```console blocks:
    a line starting "$ " is a command, the lines after it its output."""
    examples = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                examples.append([line[2:], []])
            else:
                examples[-1][1].append(line)
    return [(command, "\n".join(out) + "\n" if out else "") for command, out in examples]


def _matches(expected, got):
    """`expected` equals `got`, where "..." in `expected` stands for any text on its line."""
    pattern = ".*?".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, got) is not None


def test_readme_command_lines(tmp_path):
    """The README's command-line session, run in order through bash with the
    installed `pybpe` first on PATH, from a folder laid out like the
    repository's root (pybpe/data/hamlet.txt); stdout and stderr together
    must be what the README shows."""
    if not os.path.exists(README):
        pytest.skip("README.md is not beside this copy of the tests")
    with open(README, encoding="utf-8") as f:
        examples = console_examples(f.read())
    assert examples, "the README should show the command line"
    import pybpe

    (tmp_path / "pybpe" / "data").mkdir(parents=True)
    shutil.copy(os.path.join(os.path.dirname(pybpe.__file__), "data", "hamlet.txt"), tmp_path / "pybpe" / "data")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("NO_COLOR", None)
    for command, expected in examples:
        done = subprocess.run(["bash", "-c", command], cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=300)
        got = done.stdout.decode("utf-8")
        assert _matches(expected, got), "README: $ %s\nexpected:\n%s\ngot:\n%s" % (command, expected, got)
