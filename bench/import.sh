#!/bin/sh
# strata import and LOAD CSV throughput (docs/BENCHMARKS.md, "Import").
#
#   bench/import.sh [STRATA_BINARY] [NODES] [RELATIONSHIPS]
#       default build-bench/strata, 1,000,000 nodes, 10,000,000 relationships
#
# Generates into a temporary directory a node file (id:ID, name, age:int,
# score:float, :LABEL) and a relationship file (:START_ID, :END_ID, :TYPE,
# since:int) whose ends are pseudo-random nodes, then times one
# `strata import` of both (its summary gives rows/s, rows per CPU second —
# the figure a shared machine's load changes least — graph memory and peak
# resident size), and LOAD CSV of the first 100,000 node rows against
# `strata import` of the same rows, for the comparison.
set -eu
strata=${1:-build-bench/strata}
nodes=${2:-1000000}
rels=${3:-10000000}
[ -x "$strata" ] || { echo "no strata binary at $strata (build with cmake first)"; exit 2; }
case $strata in /*) ;; *) strata=$(pwd)/$strata ;; esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

echo "generating $nodes nodes and $rels relationships in $dir"
t0=$(date +%s.%N)
awk -v n="$nodes" 'BEGIN {
    print "id:ID(Person),name,age:int,score:float,:LABEL"
    for (i = 0; i < n; i++)
        printf "%d,\"person %d\",%d,%.2f,Person%s\n", i, i, i % 90, (i % 1000) / 10.0,
               (i % 10 == 0) ? ";Admin" : ""
}' >"$dir/nodes.csv"
# xorshift-style mixing in awk's doubles would overflow; a linear
# congruential sequence modulo 2^31 is enough to spread the ends.
awk -v n="$nodes" -v m="$rels" 'BEGIN {
    print ":START_ID(Person),:END_ID(Person),:TYPE,since:int"
    x = 12345
    for (i = 0; i < m; i++) {
        x = (1103515245 * x + 12345) % 2147483648; s = x % n
        x = (1103515245 * x + 12345) % 2147483648; e = x % n
        printf "%d,%d,%s,%d\n", s, e, (i % 3 == 0) ? "KNOWS" : "FOLLOWS", 2000 + i % 25
    }
}' >"$dir/rels.csv"
t1=$(date +%s.%N)
echo "generated in $(echo "$t1 - $t0" | bc) s: $(du -h "$dir/nodes.csv" | cut -f1) nodes, $(du -h "$dir/rels.csv" | cut -f1) relationships"

echo
echo "== strata import: $nodes nodes, $rels relationships"
echo "\$ strata import --nodes=nodes.csv --relationships=rels.csv out.db"
# CPU time as well as wall time: on a shared machine the CPU seconds are
# the steadier figure.
timer=
[ -x /usr/bin/time ] && timer="/usr/bin/time -o $dir/cpu.txt -f cpu_%Us_user_%Ss_system"
t0=$(date +%s.%N)
$timer "$strata" import --nodes="$dir/nodes.csv" --relationships="$dir/rels.csv" "$dir/out.db" \
    | tee "$dir/summary.txt"
t1=$(date +%s.%N)
echo "wall time $(echo "$t1 - $t0" | bc) s; file $(du -h "$dir/out.db" | cut -f1)"
# rows per CPU second of the reading and building alone (the program's
# own count of its processor time before the save): the figure a loaded
# machine changes least
[ -s "$dir/cpu.txt" ] && cat "$dir/cpu.txt"
sed -n 's/^imported.* \([0-9]*\) rows per CPU second.*/rows per CPU second \1/p' "$dir/summary.txt"
rm -f "$dir/out.db"

echo
echo "== 100,000 node rows: LOAD CSV against strata import"
head -n 100001 "$dir/nodes.csv" >"$dir/nodes100k.csv"
sed '1s/.*/id,name,age,score,labels/' "$dir/nodes100k.csv" >"$dir/plain100k.csv"
echo "\$ strata -c \"LOAD CSV WITH HEADERS FROM 'file://…/plain100k.csv' AS r CREATE (:Person {id: r.id, name: r.name, age: toInteger(r.age), score: toFloat(r.score)})\""
"$strata" --format jsonl -c "LOAD CSV WITH HEADERS FROM 'file://$dir/plain100k.csv' AS r CREATE (:Person {id: r.id, name: r.name, age: toInteger(r.age), score: toFloat(r.score)});" \
    | sed 's/.*"nodes_created": \([0-9]*\).*"time_ms": \([0-9.]*\).*/LOAD CSV: \1 nodes in \2 ms/'
echo "\$ strata import --nodes=nodes100k.csv out.db"
"$strata" import --nodes="$dir/nodes100k.csv" "$dir/out100k.db" | head -1
