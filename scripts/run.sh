#!/bin/sh
# Installs dependencies, builds strata and opens its REPL on the demo graph
# (demo/demo.cypher: films, the people who made them, their home cities).
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DSTRATA_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)" >/dev/null
exec ./build/release/strata --init demo/demo.cypher
