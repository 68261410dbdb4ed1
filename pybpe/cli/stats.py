"""`pybpe stats`: how well a tokenizer compresses held-out text, and (--plot) how that grows with each merge.

The figures, on text the tokenizer was not trained on: bytes and characters
per token, tokens per word (words as str.split() finds them), how much of
the vocabulary the text uses, how many tokens are <UNK> (the character
flavours map unseen characters to it), and whether decoding gives the text
back.

--plot FILE.png draws the two charts the NLP textbooks draw for BPE, from
the same held-out text: as merges are learned, the vocabulary grows by one
token each and the text shrinks in tokens; and tokens per word against
vocabulary size.  The text is encoded with the first k merges for --points
values of k from none to all, closer together at the start (merges are learned greedily, so the first k
are exactly what training to that size learns).  It needs matplotlib, the
optional `plot` extra: pip install 'pybpe[plot]'.
"""
import io
import json
import os
import sys
import tempfile

from .._atomic import atomic_write
from ._common import UsageError, Tok, add_tokenizer_options, check_not_input, read_text, tokenizer_and_files
from .inspection import merges_of

EXAMPLES = """\
examples:
  pybpe stats -t tok.json held-out.txt
  pybpe stats gpt2 a.txt b.txt
  pybpe stats -t tok.json held-out.txt --plot merges.png --points 50
"""


def add_parsers(sub, common):
    p = sub.add_parser("stats", parents=[common], help="compression on held-out text; --plot draws it per merge",
                       description="\n\n".join(__doc__.split("\n\n")[1:]), epilog=EXAMPLES)
    p.add_argument("args", nargs="*", metavar="FILE",
                   help="held-out text files ([TOKENIZER] FILE... without -t or -e); none or - for stdin")
    add_tokenizer_options(p)
    p.add_argument("--special", action="store_true", help="text that spells a special token counts as that token")
    p.add_argument("--plot", metavar="FILE.png",
                   help="draw vocabulary size and text length in tokens per merge, and tokens per word against "
                        "vocabulary size, into this PNG (needs matplotlib)")
    p.add_argument("--points", type=int, default=32, metavar="N",
                   help="--plot: encode the text at N + 1 merge counts (default: %(default)s)")
    p.set_defaults(run=run)


def run(args):
    tok, paths = tokenizer_and_files(args)
    if args.points < 1:
        raise UsageError("--points must be at least 1")
    inputs = paths + ([tok.path] if tok.path else [])
    check_not_input("-", inputs)
    if args.plot is not None:
        check_not_input(args.plot, inputs)  # before the work: never the model or a text
        if tok.is_wordpiece:
            raise UsageError("--plot draws BPE's merges one by one; WordPiece encodes longest match first, "
                             "not merge by merge")
        _pyplot_figure()  # fail before the work when matplotlib is missing
    texts = [read_text(path) for path in paths]
    ids = [tok.encode(text, args.special) for text in texts]
    n_tokens = sum(map(len, ids))
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    n_chars = sum(map(len, texts))
    n_words = sum(len(t.split()) for t in texts)
    used = set().union(*map(set, ids))
    names = ", ".join("<stdin>" if p == "-" else p for p in paths)
    out = sys.stdout
    out.write("tokenizer    %s: %s\n" % (tok.label, tok.describe()))
    out.write("held-out     %s: %d bytes, %d characters, %d words\n" % (names, n_bytes, n_chars, n_words))
    out.write("tokens       %d\n" % n_tokens)
    out.write("bytes/token  %s\n" % _ratio(n_bytes, n_tokens))
    out.write("chars/token  %s\n" % _ratio(n_chars, n_tokens))
    out.write("tokens/word  %s\n" % _ratio(n_tokens, n_words))
    out.write("vocabulary   %d of %d tokens used (%.1f%%), %d never\n"
              % (len(used), tok.vocab_size, 100 * len(used) / max(tok.vocab_size, 1), tok.vocab_size - len(used)))
    if tok.unknown_id is not None:
        unknown = sum(row.count(tok.unknown_id) for row in ids)
        out.write("unknown      %d tokens are %s (%.2f%%)\n"
                  % (unknown, tok.id_to_piece[tok.unknown_id], 100 * unknown / max(n_tokens, 1)))
    exact = all(tok.decode(row) == text for row, text in zip(ids, texts))
    out.write("round trip   %s\n" % ("exact: decode gives the text back" if exact else
                                     "lossy: decode gives other text (whitespace, case or <UNK>)"))
    if args.plot is not None:
        curve = merge_curve(tok, texts, args.points, args.special, args.backend)
        atomic_write(args.plot, plot_png(curve, n_words, "%s on %s" % (tok.label, names)),
                     inputs=[p for p in inputs if p != "-"])
        out.write("plot         %s: %d points, %d to %d tokens\n"
                  % (args.plot, len(curve), curve[0][2], curve[-1][2]))
    return 0


