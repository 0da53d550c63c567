// The README's JavaScript example, run as written against a server (only
// its address changes), so that what it shows keeps working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import neo4j from 'neo4j-driver';
import { startServer } from './server.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server.stop();
});

test("the README's JavaScript driver example", async () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Serving over Bolt'));
  const m = section.match(/```js\n([\s\S]*?)```/);
  assert.ok(m, 'no ```js block in the README section "Serving over Bolt"');
  const example = m[1];
  assert.match(example, /^import neo4j from 'neo4j-driver';$/m);
  assert.match(example, /bolt:\/\/127\.0\.0\.1:7687/);
  const body = example.replace(/^import neo4j from 'neo4j-driver';$/m, '')
    .replace('bolt://127.0.0.1:7687', server.url);
  const printed = [];
  const AsyncFunction = (async () => {}).constructor;
  await new AsyncFunction('neo4j', 'console', body)(neo4j, { log: (...a) => printed.push(a) });
  assert.deepEqual(printed, [[['Ada']]]);
});
