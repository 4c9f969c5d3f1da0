"""Word clusters from raw text: Brown clustering, cluster files, and the table a model keeps.

:func:`brown_clusters` interns the words of raw text (whitespace-separated
tokens, one sentence per line), numbers them by falling count and has
:class:`cseq.features._brown.BrownClusterer` cluster the integer ids; the
result is a :class:`Clusters`, each word with its bit string (its path from
the root of the merge tree).  A cluster file is what Liang's ``wcluster``
writes: one ``bit-string<TAB>word<TAB>count`` line per word.

The template functions ``%x[row,col:clusterN]`` (:mod:`cseq.features.cluster_functions`)
read a :class:`Clusters`; a fitted featurizer stores the whole table in the
model file (:meth:`Clusters.get_arrays`), so tagging needs no cluster file.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from typing import Any

import numpy as np

from cseq.exceptions import InputError, InputTypeError, ModelFormatError
from cseq.features import _brown
from cseq.features.cluster_functions import cluster_bits
from cseq.features.template_language import Templates, as_templates
from cseq.features.vocabulary import check_strings, decode_strings, encode_strings
from cseq.io._files import replacing

__all__ = ["ARRAYS", "BUNDLED", "CLUSTER_TEMPLATES", "MAX_CLUSTERS", "Clusters", "brown_clusters",
           "bundled_clusters", "check_counts", "cluster_table", "clusters_from_reference", "read_clusters", "tree_paths",
           "with_cluster_templates"]

#: The word-class tables shipped in the wheel (``cseq/data``), by the name that
#: ``cseq train --clusters`` and ``TemplateFeaturizer(clusters=...)`` take: ``en``,
#: 400,000 English words (lowercased) in 1,000 classes of the GloVe 6B vectors
#: (``scripts/build_word_classes.py``; PDDL 1.0, see ``cseq/data/README.md``).
BUNDLED = {"en": "en_glove6b.classes.gz"}

#: Names of the arrays :meth:`Clusters.get_arrays` gives (a model file's cluster table).
ARRAYS = frozenset({"cluster_words", "cluster_word_ptr", "cluster_paths", "cluster_path_ptr",
                    "cluster_counts"})

#: The cluster templates :func:`with_cluster_templates` adds: the word's cluster at four
#: grains (Turian et al. 2010's prefixes) and its neighbours' at two.
CLUSTER_TEMPLATES = (
    "UC0:%x[0,0:cluster4]", "UC1:%x[0,0:cluster6]", "UC2:%x[0,0:cluster10]",
    "UC3:%x[0,0:cluster20]", "UC4:%x[-1,0:cluster6]", "UC5:%x[1,0:cluster6]",
    "UC6:%x[-1,0:cluster20]", "UC7:%x[1,0:cluster20]",
)

_PATH = re.compile(r"[01]+\Z")
#: Longest bit string (a cluster tree deeper than this is no tree of words), longest
#: line of a cluster file (read in pieces of this, so a file without line breaks
#: costs bounded memory), largest count (int64).
MAX_PATH_BITS = 256
MAX_LINE_CHARS = 65536
MAX_COUNT = 2 ** 63 - 1
#: Most clusters: the kernel keeps six (C+1) x (C+1) float64 matrices, 1.2 GB at 5,000.
MAX_CLUSTERS = 5000
#: Merges run between two progress reports (a few per second at C = 1,000).
_STEP = 64


class Clusters:
    """Words and their cluster bit strings.

    Parameters
    ----------
    words : sequence of str
        Distinct, non-empty words without whitespace.
    paths : sequence of str
        Each word's bit string (``"0110"``): its path from the root of the
        cluster tree, so a prefix of it is a coarser cluster.
    counts : sequence of int, optional
        Each word's count in the clustered text (0 when unknown).

    Examples
    --------
    >>> c = Clusters(["the", "a", "dog"], ["00", "01", "1"])
    >>> c.path("a"), c.path("cat")
    ('01', None)
    """

    def __init__(self, words: Sequence[str], paths: Sequence[str],
                 counts: Sequence[int] | None = None) -> None:
        words, paths = list(words), list(paths)
        counts = [0] * len(words) if counts is None else [int(c) for c in counts]
        if not (len(words) == len(paths) == len(counts)):
            raise InputError("words, paths and counts differ in length")
        for w, p in zip(words, paths):
            if not isinstance(w, str) or not isinstance(p, str):
                raise InputTypeError("cluster words and paths must be str")
            if not w or w.split() != [w]:
                raise InputError(f"cluster word {w!r} is empty or holds whitespace")
            if not _PATH.match(p):
                raise InputError(f"cluster path {p[:40]!r} of {w[:40]!r} is not a string of 0s "
                                 "and 1s")
            if len(p) > MAX_PATH_BITS:
                raise InputError(f"cluster path of {w[:40]!r} has {len(p)} bits; at most "
                                 f"{MAX_PATH_BITS}")
        if any(not 0 <= c <= MAX_COUNT for c in counts):
            raise InputError(f"cluster counts must be from 0 to {MAX_COUNT}")
        self._assign(words, paths, counts)
        if len(self._path) != len(words):
            dup = next(w for w, n in Counter(words).items() if n > 1)
            raise InputError(f"cluster word {dup!r} appears more than once")

    def _assign(self, words: list[str], paths: list[str], counts: list[int],
                bundled: str | None = None) -> None:
        self.words, self.paths, self.counts = words, paths, counts
        #: The name in :data:`BUNDLED` of a shipped table (:func:`bundled_clusters`), else
        #: None; a model stores a shipped table by this name and digest, not whole.
        self.bundled = bundled
        self._digest: str | None = None
        self._path = dict(zip(words, paths))

    @classmethod
    def _unchecked(cls, words: list[str], paths: list[str], bundled: str) -> "Clusters":
        """A table of cseq's own shipped data, without the per-word checks."""
        table = cls.__new__(cls)
        table._assign(words, paths, [0] * len(words), bundled)
        return table

    def __len__(self) -> int:
        return len(self.words)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Clusters):
            return NotImplemented
        return (self.words, self.paths, self.counts) == (other.words, other.paths, other.counts)

    __hash__ = None  # type: ignore[assignment]

    def path(self, word: str) -> str | None:
        """The bit string of ``word``; else of its lowercase form; else None."""
        p = self._path.get(word)
        return self._path.get(word.lower()) if p is None else p

    @property
    def n_clusters(self) -> int:
        """The number of distinct bit strings."""
        return len(set(self.paths))

    def to_text(self) -> str:
        """The table as a cluster file: ``path<TAB>word<TAB>count`` lines."""
        return "".join(f"{p}\t{w}\t{c}\n" for p, w, c in zip(self.paths, self.words, self.counts))

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the table to ``path`` as a cluster file, atomically."""
        with replacing(path) as f:
            f.write(self.to_text())

    def digest(self) -> str:
        """SHA-256 of :meth:`to_text`, hexadecimal: names the table's content."""
        if self._digest is None:
            self._digest = hashlib.sha256(self.to_text().encode("utf-8")).hexdigest()
        return self._digest

    def reference(self) -> dict[str, str]:
        """What a model stores of a shipped table: its name and digest
        (:func:`clusters_from_reference` reads it back)."""
        if self.bundled is None:
            raise InputError("only a shipped table (bundled_clusters) has a reference")
        return {"bundled": self.bundled, "sha256": self.digest()}

    def get_arrays(self) -> dict[str, np.ndarray]:
        """The table as named arrays for a model file (:data:`ARRAYS`)."""
        w, p = encode_strings(self.words), encode_strings(self.paths)
        return {"cluster_words": w["blob"], "cluster_word_ptr": w["offsets"],
                "cluster_paths": p["blob"], "cluster_path_ptr": p["offsets"],
                "cluster_counts": np.asarray(self.counts, dtype=np.int64)}

    @classmethod
    def from_arrays(cls, arrays: dict, what: str) -> "Clusters":
        """Inverse of :meth:`get_arrays`; ModelFormatError naming ``what`` if anything is wrong."""
        missing = sorted(ARRAYS - set(arrays))
        if missing:
            raise ModelFormatError(f"{what}: the cluster table lacks {missing}")
        try:
            blobs = {k: np.ascontiguousarray(arrays[k]) for k in ARRAYS}
            for blob, ptr in (("cluster_words", "cluster_word_ptr"),
                              ("cluster_paths", "cluster_path_ptr")):
                check_strings(blobs[blob], blobs[ptr].astype(np.int64, copy=False), what)
            words = decode_strings(blobs["cluster_words"],
                                   blobs["cluster_word_ptr"].astype(np.int64, copy=False), what)
            paths = decode_strings(blobs["cluster_paths"],
                                   blobs["cluster_path_ptr"].astype(np.int64, copy=False), what)
            counts = blobs["cluster_counts"]
            if counts.dtype.kind != "i" or counts.ndim != 1:
                raise ModelFormatError(f"{what}: bad cluster counts")
            return cls(words, paths, counts.tolist())
        except (InputError, ValueError) as exc:
            if isinstance(exc, ModelFormatError):
                raise
            raise ModelFormatError(f"{what}: bad cluster table: {exc}") from None

    def __repr__(self) -> str:
        return f"Clusters({len(self)} words, {self.n_clusters} clusters)"


