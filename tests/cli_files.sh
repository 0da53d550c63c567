#!/bin/sh
# What the program does to the files it is given: `strata FIFO` and
# `:open FIFO` refuse at once instead of waiting for a writer; `:save`
# keeps the database's mode; `strata import` refuses to replace an
# existing output without --force and always refuses an output that is one
# of its inputs, leaving it as it was; import takes label names as long as
# Cypher does (65,535 bytes) and refuses longer ones naming file and line.
set -u
strata=$1
fail=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata_files.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
expect() {  # what, got, expected substring
    case $2 in
        *"$3"*) ;;
        *) echo "$1: expected ...$3..."; echo "got: $2"; fail=1 ;;
    esac
}
# run SECONDS CMD...: CMD, killed after SECONDS (exit status 124 then)
run() {
    limit=$1
    shift
    if command -v timeout >/dev/null 2>&1; then timeout "$limit" "$@"; else "$@"; fi
}

# ---- FIFOs ------------------------------------------------------------------
mkfifo pipe.db
out=$(run 10 "$strata" --format jsonl pipe.db -c "RETURN 1;" 2>&1)
st=$?
[ $st -ne 124 ] || { echo "strata FIFO blocked"; fail=1; }
[ $st -ne 0 ] || { echo "strata FIFO: exit status 0"; fail=1; }
expect "strata FIFO" "$out" "pipe.db: not a regular file (a FIFO)"

out=$(printf '%s\n' "CREATE (:Kept);" ":open pipe.db" "MATCH (n:Kept) RETURN count(n) AS n;" \
    | run 10 "$strata" --format jsonl 2>&1)
st=$?
[ $st -ne 124 ] || { echo ":open FIFO blocked"; fail=1; }
expect ":open FIFO" "$out" '"code": "IOError"'
expect ":open FIFO message" "$out" "not a regular file (a FIFO)"
expect ":open FIFO keeps the graph" "$out" '"rows": [[1]]'

# :save over a FIFO: refused, still a FIFO
out=$(printf '%s\n' "CREATE (:A);" ":save pipe.db" | run 10 "$strata" --format jsonl 2>&1)
expect ":save FIFO" "$out" "not a regular file"
[ -p pipe.db ] || { echo ":save replaced the FIFO"; fail=1; }

# ---- :save keeps the mode ---------------------------------------------------------
printf '%s\n' "CREATE (:A);" ":save" | "$strata" --format jsonl private.db >/dev/null
chmod 600 private.db
printf '%s\n' "CREATE (:B);" ":save" | "$strata" --format jsonl private.db >/dev/null
mode=$(stat -c %a private.db)
[ "$mode" = 600 ] || { echo ":save made a 600 database $mode"; fail=1; }

# ---- import: existing outputs and inputs ----------------------------------------------
printf 'id:ID,name\n1,ann\n' > people.csv
cp people.csv people.orig
"$strata" import --nodes=Person=people.csv out.db >/dev/null 2>&1 \
    || { echo "first import failed"; fail=1; }
cp out.db out.orig
out=$("$strata" import --nodes=Person=people.csv out.db 2>&1)
st=$?
[ $st -eq 1 ] || { echo "import over an existing output: exit status $st"; fail=1; }
expect "import over an existing output" "$out" "out.db already exists; give --force to replace it"
cmp -s out.db out.orig || { echo "import without --force changed out.db"; fail=1; }
printf 'id:ID,name\n1,bob\n2,cy\n' > people.csv
"$strata" import --force --nodes=Person=people.csv out.db >/dev/null 2>&1 \
    || { echo "import --force failed"; fail=1; }
out=$(printf 'MATCH (n:Person) RETURN count(n) AS n;\n' | "$strata" --format jsonl out.db)
expect "import --force replaced out.db" "$out" '"rows": [[2]]'
cp people.csv people.orig

# the output is an input: refused, with or without --force, under any name
for target in people.csv ./people.csv; do
    for force in "" --force; do
        out=$("$strata" import $force --nodes=Person=people.csv "$target" 2>&1)
        st=$?
        [ $st -eq 1 ] || { echo "output $target is the input ($force): exit status $st"; fail=1; }
        expect "output is the input ($force)" "$out" "is the input file people.csv"
        cmp -s people.csv people.orig || { echo "import overwrote its input"; fail=1; }
    done
done
ln -s people.csv link.csv
ln people.csv hard.csv
for target in link.csv hard.csv; do
    out=$("$strata" import --force --nodes=Person=people.csv "$target" 2>&1)
    expect "output $target is the input" "$out" "is the input file people.csv"
    cmp -s people.csv people.orig || { echo "import through $target overwrote its input"; fail=1; }
done
[ -L link.csv ] || { echo "link.csv is no longer a link"; fail=1; }
mkfifo out.fifo
out=$(run 10 "$strata" import --force --nodes=Person=people.csv out.fifo 2>&1)
expect "import to a FIFO" "$out" "out.fifo is not a regular file"
[ -p out.fifo ] || { echo "import replaced a FIFO"; fail=1; }

# ---- import: label names as long as Cypher's -----------------------------------------
long=$(head -c 65535 /dev/zero | tr '\0' 'x')
printf 'id:ID,:LABEL\n1,%s\n' "$long" > long.csv
"$strata" import --nodes=long.csv long.db >/dev/null 2>err.txt \
    || { echo "a 65535-byte label: $(head -c 300 err.txt)"; fail=1; }
out=$(printf 'MATCH (n) RETURN size(labels(n)[0]) AS n;\n' | "$strata" --format jsonl long.db)
expect "a 65535-byte label" "$out" '"rows": [[65535]]'
printf 'id:ID,:LABEL\n1,%sx\n' "$long" > longer.csv
"$strata" import --nodes=longer.csv longer.db >/dev/null 2>err.txt
[ $? -eq 1 ] || { echo "a 65536-byte label: import did not fail"; fail=1; }
expect "a 65536-byte label" "$(head -c 400 err.txt)" "longer.csv:2:"
expect "a 65536-byte label" "$(head -c 400 err.txt)" "1 to 65535 bytes"
[ ! -e longer.db ] || { echo "a 65536-byte label: longer.db was written"; fail=1; }

[ $fail -eq 0 ] && echo "cli files: ok"
exit $fail
