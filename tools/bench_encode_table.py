"""Encoding speed of pybpe and its peers on text they have not seen, as Markdown tables.

    python3 tools/bench_encode_table.py [--rounds 5] [--mb 0.5] [--names gpt2,cl100k_base,o200k_base]
                                        [--corpora prose,python,multilingual,cjk] [--python]
                                        [--skip-long] [--skip-batch]

What is measured.  Several encoders keep a cache from piece to IDs that lives
across calls (gigatoken, fastokens, HF tokenizers; pybpe's piece cache, per
Encoding and thread), so timing the same text again and again measures the
cache, not the encoder.
Each corpus is therefore cut into --rounds + 1 distinct slices of --mb
megabytes: every encoder is first warmed on the last slice (and its IDs
checked there), then timed once per round on a slice no encoder has seen
before -- one fresh slice per round.  Within a round the encoders run one
after another (the starting encoder rotates), so every ratio is taken under
the same load; each encoder gets a str of its own, so none reads a UTF-8
another one left in a shared str (own_copies); a cell is MB/s of UTF-8
input, the median over the rounds, and
the output of every timed call is compared with pybpe C's after the clock
stops.  A peer whose IDs differ anywhere is shown as "differs" and not timed
further.  The reference IDs come from an Encoding of pybpe's with its piece
cache off, and each pybpe row (list, NumPy, each batch width) has an Encoding
of its own, so no row is timed on a slice another row has already encoded.  The tables:

  1. unseen text, one thread: one call per slice (encode_ordinary or the
     peer's own single-text call, asked to stay on one thread); "x" is the
     speed relative to pybpe C's list output in the same column.  A cell
     marked * used more than 1.3 CPU-seconds per wall-second (the peer ran
     threads of its own).
  2. seen text: the same slice re-encoded each round after a warm call on
     it -- what a cache that lives across calls gives a long job that sees
     the same pieces again.
  3. long pieces: "a" * 1,000,000, a million spaces and 1 MB of seeded random
     lowercase letters (each one piece, or nearly), ms per call; each round
     uses a fresh variant (one more character, another seed); then the same
     text re-encoded.  An encoder whose timed call takes over --long-limit
     seconds is not run again ("1 run").
  4. batch of 10 KB documents: pybpe's encode_ordinary_batch on 1 and 2
     threads, and (with NumPy) encode_batch_to_numpy, the same batch as
     arrays without a list per document, interleaved, fresh slices, with a
     machine control
     (hashlib.sha256 on 2 threads, which releases the GIL) giving the
     speed-up the machine itself allowed at that moment.

Rows, each skipped cleanly when its package is not importable: pybpe C (list,
and NumPy array via Encoding.encode_to_numpy), pybpe Python (--python only:
slow), tiktoken, HF tokenizers, gigatoken (tiktoken-compatible list output
and NumPy output), fastokens, tokie, rs-bpe (cl100k only).  Every peer is
built offline from pybpe's shipped rank files and the same pattern and
special tokens: tiktoken.Encoding(...), gigatoken's Tokenizer.from_tiktoken
and fastokens' Tokenizer.from_tiktoken (rank file, pattern, specials), and HF
tokenizers and tokie from the tokenizer.json pybpe.formats.dump_hf_tokenizer
writes.  Nothing is downloaded.

Corpora (deterministic, from files every machine has):
  prose         shared/data/shakespeare.txt (PYBPE_SHAKESPEARE overrides)
  python        the .py files of this Python's standard library, sorted by path
  multilingual  the translated messages of the system's message catalogs
                (/usr/share/locale/LANG/LC_MESSAGES/*.mo, from Debian's
                libglib2.0-data, iso-codes and the like) in 21 languages of
                13 scripts (LANGUAGES), taking turns in runs of ~4 KB; where
                too few are installed, the older corpus below, with a note
  cjk           the same catalogs' Chinese (zh_CN, zh_TW) and Japanese (ja),
                taking turns; ~3/4 of the bytes are CJK characters
Until 2026-12-06 both came from CPython's Lib/test/cjkencodings samples
(~5 KB of Chinese and Japanese; with the stdlib's mostly non-ASCII lines,
~12 KB for multilingual) extended by a seeded order-2 character Markov chain.
That seed is too small: the multilingual chain looped on a line of accented
vowels (two thirds of it was "áéíóú|") and the cjk one held 1,602 distinct
cl100k pieces in 78,763, so the caches knew nearly every piece and those
columns measured them; figures before then call that "multilingual" and
"cjk".  The chains stay as the fallback where the catalogs are missing.
The machine this runs on may be shared: compare figures within one run.
"""
import argparse
import glob
import hashlib
import importlib.util
import os
import random
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
# Every timed peer call is single-threaded (rayon-based peers get one
# thread; pybpe's 2-thread batch does not use rayon).  Nothing may download.
os.environ.setdefault("RAYON_NUM_THREADS", "1")
# fastokens runs its BPE on worker threads of its own unless told not to;
# NumPy's OpenBLAS threads spin and would bill their CPU to every row.
os.environ.setdefault("FASTOKENS_BPE_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")

