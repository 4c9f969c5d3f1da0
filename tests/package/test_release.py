"""Release metadata of the installed package: one version everywhere, licenses shipped.

The version is written once, in ``cseq/_version.py``; the package metadata
(read by setuptools from that file), ``cseq.__version__``, ``cseq --version``
and the header of a saved model must all say the same.
"""

import importlib.metadata
import json
import re
import struct
import subprocess
import sys
from importlib import resources

import pytest

import cseq
from cseq.io import serialize

DIST = "cseq-labeling"

# PEP 440 public version (the canonical form the metadata uses).
PEP440 = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?$")


def _metadata():
    try:
        return importlib.metadata.metadata(DIST)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - reported as a failure
        pytest.fail(f"the distribution {DIST!r} is not installed; the distribution was renamed "
                    f"from 'cseq': run `pip install -e .` again")


def test_version_is_single_sourced():
    from cseq._version import __version__
    assert cseq.__version__ is __version__
    assert PEP440.match(__version__), __version__
    assert _metadata()["Version"] == __version__


def test_cli_version():
    r = subprocess.run([sys.executable, "-m", "cseq", "--version"], capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"cseq {cseq.__version__}\n"


def test_saved_model_records_the_version():
    X = [[["a"], ["b"]], [["b"], ["a"]]]
    y = [["x", "y"], ["y", "x"]]
    blob = serialize.dumps(cseq.StructuredPerceptron(max_iter=1, random_state=0).fit(X, y))
    # Layout from cseq/io/serialize.py: magic (8), format version (4), header length (8), header.
    (head_len,) = struct.unpack_from("<Q", blob, 12)
    header = json.loads(blob[20:20 + head_len])
    assert header["library_version"] == cseq.__version__


def test_license_files_are_installed():
    meta = _metadata()
    assert set(meta.get_all("License-File") or []) == {"LICENSE", "cseq/data/LICENSE.txt"}
    assert meta["License-Expression"] == "MIT AND CC-BY-SA-4.0"
    # The CC BY-SA text travels with the data it covers, inside the package.
    text = resources.files("cseq.data").joinpath("LICENSE.txt").read_text(encoding="utf-8")
    assert text.startswith("Attribution-ShareAlike 4.0 International")
    readme = resources.files("cseq.data").joinpath("README.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in readme
