#!/bin/sh
# Builds the libFuzzer targets with clang — the Cypher parser's and the CSV
# reader's — and runs each for a while (default 10 s) from its seed corpus
# in tests/corpus/.  New inputs go to a temporary directory; a crash leaves
# its input in build/fuzz/ and fails the script.
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
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -D_GNU_SOURCE -DSTRATA_TESTING -I. tests/fuzz_csv.c query/csv.c storage/mem.c \
    -o build/fuzz/fuzz_csv
csv_corpus=$(mktemp -d)
trap 'rm -rf "$corpus" "$csv_corpus"' EXIT
build/fuzz/fuzz_csv -max_total_time="$seconds" -max_len=4096 \
    -artifact_prefix=build/fuzz/ -print_final_stats=0 "$csv_corpus" tests/corpus/csv \
    >build/fuzz/log_csv.txt 2>&1 || { tail -30 build/fuzz/log_csv.txt; echo "fuzz: the CSV reader failed"; exit 1; }
echo "fuzz: csv, $seconds s, $(grep -o 'DONE.*' build/fuzz/log_csv.txt | head -1)"
