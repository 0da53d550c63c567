#!/bin/sh
# Runs the strata program over a small script in batch mode and checks its
# jsonl output line by line (docs/QUERY.md) and its exit status.
set -u
strata=$1
out=$(printf '%s\n' \
  "CREATE (:P {name: 'a', x: 1.0})-[:K]->(:P {name: 'b;c'});" \
  ":param n => 'a'" \
  "MATCH (p:P {name: \$n}) RETURN p.name, p.x, 0.0 / 0.0 AS nan;" \
  "MATCH (p)-[r:K]->() RETURN p, r" \
  ";" \
  "RETURN nope;" \
  ":bogus" | "$strata" --format jsonl)
status=$?
fail=0
check() {  # line-number prefix [suffix]: the line starts and ends so
    line=$(printf '%s\n' "$out" | sed -n "$1p")
    case $line in
        "$2"*"${3:-}") ;;
        *) echo "line $1: expected $2...${3:-}"; echo "got: $line"; fail=1 ;;
    esac
}
check 1 '{"columns": [], "rows": [], "stats": {"nodes_created": 2, "nodes_deleted": 0, "relationships_created": 1, "relationships_deleted": 0, "properties_set": 3, "labels_added": 2, "labels_removed": 0}, "time_ms": ' '}'
check 2 '{"columns": ["p.name", "p.x", "nan"], "rows": [["a", 1.0, {"~float": "NaN"}]], '
check 3 '{"columns": ["p", "r"], "rows": [[{"~node": {"id": 0, "labels": ["P"], "properties": {"name": "a", "x": 1.0}}}, {"~relationship": {"id": 0, "type": "K", "start": 0, "end": 1, "properties": {}}}]], '
check 4 '{"error": {"code": "SyntaxError", "detail": "UndefinedVariable", "message": ' '"line": 1, "column": 8}}'
check 5 '{"error": {"code": "ArgumentError", "detail": null, '
[ "$(printf '%s\n' "$out" | wc -l)" -eq 5 ] || { echo "expected 5 lines"; fail=1; }
[ $status -eq 1 ] || { echo "expected exit status 1, got $status"; fail=1; }
printf 'RETURN 1;\n' | "$strata" --format jsonl >/dev/null || { echo "exit status not 0"; fail=1; }
# Schema commands: a unique constraint refuses a duplicate and leaves the
# graph as it was; IF NOT EXISTS makes a repeat a no-op.
schema=$(printf '%s\n' \
  "CREATE (:P {id: 1}), (:P {id: 2});" \
  "CREATE CONSTRAINT FOR (p:P) REQUIRE p.id IS UNIQUE;" \
  "CREATE (:P {id: 1});" \
  "CREATE INDEX IF NOT EXISTS FOR (p:P) ON (p.name);" \
  "CREATE INDEX IF NOT EXISTS FOR (p:P) ON (p.name);" \
  "MATCH (p:P) RETURN count(p) AS n;" | "$strata" --format jsonl)
line3=$(printf '%s\n' "$schema" | sed -n 3p)
case $line3 in '{"error": {"code": "ConstraintVerificationFailed"'*) ;;
    *) echo "duplicate under a unique constraint: got $line3"; fail=1 ;; esac
line5=$(printf '%s\n' "$schema" | sed -n 5p)
case $line5 in '{"columns": []'*) ;; *) echo "IF NOT EXISTS repeat: got $line5"; fail=1 ;; esac
line6=$(printf '%s\n' "$schema" | sed -n 6p)
case $line6 in '{"columns": ["n"], "rows": [[2]]'*) ;; *) echo "count after: got $line6"; fail=1 ;; esac
[ $fail -eq 0 ] && echo "cli jsonl: ok"
exit $fail
