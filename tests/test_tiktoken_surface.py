"""The whole tiktoken surface: every OpenAI encoding, model names, plugins and
tiktoken's less common Encoding methods, compared with tiktoken itself.

tiktoken is always built offline from pybpe's shipped rank files (never
tiktoken.get_encoding, which downloads).  Tests needing tiktoken skip when it
is not installed.  Text: Shakespeare, the standard library's own Python
source, multilingual text and hypothesis text over every Unicode category,
on both backends.
"""
import glob
import os
import pickle
import subprocess
import sys
import sysconfig

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pybpe
from pybpe import _backend, model, registry
from pybpe.formats import load_tiktoken_bpe
from pybpe.registry import get_encoding, list_encoding_names
from conftest import shakespeare

BACKENDS = _backend.available()
DATA = os.path.join(os.path.dirname(os.path.abspath(pybpe.__file__)), "data")
NAMES = list(registry._BUILTIN)
# Names with distinct (ranks, pattern) pairs: parity on these covers the rest.
DISTINCT = ["gpt2", "p50k_base", "cl100k_base", "o200k_base"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


_TIKTOKEN = {}


def tiktoken_encoding(name):
    """tiktoken.Encoding for a built-in name, from pybpe's shipped rank file
    and tiktoken's own loader (no download)."""
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load

    if name not in _TIKTOKEN:
        filename, pat, specials, n_vocab = registry._BUILTIN[name]
        ranks = tiktoken.load.load_tiktoken_bpe(os.path.join(DATA, filename),
                                                expected_hash=registry._FILES[filename])
        _TIKTOKEN[name] = tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens=specials,
                                            explicit_n_vocab=n_vocab)
    return _TIKTOKEN[name]


# -- the registry ---------------------------------------------------------------------

# Facts from tiktoken_ext/openai_public.py, written out so that a typo in the
# registry shows: (n_vocab, number of special tokens, one special token, its ID).
EXPECTED = {
    "gpt2": (50257, 1, "<|endoftext|>", 50256),
    "r50k_base": (50257, 1, "<|endoftext|>", 50256),
    "p50k_base": (50281, 1, "<|endoftext|>", 50256),
    "p50k_edit": (50284, 4, "<|fim_suffix|>", 50283),
    "cl100k_base": (100277, 5, "<|endofprompt|>", 100276),
    "o200k_base": (200019, 2, "<|endofprompt|>", 200018),
    "o200k_harmony": (201088, 1091, "<|call|>", 200012),
}


@pytest.mark.parametrize("name", NAMES)
def test_builtin_encodings_are_tiktokens(name):
    enc = get_encoding(name)
    n_vocab, n_special, token, token_id = EXPECTED[name]
    assert enc.name == name and enc.n_vocab == n_vocab and enc.max_token_value == n_vocab - 1
    assert len(enc.special_tokens) == n_special and enc.special_tokens[token] == token_id
    tk = tiktoken_encoding(name)
    assert enc.special_tokens == tk._special_tokens
    assert enc.n_vocab == tk.n_vocab and enc.eot_token == tk.eot_token
    assert enc.encode("hello world <|endoftext|>", allowed_special="all") == \
        tk.encode("hello world <|endoftext|>", allowed_special="all")


def test_o200k_harmony_specials():
    enc = get_encoding("o200k_harmony")
    assert enc.mergeable_ranks is not None and len(enc._mergeable_ranks) == 199998
    assert set(enc.special_tokens.values()) == set(range(199998, 201088))
    for token, i in [("<|startoftext|>", 199998), ("<|return|>", 200002), ("<|constrain|>", 200003),
                     ("<|channel|>", 200005), ("<|start|>", 200006), ("<|end|>", 200007),
                     ("<|message|>", 200008), ("<|reserved_200000|>", 200000), ("<|reserved_201087|>", 201087)]:
        assert enc.special_tokens[token] == i
    # two names for 200018, as in tiktoken; it decodes to o200k_base's name
    assert enc.special_tokens["<|reserved_200018|>"] == enc.special_tokens["<|endofprompt|>"] == 200018
    assert enc.decode([200018]) == "<|endofprompt|>"
    ids = enc.encode("<|start|>user<|message|>hi<|end|>", allowed_special="all")
    assert ids == [200006, 1428, 200008, 3686, 200007]


