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
from pybpe import core as backends, model, registry
from pybpe.registry import get_encoding, list_encoding_names
from conftest import offline_tiktoken, shakespeare

BACKENDS = backends.available()
DATA = os.path.join(os.path.dirname(os.path.abspath(pybpe.__file__)), "data")
NAMES = list(registry._BUILTIN)
# Names with distinct (ranks, pattern) pairs: parity on these covers the rest.
DISTINCT = ["gpt2", "p50k_base", "cl100k_base", "o200k_base"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


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
    tk = offline_tiktoken(name)
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
        assert registry.file_sha256(os.path.join(DATA, filename)) == sha
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


# -- parity with tiktoken on real text -------------------------------------------------

def _stdlib_files():
    root = sysconfig.get_paths()["stdlib"]
    return [p for p in sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True))
            if "site-packages" not in p]


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return ""


_CORPORA = {}


def corpus(kind):
    """Test text, built once: "prose" (the first 1 MB of Shakespeare),
    "python" (~600 KB of the standard library's own source) or
    "multilingual" (CPython's CJK test texts and every mostly non-ASCII line
    of the standard library's sources: Greek, Cyrillic, Arabic, Hebrew,
    Devanagari, emoji ...)."""
    if kind not in _CORPORA:
        if kind == "prose":
            _CORPORA[kind] = shakespeare()[:1_000_000]
        elif kind == "python":
            parts, size = [], 0
            for path in _stdlib_files()[::7]:  # a spread of packages, not only the first
                parts.append(_read(path))
                size += len(parts[-1])
                if size > 600_000:
                    break
            _CORPORA[kind] = "".join(parts)
        else:
            root = sysconfig.get_paths()["stdlib"]
            parts = [_read(p) for p in sorted(glob.glob(os.path.join(root, "test", "cjkencodings", "*-utf8.txt")))]
            for path in _stdlib_files():
                for line in _read(path).splitlines(True):
                    non_ascii = sum(ord(c) > 127 for c in line)
                    if non_ascii >= 3 and 4 * non_ascii >= len(line.strip()):
                        parts.append(line)
            _CORPORA[kind] = "".join(parts) + "\n".join(_SENTENCES)
    return _CORPORA[kind]


# The same news in scripts the standard library hardly has.
_SENTENCES = [
    "Η βιβλιοθήκη κυκλοφόρησε σήμερα· οι δοκιμές πέρασαν όλες.",
    "Библиотека вышла сегодня; все тесты прошли успешно, 12 из 12.",
    "Бібліотека вийшла сьогодні, і всі тести пройшли.",
    "صدرت المكتبة اليوم، ونجحت جميع الاختبارات (١٢ من ١٢).",
    "הספרייה שוחררה היום, וכל הבדיקות עברו בהצלחה.",
    "लाइब्रेरी आज जारी हुई; सभी परीक्षण सफल रहे — १२ में से १२।",
    "লাইব্রেরিটি আজ প্রকাশিত হয়েছে এবং সব পরীক্ষা সফল হয়েছে।",
    "நூலகம் இன்று வெளியிடப்பட்டது; அனைத்து சோதனைகளும் வெற்றி பெற்றன.",
    "ไลบรารีเปิดตัววันนี้ และการทดสอบทั้งหมดผ่านแล้ว",
    "该库今天发布，所有测试均已通过（12/12）。",
    "該函式庫今天發佈，所有測試都通過了。",
    "ライブラリは本日リリースされ、すべてのテストに合格しました。",
    "라이브러리가 오늘 출시되었고 모든 테스트를 통과했습니다.",
    "Thư viện đã được phát hành hôm nay và tất cả các bài kiểm tra đều đạt.",
    "Kütüphane bugün yayımlandı; tüm testler başarıyla geçti.",
    "Biblioteka została dziś wydana, a wszystkie testy przeszły pomyślnie.",
    "ბიბლიოთეკა დღეს გამოვიდა და ყველა ტესტმა გაიარა.",
    "Գրադարանը թողարկվեց այսօր, և բոլոր թեստերը հաջողվեցին։",
    "ቤተ-መጻሕፍቱ ዛሬ ተለቀቀ፤ ሁሉም ፈተናዎች አልፈዋል።",
    "Die Bibliothek ist heute erschienen — alle Tests bestanden. Çà et là, naïve façade.",
    "Released today 🎉🚀 — all tests passed ✅ (👩\u200d💻 + 🧑🏽\u200d🔬)",
]


