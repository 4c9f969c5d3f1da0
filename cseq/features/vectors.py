"""Word classes from word vectors: reading vector files, clustering them into a cluster tree.

:func:`read_vectors` streams a word2vec (text or binary), GloVe or fastText
``.vec`` file into a float32 matrix of bounded size: the first ``max_words``
rows (these files list words by falling frequency), each projected to at most
``max_dims`` dimensions by a fixed random projection, so a file of 2 million
words by 300 dimensions costs ``max_words x max_dims x 4`` bytes, whatever its
size.  :func:`vector_classes` clusters the rows (cosine k-means), joins the
k-means centroids into a binary tree by Ward's criterion, and returns a
:class:`~cseq.features.clusters.Clusters` table whose bit strings are paths in
that tree, so the ``clusterN`` template functions read them as they read Brown
clusters: a prefix is a coarser class (Guo et al., EMNLP 2014; Turian et al.,
ACL 2010).
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence

import numpy as np

from cseq.exceptions import InputError
from cseq.features.clusters import MAX_CLUSTERS, MAX_PATH_BITS, Clusters, check_counts, tree_paths

__all__ = ["MAX_DIMS", "VECTOR_FORMATS", "read_vectors", "vector_classes"]

#: The formats :func:`read_vectors` reads: ``text`` (one ``word v1 ... vD`` line per
#: word, with or without word2vec's ``N D`` header: GloVe, fastText ``.vec``,
#: word2vec text) and ``binary`` (word2vec's ``-binary 1`` output).
VECTOR_FORMATS = ("auto", "text", "binary")
#: The most dimensions a vector file may declare (a header or a first row over this
#: is no word-vector file).
MAX_DIMS = 10_000
#: The most characters of a word in a binary file.
_MAX_WORD_BYTES = 1000
_BLOCK = 1 << 16
#: The largest magnitude of a value (a vector's squared length must not overflow).
_MAX_VALUE = 1e15


def _header(line: str) -> tuple[int, int] | None:
    """``(N, D)`` if ``line`` is word2vec's header, else None."""
    f = line.split()
    if len(f) == 2 and all(v.isascii() and v.isdigit() and len(v) <= 18 for v in f):
        return int(f[0]), int(f[1])
    return None


def _projection(dims: int, max_dims: int, seed: int) -> np.ndarray | None:
    """A fixed ``dims x max_dims`` Gaussian projection (None when no projection is needed)."""
    if dims <= max_dims:
        return None
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((dims, max_dims)) / np.sqrt(max_dims)).astype(np.float32)


class _Rows:
    """The matrix being filled: words, rows (projected), duplicate words skipped."""

    def __init__(self, dims: int, max_words: int, max_dims: int, seed: int, where: str) -> None:
        if not 1 <= dims <= MAX_DIMS:
            raise InputError(f"{where}: {dims} dimensions; expected 1 to {MAX_DIMS:,}")
        self.dims, self.where = dims, where
        self.proj = _projection(dims, max_dims, seed)
        width = dims if self.proj is None else max_dims
        self.out = np.empty((min(max_words, 1 << 16), width), dtype=np.float32)
        self.max_words = max_words
        self.words: list[str] = []
        self.seen: set[str] = set()
        self.duplicates = 0

    @property
    def full(self) -> bool:
        return len(self.words) >= self.max_words

    def add(self, word: str, values: np.ndarray, line: int) -> None:
        if not word or word.split() != [word]:
            raise InputError(f"{self.where}, {line}: the word {word[:30]!r} is empty or holds "
                             "whitespace")
        if not np.isfinite(values).all():
            raise InputError(f"{self.where}, {line}: the vector of {word[:30]!r} is not finite "
                             "(NaN or infinity)")
        if np.abs(values).max(initial=0) > _MAX_VALUE:
            raise InputError(f"{self.where}, {line}: the vector of {word[:30]!r} holds a value "
                             f"beyond {_MAX_VALUE:g}")
        if word in self.seen:
            self.duplicates += 1
            return
        self.seen.add(word)
        n = len(self.words)
        if n == len(self.out):
            grown = np.empty((min(2 * n, self.max_words), self.out.shape[1]), dtype=np.float32)
            grown[:n] = self.out
            self.out = grown
        self.out[n] = values if self.proj is None else values.astype(np.float32) @ self.proj
        self.words.append(word)

    def result(self) -> tuple[list[str], np.ndarray]:
        if not self.words:
            raise InputError(f"{self.where} holds no vector")
        return self.words, self.out[:len(self.words)].copy()


