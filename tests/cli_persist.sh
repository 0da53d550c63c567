#!/bin/sh
# Saved graphs through the program: `strata FILE` creates, :save writes it,
# `strata FILE` opens it again with its data and indices, :open replaces
# the graph, and a missing or damaged file is an IOError that leaves the
# graph in use as it was.
set -u
strata=$1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect() {  # what, got, expected substring
    case $2 in
        *"$3"*) ;;
        *) echo "$1: expected ...$3..."; echo "got: $2"; fail=1 ;;
    esac
}

out=$(printf '%s\n' \
    "CREATE (:City {name: 'Oslo', founded: date('1048-01-01')})<-[:LIVES_IN {since: 2001}]-(:Person {name: 'Ada', tags: ['x', 'y']});" \
    "CREATE INDEX byName FOR (c:City) ON (c.name);" \
    ":save" | "$strata" --format jsonl "$tmp/g.db")
[ $? -eq 0 ] || { echo "creating and saving failed: $out"; fail=1; }
[ -s "$tmp/g.db" ] || { echo ":save wrote no file"; fail=1; }

out=$("$strata" --format jsonl "$tmp/g.db" -c "MATCH (p:Person)-[r:LIVES_IN]->(c:City {name: 'Oslo'}) RETURN p.name, p.tags, r.since, c.founded; CALL db.indexes() YIELD name RETURN name;")
expect "reopened data" "$out" '"rows": [["Ada", ["x", "y"], 2001, {"~date": "1048-01-01"}]]'
expect "reopened index" "$out" '"rows": [["byName"]]'

# :save FILE elsewhere, then :open it from a session over another graph
out=$(printf '%s\n' "CREATE (:Other);" ":save $tmp/other.db" ":open $tmp/g.db" \
    "MATCH (n) RETURN count(n) AS n;" | "$strata" --format jsonl)
expect ":open replaces the graph" "$out" '"rows": [[2]]'

# bad files: an IOError, and the graph in use stays
printf 'not a graph' >"$tmp/bad.db"
out=$(printf '%s\n' "CREATE (:Kept);" ":open $tmp/bad.db" ":open $tmp/missing.db" \
    "MATCH (n:Kept) RETURN count(n) AS n;" | "$strata" --format jsonl)
status=$?
[ $status -eq 1 ] || { echo "bad :open: exit status $status"; fail=1; }
expect "damaged file" "$out" '{"error": {"code": "IOError", "detail": null, "message": "'"$tmp"'/bad.db'
expect "missing file" "$out" "missing.db"
expect "graph kept" "$out" '"rows": [[1]]'
out=$("$strata" "$tmp/bad.db" -c "RETURN 1;" 2>&1)
[ $? -eq 1 ] || { echo "opening a damaged DBFILE should fail"; fail=1; }
expect "damaged DBFILE" "$out" "not a strata file"

# :save with no file named and none opened
out=$(printf ':save\n' | "$strata" --format jsonl)
expect ":save without a file" "$out" "no file to save to"
exit $fail
