"""The HTML evaluation report: its sections, its reliability table, the CLI, and a real browser.

The browser test opens the report in headless Chromium (Debian's ``chromium``
package, which ``.ci/run`` installs) and reads the DOM Chromium built: every
section, the inline SVG figures, no script error.  Without Chromium it skips,
except under ``CSEQ_REQUIRE_DATA=1`` (``.ci/run``), where it fails.  matplotlib
is in the ``test`` extra, so the report tests always run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import cseq
from cseq import report
from cseq.exceptions import InputError

from support.cli_run import TRAIN, run
from support.registered import commands, quick

pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

X = [[["w=Ann"], ["w=Lee"], ["w=in"], ["w=Paris"]],
     [["w=Bob"], ["w=went"], ["w=to"], ["w=New"], ["w=York"]],
     [["w=in"], ["w=Rome"]],
     [["w=Ann"], ["w=to"], ["w=Rome"]]]
Y = [["B-PER", "I-PER", "O", "B-LOC"],
     ["B-PER", "O", "O", "B-LOC", "I-LOC"],
     ["O", "B-LOC"],
     ["B-PER", "O", "B-LOC"]]
GOLD = [["B-PER", "I-PER", "O", "B-LOC"],
        ["B-PER", "O", "O", "B-LOC", "I-LOC"],
        ["O", "B-PER"],
        ["B-LOC", "O", "O"]]


def _sections(text: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', text)


def test_reliability_table_by_hand():
    conf = np.array([0.05, 0.15, 0.12, 0.95, 1.0, 0.55])
    ok = np.array([False, True, False, True, True, False])
    t = report.reliability(conf, ok, n_bins=10)
    assert t["count"].tolist() == [1, 2, 0, 0, 0, 1, 0, 0, 0, 2]
    assert t["accuracy"][1] == 0.5 and t["accuracy"][9] == 1.0 and t["accuracy"][5] == 0.0
    assert t["confidence"][1] == pytest.approx(0.135)
    assert np.isnan(t["accuracy"][2])
    # ECE: sum over bins of n_b / n * |acc_b - conf_b|.
    want = (1 * abs(0 - 0.05) + 2 * abs(0.5 - 0.135) + 1 * abs(0 - 0.55)
            + 2 * abs(1 - 0.975)) / 6
    assert t["ece"] == pytest.approx(want)
    assert report.reliability(np.zeros(0), np.zeros(0, dtype=bool))["ece"] == 0.0
    with pytest.raises(InputError):
        report.reliability(np.array([1.5]), np.array([True]))
    with pytest.raises(InputError):
        report.reliability(np.array([0.5]), np.array([True, False]))


#: Every registered learner (its quick settings), the CRF as the CLI trains it, and at order 2.
_REPORTED = {**{name: lambda name=name: quick(name) for name in commands()},
             "crf-c2": lambda: cseq.CRF(c2=0.1, max_iter=30),
             "crf-order2": lambda: cseq.CRF(order=2, max_iter=10)}


@pytest.mark.parametrize("name", list(_REPORTED))
def test_report_has_every_section_and_needs_nothing_else(name):
    est = _REPORTED[name]()
    est.fit(X, Y, X, Y)
    text = report.report_html(est, X, GOLD, n_worst=2)
    assert _sections(text) == list(report.SECTIONS)
    assert text.startswith("<!DOCTYPE html>")
    # Self-contained: no script, no external resource (the SVG namespace URIs
    # are names, not fetched).
    assert "<script" not in text and "<img" not in text and "<link" not in text
    assert not re.search(r'(src|href)="(https?:)?//', text)
    assert "@import" not in text and "url(http" not in text
    svgs = text.count("<svg")
    probabilistic = est.model_.probabilistic
    curve = len(est.history_) >= 2  # the HMM counts in one pass: no curve to draw
    # per-label F1 bars, confusion, transitions (+ learning curve, + calibration)
    assert svgs == 3 + curve + probabilistic
    # ids are unique across the inline figures
    ids = re.findall(r' id="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    assert ("Expected calibration error" in text) == probabilistic
    # The worst sentences: sentences 3 and 4 have wrong tokens.
    worst = text[text.index('<section id="worst"'):]
    pred = est.predict(X)
    wrong = [sum(a != b for a, b in zip(p, g)) for p, g in zip(pred, GOLD)]
    ranked = sorted((s for s in range(4) if wrong[s]), key=lambda s: -wrong[s])
    assert len(re.findall(r"<h3>Sentence ", worst)) == min(2, len(ranked))
    assert f"Sentence {ranked[0] + 1}: {wrong[ranked[0]]} wrong" in worst
    assert worst.count('class="bad"') == sum(sorted(wrong, reverse=True)[:2])
    summary = text[:text.index('<section id="per-label"')]
    f1 = cseq.metrics.chunk_f1(GOLD, pred)
    assert f"{100 * f1:.2f}%" in summary


def test_report_names_template_features_by_what_they_test():
    """The features table reads ``%x[0,0]=Rome``, not ``U00:Rome``."""
    words = [[t[0][2:] for t in x] for x in X]
    est = cseq.StructuredPerceptron(max_iter=3, random_state=0, features=cseq.TemplateFeaturizer(
        "U00:%x[0,0]\nU01:%x[-1,0]")).fit(words, Y)
    text = report.report_html(est, words, GOLD)
    features = text[text.index('<section id="features"'):]
    features = features[:features.index("</section>")]
    assert '<td class="l">%x[0,0]=Rome</td>' in features
    assert not re.search(r"<td[^>]*>U0[01]:", features)


def test_report_on_token_labels_and_without_history(tmp_path):
    Xp = [["the", "dog", "barks"], ["a", "cat", "sleeps"]]
    yp = [["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB"]]
    hmm = cseq.HMM().fit(Xp, yp)
    path = tmp_path / "r.html"
    report.write_report(hmm, Xp, yp, path)
    text = path.read_text(encoding="utf-8")
    assert _sections(text) == list(report.SECTIONS)
    assert "Per label (token level)" in text and "No learning curve" in text
    assert "Every sentence is labeled right" in text
    assert ">dog<" in text  # the words of str tokens are shown


def test_report_refuses_misaligned_input():
    crf = cseq.CRF(max_iter=5).fit(X, Y)
    with pytest.raises(InputError):
        report.report_html(crf, X, GOLD[:2])
    with pytest.raises(InputError):
        report.report_html(crf, X, [g[:-1] for g in GOLD])
    with pytest.raises(InputError):
        report.report_html(crf, X, GOLD, n_worst=-1)


def test_report_without_matplotlib_names_the_extra(monkeypatch):
    crf = cseq.CRF(max_iter=5).fit(X, Y)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"cseq-labeling\[report\]"):
        report.report_html(crf, X, GOLD)


def test_cli_eval_writes_the_report(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text(TRAIN, encoding="utf-8")
    model = tmp_path / "m.cseq"
    assert run("train", train, "-o", model, "--template", "chunk", "--algorithm", "crf",
               "--max-iter", "20", "--quiet").returncode == 0
    out = tmp_path / "r.html"
    res = run("eval", model, train, "--report", out)
    assert res.returncode == 0, res.stderr
    assert "span F1" in res.stdout and str(out) in res.stderr
    text = out.read_text(encoding="utf-8")
    assert _sections(text) == list(report.SECTIONS)
    assert ">barks<" in text or "Every sentence is labeled right" in text


def test_labels_are_drawn_as_written_not_as_mathtext(tmp_path, monkeypatch):
    # Matplotlib reads text between two "$" as a formula: "$\\foo$" is an
    # unknown command (an error), "$x^2$" would be drawn as x squared.
    from matplotlib.text import Text
    as_math = []
    preprocess = Text._preprocess_math

    def spy(self, s):
        out = preprocess(self, s)
        if out[1]:
            as_math.append(s)
        return out
    monkeypatch.setattr(Text, "_preprocess_math", spy)
    odd = {"B-PER": "$\\foo$", "I-PER": "$x^2$", "B-LOC": "$\\alpha$"}
    yo = [[odd.get(lab, lab) for lab in seq] for seq in Y]
    est = cseq.CRF(max_iter=10).fit(X, yo)
    text = report.report_html(est, X, yo)
    assert _sections(text) == list(report.SECTIONS)
    assert not [s for s in as_math if s in odd.values()], as_math
    # through the command line: a label "$\\foo$" no longer ends in a traceback
    train = tmp_path / "train.txt"
    train.write_text("".join("".join(f"{tok[0][2:]} {lab}\n" for tok, lab in zip(x, y)) + "\n"
                             for x, y in zip(X, yo)), encoding="utf-8")
    model = tmp_path / "m.cseq"
    r = run("train", train, "-o", model, "--template", "pos", "--algorithm", "perceptron",
            "--max-iter", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    r = run("eval", model, train, "--report", tmp_path / "r.html")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def _chromium() -> str | None:
    for name in (os.environ.get("CSEQ_CHROMIUM"), "chromium", "chromium-browser",
                 "google-chrome", "google-chrome-stable"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def test_report_renders_in_headless_chromium(tmp_path):
    browser = _chromium()
    if browser is None:
        message = "headless Chromium is not installed (apt-get install chromium)"
        if os.environ.get("CSEQ_REQUIRE_DATA") == "1":
            pytest.fail(message + "; CSEQ_REQUIRE_DATA=1 requires it (.ci/run installs it)")
        pytest.skip(message)
    crf = cseq.CRF(c2=0.1, max_iter=30).fit(X, Y, X, Y)
    page = tmp_path / "report.html"
    report.write_report(crf, X, GOLD, page)
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
            "--virtual-time-budget=2000"]
    dom = subprocess.run(args + ["--dump-dom", page.as_uri()], capture_output=True,
                         text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert _sections(dom.stdout) == list(report.SECTIONS)
    # Chromium parsed the inline figures as SVG elements.
    assert dom.stdout.count("<svg") == 5 and dom.stdout.count("</svg>") == 5
    assert "Uncaught" not in dom.stderr and ":CONSOLE(" not in dom.stderr
    shot = tmp_path / "report.png"
    res = subprocess.run(args + [f"--screenshot={shot}", "--window-size=1200,2400",
                                 page.as_uri()], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000


def test_report_with_a_very_long_label_keeps_its_figures():
    # A 1,000-character label (the model-file fuzzer made one) squeezed the
    # per-label bar chart to nothing: matplotlib warned "axes sizes collapsed
    # to zero" (an error in this suite) and dropped the layout.  Figures cut
    # long names; the tables keep them whole.
    long = "L" * 1000
    y = [[long if lab == "O" else lab for lab in seq] for seq in Y]
    est = cseq.StructuredPerceptron(max_iter=2, random_state=0).fit(X, y)
    html = report.report_html(est, X, y)
    assert long in html
    assert "L" * (report._TICK_CHARS - 1) + "\u2026" in html


def test_report_with_control_characters_and_glyphs_the_font_lacks():
    # A label holding a C1 control character (the fuzzer's "\x9c") or a script
    # DejaVu Sans lacks made matplotlib warn once per glyph ("Glyph 156
    # missing from font"): figures escape control characters, and glyphs the
    # font lacks are drawn as boxes without a warning (the tables show them).
    y = [[{"O": "a\x9cb", "B-PER": "漢字"}.get(lab, lab) for lab in seq] for seq in Y]
    est = cseq.StructuredPerceptron(max_iter=2, random_state=0).fit(X, y)
    html = report.report_html(est, X, y)
    assert "漢字" in html