@pytest.mark.parametrize("kind", ["prose", "python", "multilingual"])
@pytest.mark.parametrize("name", DISTINCT)
def test_corpora_match_tiktoken(backend, name, kind):
    text = corpus(kind)
    enc = get_encoding(name, backend=backend)
    expected = offline_tiktoken(name).encode_ordinary(text)
    assert enc.encode_ordinary(text) == expected
    assert enc.encode(text, allowed_special="all") == offline_tiktoken(name).encode(text, allowed_special="all")
    array = enc.encode_to_numpy(text, disallowed_special=())
    assert array.dtype.name == "uint32" and array.tolist() == expected
    assert enc.decode(expected) == text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["p50k_base", "o200k_base"])
def test_all_of_shakespeare_matches_tiktoken(backend, name):
    # gpt2 and cl100k_base: tests/test_encoding.py
    text = shakespeare()
    assert get_encoding(name, backend=backend).encode_ordinary(text) == offline_tiktoken(name).encode_ordinary(text)


# -- parity on generated text: every Unicode category -------------------------------------

_SPECIALS = ["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "<|start|>", "<|reserved_200018|>"]
_TRICKY = ["'s", "'LL", " 've", "HTTPServer", "camelCase", "ǅungla", "e\u0301", "\u0915\u094d\u0937", "漢字",
           "１２３", "$1,000.50", "a/b//c", "\r\n\r\n", "  \n", "\u00a0", "\u3000", "\x85", "👩\u200d👧"]
# Every category but lone surrogates (their fix-up is tested in
# tests/test_encoding.py), unassigned code points (Cn) included: the
# scanners follow tiktoken's Unicode version (tests/test_unicode.py).
_chars = st.characters(exclude_categories=("Cs",))
_text = st.lists(st.one_of(st.text(_chars, max_size=8), st.sampled_from(_TRICKY + _SPECIALS)),
                 max_size=12).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_text)
def test_generated_text_matches_tiktoken(text):
    for name in DISTINCT + ["o200k_harmony"]:
        tk = offline_tiktoken(name)
        expected = tk.encode(text, allowed_special="all")
        ordinary = tk.encode_ordinary(text)
        for backend in BACKENDS:
            enc = get_encoding(name, backend=backend)
            assert enc.encode(text, allowed_special="all") == expected
            assert enc.encode_ordinary(text) == ordinary
            assert enc.encode_to_numpy(text, allowed_special="all").tolist() == expected
            assert enc._encode_only_native_bpe(text) == tk._encode_only_native_bpe(text)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.binary(max_size=24) | _text.map(lambda s: s.encode("utf-8")[:-1]))
def test_encode_bytes_matches_tiktoken(data):
    for name in DISTINCT:
        expected = offline_tiktoken(name)._encode_bytes(data)
        for backend in BACKENDS:
            enc = get_encoding(name, backend=backend)
            assert enc._encode_bytes(data) == expected
            assert enc.decode_bytes(expected) == data
            if data:  # tiktoken panics on an empty piece; pybpe gives []
                assert enc._encode_single_piece(data) == offline_tiktoken(name)._encode_single_piece(data)


def _unstable_like_tiktoken(enc, tk, text, **kwargs):
    stable, completions = enc.encode_with_unstable(text, **kwargs)
    tk_stable, tk_completions = tk.encode_with_unstable(text, **kwargs)
    assert stable == tk_stable
    assert completions == sorted(completions) and len(set(map(tuple, completions))) == len(completions)
    assert sorted(map(tuple, completions)) == sorted(map(tuple, tk_completions))
    # what the API promises
    data = text.encode("utf-8")
    assert data.startswith(enc.decode_bytes(stable))
    assert all(enc.decode_bytes(stable + seq).startswith(data) for seq in completions)


@pytest.mark.parametrize("text", ["hello fanta", "hello ", "hello\n", "x = 1\n\n", " ", "ab  ", "def f(",
                                  "naïve", "漢字", "'s", "a<|endoftext|>", "<|endoftext|>", "", "1234", "a\u3000",
                                  "x" + " " * 12, "\u3000 " * 3, "é\t \n"])
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_encode_with_unstable_matches_tiktoken(backend, name, text):
    _unstable_like_tiktoken(get_encoding(name, backend=backend), offline_tiktoken(name), text,
                            allowed_special="all")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.text(st.sampled_from("ab é漢\n\t'1!"), max_size=6) | st.text(_chars, max_size=3))
def test_generated_unstable_matches_tiktoken(text):
    for name in ["gpt2", "o200k_base"]:
        _unstable_like_tiktoken(get_encoding(name), offline_tiktoken(name), text, disallowed_special=())


