"""The evaluation report: one self-contained HTML file about a model on a labeled corpus.

:func:`write_report` (and ``cseq eval MODEL FILE --report report.html``)
scores a fitted model on gold-labeled sentences and writes one HTML file
that needs nothing else to be viewed (no network, no script): inline CSS
and the figures as inline SVG, drawn by matplotlib (the optional extra
``cseq-labeling[report]``; imported only here, with the Agg-free SVG canvas of
a bare :class:`matplotlib.figure.Figure`, so no global state and no display
are touched).  Its sections, each an element ``<section id=...>``:

``summary``
    The model and the corpus; overall span precision, recall and F1 (BIO or
    BIOES labels, :func:`cseq.metrics.chunk_scores`) and token accuracy.
``per-label``
    Precision, recall, F1 and support per chunk type (per label for other
    label sets).
``confusion``
    A heatmap of gold label against predicted label over tokens
    (:func:`cseq.metrics.confusion_matrix`), rows normalised to 1.
``learning-curve``
    The model's ``history_``: loss, training errors and dev scores per
    iteration (a note when the model has no history to plot).
``transitions``
    A heatmap of the transition weights (:func:`cseq.explain.transition_table`).
``calibration``
    For models with probabilities (CRF, HMM, MEMM): a reliability diagram of
    the confidence of the predicted labels (their marginals) against how
    often they are right, by confidence bin, with the expected calibration
    error; a note for the others.
``features``
    The largest state weights of each label (:func:`cseq.explain.top_features`).
``worst``
    The sentences with the most wrong tokens: each token with its gold and
    predicted label (and confidence), mistakes marked.

References
----------
Guo, C., Pleiss, G., Sun, Y., Weinberger, K. Q. (2017). On calibration of
modern neural networks. ICML (reliability diagrams, expected calibration
error).
Niculescu-Mizil, A., Caruana, R. (2005). Predicting good probabilities with
supervised learning. ICML.
"""

from __future__ import annotations

import html
import io
import os
import re
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from cseq.io._files import replacing
from cseq.exceptions import InputError
from cseq.chain.explain import top_features, transition_table
from cseq.evaluation.metrics import _token_scores, chunk_scores, confusion_matrix, detect_scheme
from cseq.chain.probability import annotate

__all__ = ["write_report", "report_html", "reliability", "SECTIONS"]

#: The ids of the report's sections, in order.
SECTIONS = ("summary", "per-label", "confusion", "learning-curve", "transitions",
            "calibration", "features", "worst")

_EXTRA_HINT = "pip install 'cseq-labeling[report]'"


