"""Writing sentences and their labels as a CoNLL column file.

Every value is checked before it is written: one that could not be read
back as the same column (empty, blank, holding the separator or a line end)
is refused, naming its sentence and token.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

from cseq.exceptions import InputError, InputTypeError

__all__ = ["write_conll"]


@contextmanager
def _open_out(file: Any, encoding: str) -> Iterator[IO[str]]:
    if isinstance(file, (str, os.PathLike)):
        with open(file, "w", encoding=encoding, newline="\n") as f:
            yield f
    elif hasattr(file, "write"):
        yield file
    else:
        raise InputTypeError(
            f"file must be a path or a text file object, got {type(file).__name__}"
        )


def _check_field(value: Any, sep: str, where: str) -> str:
    if not isinstance(value, str):
        raise InputTypeError(f"{where}: expected str, got {type(value).__name__} ({value!r})")
    if not value or value.isspace() or sep in value or "\n" in value or "\r" in value:
        raise InputError(
            f"{where}: {value!r} cannot be written as a column: it is empty, blank, "
            f"or holds the separator {sep!r} or a line end"
        )
    return value


def write_conll(
    file: str | os.PathLike[str] | IO[str],
    rows_or_tokens: Iterable[Sequence[str | Sequence[str]]],
    labels: Iterable[Sequence[str]],
    *,
    marginals: Iterable[Sequence[float]] | None = None,
    sep: str = "\t",
    encoding: str = "utf-8",
) -> int:
    """Write sentences as a CoNLL file: input columns, then the label.

    Parameters
    ----------
    file : str, os.PathLike or text file object
        Where to write.  A path is created or overwritten, with LF line ends.
    rows_or_tokens : iterable of sequences
        One sequence per sentence; each token is a str (one column) or a
        sequence of str (several columns, as read by :func:`read_conll`).
    labels : iterable of sequences of str
        The label of every token, written as the next column.
    marginals : iterable of sequences of float, optional
        The probability of every written label (e.g. from
        ``predict_marginals``), written as a last column formatted with four
        decimals (``0.9731``).
    sep : str, default "\\t"
        Column separator.
    encoding : str, default "utf-8"
        Encoding of a path.

    Returns
    -------
    int
        Number of sentences written.  Each sentence is followed by a blank
        line.  Sentences are written as they are checked, so after an error
        the file holds the sentences before the faulty one.

    Raises
    ------
    InputError
        If the arguments hold different numbers of sentences or tokens (with
        the sentence index), or a value is empty, blank, or contains ``sep`` or
        a line end (it could not be read back).
    InputTypeError
        If a value is not a str (a marginal not a real number).
    """
    if not isinstance(sep, str) or not sep or "\n" in sep or "\r" in sep:
        raise InputError(f"sep must be a non-empty string without line ends, got {sep!r}")
    arguments = (("rows_or_tokens", rows_or_tokens), ("labels", labels), ("marginals", marginals))
    for name, arg in arguments:
        if isinstance(arg, (str, bytes)) or (arg is not None and not hasattr(arg, "__iter__")):
            raise InputTypeError(
                f"{name} must be an iterable of sequences, one per sentence, "
                f"got {type(arg).__name__}"
            )
    missing = object()
    sentences = iter(rows_or_tokens)
    label_seqs = iter(labels)
    marg_seqs = iter(marginals) if marginals is not None else None
    n = 0
    with _open_out(file, encoding) as out:
        while True:
            toks = next(sentences, missing)
            labs = next(label_seqs, missing)
            margs = next(marg_seqs, missing) if marg_seqs is not None else None
            if toks is missing and labs is missing and (margs is missing or margs is None):
                return n
            if toks is missing or labs is missing or margs is missing:
                raise InputError(
                    f"rows_or_tokens, labels{' and marginals' if marg_seqs else ''} "
                    f"hold different numbers of sentences (one ends at sentence {n})"
                )
            for name, seq in (("rows_or_tokens", toks), ("labels", labs), ("marginals", margs)):
                if seq is not None and (isinstance(seq, str) or not hasattr(seq, "__len__")):
                    raise InputTypeError(
                        f"{name}[{n}] must be a sequence (list, tuple or array), "
                        f"got {type(seq).__name__}"
                    )
            if len(toks) != len(labs) or (margs is not None and len(margs) != len(toks)):
                counts = f"{len(toks)} tokens, {len(labs)} labels"
                if margs is not None:
                    counts += f", {len(margs)} marginals"
                raise InputError(f"sentence {n}: {counts}")
            lines = []
            for i, (tok, lab) in enumerate(zip(toks, labs)):
                where = f"sentence {n}, token {i}"
                if isinstance(tok, str):
                    cols = [tok]
                elif isinstance(tok, Sequence):
                    cols = list(tok)
                else:
                    raise InputTypeError(
                        f"{where}: a token must be a str or a sequence of str, "
                        f"got {type(tok).__name__}"
                    )
                cols = [_check_field(c, sep, where) for c in cols]
                cols.append(_check_field(lab, sep, where + " (label)"))
                if margs is not None:
                    try:
                        cols.append(f"{float(margs[i]):.4f}")
                    except (TypeError, ValueError):
                        raise InputTypeError(
                            f"{where}: marginal {margs[i]!r} is not a number"
                        ) from None
                lines.append(sep.join(cols))
            lines.append("")
            out.write("\n".join(lines) + "\n")
            n += 1
