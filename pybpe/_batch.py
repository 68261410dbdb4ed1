"""Model-ready batches: the encode_batch options both classes share.

BPETokenizer.encode_batch and Encoding.encode_batch encode a list of texts
to a list of ID lists, as they always did.  Given any of the options below
they hand the rows to `shape`, which makes what a model's input pipeline
wants -- the layout of a Hugging Face tokenizer's batch:

    {"input_ids": rows, "attention_mask": rows of 1 (a token) / 0 (padding)}

add_special_tokens wraps each row in the tokenizer's <bos> / <eos> (an
Encoding has no <bos>; its <eos> is <|endoftext|>); truncation=True cuts
each row's text part so the row fits max_length; padding=True (or
"longest") pads every row to the longest, "max_length" to max_length, on
the right or, with padding_side="left", the left, with pad_id (default the
tokenizer's <pad>, else its <eos>); return_numpy=True gives int64 arrays
(NumPy imported only then), which needs rows of one length.  Every option
is checked before anything is built, and a row that cannot fit is an error,
never a ragged "rectangular" batch.
"""

import operator

PADDING = (False, True, "longest", "max_length", "do_not_pad")


def wanted(padding, truncation, max_length, pad_id, add_special_tokens, return_attention_mask, return_numpy,
           padding_side):
    """True when any model-ready option is given (the result is then a dict)."""
    return bool(padding or truncation or add_special_tokens or return_attention_mask or return_numpy
                or max_length is not None or pad_id is not None or padding_side != "right")


def shape(rows, *, padding, truncation, max_length, pad_id, add_special_tokens, return_attention_mask,
          return_numpy, padding_side, bos_id, eos_id, default_pad_id, check_id):
    """The batch dict for `rows` (lists of IDs, one per text; see the module
    docstring).  bos_id / eos_id / default_pad_id: the tokenizer's, or None;
    check_id(i, what) raises for an ID that is no token of it."""
    if padding not in PADDING:
        raise ValueError("padding must be True / 'longest', 'max_length' or False, not %r" % (padding,))
    if padding_side not in ("right", "left"):
        raise ValueError("padding_side must be 'right' or 'left', not %r" % (padding_side,))
    padding = {True: "longest", "do_not_pad": False}.get(padding, padding)
    if max_length is not None:
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
            raise ValueError("max_length must be an int >= 1, not %r" % (max_length,))
        if not truncation and padding != "max_length":
            raise ValueError("max_length=%d does nothing without truncation=True or padding='max_length'"
                             % max_length)
    elif truncation or padding == "max_length":
        raise ValueError("%s needs max_length=N" % ("truncation=True" if truncation else "padding='max_length'"))
    head, tail = [], []
    if add_special_tokens:
        if bos_id is None and eos_id is None:
            raise ValueError("add_special_tokens=True needs a <bos> or <eos> special token: train with "
                             "special_tokens=['<pad>', '<bos>', '<eos>']")
        head = [] if bos_id is None else [bos_id]
        tail = [] if eos_id is None else [eos_id]
    if padding:
        if pad_id is None:
            pad_id = default_pad_id
        if pad_id is None:
            raise ValueError("padding needs a pad token: pass pad_id=N, or train with special_tokens=['<pad>', ...]")
        if isinstance(pad_id, bool) or not hasattr(pad_id, "__index__"):
            raise TypeError("pad_id must be an int token ID, not %s" % type(pad_id).__name__)
        pad_id = operator.index(pad_id)  # a NumPy integer too
        check_id(pad_id, "pad_id")
    elif pad_id is not None:
        raise ValueError("pad_id=%r does nothing without padding=True or padding='max_length'" % (pad_id,))
    room = None
    if truncation:
        room = max_length - len(head) - len(tail)
        if room < 0:
            raise ValueError("max_length=%d leaves no room for <bos> and <eos>" % max_length)
    rows = [head + (row if room is None else row[:room]) + tail for row in rows]
    lengths = [len(row) for row in rows]
    if padding:
        width = max_length if padding == "max_length" else max(lengths, default=0)
        for index, n in enumerate(lengths):
            if n > width:
                raise ValueError("texts[%d] is %d tokens, more than max_length=%d: pass truncation=True"
                                 % (index, n, width))
        if padding_side == "right":
            rows = [row + [pad_id] * (width - len(row)) for row in rows]
            masks = [[1] * n + [0] * (width - n) for n in lengths]
        else:
            rows = [[pad_id] * (width - len(row)) + row for row in rows]
            masks = [[0] * (width - n) + [1] * n for n in lengths]
    else:
        if padding_side != "right":
            raise ValueError("padding_side=%r does nothing without padding" % (padding_side,))
        masks = [[1] * n for n in lengths]
    result = {"input_ids": rows}
    if return_attention_mask is not False:
        result["attention_mask"] = masks
    if return_numpy:
        if len(set(lengths if not padding else [len(rows[0])] if rows else [])) > 1:
            raise ValueError("return_numpy=True needs rows of one length: pass padding=True")
        try:
            import numpy  # late: NumPy is optional, needed here only
        except ImportError:
            raise ImportError("return_numpy=True needs NumPy, which pybpe itself does not require") from None
        width = len(rows[0]) if rows else 0
        result = {key: numpy.array(value, dtype=numpy.int64).reshape(len(value), width)
                  for key, value in result.items()}
    return result