def _figure_class():
    """matplotlib's Figure, or an ImportError that names the extra to install."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError("the evaluation report draws its figures with matplotlib, which is "
                          f"not installed: {_EXTRA_HINT}") from exc
    return Figure


def reliability(confidence: np.ndarray, correct: np.ndarray,
                n_bins: int = 10) -> dict[str, Any]:
    """The reliability table of predictions with confidences.

    Parameters
    ----------
    confidence : ndarray of float, shape (n,)
        Probability the model gave to each prediction, in ``[0, 1]``.
    correct : ndarray of bool, shape (n,)
        Whether each prediction was right.
    n_bins : int
        Equal-width bins over ``[0, 1]``; a confidence of exactly 1 falls in
        the last.

    Returns
    -------
    dict
        ``edges`` (n_bins + 1), per bin ``count``, ``confidence`` (mean, NaN
        when empty) and ``accuracy`` (NaN when empty), and ``ece``, the
        expected calibration error ``sum_b n_b / n * |acc_b - conf_b|``
        (0.0 without predictions).
    """
    conf = np.asarray(confidence, dtype=np.float64).ravel()
    ok = np.asarray(correct, dtype=bool).ravel()
    if conf.shape != ok.shape:
        raise InputError("confidence and correct must have the same length")
    if len(conf) and not ((conf >= 0) & (conf <= 1)).all():
        raise InputError("confidences must lie in [0, 1]")
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InputError(f"n_bins must be a positive int, got {n_bins!r}")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.minimum((conf * n_bins).astype(np.int64), n_bins - 1)
    count = np.bincount(which, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(which, weights=conf, minlength=n_bins) / count
        acc = np.bincount(which, weights=ok.astype(np.float64), minlength=n_bins) / count
    filled = count > 0
    ece = float(np.sum(count[filled] / len(conf) * np.abs(acc[filled] - mean_conf[filled]))) \
        if len(conf) else 0.0
    return {"edges": edges, "count": count, "confidence": mean_conf, "accuracy": acc,
            "ece": ece}


# ----------------------------------------------------------------------------
# figures


class _Figures:
    """Draws figures and returns them as inline SVG with ids made unique per figure."""

    def __init__(self) -> None:
        self.Figure = _figure_class()
        self.k = 0

    def new(self, width: float, height: float):
        return self.Figure(figsize=(width, height), layout="constrained")

    def svg(self, fig) -> str:
        from matplotlib import rc_context
        buf = io.StringIO()
        # Glyphs as paths (no font is needed to view it), a fixed hash salt and
        # no date, so the same report gives the same bytes.
        with rc_context({"svg.fonttype": "path", "svg.hashsalt": "cseq"}), \
                warnings.catch_warnings():
            # A label in a script the font lacks (CJK in DejaVu Sans) is drawn
            # as boxes; the tables show it as written, so no warning per glyph.
            warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
            fig.savefig(buf, format="svg", metadata={"Date": None})
        text = buf.getvalue()
        text = text[text.index("<svg"):]
        self.k += 1
        prefix = f"f{self.k}-"
        ids = set(re.findall(r'id="([^"]+)"', text))

        def rename(m: re.Match) -> str:
            name = m.group(2)
            return m.group(1) + (prefix + name if name in ids else name) + m.group(3)
        text = re.sub(r'(id="|href="#|url\(#)([^")]+)([")])', rename, text)
        return text


#: Text properties of labels drawn in a figure: shown as written.  Matplotlib
#: reads a string between two ``$`` as mathtext (a label ``$x^2$`` would be a
#: formula, ``$\\foo$`` an error), and with ``text.usetex`` as LaTeX.
_LITERAL = {"parse_math": False, "usetex": False}


#: Longest label drawn on a figure's axis; the tables show every label in full.
_TICK_CHARS = 40


def _ticks(names: list[str]) -> list[str]:
    """Label names as a figure's tick labels: control characters escaped (``\\x9c``),
    each cut to ``_TICK_CHARS`` (a longer one would squeeze the plot to nothing:
    matplotlib then warns and drops the layout)."""
    shown = ["".join(c if c.isprintable() else repr(c)[1:-1] for c in n) for n in names]
    return [n if len(n) <= _TICK_CHARS else n[:_TICK_CHARS - 1] + "\u2026" for n in shown]


def _heatmap(figs: _Figures, matrix: np.ndarray, rows: list[str], cols: list[str], *,
             title: str, xlabel: str, ylabel: str, cmap: str, center: bool = False,
             annotate: np.ndarray | None = None) -> str:
    n_r, n_c = matrix.shape
    side = max(4.0, 0.32 * max(n_r, n_c) + 2.0)
    fig = figs.new(side + 1.2, side)
    ax = fig.add_subplot()
    if center:
        lim = float(np.abs(matrix).max()) or 1.0
        image = ax.imshow(matrix, cmap=cmap, vmin=-lim, vmax=lim, aspect="auto")
    else:
        image = ax.imshow(matrix, cmap=cmap, vmin=0.0, aspect="auto")
    ax.set_xticks(range(n_c), _ticks(cols), rotation=90, fontsize=7, **_LITERAL)
    ax.set_yticks(range(n_r), _ticks(rows), fontsize=7, **_LITERAL)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, shrink=0.8)
    if annotate is not None and max(n_r, n_c) <= 30:
        top = float(matrix.max()) or 1.0
        for i in range(n_r):
            for j in range(n_c):
                if annotate[i, j]:
                    ax.text(j, i, str(int(annotate[i, j])), ha="center", va="center",
                            fontsize=5, color="white" if matrix[i, j] > 0.6 * top else "black")
    return figs.svg(fig)


# ----------------------------------------------------------------------------
# sections

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto;
       max-width: 1100px; color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .2em .5em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.note { color: #666; font-style: italic; }
.figure svg { max-width: 100%; height: auto; }
.bad { background: #fde2e2; } .tok { font-family: ui-monospace, monospace; }
nav a { margin-right: 1em; }
.cols { display: flex; flex-wrap: wrap; gap: 1.5em; } .cols > div { flex: 1 1 220px; }
"""


def _pct(v: float) -> str:
    return f"{100 * v:.2f}%"