def bundled_clusters(name: str) -> Clusters:
    """A word-class table shipped with cseq, by its name in :data:`BUNDLED`.

    Read once per process and shared (treat it as read-only).

    Examples
    --------
    >>> en = bundled_clusters("en")
    >>> en.path("Tuesday") == en.path("wednesday") != en.path("Paris")
    True
    """
    if not isinstance(name, str) or name not in BUNDLED:
        raise InputError(f"no shipped word classes named {name!r}; there are "
                         f"{', '.join(sorted(BUNDLED))}")
    return _read_bundled(name)


@functools.lru_cache(maxsize=None)
def _read_bundled(name: str) -> Clusters:
    # The file is cseq's own, checked whole by read_clusters in the tests; read here
    # without the per-line checks (0.3 s against 1.5 s for 400,000 words).
    path = resources.files("cseq").joinpath("data", BUNDLED[name])
    with gzip.open(str(path), "rt", encoding="utf-8") as f:
        rows = [line.split("\t") for line in f.read().splitlines()]
    return Clusters._unchecked([r[1] for r in rows], [r[0] for r in rows], name)


def cluster_table(spec: Any) -> Clusters:
    """A cluster table from what a user names: a :class:`Clusters`, the name of a shipped
    table (:data:`BUNDLED`; a file of that name wins), or a cluster file's path."""
    if isinstance(spec, Clusters):
        return spec
    if isinstance(spec, str) and spec in BUNDLED and not os.path.exists(spec):
        return bundled_clusters(spec)
    if isinstance(spec, (str, os.PathLike)):
        return read_clusters(spec)
    raise InputTypeError("clusters must be a Clusters table, a shipped table's name "
                         f"({', '.join(sorted(BUNDLED))}) or a cluster file's path, "
                         f"not {type(spec).__name__}")