from pybpe.encoding import Encoding  # noqa: E402
from pybpe.registry import get_encoding  # noqa: E402

NAMES = ["gpt2", "cl100k_base", "o200k_base"]
CORPORA = ["prose", "python", "multilingual", "cjk"]
DATA = os.path.join(HERE, "pybpe", "data")
REFERENCE = "pybpe C"


# -- corpora -------------------------------------------------------------------------------------

def _stdlib():
    import sysconfig
    return sysconfig.get_paths()["stdlib"]


def _stdlib_py():
    for path in sorted(glob.glob(os.path.join(_stdlib(), "**", "*.py"), recursive=True)):
        if "site-packages" not in path:
            yield path


def corpus_prose(limit):
    path = os.environ.get("PYBPE_SHAKESPEARE", os.path.join(HERE, "..", "shared", "data", "shakespeare.txt"))
    with open(path, encoding="utf-8") as f:
        return f.read()


def corpus_python(limit):
    parts, size = [], 0
    for path in _stdlib_py():
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        parts.append(text)
        size += len(text.encode("utf-8"))
        if size > limit:
            break
    return "".join(parts)


def _cjkencodings(prefixes):
    # Each language's sample once (several files hold the same text in
    # different encodings' repertoires).
    seen, parts = set(), []
    for path in sorted(glob.glob(os.path.join(_stdlib(), "test", "cjkencodings", "*-utf8.txt"))):
        if not os.path.basename(path).startswith(prefixes):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line not in seen:
                    seen.add(line)
                    parts.append(line)
    return "".join(parts)


def _markov(seed_text, limit, order=2, seed=0):
    """Real text first, then new text from a seeded order-`order` character
    Markov chain trained on it, until `limit` bytes of UTF-8."""
    follow = {}
    for i in range(len(seed_text) - order):
        follow.setdefault(seed_text[i:i + order], []).append(seed_text[i + order])
    rng = random.Random(seed)
    out, size = [seed_text], len(seed_text.encode("utf-8"))
    context = seed_text[:order]
    while size < limit:
        nexts = follow.get(context)
        if not nexts:  # the end of the text: start again somewhere
            start = rng.randrange(len(seed_text) - order)
            context = seed_text[start:start + order]
            continue
        c = rng.choice(nexts)
        out.append(c)
        size += len(c.encode("utf-8"))
        context = context[1:] + c
    return "".join(out)


# Languages of the multilingual corpus, a script or two each: Cyrillic,
# Greek, Arabic, Hebrew, Devanagari, Bengali, Tamil, Thai, Georgian, Hangul,
# Japanese, Chinese (both forms) and Latin with diacritics.
LANGUAGES = ["ru", "uk", "el", "ar", "he", "fa", "hi", "bn", "ta", "th", "ka", "ko", "ja",
             "zh_CN", "zh_TW", "vi", "tr", "pl", "de", "fr", "es"]
CJK_LANGUAGES = ["zh_CN", "ja", "zh_TW"]
LOCALE = "/usr/share/locale"