def _esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _table(header: list[str], rows: list[list[Any]], left: int = 1) -> str:
    head = "".join(f'<th class="l">{_esc(h)}</th>' if i < left else f"<th>{_esc(h)}</th>"
                   for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(
        f'<td class="l">{_esc(c)}</td>' if i < left else f"<td>{_esc(c)}</td>"
        for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _section(sid: str, title: str, body: str) -> str:
    return f'<section id="{sid}"><h2>{_esc(title)}</h2>\n{body}\n</section>\n'


def _fig(svg: str) -> str:
    return f'<div class="figure">{svg}</div>'


def _learning_curve(figs: _Figures, history: list[dict]) -> str:
    keys = [("loss", "training loss"), ("error_rate", "training error rate"),
            ("dev_accuracy", "dev token accuracy"), ("dev_f1", "dev span F1")]
    present = [(k, name) for k, name in keys
               if sum(1 for r in history if isinstance(r.get(k), (int, float))) >= 1]
    if len(history) < 2 or not present:
        return ('<p class="note">No learning curve: the model has no training history '
                f"to plot ({len(history)} recorded iteration(s)).</p>")
    fig = figs.new(4.2 * len(present), 3.2)
    for k, (key, name) in enumerate(present):
        ax = fig.add_subplot(1, len(present), k + 1)
        pts = [(r["iteration"], r[key]) for r in history if isinstance(r.get(key), (int, float))]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3)
        ax.set_xlabel("iteration")
        ax.set_title(name, fontsize=10)
        ax.grid(alpha=0.3)
    return _fig(figs.svg(fig))


def _calibration(figs: _Figures, conf: np.ndarray, ok: np.ndarray) -> str:
    table = reliability(conf, ok, 10)
    fig = figs.new(8.5, 3.6)
    ax = fig.add_subplot(1, 2, 1)
    filled = table["count"] > 0
    mids = (table["edges"][:-1] + table["edges"][1:]) / 2
    ax.plot([0, 1], [0, 1], linestyle="--", color="gray", label="perfectly calibrated")
    ax.bar(mids[filled], table["accuracy"][filled], width=0.09, alpha=0.7,
           label="accuracy in bin", edgecolor="black")
    ax.plot(table["confidence"][filled], table["accuracy"][filled], marker="o", color="C3",
            label="(mean confidence, accuracy)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence of the predicted label")
    ax.set_ylabel("fraction correct")
    ax.set_title(f"reliability diagram (ECE {100 * table['ece']:.2f}%)", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    ax2 = fig.add_subplot(1, 2, 2)
    ax2.bar(mids, table["count"], width=0.09, edgecolor="black")
    ax2.set_yscale("log" if table["count"].max() > 100 else "linear")
    ax2.set_xlim(0, 1)
    ax2.set_xlabel("confidence of the predicted label")
    ax2.set_ylabel("tokens")
    ax2.set_title("tokens per confidence bin", fontsize=10)
    rows = [[f"{table['edges'][b]:.1f}-{table['edges'][b + 1]:.1f}", int(table["count"][b]),
             f"{table['confidence'][b]:.3f}" if filled[b] else "",
             f"{table['accuracy'][b]:.3f}" if filled[b] else ""] for b in range(10)]
    return (f"<p>Expected calibration error: <b>{100 * table['ece']:.2f}%</b> over {len(conf)} "
            "tokens (10 equal-width bins).</p>" + _fig(figs.svg(fig))
            + _table(["confidence", "tokens", "mean confidence", "accuracy"], rows))


def _words_of(X: Sequence[Any]) -> list[list[str]]:
    """Display text of each token: a str itself, the first element of a list or tuple,
    the first key of a dict (its value if that is a str)."""
    out = []
    for seq in X:
        row = []
        for tok in seq:
            if isinstance(tok, str):
                row.append(tok)
            elif isinstance(tok, dict):
                key = next(iter(tok), "")
                row.append(tok[key] if isinstance(tok.get(key), str) else str(key))
            elif isinstance(tok, (list, tuple)) and tok:
                row.append(str(tok[0]))
            else:
                row.append("")
        out.append(row)
    return out


def report_html(est: Any, X: Sequence[Any], y: Sequence[Sequence[str]], *,
                words: Sequence[Sequence[str]] | None = None, scheme: str | None = "auto",
                title: str | None = None, n_worst: int = 10, top_k: int = 10,
                n_jobs: int = 1) -> str:
    """The report of :func:`write_report` as an HTML string."""
    fitted = est._check_fitted()
    figs = _Figures()
    if not isinstance(X, (list, tuple)):
        X = list(X)
    y = [list(seq) for seq in y]
    if len(X) != len(y):
        raise InputError(f"X has {len(X)} sequences but y has {len(y)}")
    for name, v in (("n_worst", n_worst), ("top_k", top_k)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise InputError(f"{name} must be a non-negative int, got {v!r}")
    words = _words_of(X) if words is None else [list(w) for w in words]
    if [len(w) for w in words] != [len(s) for s in y]:
        raise InputError("words must have one string per token of X")
    probabilistic = fitted.model.probabilistic
    if probabilistic:
        tagged = annotate(est, X, spans=False, n_jobs=n_jobs)
        pred = [t.labels for t in tagged]
        conf = [t.confidence for t in tagged]
    else:
        pred = est.predict(X, n_jobs=n_jobs)
        conf = None
    if [len(p) for p in pred] != [len(s) for s in y]:
        raise InputError("y must have one label per token of X")
    gold_labels = {lab for seq in y for lab in seq}
    if scheme == "auto":
        scheme = detect_scheme(gold_labels | set(fitted.classes))
    learner = type(est).__name__
    order = fitted.model.order
    n_tok = sum(len(s) for s in y)
    parts = []

    # summary and per-label scores
    tok = _token_scores(y, pred)
    acc = tok["n_correct"] / n_tok if n_tok else 0.0
    facts = [["learner", f"{learner} (order {order})"], ["labels", len(fitted.classes)],
             ["sentences", len(y)], ["tokens", n_tok], ["token accuracy", _pct(acc)]]
    if scheme is not None:
        cs = chunk_scores(y, pred, scheme)
        facts[3:3] = [["scheme", scheme]]
        facts += [["span precision", _pct(cs["precision"])], ["span recall", _pct(cs["recall"])],
                  ["span F1", _pct(cs["f1"])], ["gold spans", cs["support"]],
                  ["predicted spans", cs["predicted"]]]
        per = cs["per_type"]
        per_title = "Per entity type (span level)"
    else:
        per = tok["per_label"]
        per_title = "Per label (token level)"
    if conf is not None and n_tok:
        flat = np.concatenate(conf)
        facts.append(["mean confidence", f"{flat.mean():.4f}"])
    parts.append(_section("summary", "Summary", _table(["", "value"], facts)))
    rows = [[name, _pct(d["precision"]), _pct(d["recall"]), _pct(d["f1"]), d["support"]]
            for name, d in per.items()]
    body = _table(["label" if scheme is None else "type", "precision", "recall", "F1",
                   "support"], rows)
    if rows:
        fig = figs.new(7.0, max(2.0, 0.28 * len(rows) + 1.0))
        ax = fig.add_subplot()
        names = [str(r[0]) for r in rows]
        ax.barh(range(len(rows)), [per[n]["f1"] for n in per], color="C0")
        ax.set_yticks(range(len(rows)), _ticks(names), fontsize=7, **_LITERAL)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("F1")
        ax.grid(axis="x", alpha=0.3)
        body = f'<div class="cols"><div>{body}</div><div>{_fig(figs.svg(fig))}</div></div>'
    parts.append(_section("per-label", per_title, body))

    # confusion matrix
    labels, counts = confusion_matrix(y, pred, labels=sorted(gold_labels | set(fitted.classes)))
    with np.errstate(invalid="ignore", divide="ignore"):
        norm = counts / counts.sum(axis=1, keepdims=True)
    norm = np.nan_to_num(norm)
    labels = [str(v) for v in labels]
    svg = _heatmap(figs, norm, labels, labels, title="gold (rows) against predicted "
                   "(columns), each row sums to 1", xlabel="predicted", ylabel="gold",
                   cmap="Blues", annotate=counts)
    off = counts.copy()
    np.fill_diagonal(off, 0)
    top = np.argsort(-off, axis=None, kind="stable")[:10]
    conf_rows = [[labels[i], labels[j], int(off[i, j])]
                 for i, j in zip(*np.unravel_index(top, off.shape)) if off[i, j] > 0]
    parts.append(_section("confusion", "Confusion matrix (tokens)", _fig(svg) + (
        "<p>Most frequent confusions:</p>" + _table(["gold", "predicted", "tokens"], conf_rows,
                                                     left=2) if conf_rows else "")))

    # learning curve
    parts.append(_section("learning-curve", "Learning curve",
                          _learning_curve(figs, list(getattr(est, "history_", None) or []))))

    # transitions
    table = transition_table(est)
    classes = list(table)
    mat = np.array([[table[a][b] for b in classes] for a in classes])
    parts.append(_section("transitions", "Transition weights", _fig(_heatmap(
        figs, mat, classes, classes, title="weight of previous label (rows) followed by next "
        "label (columns)", xlabel="next label", ylabel="previous label", cmap="RdBu_r",
        center=True))))

    # calibration
    if conf is not None and n_tok:
        flat_conf = np.concatenate(conf)
        flat_ok = np.concatenate([np.asarray(p, dtype=object) == np.asarray(g, dtype=object)
                                  for p, g in zip(pred, y) if len(g)])
        body = _calibration(figs, np.clip(flat_conf, 0.0, 1.0), flat_ok.astype(bool))
    else:
        body = (f'<p class="note">No calibration plot: {learner} models give no '
                "probabilities (a CRF, an HMM or a MEMM does).</p>")
    parts.append(_section("calibration", "Calibration of the token marginals", body))

    # top features
    feats = top_features(est, None, int(top_k))
    cells = []
    for label, items in feats.items():
        rows = [[name, f"{w:.4f}"] for name, w in items]
        cells.append(f"<div><h3>{_esc(label)}</h3>{_table(['feature', 'weight'], rows)}</div>")
    parts.append(_section("features", f"Top {top_k} features per label",
                          f'<div class="cols">{"".join(cells)}</div>'))

    # worst sentences
    errors = [sum(a != b for a, b in zip(p, g)) for p, g in zip(pred, y)]
    mean_conf = [float(np.mean(c)) if conf is not None and len(c) else 1.0
                 for c in (conf or [[]] * len(y))]
    ranked = sorted((s for s in range(len(y)) if errors[s] > 0),
                    key=lambda s: (-errors[s], mean_conf[s], s))[:int(n_worst)]
    blocks = []
    for s in ranked:
        header = ["token", "gold", "predicted"] + (["confidence"] if conf is not None else [])
        rows_html = []
        for t, (w, g, p) in enumerate(zip(words[s], y[s], pred[s])):
            cls = ' class="bad"' if g != p else ""
            cells_ = [f'<td class="l tok">{_esc(w)}</td>', f'<td class="l">{_esc(g)}</td>',
                      f'<td class="l">{_esc(p)}</td>']
            if conf is not None:
                cells_.append(f"<td>{conf[s][t]:.3f}</td>")
            rows_html.append(f"<tr{cls}>{''.join(cells_)}</tr>")
        head = "".join(f'<th class="l">{h}</th>' for h in header)
        blocks.append(f"<h3>Sentence {s + 1}: {errors[s]} wrong of {len(y[s])}</h3>"
                      f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows_html)}"
                      "</tbody></table>")
    body = "".join(blocks) if blocks else '<p class="note">Every sentence is labeled right.</p>'
    parts.append(_section("worst", f"The {len(ranked)} worst sentences (most wrong tokens"
                          + (", then lowest mean confidence)" if conf is not None else ")"),
                          body))

    title = title or f"cseq evaluation: {learner}"
    nav = "".join(f'<a href="#{sid}">{sid.replace("-", " ")}</a>' for sid in SECTIONS)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>"
            f"<h1>{_esc(title)}</h1><nav>{nav}</nav>\n" + "".join(parts) + "</body></html>\n")