def test_encode_with_unstable_checks_special_tokens():
    enc = get_encoding("cl100k_base")
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_with_unstable("x<|endoftext|>")
    assert enc.encode_with_unstable("x<|endoftext|>", allowed_special="all") == ([87, 100257], [])


# -- the smaller methods ------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_encode_single_token_takes_every_tokens_bytes(name):
    enc = get_encoding(name)
    for token, i in enc.special_tokens.items():
        assert enc.encode_single_token(token.encode()) == enc.encode_single_token(token) == i
    ids = list(range(0, enc.n_vocab, 97)) + sorted(enc.special_tokens.values())
    tk = offline_tiktoken(name)
    for i in ids:
        try:
            data = enc.decode_single_token_bytes(i)
        except KeyError:  # an unused ID (o200k_base has a few)
            with pytest.raises(KeyError):
                tk.decode_single_token_bytes(i)
            continue
        assert data == tk.decode_single_token_bytes(i)
        assert enc.encode_single_token(data) == tk.encode_single_token(data)
    for bad in [b"\xff\xfe not a token", "not a token at all"]:
        with pytest.raises(KeyError):
            enc.encode_single_token(bad)


def test_encode_single_piece_and_native_bpe(backend):
    enc = get_encoding("gpt2", backend=backend)
    assert enc._encode_single_piece("helloqqqq") == [31373, 38227, 38227]
    assert enc._encode_single_piece(b"hello") == [31373]
    assert enc._encode_single_piece(b"") == []
    text = "Hello world's 2024!! <|endoftext|>"
    assert enc._encode_only_native_bpe(text) == enc.encode_ordinary(text)


def test_encode_bytes_examples(backend):
    # tiktoken's own vectors
    enc = get_encoding("cl100k_base", backend=backend)
    assert enc._encode_bytes(b" \xec\x8b\xa4\xed") == [62085]
    for i in range(10):
        assert enc.decode_bytes(enc._encode_bytes(b"\x80" * i)) == b"\x80" * i
    assert enc._encode_bytes(b"hello world") == enc.encode_ordinary("hello world")
    assert enc._encode_bytes(bytearray(b"hi")) == enc.encode_ordinary("hi")


def test_encode_to_numpy(backend):
    numpy = pytest.importorskip("numpy")
    enc = get_encoding("o200k_base", backend=backend)
    text = "hello <|endoftext|> world<|endofprompt|>"
    for kwargs in [{"allowed_special": "all"}, {"disallowed_special": ()}, {"allowed_special": {"<|endofprompt|>"},
                                                                              "disallowed_special": ()}]:
        array = enc.encode_to_numpy(text, **kwargs)
        assert isinstance(array, numpy.ndarray) and array.dtype == numpy.uint32 and array.ndim == 1
        assert array.tolist() == enc.encode(text, **kwargs)
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_to_numpy(text)
    assert enc.encode_to_numpy("").tolist() == [] and enc.encode_to_numpy("").dtype == numpy.uint32
    assert enc.encode_to_numpy("<|endoftext|>", allowed_special="all").tolist() == [199999]
    assert enc.encode_to_numpy("a\ud83d\ude00").tolist() == enc.encode("a\U0001f600")
    big = "x" * 100_000 + " y"
    assert enc.encode_to_numpy(big).tolist() == enc.encode(big)
    custom = pybpe.Encoding("custom", pat_str=r"\S+|\s+", mergeable_ranks=enc._mergeable_ranks,
                            special_tokens={}, backend=backend)
    assert custom.encode_to_numpy("hello  world").tolist() == custom.encode("hello  world")


def test_encode_to_numpy_writes_into_the_array():
    # The C path: the array's memory is the C output, shrunk to fit.
    if "c" not in BACKENDS:
        pytest.skip("the C backend is not built")
    pytest.importorskip("numpy")
    enc = get_encoding("cl100k_base", backend="c")
    text = corpus("python")[:200_000]
    array = enc.encode_to_numpy(text)
    assert array.flags.owndata and array.nbytes == 4 * len(array) and array.base is None
    assert array.tolist() == enc.encode(text)