def _translations(lang):
    """The translated messages of every message catalog installed for `lang`
    (Debian's libglib2.0-data, iso-codes, ... put them in LOCALE), sorted by
    file and message, one per line."""
    import gettext
    lines = []
    for path in sorted(glob.glob(os.path.join(LOCALE, lang, "LC_MESSAGES", "*.mo"))):
        try:
            with open(path, "rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog
        except (OSError, UnicodeDecodeError):  # not a catalog this module reads
            continue
        for key in sorted(catalog, key=str):
            text = catalog[key]
            if key and isinstance(text, str) and text.strip():
                lines.append(text)
    return "\n".join(lines)


def corpus_multilingual(limit):
    """Real text in 21 languages: the translations of the machine's message
    catalogs, LANGUAGES taking turns in runs of ~4 KB, so every slice holds
    them all.  Without enough of them (another system), the older corpus:
    see _corpus_multilingual_markov."""
    return _languages_in_turn(LANGUAGES, limit, "multilingual", _corpus_multilingual_markov)


def _languages_in_turn(languages, limit, name, fallback):
    """The translations of `languages` taking turns in runs of ~4 KB (whole
    lines) until `limit` bytes of UTF-8, or fallback(limit), with a note on
    stderr, where the catalogs hold too little."""
    texts = {lang: _translations(lang) for lang in languages}
    if sum(len(t.encode("utf-8")) for t in texts.values()) < limit:
        print("(%s: too few message catalogs under %s; CPython's samples and a Markov "
              "chain instead)" % (name, LOCALE), file=sys.stderr)
        return fallback(limit)
    out, size, at = [], 0, dict.fromkeys(languages, 0)
    while size < limit and any(at[lang] < len(texts[lang]) for lang in languages):
        for lang in languages:
            text, start = texts[lang], at[lang]
            end = text.find("\n", start + 4000)
            end = len(text) if end < 0 else end + 1
            chunk = text[start:end]
            at[lang] = end
            out.append(chunk)
            size += len(chunk.encode("utf-8"))
    return "".join(out)


def _corpus_multilingual_markov(limit):
    # Until 2026-12-06 this was the multilingual corpus: the seed text is so
    # small that the chain loops ("áéíóú|" made up most of it).
    parts = [_cjkencodings(("big5", "cp949", "euc", "gb", "hz", "iso2022", "johab", "shift"))]
    for path in _stdlib_py():
        try:
            with open(path, encoding="utf-8") as f:
                parts += [line for line in f
                          if len(line) > 8 and sum(ord(c) > 127 for c in line) > len(line) // 2]
        except (UnicodeDecodeError, OSError):
            continue
    return _markov("".join(parts), limit)


def corpus_cjk(limit):
    """Real Chinese (simplified and traditional) and Japanese: the message
    catalogs' translations, taking turns as in corpus_multilingual; about
    three quarters of the bytes are CJK characters, the rest the ASCII of
    program names, format strings and punctuation."""
    return _languages_in_turn(CJK_LANGUAGES, limit, "cjk", _corpus_cjk_markov)


def _corpus_cjk_markov(limit):
    # Until 2026-12-06 this was the cjk corpus: CPython's Chinese and Japanese
    # samples (big5, gb*, hz, euc_jp, shift_jis, iso2022_jp), ~5 KB, are so
    # small that the chain repeats itself (1,602 distinct cl100k pieces in
    # 78,763), so the piece caches held nearly all of every slice.
    return _markov(_cjkencodings(("big5", "euc_j", "gb", "hz", "iso2022_jp", "shift")), limit)


def slices(text, mb, count):
    """`count` consecutive slices of `mb` megabytes of UTF-8 (at character
    boundaries), or fewer when the text is shorter."""
    data = text.encode("utf-8")
    size = int(mb * 1e6)
    out = []
    for k in range(count):
        piece = data[k * size:(k + 1) * size].decode("utf-8", errors="ignore")
        if len(piece.encode("utf-8")) < size * 0.9:
            break
        out.append(piece)
    return out


# -- the encoders ----------------------------------------------------------------------------------

def _tolist(ids):
    return ids.tolist() if hasattr(ids, "tolist") else list(ids)


def fresh(enc, **kwargs):
    """A new Encoding like `enc`, with piece caches of its own (pybpe's
    piece cache lives across calls, per Encoding: each pybpe row gets its
    own, so no row is timed on a slice another row has encoded)."""
    return Encoding(enc.name, pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks,
                    special_tokens=enc.special_tokens, backend=enc.backend, **kwargs)


def encoders(name, tmp, with_python):
    """({label: encode(text) -> IDs (a list or an array)} of the installed
    encoders, one thread each; the function that gives the reference IDs,
    pybpe C's with its cache across calls off, so asking it for a slice's
    IDs warms no timed encoder)."""
    c = get_encoding(name, backend="c")
    reference = fresh(c, piece_cache=0).encode_ordinary
    out = {
        REFERENCE: fresh(c).encode_ordinary,
        "pybpe C, NumPy array": fresh(c).encode_to_numpy,
    }
    if with_python:
        py = get_encoding(name, backend="python")
        out["pybpe Python"] = py.encode_ordinary
    rank_file = os.path.join(DATA, name + ".tiktoken")
    try:
        import tiktoken
        tk = tiktoken.Encoding(name, pat_str=c.pat_str, mergeable_ranks=c.mergeable_ranks,
                               special_tokens=c.special_tokens)
        out["tiktoken"] = tk.encode_ordinary
    except ImportError:
        pass
    json_path = os.path.join(tmp, name + ".json")
    from pybpe.formats import dump_hf_tokenizer
    dump_hf_tokenizer(c, json_path)
    try:
        import tokenizers
        hf = tokenizers.Tokenizer.from_file(json_path)
        out["HF tokenizers"] = lambda t: hf.encode(t, add_special_tokens=False).ids
    except ImportError:
        pass
    try:
        import gigatoken
        scheme = {"gpt2": "gpt2", "cl100k_base": "gpt4", "o200k_base": "o200k"}[name]
        g = gigatoken.Tokenizer.from_tiktoken(rank_file, pretokenizer=scheme, special_tokens=c.special_tokens)
        # encode_batch_list is what its tiktoken-compatible encode_ordinary
        # calls; parallel=False keeps it on one thread.
        out["gigatoken, list"] = lambda t: g.encode_batch_list([t], parallel=False)[0]
        out["gigatoken, NumPy array"] = g.encode
    except ImportError:
        pass
    try:
        import fastokens
        f = fastokens.Tokenizer.from_tiktoken(rank_file, pattern=c.pat_str, special_tokens=c.special_tokens)
        out["fastokens"] = lambda t: f.encode_ordinary(t).ids
    except ImportError:
        pass
    try:
        import tokie
        tt = tokie.Tokenizer.from_json(json_path)
        out["tokie"] = lambda t: tt.encode(t, add_special_tokens=False).ids
    except ImportError:
        pass
    if name == "cl100k_base":
        try:
            from rs_bpe.bpe import openai
            rs = openai.cl100k_base()
            out["rs-bpe"] = lambda t: list(rs.encode(t))
        except Exception:  # not installed, or an API this script does not know
            pass
    return out, reference


# -- timing ----------------------------------------------------------------------------------------

class Failed(Exception):
    """A peer raised (or panicked: a Rust panic is a BaseException) on a text."""


def _call(fn, arg):
    try:
        return fn(arg)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: B036 -- see Failed
        raise Failed("raised %s" % type(e).__name__) from None


def own_copies(text, labels):
    """{label: a new str equal to `text`} -- one str per encoder and round.
    CPython keeps a str's UTF-8 inside the str once asked for it
    (PyUnicode_AsUTF8AndSize), and the PyO3-built peers (tiktoken,
    gigatoken, fastokens) ask.  When every encoder got the same str, on a
    slice with one character beyond ASCII whichever of them ran first paid
    for the UTF-8 and every later one read it free: gigatoken's NumPy call on
    0.5 MB slices of Python source, after 32 MB of other memory was touched,
    took ~3.5 ms on a str of its own and ~3.1 ms on one whose UTF-8 another
    call had made (cl100k, medians of 15; pybpe makes its own UTF-8 and
    leaves none behind).  The copies are made before a column's first timed
    call, so each is as cold as the slice it copies when its turn comes (a
    copy made just before its call would be in the core's caches).  The
    long-piece texts need none: they are ASCII, whose UTF-8 is the str's
    own storage for every encoder."""
    copies = {}
    for label in labels:
        copy = text[:-1] + text[-1:] if len(text) > 1 else text
        assert copy is not text or len(text) < 2
        copies[label] = copy
    return copies


def _timed(fn, arg):
    # (seconds, CPU seconds of the whole process, result); the result is
    # freed by the caller after the clock stops.
    cpu, t = time.process_time(), time.perf_counter()
    result = _call(fn, arg)
    wall = time.perf_counter() - t
    return wall, time.process_time() - cpu, result


def _same(fn, text, ref):
    """None if fn(text) gives `ref`, else why not."""
    try:
        return None if _tolist(_call(fn, text)) == ref else "differs"
    except Failed as e:
        return str(e)


class Cell:
    """Times of one encoder on one column, or the reason it has none."""

    def __init__(self):
        self.wall, self.cpu, self.note = [], [], None
        self.once = False  # a long call not repeated (it took over --long-limit)

    def add(self, wall, cpu):
        self.wall.append(wall)
        self.cpu.append(cpu)

    @property
    def median(self):
        return statistics.median(self.wall) if self.wall and not self.note else None

    def threaded(self):
        return sum(self.cpu) > 1.3 * sum(self.wall)


def run_rounds(encs, warm, texts, ref_of, seen=False):
    """Interleaved rounds: every encoder once on each text of `texts` (or, if
    `seen`, on texts[0] every round).  `warm` is encoded first (IDs checked);
    `ref_of(text)` gives pybpe C's IDs for a text."""
    cells = {label: Cell() for label in encs}
    ref = ref_of(warm)
    for label, fn in encs.items():
        cells[label].note = _same(fn, warm, ref)
    labels = list(encs)
    copies = [own_copies(texts[0] if seen else text, labels) for text in texts]
    for k, text in enumerate(texts):
        if seen:
            text = texts[0]
        ref = ref_of(text)
        for label in labels[k % len(labels):] + labels[:k % len(labels)]:
            cell = cells[label]
            if cell.note:
                continue
            try:
                wall, cpu, result = _timed(encs[label], copies[k][label])
            except Failed as e:
                cell.note = str(e)
                continue
            same = _tolist(result) == ref
            del result
            if same:
                cell.add(wall, cpu)
            else:
                cell.note = "differs"
    return cells


def long_cases(seed_round):
    """The three long-piece texts of one round, each a variant no other round uses."""
    rng = random.Random(seed_round)
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(1_000_000))
    return {'"a" * 1,000,000': "a" * (1_000_000 + seed_round),
            "1,000,000 spaces": " " * (1_000_000 + seed_round),
            "1 MB random a-z": letters}


def run_long(encs, ref_of, rounds, limit, seen=False):
    """{case: {label: Cell}} of ms per call on the long-piece texts (if
    `seen`, the same text for the warm call and every round).  An encoder
    whose timed call takes over `limit` seconds is not run again: its figure
    is then that one call."""
    variants = [long_cases(0 if seen else k) for k in range(rounds + 1)]
    out = {}
    c = ref_of
    for case in variants[0]:
        cells = out[case] = {label: Cell() for label in encs}
        warm = variants[rounds][case]
        ref = c(warm)
        for label, fn in encs.items():
            cells[label].note = _same(fn, warm, ref)
        for k in range(rounds):
            text = variants[k][case]
            if not seen:
                ref = c(text)
            for label, fn in encs.items():
                cell = cells[label]
                if cell.note or cell.once:
                    continue
                try:
                    wall, cpu, result = _timed(fn, text)
                except Failed as e:
                    cell.note = str(e)
                    continue
                if _tolist(result) == ref:
                    cell.add(wall, cpu)
                    cell.once = wall > limit and k + 1 < rounds
                else:
                    cell.note = "differs"
                del result
    return out


def docs_of(text, size=10_000):
    """`text` cut into documents of about `size` characters, each ending at a line end."""
    docs, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        docs.append(text[start:end])
        start = end
    return docs


def run_batch(enc, texts, warm):
    """Medians of encode_ordinary_batch over 10 KB documents of fresh slices
    on 1 and 2 threads, and of encode_batch_to_numpy on 1 and 2 (None
    without NumPy); each has an Encoding of its own (see fresh), warmed on
    `warm`."""
    ways = [("lists", 1), ("lists", 2)]
    if importlib.util.find_spec("numpy") is not None:
        ways += [("arrays", 1), ("arrays", 2)]
    encs = {way: fresh(enc) for way in ways}
    ref = [enc.encode_ordinary(d) for d in docs_of(warm)]

    def call(way, docs):
        e, threads = encs[way], way[1]
        if way[0] == "lists":
            return e.encode_ordinary_batch(docs, num_threads=threads)
        return e.encode_batch_to_numpy(docs, num_threads=threads, disallowed_special=())

    for way in ways:
        got = call(way, docs_of(warm))
        if way[0] == "arrays":
            ids, offsets = got
            got = [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])]
        assert got == ref
    times = {way: [] for way in ways}
    for text in texts:
        docs = docs_of(text)
        for way in ways:
            t = time.perf_counter()
            result = call(way, docs)
            times[way].append(time.perf_counter() - t)
            del result
    medians = [statistics.median(times[way]) if way in times else None
               for way in (("lists", 1), ("lists", 2), ("arrays", 1), ("arrays", 2))]
    return medians


