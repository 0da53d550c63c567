#!/bin/sh
# A database directory through the program: `strata DIR/` creates it with
# its log, every committed statement is there when it is opened again
# (indices included), :checkpoint writes a snapshot and restarts the log,
# a torn tail is reported and cut, and :checkpoint on a graph without a
# directory is an error.
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
    "CREATE (:City {name: 'Oslo'})<-[:LIVES_IN {since: 2001}]-(:Person {name: 'Ada'});" \
    "CREATE INDEX byName FOR (c:City) ON (c.name);" | "$strata" --format jsonl "$tmp/db/")
[ $? -eq 0 ] || { echo "creating failed: $out"; fail=1; }
[ -f "$tmp/db/wal-0000000000000001.log" ] || { echo "no log segment"; fail=1; }

out=$("$strata" --format jsonl "$tmp/db" -c "MATCH (p:Person)-[r:LIVES_IN]->(c:City) RETURN p.name, r.since, c.name; CALL db.indexes() YIELD name RETURN name;")
expect "reopened data" "$out" '"rows": [["Ada", 2001, "Oslo"]]'
expect "reopened index" "$out" '"rows": [["byName"]]'

out=$(printf '%s\n' "MATCH (p:Person) SET p.age = 36;" ":checkpoint" | "$strata" --format jsonl --sync normal "$tmp/db")
[ $? -eq 0 ] || { echo ":checkpoint failed: $out"; fail=1; }
ls "$tmp/db" | grep -q '^snapshot-' || { echo ":checkpoint wrote no snapshot"; fail=1; }
out=$("$strata" --format jsonl "$tmp/db" -c "CREATE (:Late);")
# A torn tail: the segment is preallocated (zeros past its records), so
# cut it where its records end (within its first 4 KiB here) and add a
# partial record that runs past the file's end.
for f in "$tmp"/db/wal-*.log; do
    end=$(head -c 4096 "$f" | od -An -v -tu1 | tr -s ' ' '\n' | grep -v '^$' | grep -n -v '^0$' | tail -1 | cut -d: -f1)
    truncate -s "$end" "$f" && printf 'garbage' >>"$f"
done
out=$("$strata" --format jsonl "$tmp/db" -c "MATCH (p:Person) RETURN p.age; MATCH (n:Late) RETURN count(n);" 2>&1)
expect "after the checkpoint" "$out" '"rows": [[36]]'
expect "the record after it" "$out" '"rows": [[1]]'
expect "torn tail reported" "$out" 'a torn tail of 7 bytes'

out=$(printf '%s\n' "CREATE (:One);" ":stats" | "$strata" --format jsonl "$tmp/db")
expect ":stats shows the log" "$out" '"log_bytes": '
expect ":stats shows the last record" "$out" '"last_seq": '
out=$(echo ":stats" | "$strata" --format jsonl 2>&1)
case $out in *log_bytes*) echo ":stats of a graph without a log shows one"; fail=1 ;; esac

out=$(echo ":checkpoint" | "$strata" --format jsonl 2>&1)
expect "no directory" "$out" 'no database path'

exit $fail