def test_rank_files_ship_and_are_checked(tmp_path):
    for filename, sha in registry._FILES.items():
        assert registry._sha256(os.path.join(DATA, filename)) == sha
    # a damaged copy is refused, naming the file
    bad = tmp_path / "o200k_base.tiktoken"
    data = open(os.path.join(DATA, "o200k_base.tiktoken"), "rb").read()
    bad.write_bytes(data[:-3] + b"99\n")
    with pytest.raises(pybpe.FormatError, match="o200k_base.tiktoken: sha256"):
        get_encoding("o200k_base", path=bad)


def test_aliases_share_their_ranks():
    assert get_encoding("gpt2")._mergeable_ranks == get_encoding("r50k_base")._mergeable_ranks
    assert get_encoding("o200k_harmony").encode("hello") == get_encoding("o200k_base").encode("hello")
    # p50k adds runs of spaces to gpt2's ranks
    assert get_encoding("p50k_edit").encode("x   y") == get_encoding("p50k_base").encode("x   y") == [87, 50257, 331]
    assert get_encoding("gpt2").encode("x   y") == [87, 220, 220, 331]


def test_get_encoding_errors():
    with pytest.raises(ValueError, match="unknown encoding 'o300k_base'.*o200k_harmony"):
        get_encoding("o300k_base")
    with pytest.raises(ValueError, match="must be a str"):
        get_encoding(None)


def test_pickled_registry_encodings_travel_by_name(backend):
    enc = get_encoding("o200k_base", backend=backend)
    data = pickle.dumps(enc)
    assert len(data) < 200  # the name, not 200,000 ranks
    clone = pickle.loads(data)
    assert clone.encode("hello world") == enc.encode("hello world") and clone.backend == backend
    custom = pybpe.Encoding("custom", pat_str=enc.pat_str, mergeable_ranks=enc._mergeable_ranks,
                            special_tokens={"<|x|>": 300000}, backend=backend)
    assert pickle.loads(pickle.dumps(custom)).encode("<|x|>", allowed_special="all") == [300000]


# -- encodings of one's own -----------------------------------------------------------

def _toy_constructor(name="toy_registered"):
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    return lambda: {"name": name, "pat_str": r"\w+|\W", "mergeable_ranks": ranks,
                    "special_tokens": {"<|end|>": 257}}


def test_register_encoding(backend, monkeypatch):
    monkeypatch.setattr(registry, "_registered", {})
    calls = []

    def constructor():
        calls.append(1)
        return _toy_constructor()()
    pybpe.register_encoding("toy_registered", constructor)
    enc = get_encoding("toy_registered", backend=backend)
    assert enc.encode("abab<|end|>", allowed_special="all") == [256, 256, 257]
    assert get_encoding("toy_registered", backend=backend) is enc and len(calls) == 1
    assert "toy_registered" in list_encoding_names()
    assert pickle.loads(pickle.dumps(enc)).encode("ab") == [256]
    with pytest.raises(ValueError, match="already taken"):
        pybpe.register_encoding("toy_registered", constructor)
    with pytest.raises(ValueError, match="already taken"):
        pybpe.register_encoding("cl100k_base", constructor)
    with pytest.raises(TypeError, match="callable"):
        pybpe.register_encoding("other", {"name": "other"})
    with pytest.raises(ValueError, match="path= applies to the built-in"):
        get_encoding("toy_registered", path=os.path.join(DATA, "gpt2.tiktoken"))
    pybpe.register_encoding("not_a_dict", lambda: ["pat"])
    with pytest.raises(TypeError, match="'not_a_dict' returned list"):
        get_encoding("not_a_dict")


