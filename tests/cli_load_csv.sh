#!/bin/sh
# The program's LOAD CSV switches: unrestricted by default, --import-dir DIR
# (paths resolve under DIR; leaving it is refused, also after :open),
# --no-load-csv, and a bad --import-dir refused at start (exit 2).
set -u
strata=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir "$t/imp"
printf 'secret\n' > "$t/secret.csv"
printf 'v\n7\n' > "$t/imp/a.csv"
fail=0
expect() {  # what output-pattern ARGS... (the query on stdin)
    what=$1 pattern=$2
    shift 2
    got=$("$strata" --format jsonl "$@" 2>&1)
    case $got in
        *"$pattern"*) ;;
        *) echo "$what: expected ...$pattern..."; echo "got: $got"; fail=1 ;;
    esac
}
echo "LOAD CSV FROM '$t/secret.csv' AS r RETURN r[0];" > "$t/q_abs"
echo "LOAD CSV WITH HEADERS FROM 'file:///a.csv' AS r RETURN r.v;" > "$t/q_in"
echo "LOAD CSV FROM '../secret.csv' AS r RETURN r[0];" > "$t/q_out"
expect "default" '"rows": [["secret"]]' -f "$t/q_abs"
expect "import dir" '"rows": [["7"]]' --import-dir "$t/imp" -f "$t/q_in"
expect "import dir, leaving it" '"code": "SecurityError"' --import-dir="$t/imp" -f "$t/q_out"
expect "disabled" 'LOAD CSV is disabled' --no-load-csv -f "$t/q_in"
expect "bad import dir" "import directory '$t/nope'" --import-dir "$t/nope" -c 'RETURN 1'
"$strata" --import-dir "$t/nope" -c 'RETURN 1' >/dev/null 2>&1
[ $? -eq 2 ] || { echo "a bad --import-dir should exit 2"; fail=1; }
# :open replaces the graph; the restriction stays
printf 'CREATE (:N);\n:save %s\n' "$t/g.db" | "$strata" --format jsonl >/dev/null
printf ':open %s\n' "$t/g.db" > "$t/q_open"
cat "$t/q_out" >> "$t/q_open"
expect ":open keeps it" '"code": "SecurityError"' --import-dir "$t/imp" -f "$t/q_open"
exit $fail
