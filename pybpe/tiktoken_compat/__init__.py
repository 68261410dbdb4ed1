"""`import tiktoken` answered by pybpe, for code that cannot be edited.

pybpe's own names already match tiktoken's (pybpe.get_encoding,
pybpe.encoding_for_model, pybpe.Encoding ...), so new code just imports
pybpe.  This package is for code that says `import tiktoken` or
`from tiktoken.load import load_tiktoken_bpe` and cannot be changed: it is a
module with tiktoken's public names, and install() makes it and its
submodules what those imports find.

    import pybpe.tiktoken_compat
    pybpe.tiktoken_compat.install()
    import tiktoken                     # pybpe from here on
    enc = tiktoken.get_encoding("o200k_base")

What resolves where after install():
    tiktoken            this package: Encoding, get_encoding,
                        list_encoding_names, encoding_for_model,
                        encoding_name_for_model, and the submodules below
    tiktoken.core       pybpe.encoding (Encoding)
    tiktoken.registry   pybpe.registry (get_encoding, list_encoding_names)
    tiktoken.model      pybpe.model (the model-name tables)
    tiktoken.load       pybpe.tiktoken_compat.load (load_tiktoken_bpe,
                        dump_tiktoken_bpe, data_gym_to_mergeable_bpe_ranks)
Not provided: tiktoken_ext (pybpe's plugins live in pybpe_ext, see
pybpe.registry) and anything that downloads.

    >>> from pybpe import tiktoken_compat as tiktoken
    >>> tiktoken.encoding_for_model("gpt-4o").encode("hello world")
    [24912, 2375]
"""
import sys

from .. import __version__
from .. import encoding as core
from .. import model, registry
from . import load
from ..encoding import Encoding
from ..model import encoding_for_model, encoding_name_for_model
from ..registry import get_encoding, list_encoding_names

# The names `import tiktoken` code uses, and the modules behind them.
MODULES = {"tiktoken": __name__, "tiktoken.core": core.__name__, "tiktoken.registry": registry.__name__,
           "tiktoken.model": model.__name__, "tiktoken.load": load.__name__}


def install():
    """Make `import tiktoken` (and tiktoken.core, .registry, .model, .load)
    find pybpe in this interpreter.  Replaces a tiktoken already imported;
    modules that imported it before keep their reference.  Idempotent."""
    for alias, module_name in MODULES.items():
        sys.modules[alias] = sys.modules[module_name]


__all__ = ["Encoding", "get_encoding", "list_encoding_names", "encoding_for_model", "encoding_name_for_model",
           "install", "core", "registry", "model", "load", "__version__"]