def test_numpy_stays_optional(tmp_path):
    # numpy made unimportable: pybpe imports and encodes without it, and
    # encode_to_numpy says what is missing.
    (tmp_path / "numpy.py").write_text("raise ImportError('no numpy here')\n")
    result = _run_python(
        "import sys, pybpe\n"
        "enc = pybpe.get_encoding('gpt2')\n"
        "print(enc.encode('hello world'))\n"
        "for call in (lambda: enc.encode_to_numpy('hello'), lambda: enc.encode_batch_to_numpy(['hello'])):\n"
        "    try:\n"
        "        call()\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n", str(tmp_path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "[31373, 995]" and "encode_to_numpy needs NumPy" in lines[1]
    assert "encode_batch_to_numpy needs NumPy" in lines[2]


# -- pybpe.tiktoken_compat: `import tiktoken` answered by pybpe ---------------------------

def test_tiktoken_compat_install():
    # In a fresh interpreter: install() replaces any real tiktoken.
    result = _run_python(
        "import pybpe, pybpe.tiktoken_compat as compat\n"
        "compat.install()\n"
        "import tiktoken, tiktoken.core, tiktoken.registry, tiktoken.model, tiktoken.load\n"
        "from tiktoken.load import load_tiktoken_bpe\n"
        "from tiktoken.core import Encoding\n"
        "assert tiktoken is compat and tiktoken.core is pybpe.encoding and tiktoken.registry is pybpe.registry\n"
        "assert tiktoken.model is pybpe.model and Encoding is pybpe.Encoding\n"
        "assert tiktoken.get_encoding('cl100k_base') is pybpe.get_encoding('cl100k_base')\n"
        "print(tiktoken.encoding_for_model('gpt-4o').encode('hello world'), tiktoken.list_encoding_names()[-1])\n",
        "")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[24912, 2375] o200k_harmony"


def test_tiktoken_compat_load(tmp_path):
    from pybpe.tiktoken_compat import load

    path = os.path.join(DATA, "gpt2.tiktoken")
    ranks = load.load_tiktoken_bpe(path, expected_hash=registry._FILES["gpt2.tiktoken"])
    assert ranks == get_encoding("gpt2").mergeable_ranks
    with pytest.raises(pybpe.FormatError, match="sha256"):
        load.load_tiktoken_bpe(path, expected_hash="0" * 64)
    with pytest.raises(ValueError, match="never downloads"):
        load.load_tiktoken_bpe("https://example.invalid/r50k_base.tiktoken")
    load.dump_tiktoken_bpe({b"a": 0, b"b": 1, b"ab": 2}, tmp_path / "t.tiktoken")
    assert load.load_tiktoken_bpe(tmp_path / "t.tiktoken") == {b"a": 0, b"b": 1, b"ab": 2}
    # GPT-2's data-gym pair, written by pybpe from the gpt2 ranks
    from pybpe.formats import dump_gpt2_bpe
    dump_gpt2_bpe(get_encoding("gpt2"), tmp_path / "encoder.json", tmp_path / "vocab.bpe")
    assert load.data_gym_to_mergeable_bpe_ranks(tmp_path / "vocab.bpe", tmp_path / "encoder.json") == ranks


# -- the C encoder's per-call caches ------------------------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(tokens=st.lists(st.binary(min_size=2, max_size=12).map(lambda b: bytes(c % 3 for c in b).replace(
           b"\x01", b"a").replace(b"\x02", b"b")), min_size=1, max_size=40, unique=True),
       words=st.lists(st.text(st.sampled_from("ab\x00"), min_size=1, max_size=12), min_size=1, max_size=8),
       big=st.booleans(), seed=st.integers(0, 2**16))
def test_repeated_pieces_with_nul_bytes_match_everywhere(tokens, words, big, seed):
    # Pieces of up to 8 bytes are recognised by their bytes packed into one
    # number (zero-padded) and their length, in the token table and in the
    # C encoder's per-call caches: "a" and "a\0" must stay apart, and a piece
    # met again must give what it gave the first time.  `big` adds 16,384
    # tokens the text never uses, so the table takes its large-vocabulary
    # paths (the byte-pair array, the pair cache sizes).
    import random
    rng = random.Random(seed)
    vocab = [bytes([b]) for b in range(256)] + [t for t in tokens if len(t) > 1]
    if big:
        vocab += [bytes([x, y]) for x in range(128, 256) for y in range(128, 256)]
    order = list(range(len(vocab)))
    rng.shuffle(order)
    ranks = {t: r for t, r in zip(vocab, order)}
    text = " ".join(rng.choice(words) for _ in range(300))
    expected = None
    for backend in BACKENDS:
        enc = pybpe.Encoding("nul", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={},
                             backend=backend)
        ids = enc.encode_ordinary(text)
        assert enc.decode_bytes(ids) == text.encode()
        expected = ids if expected is None else expected
        assert ids == expected
    tiktoken = pytest.importorskip("tiktoken")
    tk = tiktoken.Encoding("nul", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    assert tk.encode_ordinary(text) == expected


def test_disallowed_special_none_checks_nothing_as_in_tiktoken(backend):
    # tiktoken tests disallowed_special for truth, so None turns the check
    # off like (); found by fuzzing against tiktoken (pybpe raised TypeError).
    enc = get_encoding("cl100k_base", backend=backend)
    text = "hello <|endoftext|> world <|fim_prefix|>"
    as_text = enc.encode(text, disallowed_special=())
    assert 100257 not in as_text
    assert enc.encode(text, disallowed_special=None) == as_text
    assert enc.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=None) == \
        enc.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=())
    assert enc.encode_batch([text, "x"], disallowed_special=None) == [as_text, enc.encode("x")]
    assert enc.encode_with_unstable(text, disallowed_special=None) == \
        enc.encode_with_unstable(text, disallowed_special=())
    numpy = pytest.importorskip("numpy")
    assert enc.encode_to_numpy(text, disallowed_special=None).tolist() == as_text
    tok = pybpe.BPETokenizer(vocab_size=300, byte_level=True, special_tokens=["<|endoftext|>"], backend=backend)
    tok.train(["hello world <|endoftext|> hello"] * 3)
    assert tok.encode(text, disallowed_special=None) == tok.encode(text, disallowed_special=())
    with pytest.raises(TypeError):
        enc.encode(text, allowed_special=None)