def _plugin_dir(tmp_path, body, module="my_encodings"):
    ns = tmp_path / registry.PLUGIN_NAMESPACE  # a namespace package: no __init__.py
    ns.mkdir()
    (ns / (module + ".py")).write_text(body)
    return str(tmp_path)


PLUGIN = '''
import pybpe
ENCODING_CONSTRUCTORS = {
    "plugin_gpt2_chat": lambda: {
        "name": "plugin_gpt2_chat",
        "pat_str": pybpe.get_encoding("gpt2").pat_str,
        "mergeable_ranks": pybpe.get_encoding("gpt2").mergeable_ranks,
        "special_tokens": {"<|endoftext|>": 50256, "<|im_start|>": 50257, "<|im_end|>": 50258},
    }
}
'''


def _run_python(code, path_entry):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([path_entry, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


def test_plugins_in_the_pybpe_ext_namespace(tmp_path):
    # A fresh interpreter, so this test's plugin is not left in the registry.
    path = _plugin_dir(tmp_path, PLUGIN)
    result = _run_python(
        "import pybpe\n"
        "enc = pybpe.get_encoding('plugin_gpt2_chat')\n"
        "print(enc.encode('<|im_start|>hi<|im_end|>', allowed_special='all'))\n"
        "print(pybpe.list_encoding_names()[-1])\n", path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["[50257, 5303, 50258]", "plugin_gpt2_chat"]


@pytest.mark.parametrize("body, message", [
    ("X = 1\n", "plugin pybpe_ext.my_encodings defines no ENCODING_CONSTRUCTORS"),
    ("ENCODING_CONSTRUCTORS = {'gpt2': dict}\n", "plugin pybpe_ext.my_encodings defines encoding 'gpt2'"),
])
def test_broken_plugins_say_which(tmp_path, body, message):
    result = _run_python("import pybpe\npybpe.get_encoding('anything')\n", _plugin_dir(tmp_path, body))
    assert result.returncode != 0 and message in result.stderr


# -- model names ------------------------------------------------------------------------

def test_model_tables_are_tiktokens():
    tmodel = pytest.importorskip("tiktoken.model")
    assert model.MODEL_TO_ENCODING == tmodel.MODEL_TO_ENCODING
    assert list(model.MODEL_PREFIX_TO_ENCODING.items()) == list(tmodel.MODEL_PREFIX_TO_ENCODING.items())


def test_model_names_map_as_in_tiktoken():
    tmodel = pytest.importorskip("tiktoken.model")
    names = list(model.MODEL_TO_ENCODING) + [p + "2025-01-01" for p in model.MODEL_PREFIX_TO_ENCODING]
    names += ["ft:gpt-4o-mini:org::id", "ft:gpt-4:org::id", "gpt-4o-mini", "gpt-5-nano", "o3-pro"]
    for name in names:
        assert pybpe.encoding_name_for_model(name) == tmodel.encoding_name_for_model(name), name
    for name in ["bert", "", "GPT-4", "llama-3"]:
        with pytest.raises(KeyError):
            tmodel.encoding_name_for_model(name)
        with pytest.raises(KeyError, match="map"):
            pybpe.encoding_name_for_model(name)


def test_encoding_for_model(backend):
    for model_name, name in [("gpt2", "gpt2"), ("text-davinci-003", "p50k_base"),
                             ("text-davinci-edit-001", "p50k_edit"), ("gpt-3.5-turbo-0301", "cl100k_base"),
                             ("gpt-4o", "o200k_base"), ("gpt-oss-120b", "o200k_harmony")]:
        enc = pybpe.encoding_for_model(model_name, backend=backend)
        assert enc.name == name and enc is get_encoding(name, backend=backend)
