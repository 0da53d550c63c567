#!/bin/sh
# The demo graph (demo/demo.cypher) loads in batch mode without an error,
# and two of the README's example queries give the rows the data implies;
# then --init's error report, and the table renderer in batch mode.
set -u
strata=$1
demo=$2
fail=0
expect() {  # what, got, expected prefix
    case $2 in
        "$3"*) ;;
        *) echo "$1: expected $3..."; echo "got: $2"; fail=1 ;;
    esac
}
out=$("$strata" --format jsonl --bail -f "$demo")
[ $? -eq 0 ] || { echo "the demo script failed: $out"; fail=1; }
case $out in *'"error"'*) echo "the demo script reported an error: $out"; fail=1 ;; esac

q1="MATCH (d:Director {name: 'Alfred Hitchcock'})-[:DIRECTED]->(f:Film)<-[:ACTED_IN]-(p:Person)
RETURN p.name AS actor, count(f) AS films ORDER BY films DESC, actor LIMIT 3;"
q2="MATCH (p:Person {name: 'Audrey Hepburn'})-[r:ACTED_IN]->(f:Film)
RETURN f.title AS film, r.role AS role ORDER BY f.released;"
out=$("$strata" --init "$demo" --format jsonl -c "$q1 $q2")
expect "Hitchcock's actors" "$(printf '%s\n' "$out" | sed -n 1p)" \
    '{"columns": ["actor", "films"], "rows": [["Cary Grant", 3], ["Grace Kelly", 2], ["James Stewart", 2]], '
expect "Audrey Hepburn's roles" "$(printf '%s\n' "$out" | sed -n 2p)" \
    '{"columns": ["film", "role"], "rows": [["Roman Holiday", "Princess Ann"], ["Sabrina", "Sabrina Fairchild"], ["Breakfast at Tiffany'"'"'s", "Holly Golightly"], ["Charade", "Regina Lampert"]], '
[ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] || { echo "--init printed results: $out"; fail=1; }

# --init reports an error with the script's name and the statement's line,
# goes on, and the exit status says something failed.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'CREATE (:A);\n\nRETURN\n  nope;\nCREATE (:A);\n' >"$tmp/init.cypher"
out=$("$strata" --init "$tmp/init.cypher" --format table -c "MATCH (a:A) RETURN count(a) AS n;")
status=$?
[ $status -eq 1 ] || { echo "--init error: exit status $status"; fail=1; }
case $out in *"  nope"*"^"*"UndefinedVariable"*"$tmp/init.cypher, statement starting on line 3"*) ;;
    *) echo "--init error report: got $out"; fail=1 ;; esac
case $out in *"| 2 |"*) ;; *) echo "--init goes on after an error: got $out"; fail=1 ;; esac

# The table renderer in batch mode: Cypher-like cells, the row cap.
out=$(printf '%s\n' ":rows 2" "UNWIND range(1, 5) AS i RETURN i, {k: 'v'} AS m;" \
    | "$strata" --format table)
case $out in *"| 1 | {k: 'v'} |"*"| 2 | {k: 'v'} |"*"5 rows"*"3 not shown"*) ;;
    *) echo "table with :rows 2: got $out"; fail=1 ;; esac
case $out in *"| 3 |"*) echo "row 3 shown under :rows 2"; fail=1 ;; esac
[ $fail -eq 0 ] && echo "cli demo: ok"
exit $fail