def clusters_from_reference(ref: Any, what: str) -> Clusters:
    """The shipped table a model names (:meth:`Clusters.reference`); ModelFormatError
    naming ``what`` if the reference is malformed or this cseq ships other classes."""
    if not (isinstance(ref, dict) and set(ref) == {"bundled", "sha256"}
            and all(isinstance(v, str) for v in ref.values())):
        raise ModelFormatError(f"{what}: bad reference to shipped word classes: {str(ref)[:80]}")
    if ref["bundled"] not in BUNDLED:
        raise ModelFormatError(f"{what}: the model needs the shipped word classes "
                               f"{ref['bundled'][:40]!r}, which this cseq does not ship")
    table = bundled_clusters(ref["bundled"])
    if table.digest() != ref["sha256"]:
        raise ModelFormatError(f"{what}: the model was trained with other word classes "
                               f"{ref['bundled']!r} (sha256 {ref['sha256'][:12]}...) than this "
                               f"cseq ships ({table.digest()[:12]}...); retrain it, or tag with "
                               "the cseq version that trained it")
    return table


def read_clusters(path: str | os.PathLike[str]) -> Clusters:
    """Read a cluster file (``path<TAB>word<TAB>count`` per line; the count optional).

    A path ending in ``.gz`` is decompressed.

    Raises
    ------
    InputError
        Naming the file and line: a line without two fields, a path not of
        0s and 1s, a count not a non-negative integer, a word listed twice,
        or a file with no line.
    """
    words, paths, counts = [], [], []
    seen: dict[str, int] = {}
    opener: Any = gzip.open if os.fspath(path).endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for n, line in enumerate(iter(lambda: f.readline(MAX_LINE_CHARS + 1), ""), 1):
                where = f"cluster file {os.fspath(path)}, line {n}"
                if len(line) > MAX_LINE_CHARS:
                    raise InputError(f"{where}: the line is over {MAX_LINE_CHARS:,} characters")
                fields = line.rstrip("\r\n").split("\t")
                if not 2 <= len(fields) <= 3:
                    raise InputError(f"{where}: expected bit-string<TAB>word[<TAB>count], "
                                     f"got {line[:60]!r}")
                p, w = fields[0], fields[1]
                if not _PATH.match(p):
                    raise InputError(f"{where}: {p[:30]!r} is not a bit string of 0s and 1s")
                if len(p) > MAX_PATH_BITS:
                    raise InputError(f"{where}: the bit string has {len(p)} bits; at most "
                                     f"{MAX_PATH_BITS}")
                if not w or w.split() != [w]:
                    raise InputError(f"{where}: the word {w[:30]!r} is empty or holds whitespace")
                if w in seen:
                    raise InputError(f"{where}: the word {w[:30]!r} is already on line {seen[w]}")
                c = fields[2] if len(fields) == 3 else "0"
                if not c.isascii() or not c.isdigit() or len(c) > 19 or int(c) > MAX_COUNT:
                    raise InputError(f"{where}: the count {c[:30]!r} is not an integer from 0 "
                                     f"to {MAX_COUNT}")
                seen[w] = n
                words.append(w)
                paths.append(p)
                counts.append(int(c))
    except UnicodeDecodeError as exc:
        raise InputError(f"cluster file {os.fspath(path)} is not UTF-8 text ({exc})") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(f"cluster file {os.fspath(path)} is not a whole gzip file ({exc})") from None
    except OSError as exc:
        raise InputError(f"cannot read cluster file {os.fspath(path)}: {exc.strerror or exc}") from None
    if not words:
        raise InputError(f"cluster file {os.fspath(path)} holds no cluster line")
    return Clusters(words, paths, counts)


