#!/bin/sh
# Builds the Python package and runs its pytest suite with Debian's python3.
#   sh scripts/test-python.sh            the package as pip would build it
#                                        (its own Release libstrata)
#   sh scripts/test-python.sh LIBDIR     against the libstrata.so in LIBDIR
#                                        (a CMake build directory); when that
#                                        library was built with the sanitizers,
#                                        the ASan runtime is preloaded
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
python=/usr/bin/python3
mkdir -p build
log=$root/build/python-setup.log
# setup.py's output goes to a log, shown only when the build fails.
quietly() { "$@" >"$log" 2>&1 || { cat "$log"; exit 1; }; }
if [ $# -eq 0 ]; then
    (cd python && quietly $python setup.py build_ext --inplace)
    cd python
    exec $python -m pytest -q tests
fi
libdir=$(cd "$1" && pwd)
out=$root/build/python-$(basename "$libdir")
rm -rf "$out"
(cd python && export STRATA_LIBDIR="$libdir" && quietly $python setup.py build --build-base "$out/tmp" \
    --build-lib "$out/lib")
preload=
if nm -D "$libdir/libstrata.so" | grep -q __asan_init; then
    preload=$(gcc -print-file-name=libasan.so)
fi
# Python itself keeps memory until exit: leaks are not checked here, every
# other ASan and UBSan error is.
cd "$out"
LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1 \
    PYTHONPATH="$out/lib" exec $python -m pytest -q -p no:cacheprovider "$root/python/tests"
