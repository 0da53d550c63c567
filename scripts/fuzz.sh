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
#   query    a statement parsed, checked, planned and run on a small graph,
#            seeded from tests/corpus/parser (tests/fuzz_query.c)
#   bolt     the Bolt server's PackStream decoder and message state
#            machine over a live graph, seeded from tests/corpus/bolt
#   batch    the program's batch mode: statement scanner, batch loop,
#            client commands and output formats, seeded from
#            tests/corpus/batch (tests/fuzz_batch.c)
# query and batch link the whole engine, built once with STRATA_TESTING
# (tiny chunk sizes, the allocation cap they use per input).
# New inputs go to a temporary directory; a crash leaves its input in
# build/fuzz/ and fails the script.
#
#   sh scripts/fuzz.sh [SECONDS [TARGET...]]
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-10}
[ $# -gt 0 ] && shift
targets=${*:-parser loader csv query batch bolt}
command -v clang >/dev/null || { echo "fuzz: clang not installed, skipped"; exit 0; }
mkdir -p build/fuzz
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -I. -Iinclude"
libflags="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -I. -Iinclude"
# The engine's sources, in CMakeLists.txt's order; those below the query
# layer alone for the loader.
sources() {
    sed -n "s|^ *\${PROJECT_SOURCE_DIR}/\\($1/[a-z_0-9]*\\.c\\)\$|\\1|p" CMakeLists.txt
}
lower="$(sources storage) $(sources index) $(sources journal) $(sources core)"
engine="$lower $(sources algo) $(sources query)"
# The program's sources for the batch target: all but main.c and the line
# editor (repl.c, complete.c, which need libedit).
program=$(ls cli/*.c | grep -v -e '/main\.c$' -e '/repl\.c$' -e '/complete\.c$')

# Objects compiled once per change of their source (make-like, by mtime).
compile() {  # out-dir extra-flags sources...
    dir=$1 extra=$2
    shift 2
    mkdir -p "$dir"
    objs=
    for src in "$@"; do
        obj="$dir/$(echo "$src" | tr / _).o"
        if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] ||
            [ -n "$(find storage index journal core algo query cli include -name '*.h' \
                    -newer "$obj" | head -1)" ]; then
            # shellcheck disable=SC2086
            clang $libflags $extra -c "$src" -o "$obj"
        fi
        objs="$objs $obj"
    done
}

for t in $targets; do
    case $t in
    parser)
        # shellcheck disable=SC2086
        clang $flags tests/fuzz_parser.c query/lexer.c query/ast.c query/parser.c storage/mem.c storage/utf8.c \
            -o build/fuzz/fuzz_parser ;;
    loader)
        # shellcheck disable=SC2086
        clang $flags -DSTRATA_FUZZING tests/fuzz_loader.c $lower -lm -lpthread \
            -o build/fuzz/fuzz_loader ;;
    csv)
        # shellcheck disable=SC2086
        clang $flags -DSTRATA_TESTING tests/fuzz_csv.c query/csv.c storage/mem.c storage/utf8.c \
            -o build/fuzz/fuzz_csv ;;
    query)
        # shellcheck disable=SC2086
        compile build/fuzz/engine -DSTRATA_TESTING $engine
        # shellcheck disable=SC2086
        clang $flags -DSTRATA_TESTING tests/fuzz_query.c $objs -lm -lpthread $(pkg-config --libs libpcre2-8 libutf8proc) \
            -o build/fuzz/fuzz_query ;;
    batch)
        # shellcheck disable=SC2086
        compile build/fuzz/engine -DSTRATA_TESTING $engine
        engine_objs=$objs
        # shellcheck disable=SC2086
        compile build/fuzz/program -DSTRATA_TESTING $program
        # shellcheck disable=SC2086
        clang $flags -DSTRATA_TESTING tests/fuzz_batch.c $engine_objs $objs -lm -lpthread $(pkg-config --libs libpcre2-8 libutf8proc) \
            -o build/fuzz/fuzz_batch ;;
    bolt)
        # shellcheck disable=SC2086
        compile build/fuzz/engine -DSTRATA_TESTING $engine
        # shellcheck disable=SC2086
        clang $flags -DSTRATA_TESTING tests/fuzz_bolt.c server/packstream.c server/bolt.c \
            server/log.c server/auth.c $objs -lm -lpthread \
            $(pkg-config --libs libpcre2-8 libutf8proc libcrypt) -o build/fuzz/fuzz_bolt ;;
    *)
        echo "fuzz: unknown target $t"; exit 2 ;;
    esac
done

count=$(echo $targets | wc -w)
share=$((seconds / count))
[ "$share" -ge 1 ] || share=1
run() {
    name=$1 seeds=$2
    shift 2
    corpus=$(mktemp -d)
    build/fuzz/fuzz_$name -max_total_time="$share" "$@" -artifact_prefix=build/fuzz/ \
        -print_final_stats=0 "$corpus" "tests/corpus/$seeds" >"build/fuzz/$name.txt" 2>&1 ||
        { rm -rf "$corpus"; tail -30 "build/fuzz/$name.txt"; echo "fuzz: the $name failed"; exit 1; }
    rm -rf "$corpus"
    echo "fuzz: $name, $share s, $(grep -o 'DONE.*' "build/fuzz/$name.txt" | head -1)"
}
for t in $targets; do
    case $t in
    parser) run parser parser -max_len=4096 ;;
    loader) run loader loader -max_len=65536 ;;
    csv) run csv csv -max_len=4096 ;;
    # -timeout: far above the 100 ms interrupt; hitting it means a loop
    # that does not check for interrupts
    query) run query parser -max_len=4096 -timeout=10 ;;
    batch) run batch batch -max_len=4096 -timeout=10 ;;
    bolt) run bolt bolt -max_len=8192 -timeout=10 ;;
    esac
done
