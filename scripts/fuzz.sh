#!/bin/sh
# Builds the Cypher parser's libFuzzer target with clang and runs it for a
# while (default 10 s) from the seed corpus in tests/corpus/parser.  New
# inputs go to a temporary directory; a crash leaves its input in
# build/fuzz/ and fails the script.
#
#   sh scripts/fuzz.sh [SECONDS]
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-10}
command -v clang >/dev/null || { echo "fuzz: clang not installed, skipped"; exit 0; }
mkdir -p build/fuzz
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -D_GNU_SOURCE -I. tests/fuzz_parser.c query/lexer.c query/ast.c query/parser.c \
    storage/mem.c -o build/fuzz/fuzz_parser
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
build/fuzz/fuzz_parser -max_total_time="$seconds" -max_len=4096 \
    -artifact_prefix=build/fuzz/ -print_final_stats=0 "$corpus" tests/corpus/parser \
    >build/fuzz/log.txt 2>&1 || { tail -30 build/fuzz/log.txt; echo "fuzz: the parser failed"; exit 1; }
echo "fuzz: parser, $seconds s, $(grep -o 'DONE.*' build/fuzz/log.txt | head -1)"
