// Connection limits: --max-connections refuses the extra one, --idle-timeout
// closes a silent connection, and the server serves on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { RawConn, HELLO, LOGON, RUN, PULL, frame } from './rawbolt.mjs';

let server;
before(async () => {
  server = await startServer(['--max-connections', '3', '--idle-timeout', '1']);
});
after(async () => {
  await server.stop();
});

async function ready() {
  const c = await new RawConn(server.port).open();
  assert.deepEqual(await c.handshake(), [5, 4]);
  c.send(Buffer.concat([frame(HELLO()), frame(LOGON())]));
  const r = await c.take(2);
  assert.deepEqual(r.map((x) => x.tag), [0x70, 0x70]);
  return c;
}

test('a silent connection is closed after --idle-timeout', async () => {
  const c = await ready();
  const t0 = Date.now();
  assert.ok(await c.until(() => c.closed, 5000), 'the idle connection stayed open');
  assert.ok(Date.now() - t0 >= 800);
  assert.match(server.log(), /idle for too long/);
  // one that keeps talking stays
  const d = await ready();
  for (let i = 0; i < 4; i++) {
    await new Promise((r) => setTimeout(r, 400));
    d.send(Buffer.concat([frame(RUN('RETURN 1')), frame(PULL())]));
    assert.equal((await d.take(3)).length, 3);
  }
  assert.equal(d.closed, false);
  d.close();
});

test('a connection beyond --max-connections is refused; the others go on', async () => {
  // let the previous test's connections be gone
  await new Promise((r) => setTimeout(r, 300));
  const held = [await ready(), await ready(), await ready()];
  const extra = await new RawConn(server.port).open();
  extra.send(Buffer.from([0x60, 0x60, 0xb0, 0x17]));
  assert.ok(await extra.until(() => extra.closed, 5000), 'the extra connection was served');
  assert.match(server.log(), /3 connections already/);
  for (const c of held) {
    c.send(Buffer.concat([frame(RUN('RETURN 2')), frame(PULL())]));
    assert.equal((await c.take(3)).length, 3);
    c.close();
  }
});