def write_report(est: Any, X: Sequence[Any], y: Sequence[Sequence[str]],
                 path: str | os.PathLike[str], *, words: Sequence[Sequence[str]] | None = None,
                 scheme: str | None = "auto", title: str | None = None, n_worst: int = 10,
                 top_k: int = 10, n_jobs: int = 1) -> None:
    """Write the evaluation report of a fitted model on ``X`` with gold labels ``y``.

    Parameters
    ----------
    est : a fitted estimator.
    X : sequences, as given to ``predict``.
    y : gold label sequences.
    path : where to write the HTML file (UTF-8); a temporary file renamed onto
        it when the report is complete, so an error leaves an existing file as it was.
    words : token texts to show, one list per sequence; by default each
        token's text (a str token, the first element of a list or tuple, a
        dict's first key or its value if that is a str).
    scheme : {"auto", None, "iob2", "iob1", "bioes", "iobes"}
        Chunk scheme of the span scores; "auto" detects BIO or BIOES labels
        (:func:`cseq.metrics.detect_scheme`), None scores tokens per label.
    title : str, optional
    n_worst : int
        Worst sentences shown.
    top_k : int
        Features shown per label.
    n_jobs : int
        Threads for prediction.

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install 'cseq-labeling[report]'``).
    InputError
        If ``X`` and ``y`` do not align.
    """
    text = report_html(est, X, y, words=words, scheme=scheme, title=title, n_worst=n_worst,
                       top_k=top_k, n_jobs=n_jobs)
    with replacing(path) as f:
        f.write(text)

