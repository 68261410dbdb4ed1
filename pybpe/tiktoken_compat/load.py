"""tiktoken.load's functions with tiktoken's signatures, on pybpe's loaders.

Paths only: pybpe never downloads, so a URL is refused with a ValueError
saying so.  expected_hash is checked like tiktoken checks it (sha256 of the
file's bytes).
"""
import os

from .. import formats
from ..errors import FormatError
from ..registry import file_sha256


def _local(path, expected_hash):
    path = os.fspath(path)
    if "://" in path:
        raise ValueError("%s: pybpe never downloads; pass the path of a local copy" % path)
    if expected_hash is not None:
        actual = file_sha256(path)
        if actual != expected_hash:
            raise FormatError("%s: sha256 is %s, expected %s (a different or damaged file)"
                              % (path, actual, expected_hash))
    return path


def load_tiktoken_bpe(tiktoken_bpe_file, expected_hash=None):
    """{token bytes: rank} from a .tiktoken file (pybpe.load_tiktoken_bpe)."""
    return formats.load_tiktoken_bpe(_local(tiktoken_bpe_file, expected_hash))


def dump_tiktoken_bpe(bpe_ranks, tiktoken_bpe_file):
    """Write {token bytes: rank} as a .tiktoken file (pybpe.dump_tiktoken_bpe)."""
    formats.dump_tiktoken_bpe(bpe_ranks, tiktoken_bpe_file)


def data_gym_to_mergeable_bpe_ranks(vocab_bpe_file, encoder_json_file, vocab_bpe_hash=None,
                                    encoder_json_hash=None):
    """{token bytes: rank} from GPT-2's vocab.bpe and encoder.json (special
    tokens left out), through pybpe.load_gpt2_bpe.  Note tiktoken's argument
    order: the merges file first."""
    enc = formats.load_gpt2_bpe(_local(encoder_json_file, encoder_json_hash),
                                _local(vocab_bpe_file, vocab_bpe_hash), backend="python")
    return enc.mergeable_ranks
