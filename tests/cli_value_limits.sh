#!/bin/sh
# Value limits through the program.  With a 512 KiB stack (ulimit -s), the
# deepest value the engine allows (VALUE_MAX_DEPTH = 1000 levels) is built,
# compared, deduplicated and printed in every output format, and one level
# more is an error, not a crash.  Temporal values at the ends of their
# range are made by Cypher, saved with :save and read back by opening the
# file; one past the end is refused where it is made, so no saved file
# can hold a value the loader would refuse.
set -u
strata=$1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect() {  # what, got, expected substring
    case $2 in
        *"$3"*) ;;
        *) echo "$1: expected ...$3..."; echo "got: $2" | cut -c1-400; fail=1 ;;
    esac
}

deep="reduce(acc = 0, i IN range(1, 1000) | CASE i % 2 WHEN 0 THEN {k: acc} ELSE [acc] END)"
for format in table json jsonl csv; do
    out=$( (ulimit -s 512; "$strata" --format $format -c \
        "UNWIND [1, 2] AS n WITH DISTINCT $deep AS x RETURN x = $deep AS same, x") 2>&1)
    status=$?
    [ $status -eq 0 ] || { echo "$format: exit status $status"; echo "$out" | cut -c1-300; fail=1; }
    case $format in
        table) inner='{k: [0]}' ;;
        csv) inner='{""k"": [0]}' ;;
        *) inner='{"k": [0]}' ;;
    esac
    expect "$format: innermost value" "$out" "$inner"
done
out=$( (ulimit -s 512; "$strata" --format jsonl -c \
    "RETURN reduce(acc = 0, i IN range(1, 1000000) | [acc]) AS x") 2>&1)
expect "one level past the limit" "$out" '"detail": "NestingTooDeep", "message": "a list or map would nest deeper than 1000 levels"'

# The ends of every temporal range survive :save and reopening.
ends="date('-999999999-01-01'), date('+999999999-12-31'),
      localtime('23:59:59.999999999'), time('23:59:59.999999999-18:00'),
      localdatetime('+999999999-12-31T23:59:59.999999999'),
      datetime('-999999999-01-01T00:00+18:00'),
      datetime('+999999999-12-31T23:59:59.999999999[Europe/Stockholm]'),
      datetime({epochMillis: 9223372036854775807}),
      duration({months: 9223372036854775807, days: -9223372036854775807 - 1,
                seconds: 9223372036854775807, nanoseconds: 999999999})"
out=$(printf '%s\n' "UNWIND [$(echo $ends)] AS v CREATE (:V {v: v});" ":save" \
    | "$strata" --format jsonl "$tmp/g.db" 2>&1)
[ -s "$tmp/g.db" ] || { echo ":save wrote no file: $out"; fail=1; }
out=$("$strata" --format jsonl "$tmp/g.db" -c "MATCH (n:V) RETURN count(n) AS n, collect(n.v) AS vs" 2>&1)
expect "reopened count" "$out" '"rows": [[9, '
expect "reopened date" "$out" '"+999999999-12-31"'
expect "reopened datetime" "$out" '"+999999999-12-31T23:59:59.999999999+01:00[Europe/Stockholm]"'
expect "reopened duration" "$out" '"P768614336404564650Y7M-9223372036854775808DT2562047788015215H30M7.999999999S"'

# One past either end is refused where it is made, and nothing is stored.
out=$(printf '%s\n' "CREATE (:V {v: datetime({epochSeconds: 9223372036854775807})});" \
    "CREATE (:V {v: date('2020-01-01') + duration({days: 9223372036854775807})});" \
    "MATCH (n:V) RETURN count(n) AS n;" | "$strata" --format jsonl 2>&1)
expect "epochSeconds past the range" "$out" '"message": "instant out of range (years -999999999 to 999999999)"'
expect "date past the range" "$out" '"message": "date out of range (years -999999999 to 999999999)"'
expect "nothing stored" "$out" '"rows": [[0]]'
exit $fail
