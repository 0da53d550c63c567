#!/bin/sh
# Runs the Bolt server's conformance tests (the official Neo4j JavaScript
# driver, node's built-in test runner) against the strata program given.
# Exits 77 (ctest's "skipped") with a message when node or the driver is
# not installed: scripts/install-bolt-driver.sh installs them.
#
#   sh tests/bolt/run.sh path/to/strata [test files...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: run.sh STRATA [FILES]"; exit 2; }
STRATA_BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
export STRATA_BIN
shift
command -v node >/dev/null || { echo "bolt tests: node not installed, skipped"; exit 77; }
[ -f "$here/node_modules/neo4j-driver/package.json" ] || {
    echo "bolt tests: neo4j-driver not installed (sh scripts/install-bolt-driver.sh), skipped"
    exit 77
}
cd "$here"
if [ $# -eq 0 ]; then
    set -- ./*.test.mjs
fi
exec node --test "$@"