# -- encode_batch's check for disallowed special tokens, a group of texts at a time -----------------

def _one_text_at_a_time(enc, texts):
    # the check as tiktoken's encode_batch makes it: each text, in order, as
    # it is (before its surrogates are fixed), searched
    import pybpe.encoding as encoding
    search = encoding.special_regex(frozenset(enc.special_tokens_set)).search
    for i, t in enumerate(texts):
        match = search(encoding._checked(t, i) and t)
        if match:
            encoding.raise_disallowed(match.group())


def _outcome(fn):
    try:
        return "ok", fn()
    except (TypeError, ValueError) as exc:
        return type(exc).__name__, str(exc)


_BATCH_ATOMS = ["<|endoftext|>", "<|endof", "text|>", "<|fim_prefix|>", "<|", "|>", "\x00", "hello ", "\u00e9",
                "\ud800", "\ud83d\ude00", 3, b"<|endoftext|>", None]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(st.lists(st.sampled_from(_BATCH_ATOMS[:11]), max_size=5).map("".join),
                          st.sampled_from(_BATCH_ATOMS[11:])), max_size=8),
       st.sampled_from([1 << 22, 1, 7]))
def test_encode_batch_checks_as_one_text_at_a_time(texts, group_chars):
    # the same error (type and message) for the same first offending item,
    # or the same IDs, whatever the groups the texts are checked in
    import pybpe.encoding as encoding
    enc = get_encoding("cl100k_base")  # either backend: the check is the same Python
    saved, encoding._CHECK_GROUP_CHARS = encoding._CHECK_GROUP_CHARS, group_chars
    try:
        got = _outcome(lambda: enc.encode_batch(texts))
    finally:
        encoding._CHECK_GROUP_CHARS = saved
    want = _outcome(lambda: _one_text_at_a_time(enc, texts))
    if want[0] == "ok":
        want = _outcome(lambda: enc.encode_ordinary_batch(texts))
    assert got == want


def test_encode_batch_checks_texts_as_they_are():
    # tiktoken checks a text before its surrogates are fixed: "x\ud800!" does
    # not hold the special token "\ufffd!" there, though its IDs are those of
    # "x\ufffd!" (encode and encode_batch alike); a token holding NUL, the
    # character the groups are joined by, is still found, and not across texts
    enc = pybpe.Encoding("custom", pat_str=get_encoding("gpt2").pat_str,
                         mergeable_ranks=get_encoding("gpt2").mergeable_ranks,
                         special_tokens={"\ufffd!": 50257, "a\x00b": 50258})
    assert enc.encode_batch(["ok", "x\ud800!"]) == [enc.encode("ok"), enc.encode("x\ud800!")]
    assert enc.encode("x\ud800!") == enc.encode_ordinary("x\ufffd!")
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_batch(["ok", "x\ufffd!"])
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_batch(["ok", "xa\x00b"])
    assert enc.encode_batch(["a\x00", "b"]) == [enc.encode_ordinary("a\x00"), enc.encode_ordinary("b")]
    try:
        import tiktoken
    except ImportError:  # the outside reference, where it is installed
        return
    else:
        theirs = tiktoken.Encoding("custom", pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks,
                                   special_tokens=enc.special_tokens)
        assert theirs.encode_batch(["ok", "x\ud800!"]) == enc.encode_batch(["ok", "x\ud800!"])
