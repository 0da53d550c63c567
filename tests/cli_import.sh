#!/bin/sh
# strata import (docs/IMPORT.md): a good import checked by loading what it wrote
# and querying it; then bad inputs, each of which must fail naming file and
# line, exit 1, and leave the output file absent or exactly as it was.
set -u
strata=$1
# query DB QUERY...: the saved graph's answers, one jsonl line each
query() {
    db=$1
    shift
    for q in "$@"; do printf '%s;\n' "$q"; done | "$strata" --format jsonl "$db"
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata_import.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fail=0

expect_rows() {  # description, output line, expected '{"columns": ..., "rows": ...' prefix
    case $2 in
        "$3"*) ;;
        *) echo "$1: expected $3"; echo "    got: $2"; fail=1 ;;
    esac
}

# ---- a good import --------------------------------------------------------
# Quoted fields with delimiters, doubled quotes and line ends, empty
# values (unquoted: no property; quoted: the empty string), labels from the
# command line and from a :LABEL column, two id spaces sharing the id 1,
# typed scalars and arrays, a group of two files (header in the first),
# relationship types from a :TYPE column and from the command line.
cat > people.csv <<'EOF'
id:ID(Person),name,age:int,score:float,ok:boolean,tags:string[],nums:int[],:LABEL
1,"Smith, J",42,1.5,true,a;b,1;2;3,Admin
2,"two
lines ""quoted""",,2,FALSE,,,
EOF
cat > people2.csv <<'EOF'
3,"",7,-0.5,,"x;y;z",-4,Admin;Staff
EOF
cat > movies.csv <<'EOF'
id:ID(Movie),title,year:long
1,"Up, again",2009
movie-with-a-long-id,Long,2010
EOF
cat > pipes.csv <<'EOF'
id:ID(Movie)|title|year:long
1|Up, again|2009
EOF
cat > acted.csv <<'EOF'
:START_ID(Person),:END_ID(Movie),role,weight:double,:TYPE
1,1,Carl,0.5,ACTED_IN
3,1,,,
3,movie-with-a-long-id,,,
EOF
"$strata" import --nodes=Person=people.csv,people2.csv --nodes=Movie:Film=movies.csv \
    --relationships=WATCHED=acted.csv out.db >import.out 2>import.err \
    --delimiter ',' || { echo "good import failed: $(cat import.err)"; fail=1; }
# another delimiter
"$strata" import --delimiter '|' --nodes=Movie:Film=pipes.csv movies.db >/dev/null 2>&1 \
    || { echo "import with --delimiter '|' failed"; fail=1; }
grep -q '^imported 5 nodes, 3 relationships' import.out \
    || { echo "summary: $(cat import.out)"; fail=1; }
out=$(query out.db \
  "MATCH (p:Person) RETURN p.id, p.name, p.age, p.score, p.ok, p.tags, p.nums ORDER BY p.id" \
  "MATCH (n:Admin:Staff:Person) RETURN n.id" \
  "MATCH (p:Person)-[r]->(m) RETURN p.id, type(r), r.role, r.weight, m.title ORDER BY p.id, m.title" \
  "MATCH (n) RETURN count(n)" \
  "MATCH (p:Person {name: ''}) RETURN keys(p) ORDER BY p.id" \
  "MATCH (m:Movie) RETURN labels(m)")
line() { printf '%s\n' "$out" | sed -n "$1p"; }
expect_rows "people" "$(line 1)" '{"columns": ["p.id", "p.name", "p.age", "p.score", "p.ok", "p.tags", "p.nums"], "rows": [["1", "Smith, J", 42, 1.5, true, ["a", "b"], [1, 2, 3]], ["2", "two\nlines \"quoted\"", null, 2.0, false, null, null], ["3", "", 7, -0.5, null, ["x", "y", "z"], [-4]]], '
expect_rows "labels" "$(line 2)" '{"columns": ["n.id"], "rows": [["3"]], '
expect_rows "relationships" "$(line 3)" '{"columns": ["p.id", "type(r)", "r.role", "r.weight", "m.title"], "rows": [["1", "ACTED_IN", "Carl", 0.5, "Up, again"], ["3", "WATCHED", null, null, "Long"], ["3", "WATCHED", null, null, "Up, again"]], '
expect_rows "count" "$(line 4)" '{"columns": ["count(n)"], "rows": [[5]], '
expect_rows "labels from the command line" "$(line 6)" '{"columns": ["labels(m)"], "rows": [[["Film", "Movie"]], [["Film", "Movie"]]], '
expect_rows "empty quoted string stored" "$(line 5)" '{"columns": ["keys(p)"], "rows": [[["age", "id", "name", "nums", "score", "tags"]]], '
out=$(query movies.db "MATCH (m:Film) RETURN m.title, m.year")
expect_rows "delimiter |" "$out" '{"columns": ["m.title", "m.year"], "rows": [["Up, again", 2009]], '
# another quote character
printf "id:ID,title\n1,'it''s, quoted'\n" > squote.csv
"$strata" import --quote "'" --nodes=Movie=squote.csv squote.db >/dev/null 2>&1 \
    || { echo "import with --quote failed"; fail=1; }
out=$(query squote.db "MATCH (m:Movie) RETURN m.title")
expect_rows "quote '" "$out" "{\"columns\": [\"m.title\"], \"rows\": [[\"it's, quoted\"]], "

# ---- bad inputs -------------------------------------------------------------
printf 'keep me\n' > kept.db
cp kept.db kept.orig
bad() {  # description, expected message (a substring), import arguments...
    desc=$1
    msg=$2
    shift 2
    rm -f absent.db
    "$strata" import "$@" absent.db >/dev/null 2>err.txt
    st=$?
    [ $st -eq 1 ] || { echo "$desc: exit status $st, expected 1"; fail=1; }
    grep -qF -- "$msg" err.txt || { echo "$desc: expected '$msg' in: $(cat err.txt)"; fail=1; }
    [ ! -e absent.db ] || { echo "$desc: absent.db was written"; fail=1; }
    "$strata" import --force "$@" kept.db >/dev/null 2>&1
    cmp -s kept.db kept.orig || { echo "$desc: kept.db changed"; fail=1; }
    ls | grep -v -e '\.csv$' -e '\.db$' -e '\.orig$' -e '\.txt$' -e '\.out$' -e '\.err$' \
        | grep . && { echo "$desc: left a stray file"; fail=1; }
}
printf 'id:ID,age:int\n1,40\n2,4x\n' > badint.csv
bad "bad int" "badint.csv:3: column 'age' (int): '4x' is not an integer" --nodes=badint.csv
printf 'id:ID,age:int\n1,99999999999999999999\n' > bigint.csv
bad "int overflow" "bigint.csv:2: column 'age' (int): '99999999999999999999' is out of range" \
    --nodes=bigint.csv
printf 'id:ID,s:float\n1,"1.5"\n2,1.5.1\n' > badfloat.csv
bad "bad float" "badfloat.csv:3: column 's' (float): '1.5.1' is not a number" --nodes=badfloat.csv
printf 'id:ID,b:boolean\n1,yes\n' > badbool.csv
bad "bad boolean" "badbool.csv:2: column 'b' (boolean): 'yes' is not true or false" \
    --nodes=badbool.csv
printf 'id:ID,xs:int[]\n1,1;;2\n' > badarray.csv
bad "bad array element" "badarray.csv:2: column 'xs' (int): '' is not an integer" \
    --nodes=badarray.csv
printf 'id:ID(P)\n1\n2\n1\n' > dup.csv
bad "duplicate id" "dup.csv:4: duplicate node id '1' in id space P" --nodes=dup.csv
printf 'id:ID\nsome-long-identifier\nsome-long-identifieR\nsome-long-identifier\n' > duplong.csv
bad "duplicate long id" "duplong.csv:4: duplicate node id 'some-long-identifier' in id space global" \
    --nodes=duplong.csv
printf 'id:ID\n1\n' > one.csv
printf ':START_ID,:END_ID,:TYPE\n1,1,K\n1,9,K\n' > unknown.csv
bad "unknown END_ID" "unknown.csv:3: unknown END_ID '9'" --nodes=one.csv --relationships=unknown.csv
printf ':START_ID(P),:END_ID(P)\n1,1\n' > space.csv
bad "unknown id space" "space.csv:2: unknown START_ID '1' (no node has that id in id space P)" \
    --nodes=one.csv --relationships=K=space.csv
printf ':START_ID,:END_ID\n1,1\n' > notype.csv
bad "no type" "notype.csv:2: no relationship type" --nodes=one.csv --relationships=notype.csv
printf 'id:ID,name\n1,a\n2,b,c\n' > columns.csv
bad "column count" "columns.csv:3: 3 fields, but the header has 2" --nodes=columns.csv
printf 'id:ID,name\n1,a\n2,"open\n3,c\n' > quote.csv
bad "unterminated quote" "quote.csv:3: unterminated quoted field" --nodes=quote.csv
printf 'id:ID,name\n1,a"b\n' > stray.csv
bad "stray quote" "stray.csv:2: stray quote in unquoted field 2" --nodes=stray.csv
printf 'id:ID,when:date\n1,2020-01-01\n' > badtype.csv
bad "unknown type" "badtype.csv:1: column 'when:date': unknown type 'date'" --nodes=badtype.csv
bad "missing file" "cannot read 'nope.csv'" --nodes=nope.csv
: > empty.csv
bad "empty first file" "empty.csv is empty: a file group's first file needs a header line" \
    --nodes=empty.csv

# --skip-bad-rows: the good rows stay, the bad ones are counted
printf 'id:ID,age:int\n1,1\n2,x\n3,3\n3,4\n' > skip.csv
"$strata" import --skip-bad-rows --nodes=skip.csv skip.db >skip.out 2>skip.err \
    || { echo "skip-bad-rows failed: $(cat skip.err)"; fail=1; }
grep -q 'skipped 2 bad rows' skip.out || { echo "skip summary: $(cat skip.out)"; fail=1; }
grep -q 'skip.csv:3:' skip.err || { echo "skip report: $(cat skip.err)"; fail=1; }
out=$(query skip.db "MATCH (n) RETURN n.id, n.age ORDER BY n.id")
expect_rows "skip-bad-rows" "$out" '{"columns": ["n.id", "n.age"], "rows": [["1", 1], ["3", 3]], '

# usage errors: exit status 2
"$strata" import --nodes=one.csv >/dev/null 2>&1
[ $? -eq 2 ] || { echo "no output file: expected exit status 2"; fail=1; }
"$strata" import --delimiter ';;' --nodes=one.csv x.db >/dev/null 2>&1
[ $? -eq 2 ] || { echo "bad delimiter: expected exit status 2"; fail=1; }
"$strata" import --quote ',' --nodes=one.csv x.db >/dev/null 2>&1
[ $? -eq 2 ] || { echo "quote equal to the delimiter: expected exit status 2"; fail=1; }

[ $fail -eq 0 ] && echo "cli import: ok"
exit $fail
