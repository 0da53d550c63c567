#!/bin/sh
# Installs dependencies, builds strata and runs the embedding example
# (docs/example.c).
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DSTRATA_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)" >/dev/null
exec ./build/release/strata_example
