#!/bin/sh
# Every symbol the installed libraries export starts with strata_: the
# engine's internal names (eval, mem_alloc, ...) must not clash with a
# program's own.  Usage: check_symbols.sh libstrata.a libstrata.so
set -eu
status=0
for lib in "$@"; do
    case "$lib" in
    *.a) syms=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }') ;;
    *) syms=$(nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }') ;;
    esac
    count=$(printf '%s\n' "$syms" | grep -c '^strata_' || true)
    if [ "$count" -eq 0 ]; then
        echo "$lib: exports no strata_ symbol at all (is it the library?)" >&2
        status=1
    fi
    bad=$(printf '%s\n' "$syms" | grep -v '^strata_' | grep -v '^$' || true)
    if [ -n "$bad" ]; then
        echo "$lib exports $(printf '%s\n' "$bad" | wc -l) symbols without the strata_ prefix:" >&2
        printf '%s\n' "$bad" | head -20 >&2
        status=1
    else
        echo "$lib: $count symbols, all strata_"
    fi
done
exit $status