def control(rounds):
    data = b"x" * 50_000_000

    def run(n):
        threads = [threading.Thread(target=lambda: hashlib.sha256(data).digest()) for _ in range(n)]
        [t.start() for t in threads]
        [t.join() for t in threads]
    times = {1: [], 2: []}
    for _ in range(rounds):
        for n in (1, 2):
            t = time.perf_counter()
            run(n)
            times[n].append(time.perf_counter() - t)
    return 2 * statistics.median(times[1]) / statistics.median(times[2])


# -- tables ----------------------------------------------------------------------------------------

def _shown(cell, measured):
    """A table cell: "-" when not run, its note when it has no time (IDs
    differ, raised ...), else measured(cell)."""
    if cell is None:
        return "-"
    if cell.median is None:
        return cell.note or "-"
    return measured(cell)


def mbs_table(cols, rows, nbytes):
    """Markdown: MB/s and x relative to pybpe C per column."""
    lines = ["| encoder | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for label, cells in rows.items():
        shown = []
        for col in cols:
            cell = cells.get(col)
            ref = rows[REFERENCE][col].median
            shown.append(_shown(cell, lambda c: "%.1f%s (%.2fx)" % (
                nbytes[col] / c.median / 1e6, "*" if c.threaded() else "", ref / c.median)))
        lines.append("| %s | %s |" % (label, " | ".join(shown)))
    return "\n".join(lines)


def long_table(tables):
    """Markdown: ms per call, {name: {case: {label: Cell}}}."""
    cols = ["%s %s" % (name.replace("_base", ""), case) for name, cases in tables.items() for case in cases]
    lines = ["| encoder | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    labels = []
    for cases in tables.values():
        for cells in cases.values():
            labels += [label for label in cells if label not in labels]
    for label in labels:
        shown = []
        for cases in tables.values():
            for cells in cases.values():
                shown.append(_shown(cells.get(label), lambda c: "%.1f%s" % (
                    c.median * 1e3, " (1 run)" if c.once else "")))
        lines.append("| %s | %s |" % (label, " | ".join(shown)))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mb", type=float, default=0.5, help="megabytes per slice (default %(default)s)")
    ap.add_argument("--names", default=",".join(NAMES), help="encodings (default: %(default)s)")
    ap.add_argument("--corpora", default=",".join(CORPORA), help="corpora (default: %(default)s)")
    ap.add_argument("--python", action="store_true", help="add pybpe's pure-Python backend (slow)")
    ap.add_argument("--long-names", default="cl100k_base,gpt2", help="encodings for the long pieces")
    ap.add_argument("--long-limit", type=float, default=5.0, help="seconds over which a long call runs once")
    ap.add_argument("--skip-long", action="store_true")
    ap.add_argument("--skip-batch", action="store_true")
    args = ap.parse_args()
    need = (args.rounds + 1) * args.mb * 1e6 * 1.05
    makers = {"prose": corpus_prose, "python": corpus_python, "multilingual": corpus_multilingual,
              "cjk": corpus_cjk}
    corpora = {}
    for cname in args.corpora.split(","):
        cut = slices(makers[cname](need), args.mb, args.rounds + 1)
        if len(cut) < 2:
            raise SystemExit("corpus %s is too short for slices of %.2f MB" % (cname, args.mb))
        corpora[cname] = cut
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_at_start = os.getloadavg()[0]  # a shared host moves every figure: say how busy it was
    unseen, seen, nbytes, cols = {}, {}, {}, []
    long_tables, long_seen, batch_rows = {}, {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names.split(","):
            encs, c = encoders(name, tmp, args.python)
            for cname, cut in corpora.items():
                col = "%s %s" % (name.replace("_base", ""), cname)
                cols.append(col)
                timed, warm = cut[:-1], cut[-1]
                for label, cell in run_rounds(encs, warm, timed, c).items():
                    unseen.setdefault(label, {})[col] = cell
                nbytes[col] = statistics.mean(len(t.encode("utf-8")) for t in timed)
                for label, cell in run_rounds(encs, timed[0], timed, c, seen=True).items():
                    seen.setdefault(label, {})[col] = cell
                print("done:", col, file=sys.stderr)
            if not args.skip_long and name in args.long_names.split(","):
                long_tables[name] = run_long(encs, c, args.rounds, args.long_limit)
                long_seen[name] = run_long(encs, c, args.rounds, args.long_limit, seen=True)
                print("done: long pieces", name, file=sys.stderr)
            if not args.skip_batch and "prose" in corpora:
                cut = corpora["prose"]
                times = run_batch(get_encoding(name, backend="c"), cut[:-1], cut[-1])
                mb = statistics.mean(len(t.encode("utf-8")) for t in cut[:-1]) / 1e6
                batch_rows.append((name, [None if t is None else mb / t for t in times]))
    print("# Encoding speed, %s\n" % started)
    print("Slices of %.2f MB, %d timed rounds (medians), one fresh slice per round after a warm-up on "
          "another; IDs identical to pybpe C's on every timed call unless marked. Python %s; load "
          "average %.2f at the start, %.2f at the end.\n"
          % (args.mb, args.rounds, sys.version.split()[0], load_at_start, os.getloadavg()[0]))
    print("## 1. Unseen text, one thread: MB/s (x = speed relative to pybpe C list)\n")
    print(mbs_table(cols, unseen, nbytes))
    print("\n* = used more than 1.3 CPU-seconds per wall-second (threads of its own).\n")
    print("## 2. Seen text (the same slice re-encoded each round, after a warm call on it): MB/s\n")
    print(mbs_table(cols, seen, nbytes))
    if long_tables:
        print("\n## 3. Long pieces: ms per call (median; a fresh variant each round)\n")
        print(long_table(long_tables))
        print("\nThe same, seen text (one variant, re-encoded each round after a warm call on it):\n")
        print(long_table(long_seen))
    if batch_rows:
        print("\n## 4. pybpe C batches, prose slices cut into ~10 KB documents: lists "
              "(encode_ordinary_batch) and arrays (encode_batch_to_numpy)\n")
        print("| encoding | lists, 1 thread MB/s | lists, 2 threads MB/s | lists 2T / 1T "
              "| arrays, 1 thread MB/s | arrays, 2 threads MB/s | arrays 2T / 1T |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, (one, two, one_arr, two_arr) in batch_rows:
            arrays = ("| %.1f | %.1f | %.2fx |" % (one_arr, two_arr, two_arr / one_arr)
                      if one_arr is not None else "| - | - | - |")
            print("| %s | %.1f | %.1f | %.2fx %s" % (name, one, two, two / one, arrays))
        print("\nMachine control: hashlib.sha256 on 2 threads ran %.2fx one thread's throughput."
              % control(args.rounds))


if __name__ == "__main__":
    main()