def _read_text(f: io.BufferedReader, first: bytes, args: tuple, where: str
               ) -> tuple[list[str], np.ndarray]:
    max_words, max_dims, seed = args
    rows: _Rows | None = None
    declared: int | None = None
    n = 0
    line = first
    while line:
        n += 1
        at = f"line {n}"
        if len(line) > 64 * (MAX_DIMS + 1):
            raise InputError(f"{where}, {at}: the line is over {64 * (MAX_DIMS + 1):,} bytes")
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{where}, {at} is not UTF-8 text: a binary word2vec file? "
                             "(read it with format='binary', cseq clusters --format binary)"
                             ) from None
        if n == 1 and _header(text) is not None:
            declared, dims = _header(text)
            rows = _Rows(dims, max_words, max_dims, seed, where)
        elif text.strip():
            fields = text.rstrip("\r\n").rstrip(" ").split(" ")
            if rows is None:
                rows = _Rows(len(fields) - 1, max_words, max_dims, seed, where)
            if len(fields) != rows.dims + 1:
                said = "the header says" if declared is not None else "the first row has"
                raise InputError(f"{where}, {at}: {len(fields) - 1} values after the word; "
                                 f"{said} {rows.dims}")
            try:
                values = np.array(fields[1:], dtype=np.float64)
            except ValueError:
                bad = next(v for v in fields[1:] if not _is_float(v))
                raise InputError(f"{where}, {at}: {bad[:30]!r} is not a number") from None
            rows.add(fields[0], values, at)
            if rows.full:
                break
        line = f.readline(64 * (MAX_DIMS + 1) + 1)
    if rows is None:
        raise InputError(f"{where} holds no vector")
    if declared is not None and not rows.full and len(rows.words) + rows.duplicates != declared:
        raise InputError(f"{where}: the header says {declared:,} words; the file holds "
                         f"{len(rows.words) + rows.duplicates:,}")
    return rows.result()


