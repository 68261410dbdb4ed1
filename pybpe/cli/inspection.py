"""`pybpe inspect`: what a tokenizer holds -- its merges with their counts, its longest tokens, its vocabulary.

The summary names the kind and flavour and the sizes, then lists the first
merges (rank, the pair, the token it makes, and the count it had when it was
chosen: how many times the pair occurred in the training corpus at that
point; encodings and imported files have no counts) and the longest tokens.
--vocab prints the whole vocabulary instead, one `ID<TAB>token` line each
(tokens spelled as `encode --pieces` spells them), for grep and diff.
"""
import sys

from ._common import UsageError, add_tokenizer_options, piece_text, tokenizer_from_args

EXAMPLES = """\
examples:
  pybpe inspect -t tok.json                    summary, first 10 merges, 10 longest tokens
  pybpe inspect gpt2 --merges 30 --longest 0
  pybpe inspect -t tok.json --vocab | grep -c .
"""


def add_parsers(sub, common):
    p = sub.add_parser("inspect", parents=[common], help="show a tokenizer's merges, longest tokens, vocabulary",
                       description=__doc__.split("\n\n")[1].replace("\n", " "), epilog=EXAMPLES)
    p.add_argument("args", nargs="*", metavar="TOKENIZER", help="the tokenizer, if not given with -t or -e")
    add_tokenizer_options(p)
    p.add_argument("--merges", type=int, default=10, metavar="N",
                   help="how many merges to list, in rank order (default: %(default)s; -1 for all)")
    p.add_argument("--longest", type=int, default=10, metavar="N",
                   help="how many of the longest tokens to list (default: %(default)s)")
    p.add_argument("--vocab", action="store_true", help="print the whole vocabulary, one ID<TAB>token per line")
    p.set_defaults(run=run)


def merges_of(tok):
    """[(left ID, right ID, merged ID, count or None)] by rank."""
    t = tok.tokenizer
    if tok.is_encoding:
        from ..formats import merges_from_ranks

        ranks = t.mergeable_ranks
        pairs = t.merges if t.merges is not None else merges_from_ranks(ranks)
        pieces = tok.id_to_piece
        return [(a, b, ranks[pieces[a] + pieces[b]], None) for a, b in pairs]
    ids = t.token_to_id
    if tok.is_wordpiece:  # (a, "##b") makes a + b; the count is count(ab) when chosen
        made = [a + b[len(t.prefix):] for a, b in t.merges]
        return [(ids[a], ids[b], ids[m], score[0]) for (a, b), m, score in zip(t.merges, made, t.merge_scores)]
    return [(ids[a], ids[b], ids[a + b], n or None) for (a, b), n in zip(t.merges, t.merge_counts)]


def run(args):
    tok, rest = tokenizer_from_args(args, args.args)
    if rest:
        raise UsageError("unexpected arguments: %s" % " ".join(rest))
    out = sys.stdout
    pieces = tok.id_to_piece
    if args.vocab:
        for i in sorted(pieces):
            out.write("%d\t%s\n" % (i, piece_text(pieces[i], plain=True)))
        return 0
    out.write("%s: %s\n" % (tok.label, tok.describe()))
    if tok.specials:
        shown = sorted(tok.specials.items(), key=lambda item: item[1])
        out.write("special tokens: %s\n" % ", ".join("%s=%d" % (s, i) for s, i in shown[:8])
                  + (" and %d more" % (len(shown) - 8) if len(shown) > 8 else ""))
    if args.merges:
        merges = merges_of(tok)
        listed = merges if args.merges < 0 else merges[:args.merges]
        out.write("%s %d merges (rank: left + right -> token, count when chosen):\n"
                  % ("all" if len(listed) == len(merges) else "first", len(listed)))
        for rank, (a, b, merged, n) in enumerate(listed):
            out.write("%7d: %-14s + %-14s -> %-16s %s\n" % (
                rank, piece_text(pieces[a], True), piece_text(pieces[b], True), piece_text(pieces[merged], True),
                "-" if n is None else n))
    if args.longest:
        specials = set(tok.specials.values())
        longest = sorted((i for i in pieces if i not in specials), key=lambda i: (-len(pieces[i]), i))
        unit = "bytes" if tok.byte_level else "characters"
        out.write("longest %d tokens (ID, %s, token):\n" % (min(args.longest, len(longest)), unit))
        for i in longest[:args.longest]:
            out.write("%7d  %3d  %s\n" % (i, len(pieces[i]), piece_text(pieces[i], True)))
    return 0
