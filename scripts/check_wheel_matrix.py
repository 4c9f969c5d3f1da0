"""Check that cibuildwheel, configured by pyproject.toml, builds the intended wheels.

    python scripts/check_wheel_matrix.py [--cibuildwheel PATH]

Runs ``cibuildwheel --print-build-identifiers`` for Linux, macOS and Windows
(with every architecture the release workflow builds on its native runners),
prints the identifiers and exits 1 unless they are exactly the expected
matrix: CPython 3.10-3.14 on manylinux and musllinux x86_64 and aarch64,
macOS x86_64 and arm64, and Windows AMD64.  Printing identifiers needs
neither Docker nor the target operating system; the script runs cibuildwheel
with a PATH holding no container engine to make sure of it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = ["cp310", "cp311", "cp312", "cp313", "cp314"]

# platform -> (architectures passed to --archs, expected platform tags)
PLATFORMS = {
    "linux": ("x86_64,aarch64", ["manylinux_x86_64", "manylinux_aarch64",
                                 "musllinux_x86_64", "musllinux_aarch64"]),
    "macos": ("x86_64,arm64", ["macosx_x86_64", "macosx_arm64"]),
    "windows": ("AMD64", ["win_amd64"]),
}


def expected(platform: str) -> set[str]:
    return {f"{py}-{tag}" for py in PYTHONS for tag in PLATFORMS[platform][1]}


def printed(cibuildwheel: str, platform: str, env: dict) -> set[str]:
    archs = PLATFORMS[platform][0]
    out = subprocess.run(
        [cibuildwheel, "--print-build-identifiers", "--platform", platform, "--archs", archs],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"cibuildwheel --platform {platform} failed:\n{out.stdout}{out.stderr}")
    return set(out.stdout.split())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cibuildwheel", default=shutil.which("cibuildwheel"),
                   help="the cibuildwheel executable (default: the one on PATH)")
    args = p.parse_args()
    if not args.cibuildwheel:
        sys.exit("cibuildwheel not found (pip install cibuildwheel)")
    cibw = os.path.abspath(args.cibuildwheel)
    with tempfile.TemporaryDirectory() as empty:
        # Only the directory of cibuildwheel's own interpreter and an empty one:
        # no docker or podman to be found.
        env = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
        env["PATH"] = os.pathsep.join([os.path.dirname(cibw), empty])
        for engine in ("docker", "podman"):
            assert shutil.which(engine, path=env["PATH"]) is None, engine
        ok = True
        for platform in PLATFORMS:
            got, want = printed(cibw, platform, env), expected(platform)
            print(f"{platform:8} {len(got):2} identifiers: {' '.join(sorted(got))}")
            if got != want:
                ok = False
                print(f"  missing:    {' '.join(sorted(want - got)) or '-'}")
                print(f"  unexpected: {' '.join(sorted(got - want)) or '-'}")
    total = sum(len(expected(p)) for p in PLATFORMS)
    print(f"wheel matrix {'matches' if ok else 'DOES NOT match'} the expected {total} builds")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
