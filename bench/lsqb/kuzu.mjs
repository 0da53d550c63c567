// Kuzu's side of the LSQB run: loads the SF0.1 CSV files with COPY FROM
// into a fresh database in a temporary folder and runs the nine queries,
// each checked against its expected count; prints one JSON line per step.
//
//   node bench/lsqb/kuzu.mjs DATA_DIR QUERIES THREADS
//
// QUERIES '-' runs the load alone (to time COPY FROM against LOAD CSV).
//
// The queries are those of queries.cypher, with the Message label written
// as Kuzu's union of node tables (message:Post:Comment).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const kuzu = require('kuzu');
const [dataDir, queriesFile, threadsArg] = process.argv.slice(2);
const threads = Number(threadsArg || 1);

function parseQueries(text) {
    const out = [];
    const re = /^\/\/ (q\d+) (\d+)\n([^;]*);/gm;
    for (let m; (m = re.exec(text)) !== null;)
        out.push({ name: m[1], expected: Number(m[2]), text: m[3].replace(/:Message\b/g, ':Post:Comment') });
    return out;
}

async function run(conn, text) {
    const result = await conn.query(text);
    const rows = await result.getAll();
    result.close();
    return rows;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsqb-kuzu-'));
try {
    const db = new kuzu.Database(path.join(dir, 'db'));
    const conn = new kuzu.Connection(db, threads);
    for (const stmt of fs.readFileSync(path.join(dataDir, 'schema.cypher'), 'utf8').split(';'))
        if (stmt.trim()) await run(conn, stmt);
    const copies = fs.readFileSync(path.join(dataDir, 'copy.cypher'), 'utf8')
        .split(';').map((s) => s.trim()).filter(Boolean);
    let t0 = performance.now();
    for (const stmt of copies) {
        const file = path.basename(stmt.match(/"([^"]+)"/)[1]);
        await run(conn, `COPY ${stmt.split(/\s+/)[1]} FROM "${path.join(dataDir, file)}" (HEADER=true, DELIM='|')`);
    }
    console.log(JSON.stringify({ step: 'load', ms: performance.now() - t0, threads }));
    const queries = queriesFile === '-' ? '' : fs.readFileSync(queriesFile, 'utf8');
    for (const q of parseQueries(queries)) {
        t0 = performance.now();
        const rows = await run(conn, q.text);
        const ms = performance.now() - t0;
        const count = Number(Object.values(rows[0])[0]);
        console.log(JSON.stringify({ query: q.name, expected: q.expected, count, ok: count === q.expected, ms, threads }));
    }
} finally {
    fs.rmSync(dir, { recursive: true, force: true });
}
