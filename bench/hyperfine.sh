#!/bin/sh
# Whole-process timings of the strata program with hyperfine (SPEC section
# 12): a load script and a query script, each run as one `strata -f` process.
#
#   bench/hyperfine.sh [STRATA_BINARY]     (default build-bench/strata)
#
# The scripts are generated into a temporary directory: the load creates
# 100,000 Person nodes and 100,000 KNOWS relationships in batches of
# 10,000 (UNWIND), the query script loads the same graph, creates a unique
# index and runs 1,000 point lookups and a two-hop count.  The query
# figure minus the load figure is the queries' cost.
set -eu
strata=${1:-build-bench/strata}
[ -x "$strata" ] || { echo "no strata binary at $strata (build with cmake first)"; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (scripts/install-deps.sh)"; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

load="$dir/load.cypher"
: >"$load"
for b in 0 1 2 3 4 5 6 7 8 9; do
    lo=$((b * 10000)); hi=$((lo + 9999))
    echo "UNWIND range($lo, $hi) AS i CREATE (:Person {id: i, name: 'p' + toString(i)});" >>"$load"
done
for b in 0 1 2 3 4 5 6 7 8 9; do
    lo=$((b * 10000)); hi=$((lo + 9999))
    echo "UNWIND range($lo, $hi) AS i MATCH (a:Person {id: i}), (b:Person {id: (i * 7919) % 100000}) CREATE (a)-[:KNOWS]->(b);" >>"$load"
done

query="$dir/query.cypher"
# The relationship batches look people up by id: give them the index first.
{ echo "CREATE CONSTRAINT FOR (p:Person) REQUIRE p.id IS UNIQUE;"; cat "$load"; } >"$query"
load_indexed="$dir/load_indexed.cypher"
cp "$query" "$load_indexed"
i=0
while [ $i -lt 1000 ]; do
    echo "MATCH (p:Person {id: $((i * 97 % 100000))}) RETURN p.name;" >>"$query"
    i=$((i + 1))
done
echo "MATCH (a:Person)-[:KNOWS]->()-[:KNOWS]->(c) RETURN count(c);" >>"$query"

hyperfine --warmup 1 --runs 5 \
    --command-name "load 100k nodes + 100k rels (unique index)" "$strata -f $load_indexed --format jsonl" \
    --command-name "load + 1000 point lookups + 2-hop count" "$strata -f $query --format jsonl"
