"""Benchmark cseq against python-crfsuite on CoNLL-2000 chunking.

Both systems run in this one process, on the same sentences and the same
per-token attribute lists (``bench/common/features.py``), and the table puts them
side by side with a cseq / crfsuite ratio. This is a measuring tool, not a
test: it asserts nothing about speed. See ``bench/README.md`` for the rows.

    python bench/run.py                # full run, 3 repeats
    python bench/run.py --quick        # small subset, 1 repeat (CI smoke run)
    python bench/run.py --rows crf,tag --repeat 5 --json out.json
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from common import features
from common.paths import SHARED_DATA

ROWS = ("crf", "ap", "tag", "e2e", "mem")
DEFAULT_DATA = SHARED_DATA
CRFSUITE = "crfsuite"


# --------------------------------------------------------------------------
# Optional imports: each system may be missing; its cells then say so.

def _import_pycrfsuite():
    try:
        import pycrfsuite
    except ImportError as exc:  # pragma: no cover - reported in the table
        return None, f"pycrfsuite not available ({exc})"
    return pycrfsuite, None


def _import_cseq():
    try:
        import cseq
    except Exception as exc:
        return None, f"cseq not available ({type(exc).__name__}: {exc})"
    missing = [n for n in ("CRF", "StructuredPerceptron") if not hasattr(cseq, n)]
    if missing:
        return cseq, "cseq not available (no " + ", ".join(missing) + ")"
    return cseq, None


def _chunk_f1_function():
    """cseq.metrics.chunk_f1 (conlleval's rules) or None if cseq is missing."""
    try:
        from cseq.metrics import chunk_f1
    except Exception:
        return None, "unavailable (cseq.metrics not importable)"
    return chunk_f1, "cseq.metrics.chunk_f1"


# --------------------------------------------------------------------------
# Memory: peak resident set size during one call.

_PAGE = os.sysconf("SC_PAGE_SIZE")
try:
    _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
except (OSError, AttributeError):  # not glibc
    _malloc_trim = None


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def _hwm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None


def _reset_hwm():
    """Reset the kernel's peak-RSS mark (Linux >= 4.0); False if refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


class PeakRSS:
    """Peak RSS above the level just before the block, in bytes.

    A thread samples /proc/self/statm every ``interval`` seconds. That thread
    needs the GIL, and a C call that holds the GIL (pycrfsuite's trainer does)
    starves it, so where the kernel allows it we also reset and read VmHWM,
    the kernel's own high-water mark, and keep the larger of the two.
    Freed heap is handed back (malloc_trim) before the baseline is read, so
    memory left over from earlier runs does not hide new allocations.
    """

    def __init__(self, interval=0.005):
        self.interval = interval
        self.peak = None
        self.baseline = None
        self.method = None

    def __enter__(self):
        gc.collect()
        if _malloc_trim is not None:
            _malloc_trim(0)
        self._hwm_ok = _reset_hwm()
        self.baseline = _rss_bytes()
        self._max = self.baseline
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.is_set():
            rss = _rss_bytes()
            if rss > self._max:
                self._max = rss
            time.sleep(self.interval)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._max = max(self._max, _rss_bytes())
        peak, self.method = self._max, "RSS sampled every 5 ms"
        if self._hwm_ok:
            hwm = _hwm_bytes()
            if hwm is not None:
                peak = max(peak, hwm)
                self.method = "max of kernel VmHWM (reset per call) and RSS sampled every 5 ms"
        self.peak = peak - self.baseline
        return False


# --------------------------------------------------------------------------
# The two systems, each from Python lists to a trained model.

def crfsuite_train(pycrfsuite, X, y, algorithm, params, model_path):
    """Append + train; returns timings and iteration count."""
    gc.collect()
    trainer = pycrfsuite.Trainer(verbose=False)
    t0 = time.perf_counter()
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    t1 = time.perf_counter()
    trainer.select(algorithm)
    trainer.set_params(params)
    trainer.train(model_path)
    t2 = time.perf_counter()
    iterations = len(trainer.logparser.iterations)
    return {
        "total": t2 - t0,
        "append": t1 - t0,
        "train": t2 - t1,
        "iterations": iterations,
    }


def crfsuite_tag(pycrfsuite, model_path, X):
    tagger = pycrfsuite.Tagger()
    tagger.open(model_path)
    try:
        t0 = time.perf_counter()
        pred = [tagger.tag(xseq) for xseq in X]
        t1 = time.perf_counter()
    finally:
        tagger.close()
    return pred, t1 - t0


def cseq_train(factory, X, y):
    gc.collect()
    t0 = time.perf_counter()
    model = factory().fit(X, y)
    t1 = time.perf_counter()
    return model, {"total": t1 - t0, "iterations": getattr(model, "n_iter_", None)}


def cseq_tag(model, X, n_jobs):
    t0 = time.perf_counter()
    pred = model.predict(X, n_jobs=n_jobs)
    t1 = time.perf_counter()
    return pred, t1 - t0


# --------------------------------------------------------------------------
# Results table.

class Results:
    """Samples keyed by (row, measure, system), in insertion order."""

    def __init__(self):
        self.entries = {}
        self.order = []

    def add(self, row, measure, system, value, *, unit="", better=None, baseline=None):
        key = (row, measure, system)
        if key not in self.entries:
            self.entries[key] = {
                "row": row, "measure": measure, "system": system,
                "unit": unit, "better": better, "baseline": baseline,
                "samples": [], "error": None,
            }
            self.order.append(key)
        self.entries[key]["samples"].append(value)

    def fail(self, row, measure, system, message, *, unit="", better=None, baseline=None):
        key = (row, measure, system)
        if key not in self.entries:
            self.add(row, measure, system, None, unit=unit, better=better, baseline=baseline)
            self.entries[key]["samples"].clear()
        self.entries[key]["error"] = message

    def stats(self, key):
        e = self.entries[key]
        vals = [v for v in e["samples"] if v is not None]
        if not vals:
            return None
        return statistics.median(vals), min(vals), max(vals)

    def ratio(self, key):
        e = self.entries[key]
        if e["baseline"] is None or e["system"] == e["baseline"]:
            return None
        base = (e["row"], e["measure"], e["baseline"])
        if base not in self.entries:
            return None
        a, b = self.stats(key), self.stats(base)
        if a is None or b is None or not b[0]:
            return None
        return a[0] / b[0]

    def as_json(self):
        out = []
        for key in self.order:
            e = dict(self.entries[key])
            s = self.stats(key)
            e["median"], e["min"], e["max"] = s if s else (None, None, None)
            e["ratio_vs_baseline"] = self.ratio(key)
            out.append(e)
        return out


def _fmt(value, unit):
    if value is None:
        return "-"
    if unit == "%":
        return f"{value:.2f}"
    if unit == "it":
        return f"{value:.0f}" if value == int(value) else f"{value:.1f}"
    a = abs(value)
    if a >= 1000:
        return f"{value:,.0f}"
    if a >= 100:
        return f"{value:.1f}"
    if a >= 10:
        return f"{value:.2f}"
    if a >= 1:
        return f"{value:.3f}"
    return f"{value:.4f}"


def print_table(results, out=sys.stdout):
    header = ("row", "measure", "system", "median", "min-max", "ratio")
    lines = []
    prev_row = None
    for key in results.order:
        e = results.entries[key]
        s = results.stats(key)
        if e["error"] and s is None:
            median, span = e["error"], ""
        elif s is None:
            median, span = "-", ""
        else:
            median = _fmt(s[0], e["unit"])
            span = "" if s[1] == s[2] else f"{_fmt(s[1], e['unit'])}-{_fmt(s[2], e['unit'])}"
        r = results.ratio(key)
        if r is None:
            ratio = ""
        else:
            ratio = f"{r:.2f}x"
            if e["better"] == "lower":
                ratio += " (<1 better)"
            elif e["better"] == "higher":
                ratio += " (>1 better)"
        measure = e["measure"] + (f" [{e['unit']}]" if e["unit"] and e["unit"] != "it" else "")
        row = e["row"] if e["row"] != prev_row else ""
        if row and prev_row is not None:
            lines.append(None)
        prev_row = e["row"]
        lines.append((row, measure, e["system"], median, span, ratio))
    widths = [len(h) for h in header]
    for line in lines:
        if line is None:
            continue
        for i, cell in enumerate(line):
            if i == 3 and line[4] == "" and len(cell) > 40:
                continue  # long error text may overflow its column
            widths[i] = max(widths[i], len(cell))

    def fmt(cells):
        parts = []
        for i, (cell, w) in enumerate(zip(cells, widths)):
            parts.append(cell.rjust(w) if i in (3, 4) and len(cell) <= w else cell.ljust(w))
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    print(fmt(header), file=out)
    print(rule, file=out)
    for line in lines:
        print(rule if line is None else fmt(line), file=out)


# --------------------------------------------------------------------------
# Banner.

def _version(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:
        return "not installed"


def _loadavg():
    """1/5/15-minute load averages: other work on the machine skews timings."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def banner(cseq, cseq_error, pycrfsuite):
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    info = {
        "cpu": cpu,
        "cores": f"{os.cpu_count()} logical, {usable} usable by this process",
        "platform": platform.platform(),
        "python": sys.version.split()[0] + f" ({platform.python_implementation()})",
    }
    for mod in ("numpy", "scipy", "Cython"):
        try:
            info[mod.lower()] = __import__(mod).__version__
        except Exception:
            info[mod.lower()] = _version(mod)
    info["pycrfsuite"] = _version("python-crfsuite") if pycrfsuite else "not installed"
    if cseq is None:
        info["cseq"] = cseq_error
    else:
        info["cseq"] = getattr(cseq, "__version__", "?") + (f"  [{cseq_error}]" if cseq_error else "")
        openmp = getattr(cseq, "openmp_enabled", None)
        if openmp is not None:
            try:
                info["cseq.openmp_enabled()"] = str(openmp())
            except Exception as exc:
                info["cseq.openmp_enabled()"] = f"error: {exc}"
    threads = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ}
    info["load average at start"] = _loadavg()
    info["thread env"] = ", ".join(f"{k}={v}" for k, v in threads.items()) or "(none set)"
    return info


# --------------------------------------------------------------------------

def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="cseq vs python-crfsuite on CoNLL-2000 chunking, in one process.")
    p.add_argument("--quick", action="store_true",
                   help="small subset, 1 repeat, few iterations (CI smoke run)")
    p.add_argument("--repeat", type=int, default=None,
                   help="runs per measurement (default 3; 1 with --quick)")
    p.add_argument("--rows", default=",".join(ROWS),
                   help=f"comma-separated subset of {','.join(ROWS)}")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA,
                   help="the shared data folder holding conll2000/train.txt")
    p.add_argument("--crf-max-iter", type=int, default=None,
                   help="cap L-BFGS iterations for both systems "
                        "(default: each system's default stopping; 10 with --quick)")
    p.add_argument("--ap-iter", type=int, default=None,
                   help="perceptron epochs for both systems (default 10; 3 with --quick)")
    p.add_argument("--json", type=Path, default=None, help="also write results here")
    args = p.parse_args(argv)
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    bad = [r for r in rows if r not in ROWS]
    if bad:
        p.error(f"unknown rows {bad}; choose from {','.join(ROWS)}")
    args.rows = rows
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.repeat < 1:
        p.error("--repeat must be >= 1")
    if args.quick and args.crf_max_iter is None:
        args.crf_max_iter = 10
    if args.ap_iter is None:
        args.ap_iter = 3 if args.quick else 10
    return args