def _is_float(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def _read_binary(f: io.BufferedReader, first: bytes, args: tuple, where: str
                 ) -> tuple[list[str], np.ndarray]:
    max_words, max_dims, seed = args
    head = _header(first.decode("ascii", "replace"))
    if head is None:
        raise InputError(f"{where}, line 1: a binary word2vec file begins with 'N D' (words, "
                         f"dimensions); got {first[:40]!r}")
    declared, dims = head
    rows = _Rows(dims, max_words, max_dims, seed, where)
    size = 4 * dims
    for k in range(declared):
        at = f"word {k + 1}"
        word = bytearray()
        while True:
            b = f.read(1)
            if not b:
                raise InputError(f"{where}: the header says {declared:,} words; the file ends "
                                 f"in word {k + 1}")
            if b == b" ":
                break
            if b == b"\n" and not word:
                continue  # the line break some writers put after each vector
            word += b
            if len(word) > _MAX_WORD_BYTES:
                raise InputError(f"{where}, {at}: no space within {_MAX_WORD_BYTES} bytes; "
                                 "a text file given as binary?")
        data = f.read(size)
        if len(data) < size:
            raise InputError(f"{where}: the header says {declared:,} words of {dims} dimensions; "
                             f"the file ends in word {k + 1}")
        try:
            w = word.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{where}, {at}: the word is not UTF-8") from None
        rows.add(w, np.frombuffer(data, dtype="<f4").astype(np.float32), at)
        if rows.full:
            return rows.result()
    rest = f.read(2)
    if rest.strip(b"\n"):
        raise InputError(f"{where}: the header says {declared:,} words; the file holds more")
    return rows.result()


def read_vectors(path: str | os.PathLike[str], *, format: str = "auto", max_words: int = 400_000,
                 max_dims: int = 64, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """Read a word-vector file: its words and a ``(n, min(D, max_dims))`` float32 matrix.

    Parameters
    ----------
    path : str or path
        A word2vec text or binary file, a GloVe text file (no header) or a
        fastText ``.vec`` file (word2vec text).
    format : {"auto", "text", "binary"}, default "auto"
        ``auto`` reads a file whose first line is a word2vec header and whose
        second is not UTF-8 text as binary, any other as text.
    max_words : int, default 400,000
        Rows read; the rest of the file is not read (vector files list words
        by falling frequency).  A word listed again is skipped.
    max_dims : int, default 64
        Rows of more dimensions are projected to this many by a fixed random
        Gaussian matrix (``seed``), which keeps cosine similarities
        approximately; memory is ``max_words x max_dims x 4`` bytes.
    seed : int, default 0
        The projection's seed.

    Raises
    ------
    InputError
        Naming the file and line (word, in a binary file): a row with another
        number of values than the header or the first row, a value that is
        not a number or not finite, a header that gives more or fewer words
        than the file holds, a binary file read as text or the reverse, or
        no vector at all.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "v.txt"
    >>> _ = p.write_text("2 3\\nthe 0.1 0.2 0.3\\ncat 1 0 -1\\n")
    >>> words, m = read_vectors(p)
    >>> words, m.shape
    (['the', 'cat'], (2, 3))
    """
    if format not in VECTOR_FORMATS:
        raise InputError(f"format must be one of {', '.join(VECTOR_FORMATS)}, got {format!r}")
    check_counts(max_words=max_words, max_dims=max_dims)
    where = f"vector file {os.fspath(path)}"
    args = (int(max_words), int(max_dims), seed)
    try:
        with open(path, "rb") as f:
            first = f.readline(_BLOCK)
            if format == "auto":
                binary = False
                if _header(first.decode("latin-1")) is not None:
                    peek = f.peek(_BLOCK)[:_BLOCK]
                    line = peek.split(b"\n", 1)[0]
                    try:
                        line.decode("utf-8")
                    except UnicodeDecodeError:
                        binary = True
                format = "binary" if binary else "text"
            reader = _read_binary if format == "binary" else _read_text
            return reader(f, first, args, where)
    except OSError as exc:
        raise InputError(f"cannot read {where}: {exc.strerror or exc}") from None


def _kmeans(x: np.ndarray, k: int, seed: int, max_iter: int) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's k-means of the unit rows ``x`` from a k-means++ start on a sample:
    (labels, centroids)."""
    rng = np.random.default_rng(seed)
    n = len(x)
    sample = x[np.sort(rng.choice(n, size=min(n, max(20 * k, 20_000)), replace=False))]
    centers = np.empty((k, x.shape[1]), dtype=np.float64)
    centers[0] = sample[rng.integers(len(sample))]
    best = ((sample - centers[0]) ** 2).sum(1)
    for j in range(1, k):
        total = best.sum()
        pick = int(rng.choice(len(sample), p=best / total)) if total > 0 else int(rng.integers(len(sample)))
        centers[j] = sample[pick]
        np.minimum(best, ((sample - centers[j]) ** 2).sum(1), out=best)
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(max_iter):
        new, far = _assign(x, centers)
        changed = int((new != labels).sum())
        labels = new
        counts = np.bincount(labels, minlength=k)
        order = np.argsort(labels, kind="stable")
        present = np.flatnonzero(counts)
        sums = np.zeros_like(centers)
        sums[present] = np.add.reduceat(x[order].astype(np.float64),
                                        np.concatenate(([0], np.cumsum(counts)[:-1]))[present])
        empty = np.flatnonzero(counts == 0)
        centers = sums / np.maximum(counts, 1)[:, None]
        if len(empty):  # reseed from the rows farthest from their centroid
            centers[empty] = x[np.argsort(-far, kind="stable")[:len(empty)]]
        elif changed <= n // 1000:
            break
    labels, _ = _assign(x, centers)
    return labels, centers


def _assign(x: np.ndarray, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's nearest centroid and its squared distance, in blocks of rows."""
    labels = np.empty(len(x), dtype=np.int64)
    dist = np.empty(len(x), dtype=np.float64)
    c32 = centers.astype(np.float32)
    c2 = (c32 ** 2).sum(1)
    for s in range(0, len(x), 8192):
        block = x[s:s + 8192]
        d = c2[None, :] - 2.0 * (block @ c32.T)
        labels[s:s + 8192] = d.argmin(1)
        dist[s:s + 8192] = d[np.arange(len(block)), labels[s:s + 8192]] + (block ** 2).sum(1)
    return labels, dist


def _ward_tree(centers: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Ward's agglomeration of the centroids: a ``(k - 1, 2)`` merge tree (ids as
    :func:`~cseq.features.clusters.tree_paths` reads them: leaves ``0..k-1``, the
    ``i``-th merge ``k + i``)."""
    k = len(centers)
    c = centers.astype(np.float64).copy()
    n = sizes.astype(np.float64).copy()
    node = np.arange(k)
    alive = np.ones(k, dtype=bool)
    d = _ward(c, n, np.arange(k))
    np.fill_diagonal(d, np.inf)
    tree = np.empty((k - 1, 2), dtype=np.int64)
    for step in range(k - 1):
        a, b = divmod(int(d.argmin()), k)
        a, b = min(a, b), max(a, b)
        tree[step] = node[a], node[b]
        c[a] = (n[a] * c[a] + n[b] * c[b]) / (n[a] + n[b])
        n[a] += n[b]
        node[a] = k + step
        alive[b] = False
        d[b, :] = d[:, b] = np.inf
        row = _ward(c, n, np.array([a]))[0]
        row[~alive] = np.inf
        row[a] = np.inf
        d[a, :] = d[:, a] = row
    return tree


def _ward(c: np.ndarray, n: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Ward's merge cost between the clusters ``rows`` and every cluster."""
    c2 = (c ** 2).sum(1)
    diff = np.maximum(c2[rows, None] + c2[None, :] - 2.0 * (c[rows] @ c.T), 0.0)
    return diff * (n[rows, None] * n[None, :]) / (n[rows, None] + n[None, :])


def vector_classes(words: Sequence[str], vectors: np.ndarray, n_classes: int = 1000, *,
                   seed: int = 0, max_iter: int = 30) -> Clusters:
    """Word classes from word vectors: a cluster tree's bit string for every word.

    The rows are scaled to unit length (so the clustering is by cosine), put
    into ``n_classes`` classes by k-means (k-means++ start, ``seed``), and
    the classes' centroids joined into a binary tree by Ward's criterion; a
    word's bit string is its class's path from the root, so a prefix of it is
    a coarser class, as a Brown cluster's is.

    Parameters
    ----------
    words : sequence of str
        Distinct words, in the order of ``vectors``' rows (their order is
        kept in the table).
    vectors : array of shape (n, d)
        Finite values (:func:`read_vectors` gives both).
    n_classes : int, default 1000
        Leaves of the tree (fewer when there are fewer words); at most
        :data:`~cseq.features.clusters.MAX_CLUSTERS`.
    seed, max_iter
        The k-means start's seed and its most iterations.

    Examples
    --------
    >>> import numpy as np
    >>> v = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]])
    >>> c = vector_classes(["a", "b", "c", "d"], v, 2)
    >>> c.path("a") == c.path("b") != c.path("c") == c.path("d")
    True
    """
    check_counts(n_classes=n_classes, max_iter=max_iter)
    if n_classes > MAX_CLUSTERS:
        raise InputError(f"n_classes must be at most {MAX_CLUSTERS:,}, got {n_classes:,}")
    x = np.asarray(vectors)
    if x.ndim != 2 or x.dtype.kind not in "fiu":
        raise InputError("vectors must be a 2-d array of numbers")
    if len(words) != len(x) or not len(x):
        raise InputError(f"{len(words)} words for {len(x)} vectors; expected as many, at least one")
    if not np.isfinite(x).all():
        raise InputError("vectors must be finite (no NaN or infinity)")
    # Unit rows; each first divided by its largest magnitude, so no square overflows.
    x = x.astype(np.float64)
    x /= np.maximum(np.abs(x).max(1, keepdims=True), np.finfo(np.float64).tiny)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    x = (x / np.where(norm > 0, norm, 1)).astype(np.float32)
    k = min(int(n_classes), len(x))
    if k == 1:
        return Clusters(list(words), ["0"] * len(x))
    labels, centers = _kmeans(x, k, seed, int(max_iter))
    sizes = np.maximum(np.bincount(labels, minlength=k), 1)
    paths = [p[:MAX_PATH_BITS] for p in tree_paths(_ward_tree(centers, sizes))]
    return Clusters(list(words), [paths[i] for i in labels])
