#!/bin/sh
# Builds the libFuzzer targets with clang and runs each for a share of the
# time (default 10 s in all, split evenly):
#   parser   the Cypher front end, seeded from tests/corpus/parser
#   loader   the saved-file loader, seeded from tests/corpus/loader; built
#            with STRATA_FUZZING, which lets wrong checksums through so
#            mutations reach the section parsers
#   csv      the CSV reader, seeded from tests/corpus/csv; built with
#            STRATA_TESTING, whose few-byte read buffer makes every state
#            meet a refill
#   bolt     the Bolt server's PackStream decoder and message state
#            machine over a live graph, seeded from tests/corpus/bolt
# New inputs go to a temporary directory; a crash leaves its input in
# build/fuzz/ and fails the script.
#
#   sh scripts/fuzz.sh [SECONDS]
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-10}
command -v clang >/dev/null || { echo "fuzz: clang not installed, skipped"; exit 0; }
mkdir -p build/fuzz
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -I. -Iinclude"
# The engine's sources below the query layer, in CMakeLists.txt's order.
engine=$(sed -n 's|^ *${PROJECT_SOURCE_DIR}/\(storage/[a-z_]*\.c\)$|\1|p; s|^ *${PROJECT_SOURCE_DIR}/\(index/[a-z_]*\.c\)$|\1|p; s|^ *${PROJECT_SOURCE_DIR}/\(journal/[a-z_]*\.c\)$|\1|p; s|^ *${PROJECT_SOURCE_DIR}/\(core/[a-z_]*\.c\)$|\1|p' CMakeLists.txt)
# shellcheck disable=SC2086
clang $flags tests/fuzz_parser.c query/lexer.c query/ast.c query/parser.c storage/mem.c \
    -o build/fuzz/fuzz_parser
# shellcheck disable=SC2086
clang $flags -DSTRATA_FUZZING tests/fuzz_loader.c $engine -lm -lpthread \
    -o build/fuzz/fuzz_loader
# shellcheck disable=SC2086
clang $flags -DSTRATA_TESTING tests/fuzz_csv.c query/csv.c storage/mem.c -o build/fuzz/fuzz_csv
# The whole library, for the Bolt target: the server runs real queries.
library=$(sed -n 's|^ *${PROJECT_SOURCE_DIR}/\([a-z]*/[a-z_0-9]*\.c\)$|\1|p' CMakeLists.txt)
# shellcheck disable=SC2086
clang $flags tests/fuzz_bolt.c server/packstream.c server/bolt.c server/log.c server/auth.c \
    $library $(pkg-config --cflags --libs libutf8proc libpcre2-8 libcrypt) -lm -lpthread \
    -o build/fuzz/fuzz_bolt
share=$((seconds / 4))
[ "$share" -ge 1 ] || share=1
run() {
    name=$1
    shift
    corpus=$(mktemp -d)
    build/fuzz/fuzz_$name -max_total_time="$share" "$@" -artifact_prefix=build/fuzz/ \
        -print_final_stats=0 "$corpus" "tests/corpus/$name" >"build/fuzz/$name.txt" 2>&1 ||
        { rm -rf "$corpus"; tail -30 "build/fuzz/$name.txt"; echo "fuzz: the $name failed"; exit 1; }
    rm -rf "$corpus"
    echo "fuzz: $name, $share s, $(grep -o 'DONE.*' "build/fuzz/$name.txt" | head -1)"
}
run parser -max_len=4096
run loader -max_len=65536
run csv -max_len=4096
run bolt -max_len=8192