def _ratio(a, b):
    return "%.3f" % (a / b) if b else "-"


def merge_curve(tok, texts, points, special, backend):
    """[(merges k, vocabulary size, tokens of the texts)] for k from 0 to
    all the merges, at points + 1 values of k (fewer when there are fewer
    merges).  Each k encodes with a copy of the tokenizer that has only its
    first k merges."""
    merges = merges_of(tok)
    total = len(merges)
    # Denser where the curves bend (the first merges shorten the text most).
    ks = sorted({round(total * (j / points) ** 2) for j in range(points + 1)})
    base = tok.vocab_size - len(tok.specials) - len({m[2] for m in merges})
    curve = []
    for k, truncated in zip(ks, _truncated(tok, merges, ks, backend)):
        tokens = sum(len(truncated.encode(text, special)) for text in texts)
        curve.append((k, base + len({m[2] for m in merges[:k]}), tokens))
    return curve


def _truncated(tok, merges, ks, backend):
    """A Tok with the first k merges of `tok`, for each k in `ks`."""
    if tok.is_encoding:
        from .. import Encoding

        enc = tok.tokenizer
        ranks = enc.mergeable_ranks
        made = {m for _, _, m, _ in merges}
        base = {t: r for t, r in ranks.items() if r not in made}
        pieces = tok.id_to_piece
        for k in ks:
            kept = dict(base)
            kept.update((pieces[m], m) for _, _, m, _ in merges[:k])
            yield Tok(Encoding("%s-%d" % (enc.name, k), pat_str=enc.pat_str, mergeable_ranks=kept,
                               special_tokens=enc.special_tokens,
                               merges=None if enc.merges is None else enc.merges[:k], backend=backend), tok.label)
        return
    # A BPETokenizer: its model file with the merge list cut (pybpe.load checks it as any file).
    from .. import load

    buffer = io.BytesIO()
    tok.tokenizer.save(buffer)
    doc = json.loads(buffer.getvalue())
    with tempfile.TemporaryDirectory(prefix="pybpe-stats-") as folder:
        path = os.path.join(folder, "model.json")
        for k in ks:
            cut = dict(doc, merges=doc["merges"][:k], merge_counts=doc["merge_counts"][:k])
            with open(path, "w", encoding="utf-8") as f:
                json.dump(cut, f)
            yield Tok(load(path, backend=backend or tok.backend), tok.label)


def _pyplot_figure():
    """matplotlib's Figure class (no pyplot: no global state, no display), or UsageError."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError("--plot needs matplotlib, which is not installed: pip install 'pybpe[plot]'") from None
    return Figure, FigureCanvasAgg


def plot_png(curve, n_words, title):
    """The two charts as PNG bytes."""
    Figure, FigureCanvasAgg = _pyplot_figure()
    merges = [k for k, _, _ in curve]
    vocab = [v for _, v, _ in curve]
    tokens = [t for _, _, t in curve]
    fig = Figure(figsize=(11, 4.4), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    fig.suptitle("pybpe stats: %s" % title)
    left, right = fig.subplots(1, 2)

    left.set_title("Each merge: one more token, a shorter text")
    left.plot(merges, vocab, color="tab:blue", label="vocabulary size")
    left.set_xlabel("merges learned")
    left.set_ylabel("vocabulary size (tokens)", color="tab:blue")
    left.tick_params(axis="y", labelcolor="tab:blue")
    length = left.twinx()
    length.plot(merges, tokens, color="tab:orange", marker=".", label="held-out text")
    length.set_ylabel("held-out text length (tokens)", color="tab:orange")
    length.tick_params(axis="y", labelcolor="tab:orange")
    left.grid(alpha=0.3)

    right.set_title("Tokens per word against vocabulary size")
    per_word = [t / n_words for t in tokens] if n_words else [0 for _ in tokens]
    right.plot(vocab, per_word, color="tab:green", marker=".")
    right.axhline(1.0, color="grey", linestyle="--", linewidth=1)
    right.annotate("one token per word", (vocab[-1], 1.0), textcoords="offset points", xytext=(-4, 4),
                   ha="right", color="grey")
    right.set_xlabel("vocabulary size (tokens)")
    right.set_ylabel("tokens per word (held-out text)")
    right.set_ylim(bottom=0)
    right.grid(alpha=0.3)

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
