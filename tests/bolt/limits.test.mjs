// Connection limits: --max-connections refuses the extra one, --idle-timeout
// closes a silent connection, and the server serves on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './server.mjs';
import { RawConn, HELLO, LOGON, RUN, PULL, frame } from './rawbolt.mjs';

const IDLE_MS = 2000;
let server;
before(async () => {
  server = await startServer(['--max-connections', '3', '--idle-timeout', String(IDLE_MS / 1000)]);
});
after(async () => {
  await server.stop();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function ready() {
  const c = await new RawConn(server.port).open();
  assert.deepEqual(await c.handshake(), [5, 4]);
  c.send(Buffer.concat([frame(HELLO()), frame(LOGON())]));
  const r = await c.take(2);
  assert.deepEqual(r.map((x) => x.tag), [0x70, 0x70]);
  return c;
}

test('a silent connection is closed after --idle-timeout', async () => {
  // the server counts the idle time (on a monotonic clock) from its reply
  // to LOGON, later than this
  const t0 = performance.now();
  const c = await ready();
  assert.ok(await c.until(() => c.closed, IDLE_MS + 6000), 'the idle connection stayed open');
  // the server's clock counts whole milliseconds: up to one less than the limit
  const idle = performance.now() - t0;
  assert.ok(idle >= IDLE_MS - 1, `closed after ${idle} ms`);
  assert.match(server.log(), /idle for too long/);
  // one that keeps talking stays, for longer than the limit all told
  const d = await ready();
  const t1 = Date.now();
  while (Date.now() - t1 < IDLE_MS * 1.5) {
    await sleep(IDLE_MS / 4);
    d.send(Buffer.concat([frame(RUN('RETURN 1')), frame(PULL())]));
    assert.equal((await d.take(3)).length, 3);
  }
  assert.equal(d.closed, false);
  d.close();
});

test('a connection beyond --max-connections is refused; the others go on', async () => {
  // the previous test's connections give their slots back soon after they
  // close: until then the third of these is refused, and all are tried again
  let held;
  for (const end = Date.now() + 10000; !held;) {
    const conns = [];
    try {
      for (let i = 0; i < 3; i++) conns.push(await ready());
      held = conns;
    } catch (e) {
      conns.forEach((c) => c.close());
      if (Date.now() > end) throw e;
      await sleep(100);
    }
  }
  const extra = await new RawConn(server.port).open();
  const port = extra.sock.localPort;
  extra.send(Buffer.from([0x60, 0x60, 0xb0, 0x17]));
  assert.ok(await extra.until(() => extra.closed, 5000), 'the extra connection was served');
  // refused by name: the tries above may have been refused too
  const refused = new RegExp(`refused 127\\.0\\.0\\.1:${port}: 3 connections already`);
  for (const end = Date.now() + 5000; !refused.test(server.log()) && Date.now() < end;) await sleep(50);
  assert.match(server.log(), refused);
  for (const c of held) {
    c.send(Buffer.concat([frame(RUN('RETURN 2')), frame(PULL())]));
    assert.equal((await c.take(3)).length, 3);
    c.close();
  }
});