def _count(texts: Iterable[str | Sequence[str]]) -> tuple[Counter, list[list[str]]]:
    """Word counts and the sentences as token lists."""
    counts: Counter = Counter()
    sentences = []
    for k, text in enumerate(texts):
        if isinstance(text, str):
            tokens = text.split()
        elif isinstance(text, (list, tuple)) and all(isinstance(t, str) for t in text):
            tokens = list(text)
        else:
            raise InputTypeError(f"text {k} must be a str or a list of str tokens, "
                                 f"not {type(text).__name__}")
        counts.update(tokens)
        sentences.append(tokens)
    return counts, sentences


def _pairs(sentences: list[list[str]], ids: dict[str, int], n_words: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct adjacent pairs of kept words, grouped by their later word (CSR)."""
    flat = np.fromiter((ids.get(t, -1) for s in sentences for t in (*s, None)), dtype=np.int64)
    # A None between sentences (id -1) keeps pairs from crossing a line; dropped
    # words (below min_count) break pairs the same way.
    a, b = flat[:-1], flat[1:]
    keep = (a >= 0) & (b >= 0)
    key, cnt = np.unique(a[keep] * n_words + b[keep], return_counts=True)
    left, right = key // n_words, key % n_words
    later = np.maximum(left, right)
    order = np.argsort(later, kind="stable")
    ptr = np.zeros(n_words + 1, dtype=np.int64)
    np.cumsum(np.bincount(later, minlength=n_words), out=ptr[1:])
    return (ptr, left[order].astype(np.int32), right[order].astype(np.int32),
            cnt[order].astype(np.float64))


def tree_paths(tree: np.ndarray) -> list[str]:
    """Each leaf's bit string from a merge tree, root first (``"0"`` for a lone leaf).

    ``tree`` is ``(n_leaves - 1, 2)``: leaves are ``0 .. n_leaves - 1`` and the
    ``k``-th merge, of ``tree[k]``'s two nodes, is node ``n_leaves + k``.
    """
    n_leaves = len(tree) + 1
    bits = [""] * (2 * n_leaves - 1)
    for k in range(len(tree) - 1, -1, -1):  # from the root down
        parent = bits[n_leaves + k]
        bits[int(tree[k, 0])] = parent + "0"
        bits[int(tree[k, 1])] = parent + "1"
    return [bits[i] or "0" for i in range(n_leaves)]


def check_counts(**values: Any) -> None:
    """Each keyword's value must be an int >= 1: InputTypeError or InputError naming it."""
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InputTypeError(f"{name} must be an int, not {type(v).__name__}")
        if v < 1:
            raise InputError(f"{name} must be >= 1, got {v}")


def brown_clusters(texts: Iterable[str | Sequence[str]], n_clusters: int = 1000, *,
                   min_count: int = 1, progress: Callable[[int, int], None] | None = None
                   ) -> Clusters:
    """Brown clusters of the words of ``texts`` (Liang's algorithm, ``O(V C^2)``).

    Parameters
    ----------
    texts : iterable of str or of token lists
        One sentence per item: a str is split on whitespace.  Adjacent
        tokens of one sentence make the pairs counted.
    n_clusters : int, default 1000
        ``C``: the clusters kept while words come in, and the leaves of the
        tree (fewer when there are fewer words).
    min_count : int, default 1
        Words seen fewer times are left out (and break the pairs they are in).
    progress : callable, optional
        ``progress(done, total)`` after every few merges.

    Returns
    -------
    Clusters
        Each word with its bit string, listed by bit string, then by falling
        count (ties by string).

    References
    ----------
    .. [1] P. Liang, "Semi-supervised learning for natural language", MEng
       thesis, MIT, 2005.
    """
    check_counts(n_clusters=n_clusters, min_count=min_count)
    if n_clusters > MAX_CLUSTERS:
        raise InputError(f"n_clusters must be at most {MAX_CLUSTERS:,} (the clustering keeps "
                         f"six (C+1)^2 matrices of floats), got {n_clusters:,}")
    if isinstance(texts, str):
        raise InputTypeError("texts must be an iterable of sentences, not one str")
    counts, sentences = _count(texts)
    vocab = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    if not vocab:
        raise InputError(f"no word occurs at least min_count={min_count} times")
    ids = {w: i for i, w in enumerate(vocab)}
    ptr, left, right, cnt = _pairs(sentences, ids, len(vocab))
    word_count = np.asarray([counts[w] for w in vocab], dtype=np.float64)
    kernel = _brown.BrownClusterer(word_count, ptr, left, right, cnt, int(n_clusters))
    while not kernel.done:
        kernel.advance(_STEP)
        if progress is not None:
            progress(kernel.merges_done, kernel.n_merges)
    leaf, tree = kernel.result()
    paths = tree_paths(tree)
    # As wcluster lists them: by cluster, then by falling count.
    order = sorted(range(len(vocab)), key=lambda i: (paths[leaf[i]], i))
    return Clusters([vocab[i] for i in order], [paths[leaf[i]] for i in order],
                    [counts[vocab[i]] for i in order])


def with_cluster_templates(templates: str | Templates) -> Templates:
    """``templates`` (a preset name, template text or Templates) with :data:`CLUSTER_TEMPLATES`
    added, unless they use a ``cluster`` function already (then as they are)."""
    tpl = as_templates(templates)
    if any(cluster_bits(c.func) is not None for t in tpl for c in t.cells):
        return tpl
    return Templates(tpl.text.rstrip("\n") + "\n" + "\n".join(CLUSTER_TEMPLATES) + "\n")
