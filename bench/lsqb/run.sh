#!/bin/sh
# The LSQB run (docs/BENCHMARKS.md W5): strata and, when installed, Kuzu side by side
# on the same SF0.1 files, at the same thread count.
#
#   sh bench/lsqb/run.sh BUILD_DIR [THREADS] [DATA_DIR]
#
# BUILD_DIR holds a build with benchmarks (e.g. build-bench).  DATA_DIR
# defaults to the files inside the Kuzu package (sh bench/lsqb/install-kuzu.sh).
# strata's load is `strata import` of the CSV files (Post and Comment also
# get the label Message, as in LSQB's Neo4j schema); Kuzu's is COPY FROM.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$1
threads=${2:-1}
data=${3:-$here/node_modules/kuzu/kuzu-source/dataset/lsqb-sf01}
[ -f "$data/Person.csv" ] || { echo "no LSQB data in $data (sh $here/install-kuzu.sh)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# One file of the data set names the wrong id space in its header.
sed '1s/:END_ID(Commen)$/:END_ID(Post)/' "$data/Comment_replyOf_Post.csv" >"$work/Comment_replyOf_Post.csv"

set -- --delimiter '|'
for f in "$data"/*.csv; do
    name=$(basename "$f" .csv)
    case $name in
    Person_knows_Person_with_null_column) ;;
    Post | Comment) set -- "$@" "--nodes=$name:Message=$f" ;;
    *_*_*) [ "$name" = Comment_replyOf_Post ] && f=$work/$name.csv
           set -- "$@" "--relationships=$name=$f" ;;
    *) set -- "$@" "--nodes=$name=$f" ;;
    esac
done
start=$(date +%s.%N)
"$build/strata" import "$@" "$work/lsqb.db" >/dev/null
end=$(date +%s.%N)
awk "BEGIN { printf \"strata import: %.2f s\\n\", $end - $start }"
"$build/bench/lsqb" "$work/lsqb.db" "$here/queries.cypher" --threads "$threads" || status=$?
if [ -d "$here/node_modules/kuzu" ]; then
    echo "Kuzu 0.11.3, $threads thread(s):"
    node "$here/kuzu.mjs" "$data" "$here/queries.cypher" "$threads"
fi
exit "${status:-0}"
