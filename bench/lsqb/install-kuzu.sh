#!/bin/sh
# Installs Kuzu 0.11.3 from the npm registry into bench/lsqb/node_modules
# (ignored by git): the comparison engine of the LSQB run, and the source
# of the LSQB SF0.1 CSV files.  About 550 MB; run on demand, never by CI.
set -eu
cd "$(dirname "$0")"
[ -d node_modules/kuzu ] && exit 0
npm install --no-save --no-audit --no-fund --prefix . kuzu@0.11.3
