#!/bin/sh
# LSQB SF0.1 loaded with LOAD CSV statements (docs/BENCHMARKS.md W5): one
# CREATE per node file, an index on every label's id, then one
# MATCH ... CREATE per relationship file — the streaming LOAD CSV path.
#
#   sh bench/lsqb/load_csv.sh BUILD_DIR [DATA_DIR]
#
# Prints the graph's counts, the time of the whole script (the process,
# the indices, the loads and the closing count) and the load statements'
# own time.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$1
data=${2:-$here/node_modules/kuzu/kuzu-source/dataset/lsqb-sf01}
[ -f "$data/Person.csv" ] || { echo "no LSQB data in $data (sh $here/install-kuzu.sh)" >&2; exit 1; }
work=$(mktemp -d)
trap "rm -rf $work" EXIT INT TERM
script=$work/load.cypher

for f in "$data"/*.csv; do
    name=$(basename "$f" .csv)
    case $name in
    *_*_*) continue ;;
    Post | Comment) labels="$name:Message" ;;
    *) labels=$name ;;
    esac
    echo "CREATE INDEX FOR (n:$name) ON (n.id);" >>"$script"
    echo "LOAD CSV WITH HEADERS FROM 'file://$f' AS row FIELDTERMINATOR '|'" \
         "CREATE (:$labels {id: toInteger(row['id:ID($name)'])});" >>"$script"
done
for f in "$data"/*_*_*.csv; do
    name=$(basename "$f" .csv)
    [ "$name" = Person_knows_Person_with_null_column ] && continue
    from=${name%%_*}
    to=${name##*_}
    header=$(head -1 "$f")
    start=${header%%|*}
    end=${header#*|}
    echo "LOAD CSV WITH HEADERS FROM 'file://$f' AS row FIELDTERMINATOR '|'" \
         "MATCH (a:$from {id: toInteger(row['$start'])}), (b:$to {id: toInteger(row['$end'])})" \
         "CREATE (a)-[:$name]->(b);" >>"$script"
done
echo "MATCH (n) WITH count(n) AS nodes MATCH ()-[r]->() RETURN nodes, count(r) AS relationships;" >>"$script"

start=$(date +%s.%N)
"$build/strata" --format jsonl <"$script" >"$work/out.jsonl"
end=$(date +%s.%N)
tail -1 "$work/out.jsonl"
# the statements' own times (time_ms), the closing count left out: what
# Kuzu's figure (the COPY statements alone) compares with
statements=$(sed '$d' "$work/out.jsonl" | sed -n 's/.*"time_ms": \([0-9.]*\).*/\1/p' |
             awk '{ s += $1 } END { printf "%.2f", s / 1000 }')
awk "BEGIN { printf \"strata LOAD CSV: %.2f s (the statements: $statements s)\\n\", $end - $start }"
