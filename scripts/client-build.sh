#!/bin/sh
# The strata program built as any client of the library would build it:
# from an installed libstrata.a and strata.h alone (cmake --install of a
# build directory into a scratch prefix), with the program's own sources
# (cli/, server/), then run once.  Fails if the program reaches for
# anything the installed library does not export.
#   sh scripts/client-build.sh [BUILD_DIR]      (default build/release)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build/release}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT INT TERM HUP
cmake --install "$build" --prefix "$prefix" >/dev/null
lib=$(find "$prefix" -name libstrata.a | head -1)
pc=$(dirname "$(find "$prefix" -name strata.pc | head -1)")
# The sources' own quoted includes ("cli/...", "server/...") need the
# checkout's root; the engine's headers are never included from there
# (tests/check_includes.sh).
# shellcheck disable=SC2046
cc -std=gnu11 -O1 -D_GNU_SOURCE -DSTRATA_VERSION_TEXT='"client-build"' -I. \
    -I"$prefix/include" cli/*.c server/*.c "$lib" \
    $(PKG_CONFIG_PATH=$pc pkg-config --static --libs strata | sed 's/-lstrata//') \
    $(pkg-config --libs libedit libcrypt) -o "$prefix/strata"
out=$("$prefix/strata" --format jsonl -c 'RETURN 40 + 2 AS answer')
case $out in
*'"rows": [[42]]'*) echo "client build: the program builds and runs on the installed library alone" ;;
*) echo "client build: unexpected output: $out"; exit 1 ;;
esac
