"""Hypothesis strategies shared by the cseq tests: dense chains and small labeled corpora."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = ["chains", "chains2", "corpora", "magnitude", "masks", "oracle_masks", "LABEL_NAMES",
           "DYADIC_VALUES"]

#: Label names; deliberately not in sorted order so a mix-up of label ids and
#: the sorted ``classes_`` shows.
LABEL_NAMES = ("n", "b", "z", "a")
#: Feature values that keep every perceptron score exact in float64.
DYADIC_VALUES = (0.25, 0.5, 1.5, 2.0, 3.0, -1.0, -0.5)
_FEATURES = tuple(f"f{i}" for i in range(8))
_unit = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)


@st.composite
def chains(draw, min_n: int = 1, max_n: int = 6, max_labels: int = 4, with_start_end=None):
    """A random dense chain ``(E, T, start, end)``.

    ``n`` is in ``min_n..max_n`` and ``L`` in ``1..max_labels``.  Emissions and
    the transition/start/end scores get independent scales between 1e-3 and
    1e4 (log-uniform), so both forward-backward variants run: the scaled one
    when the transition, start and end spreads are at most 250, the
    log-space one otherwise.  ``start`` and ``end`` are sometimes None (the
    documented default of zeros), unless ``with_start_end`` forces a choice.
    """
    n = draw(st.integers(min_n, max_n))
    L = draw(st.integers(1, max_labels))
    em_scale = 10.0 ** draw(st.floats(-3.0, 4.0))
    # Half of the draws favour scales above ~300, where the spread of the
    # transitions usually exceeds 250 and the log-space variant runs.
    tr_exponent = st.one_of(st.floats(-3.0, 4.0), st.floats(2.5, 4.0))
    tr_scale = draw(st.one_of(st.just(em_scale), tr_exponent.map(lambda e: 10.0 ** e)))
    E = draw(hnp.arrays(np.float64, (n, L), elements=_unit)) * em_scale
    T = draw(hnp.arrays(np.float64, (L, L), elements=_unit)) * tr_scale
    if with_start_end is None:
        with_start_end = draw(st.booleans())
    if with_start_end:
        start = draw(hnp.arrays(np.float64, (L,), elements=_unit)) * tr_scale
        end = draw(hnp.arrays(np.float64, (L,), elements=_unit)) * tr_scale
    else:
        start = end = None
    return E, T, start, end


@st.composite
def _token(draw, values: str):
    if draw(st.integers(0, 4)) == 0:
        # A dict token: numbers, booleans and string values.
        token = {}
        for name in draw(st.lists(st.sampled_from(_FEATURES), max_size=3, unique=True)):
            kind = draw(st.sampled_from(["number", "number", "true", "false", "string"]))
            if kind == "number":
                if values == "dyadic":
                    token[name] = draw(st.sampled_from(DYADIC_VALUES))
                else:
                    token[name] = draw(st.floats(-3.0, 3.0, width=32).filter(lambda v: v != 0))
            elif kind == "true":
                token[name] = True
            elif kind == "false":
                token[name] = False
            else:
                token[name] = draw(st.sampled_from(["x", "y"]))
        return token
    return draw(st.lists(st.sampled_from(_FEATURES), min_size=0, max_size=4))


@st.composite
def corpora(draw, max_seqs: int = 4, max_len: int = 5, max_labels: int = 4,
            include_empty: bool = True, values: str = "float"):
    """A small labeled corpus ``(X, y)`` as Python lists.

    Sequences have lengths ``1..max_len`` (different lengths are likely,
    length 1 is common) and, with ``include_empty``, one empty sequence is
    inserted at a random position.  Labels come from the first 1..max_labels
    names of :data:`LABEL_NAMES`; tokens are lists of a few feature strings
    (repeats possible) or, now and then, dicts carrying float (or, with
    ``values="dyadic"``, exactly representable) values, booleans and strings.
    """
    n_labels = draw(st.integers(1, max_labels))
    names = LABEL_NAMES[:n_labels]
    lengths = draw(st.lists(st.integers(1, max_len), min_size=1, max_size=max_seqs))
    X, y = [], []
    for n in lengths:
        X.append([draw(_token(values)) for _ in range(n)])
        y.append([draw(st.sampled_from(names)) for _ in range(n)])
    if include_empty:
        pos = draw(st.integers(0, len(X)))
        X.insert(pos, [])
        y.insert(pos, [])
    return X, y


_seeds = st.integers(0, 2**32 - 1)


@st.composite
def masks(draw, n: int, L: int):
    """Random constraints for an (n, L) chain; each kind absent half of the time.

    The density of allowed entries is drawn too, so that both chains with an
    allowed path and chains without one come up.
    """
    p = draw(st.sampled_from([0.5, 0.75, 0.9]))

    def maybe(shape):
        if not draw(st.booleans()):
            return None
        seed = draw(_seeds)
        return np.random.default_rng(seed).random(shape) < p

    return {"allowed": maybe((n, L)), "allowed_transitions": maybe((L, L)),
            "allowed_start": maybe((L,)), "allowed_end": maybe((L,))}


def oracle_masks(m):
    return dict(allowed=m["allowed"], trans_ok=m["allowed_transitions"],
                start_ok=m["allowed_start"], end_ok=m["allowed_end"])


@st.composite
def chains2(draw, max_n: int = 5, max_labels: int = 3):
    E, T, start, end = draw(chains(max_n=max_n, max_labels=max_labels, with_start_end=True))
    L = E.shape[1]
    exponent = draw(st.one_of(st.floats(-3.0, 2.0), st.floats(2.5, 4.0)))
    T2 = draw(hnp.arrays(np.float64, (L, L, L), elements=_unit)) * 10.0 ** exponent
    return E, T, start, end, T2


def magnitude(E, T, start, end, T2=None) -> float:
    n = E.shape[0]
    side = [np.abs(T).max()]
    side += [np.abs(a).max() for a in (start, end, T2) if a is not None]
    return 1.0 + n * float(np.abs(E).max()) + 2 * (n + 1) * float(max(side))