def load_data(args):
    path = args.data / "conll2000" / "train.txt"
    if not path.is_file():
        sys.exit(f"error: {path} not found (use --data DIR, the folder holding conll2000/)")
    from cseq.conll import read_conll
    rows, labels = read_conll(path)
    if len(rows) <= 1000:
        sys.exit(f"error: {path} has {len(rows)} sentences; need more than 1000")
    rows_train, y_train, rows_dev, y_dev = rows[:-1000], labels[:-1000], rows[-1000:], labels[-1000:]
    rows_tag = rows
    if args.quick:
        # Deterministic subset: the first sentences of each split.
        rows_train, y_train, rows_dev, y_dev = rows_train[:1000], y_train[:1000], rows_dev[:300], y_dev[:300]
        rows_tag = rows_train
    X_train = features.featurize(rows_train)
    X_dev = features.featurize(rows_dev)
    X_tag = X_train + X_dev if rows_tag is rows else X_train
    return {
        "X_train": X_train, "y_train": y_train,
        "X_dev": X_dev, "y_dev": y_dev,
        "X_tag": X_tag,
        "rows_train": rows_train, "rows_tag": rows_tag,
        "source": str(path),
    }


def _tokens(X):
    return sum(len(x) for x in X)


def main(argv=None):
    args = parse_args(argv)
    pycrfsuite, crfsuite_error = _import_pycrfsuite()
    cseq, cseq_error = _import_cseq()
    cseq_ok = cseq is not None and cseq_error is None
    cseq_cell = "cseq not available (see banner)"
    f1_score, f1_source = _chunk_f1_function()

    info = banner(cseq, cseq_error, pycrfsuite)
    width = max(len(k) for k in info)
    print("cseq benchmark: CoNLL-2000 chunking, cseq vs python-crfsuite in one process")
    for k, v in info.items():
        print(f"  {k.ljust(width)}  {v}")

    t_load = time.perf_counter()
    data = load_data(args)
    t_load = time.perf_counter() - t_load
    X, y, Xd, yd = data["X_train"], data["y_train"], data["X_dev"], data["y_dev"]
    labels = sorted({t for s in y for t in s})
    config = {
        "mode": "quick" if args.quick else "full",
        "repeat": args.repeat,
        "rows": args.rows,
        "data": data["source"],
        "train_sentences": len(X), "train_tokens": _tokens(X),
        "dev_sentences": len(Xd), "dev_tokens": _tokens(Xd),
        "tag_sentences": len(data["X_tag"]), "tag_tokens": _tokens(data["X_tag"]),
        "labels": len(labels),
        "attributes_per_token": len(X[0][0]),
        "crf": {"c1": 0.0, "c2": 1.0, "max_iter": args.crf_max_iter},
        "ap": {"max_iter": args.ap_iter},
        "chunk_f1": f1_source,
    }
    print(f"  {'data'.ljust(width)}  {data['source']} (read + featurized in {t_load:.1f} s)")
    print(f"  {'split'.ljust(width)}  train {config['train_sentences']} sent / "
          f"{config['train_tokens']} tok, dev {config['dev_sentences']} sent / "
          f"{config['dev_tokens']} tok, tagging set {config['tag_sentences']} sent / "
          f"{config['tag_tokens']} tok; {len(labels)} labels, "
          f"{config['attributes_per_token']} attributes per token")
    cap = "default stopping" if args.crf_max_iter is None else f"max {args.crf_max_iter} iterations"
    print(f"  {'settings'.ljust(width)}  {config['mode']} mode, repeat {args.repeat}; "
          f"CRF L-BFGS c2=1.0 ({cap}); AP {args.ap_iter} epochs; dev F1 by {f1_source}")
    print()
    sys.stdout.flush()

    results = Results()
    tmp = tempfile.TemporaryDirectory(prefix="cseq-bench-")
    crfsuite_model = os.path.join(tmp.name, "crf.crfsuite")
    ap_model = os.path.join(tmp.name, "ap.crfsuite")
    cseq_models = {}  # kept for the tagging row
    crfsuite_model_ready = False

    crf_params = {"c1": 0.0, "c2": 1.0}
    cseq_crf_kwargs = {"c2": 1.0}
    if args.crf_max_iter is not None:
        crf_params["max_iterations"] = args.crf_max_iter
        cseq_crf_kwargs["max_iter"] = args.crf_max_iter

    def cseq_crf(n_jobs):
        return lambda: cseq.CRF(n_jobs=n_jobs, **cseq_crf_kwargs)

    def cseq_ap():
        return cseq.StructuredPerceptron(max_iter=args.ap_iter, random_state=0)

    def report_training(row, system, timing, f1, *, baseline, split=False):
        results.add(row, "train total", system, timing["total"], unit="s", better="lower", baseline=baseline)
        if split:
            results.add(row, "  of which append", system, timing["append"], unit="s")
            results.add(row, "  of which train", system, timing["train"], unit="s")
        it = timing.get("iterations")
        results.add(row, "iterations", system, it, unit="it")
        per = timing["total"] / it if it else None
        results.add(row, "s / iteration (total/iters)", system, per, unit="s", better="lower", baseline=baseline)
        results.add(row, "dev chunk F1", system, None if f1 is None else 100 * f1, unit="%", better="higher", baseline=baseline)

    def cseq_failed(row, system, measures, exc):
        msg = cseq_cell if not cseq_ok else _err(exc)
        for m, unit in measures:
            results.fail(row, m, system, msg, unit=unit)
        if cseq_ok and exc is not None:
            traceback.print_exception(exc, file=sys.stderr)

    train_measures = [("train total", "s"), ("iterations", "it"),
                      ("s / iteration (total/iters)", "s"), ("dev chunk F1", "%")]

    def run_crfsuite_training(row, algorithm, params, model_path, system):
        if pycrfsuite is None:
            for m, unit in train_measures:
                results.fail(row, m, system, crfsuite_error, unit=unit)
            return False
        timing = crfsuite_train(pycrfsuite, X, y, algorithm, params, model_path)
        pred, _ = crfsuite_tag(pycrfsuite, model_path, Xd)
        f1 = f1_score(yd, pred) if f1_score else None
        report_training(row, system, timing, f1, baseline=system, split=True)
        return True

    def run_cseq_training(row, factory, system, baseline, key):
        if not cseq_ok:
            cseq_failed(row, system, train_measures, None)
            return
        try:
            model, timing = cseq_train(factory, X, y)
            pred = model.predict(Xd, n_jobs=1)
            report_training(row, system, timing, f1_score(yd, pred) if f1_score else None, baseline=baseline)
            if key:
                cseq_models[key] = model
        except Exception as exc:
            cseq_failed(row, system, train_measures, exc)

    # Repeats are interleaved (crfsuite, cseq, cseq, crfsuite, ...) so slow
    # drift of the machine spreads over all systems alike.
    if "crf" in args.rows:
        base = f"{CRFSUITE} lbfgs"
        for _ in range(args.repeat):
            crfsuite_model_ready = run_crfsuite_training("crf", "lbfgs", crf_params, crfsuite_model, base)
            run_cseq_training("crf", cseq_crf(1), "cseq CRF n_jobs=1", base, "crf")
            run_cseq_training("crf", cseq_crf(2), "cseq CRF n_jobs=2", base, None)
        _progress("crf")

    if "ap" in args.rows:
        base = f"{CRFSUITE} ap"
        ap_params = {"max_iterations": args.ap_iter}
        for _ in range(args.repeat):
            run_crfsuite_training("ap", "ap", ap_params, ap_model, base)
            run_cseq_training("ap", cseq_ap, "cseq StructuredPerceptron", base, None)
        _progress("ap")

    if "tag" in args.rows:
        # Tag with the L-BFGS CRF models; train them (untimed) if the crf
        # row did not run.
        if pycrfsuite is not None and not crfsuite_model_ready:
            crfsuite_train(pycrfsuite, X, y, "lbfgs", crf_params, crfsuite_model)
            crfsuite_model_ready = True
        tag_error = None
        if cseq_ok and "crf" not in cseq_models:
            try:
                cseq_models["crf"] = cseq_crf(1)().fit(X, y)
            except Exception as exc:
                tag_error = _err(exc)
                traceback.print_exception(exc, file=sys.stderr)
        sets = [("dev", Xd), ("tagging set" if args.quick else "whole corpus", data["X_tag"])]
        for name, Xs in sets:
            n_tok = _tokens(Xs)
            measure = f"tokens/s, {name} ({n_tok} tok)"
            base = f"{CRFSUITE} Tagger.tag"
            for _ in range(args.repeat):
                if crfsuite_model_ready:
                    _, secs = crfsuite_tag(pycrfsuite, crfsuite_model, Xs)
                    results.add("tag", measure, base, n_tok / secs, better="higher", baseline=base)
                else:
                    results.fail("tag", measure, base, crfsuite_error)
                for n_jobs in (1, 2):
                    system = f"cseq predict n_jobs={n_jobs}"
                    if not cseq_ok or tag_error:
                        results.fail("tag", measure, system, tag_error or cseq_cell)
                        continue
                    try:
                        _, secs = cseq_tag(cseq_models["crf"], Xs, n_jobs)
                        results.add("tag", measure, system, n_tok / secs, better="higher", baseline=base)
                    except Exception as exc:
                        results.fail("tag", measure, system, _err(exc))
                        traceback.print_exception(exc, file=sys.stderr)
        _progress("tag")

    if "e2e" in args.rows:
        # Raw (word, POS) rows to labels. crfsuite: the Python featurizer of
        # bench/common/features.py, then Tagger.tag; cseq: compiled CRF++ templates
        # (the same CRF++ attribute set) inside predict. Models are trained
        # once, untimed, with the averaged perceptron.
        rows_tag = data["rows_tag"]
        n_tok = _tokens(rows_tag)
        measure = f"tokens/s, raw rows -> labels ({n_tok} tok)"
        base = f"{CRFSUITE} + Python featurizer"
        system = "cseq predict, compiled templates"
        e2e_model, e2e_error = None, None
        if cseq_ok:
            try:
                e2e_model = cseq.StructuredPerceptron(
                    max_iter=args.ap_iter, random_state=0,
                    features=cseq.TemplateFeaturizer(
                        cseq.Templates(features.CRFPP_TEMPLATES))).fit(data["rows_train"], y)
            except Exception as exc:
                e2e_error = _err(exc)
                traceback.print_exception(exc, file=sys.stderr)
        if pycrfsuite is not None:
            crfsuite_train(pycrfsuite, X, y, "ap", {"max_iterations": args.ap_iter}, ap_model)
        for _ in range(args.repeat):
            if pycrfsuite is not None:
                t0 = time.perf_counter()
                _, secs = crfsuite_tag(pycrfsuite, ap_model, features.featurize(rows_tag))
                total = time.perf_counter() - t0
                results.add("e2e", measure, base, n_tok / total, better="higher", baseline=base)
            else:
                results.fail("e2e", measure, base, crfsuite_error)
            if e2e_model is None:
                results.fail("e2e", measure, system, e2e_error or cseq_cell)
                continue
            for n_jobs in (1, 2):
                _, secs = cseq_tag(e2e_model, rows_tag, n_jobs)
                results.add("e2e", measure, f"{system} n_jobs={n_jobs}", n_tok / secs,
                            better="higher", baseline=base)
        _progress("e2e")

    if "mem" in args.rows:
        base = f"{CRFSUITE} lbfgs"
        measure = "peak RSS - RSS before"
        methods = set()
        cseq_models.clear()  # drop models kept for tagging before measuring
        gc.collect()
        for _ in range(args.repeat):
            if pycrfsuite is not None:
                with PeakRSS() as m:
                    crfsuite_train(pycrfsuite, X, y, "lbfgs", crf_params, crfsuite_model)
                results.add("mem", measure, base, m.peak / 2**20, unit="MiB", better="lower", baseline=base)
                methods.add(m.method)
            else:
                results.fail("mem", measure, base, crfsuite_error, unit="MiB")
            for n_jobs in (1, 2):
                system = f"cseq CRF n_jobs={n_jobs}"
                if not cseq_ok:
                    results.fail("mem", measure, system, cseq_cell, unit="MiB")
                    continue
                try:
                    with PeakRSS() as m:
                        model = cseq_crf(n_jobs)().fit(X, y)
                    del model
                    results.add("mem", measure, system, m.peak / 2**20, unit="MiB", better="lower", baseline=base)
                    methods.add(m.method)
                except Exception as exc:
                    results.fail("mem", measure, system, _err(exc), unit="MiB")
                    traceback.print_exception(exc, file=sys.stderr)
        config["memory_method"] = sorted(methods)
        _progress("mem")

    print()
    print_table(results)
    print()
    print("ratio = cseq median / crfsuite median. Times and memory: below 1 means cseq is better; "
          "tokens/s and F1: above 1 means cseq is better.")
    config["load_average_at_end"] = _loadavg()
    print(f"load average at end: {config['load_average_at_end']} "
          f"(on {os.cpu_count()} cores; a start value well above 0 means other processes were using the CPU)")
    if "mem" in args.rows and config.get("memory_method"):
        print("memory measured by: " + ", ".join(config["memory_method"]))

    if args.json:
        payload = {"banner": info, "config": config, "results": results.as_json()}
        args.json.write_text(json.dumps(payload, indent=2, default=str) + "\n")
        print(f"wrote {args.json}")
    tmp.cleanup()
    return 0


def _err(exc, limit=70):
    """Short one-line cell text for an exception (the traceback goes to stderr)."""
    text = f"error: {type(exc).__name__}: {exc}".splitlines()[0]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _progress(row):
    print(f"  done: {row} ({time.strftime('%H:%M:%S')})", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
