// What drivers never send: RESET in the middle of a query, a client gone
// mid-query, wrong handshakes, truncated, oversized and garbage frames.
// Each ends (at most) its own connection; the server keeps serving a
// driver session opened before them all.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, driverFor } from './server.mjs';
import { RawConn, HELLO, LOGON, RUN, PULL, RESET, GOODBYE, frame, msg, mentions } from './rawbolt.mjs';

let server, driver, session;
before(async () => {
  server = await startServer(['--max-message', '65536']);
  driver = driverFor(server);
  session = driver.session();
  await session.run('UNWIND range(1, 12) AS i CREATE (:K {i: i})');
  await session.run('MATCH (a:K), (b:K) WHERE a <> b CREATE (a)-[:E]->(b)');
});
after(async () => {
  await session.close();
  await driver.close();
  await server.stop();
});

const LONG = 'MATCH p = (a:K {i: 1})-[*]->(b) WHERE length(p) > 100 RETURN count(*)';
const SUCCESS = 0x70, RECORD = 0x71, IGNORED = 0x7e, FAILURE = 0x7f;

async function stillServing() {
  const r = await session.run('MATCH (n:K) RETURN count(n) AS c');
  assert.equal(Number(r.records[0].get('c')), 12);
}

async function ready(proposals) {
  const c = await new RawConn(server.port).open();
  const v = await c.handshake(proposals);
  c.send(Buffer.concat([frame(HELLO()), frame(LOGON())]));
  const [h, l] = await c.take(2);
  assert.equal(h.tag, SUCCESS);
  assert.equal(l.tag, SUCCESS);
  return { c, v };
}

test('handshake: the highest common version, ranges and the manifest proposal', async () => {
  const cases = [
    [[[0xff, 1, 0], [5, 8, 8], [4, 4, 2], [0, 0, 0]], [5, 4]], // manifest first, 5.8..5.0
    [[[5, 2, 0], [4, 4, 0], [0, 0, 0], [0, 0, 0]], [5, 2]],
    [[[4, 4, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]], [4, 4]],
    [[[5, 7, 2], [4, 4, 0], [0, 0, 0], [0, 0, 0]], [4, 4]],    // 5.7..5.5 is not served
    [[[4, 3, 0], [3, 0, 0], [0, 0, 0], [0, 0, 0]], [0, 0]],    // nothing in common
  ];
  for (const [proposals, want] of cases) {
    const c = await new RawConn(server.port).open();
    assert.deepEqual(await c.handshake(proposals), want, JSON.stringify(proposals));
    c.close();
  }
  await stillServing();
});

test('RESET interrupts a running query; the connection goes on', async () => {
  const { c } = await ready();
  // The RESET must come after the server has read RUN and PULL: read with
  // them, it is counted first and they are IGNORED unrun.  A slow server
  // may not have read them within the pause, so then again with a longer one.
  let replies;
  for (const pause of [300, 1000, 3000]) {
    const started = Date.now();
    c.send(Buffer.concat([frame(RUN(LONG)), frame(PULL())]));
    await new Promise((r) => setTimeout(r, pause));
    c.send(frame(RESET()));
    replies = await c.take(3, 15000);
    assert.ok(Date.now() - started < pause + 10000, 'RESET did not interrupt the query');
    if (replies[0]?.tag !== IGNORED) break;
    assert.deepEqual(replies.map((r) => r.tag), [IGNORED, IGNORED, SUCCESS]);
  }
  assert.deepEqual(replies.map((r) => r.tag), [FAILURE, IGNORED, SUCCESS]);
  assert.ok(mentions(replies[0], 'Neo.TransientError.Transaction.Terminated'));
  c.send(Buffer.concat([frame(RUN('RETURN 41 + 1 AS x')), frame(PULL())]));
  const after = await c.take(3);
  assert.deepEqual(after.map((r) => r.tag), [SUCCESS, RECORD, SUCCESS]);
  c.send(frame(GOODBYE()));
  c.close();
  await stillServing();
});

test('messages queued behind a RESET are IGNORED, then the RESET succeeds', async () => {
  const { c } = await ready();
  c.send(Buffer.concat([frame(RUN('RETURN 1/0')), frame(PULL()), frame(RUN('RETURN 1')),
    frame(RESET()), frame(RUN('RETURN 2 AS two')), frame(PULL())]));
  const replies = await c.take(6);
  assert.deepEqual(replies.map((r) => r.tag), [IGNORED, IGNORED, IGNORED, SUCCESS, SUCCESS, RECORD]);
  c.close();
});

test('a client gone mid-query has its query stopped', async () => {
  const { c } = await ready();
  c.send(Buffer.concat([frame(RUN(LONG)), frame(PULL())]));
  await new Promise((r) => setTimeout(r, 300));
  c.close();
  const t0 = Date.now();
  // the closing line of that connection appears in the log soon
  while (Date.now() - t0 < 8000 && !/the client closed the connection/.test(server.log())) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.match(server.log(), /the client closed the connection/);
  await stillServing();
});

test('Bolt 4.4 gets legacy DateTime structures unless it asks for utc', async () => {
  for (const [patch, tag] of [[false, 0x46], [true, 0x49]]) {
    const c = await new RawConn(server.port).open();
    assert.deepEqual(await c.handshake([[4, 4, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]), [4, 4]);
    c.send(frame(HELLO(patch ? { patch_bolt: ['utc'], scheme: 'none' } : { scheme: 'none' })));
    const [h] = await c.take(1);
    assert.equal(h.tag, SUCCESS);
    c.send(Buffer.concat([frame(RUN("RETURN datetime('2024-01-02T03:04:05+01:00') AS d")),
      frame(PULL())]));
    const [, rec] = await c.take(3);
    assert.equal(rec.tag, RECORD);
    // RECORD [ Struct(3, tag) ... ]: b1 71 91 b3 <tag>
    assert.equal(rec.body[4], tag);
    c.close();
  }
});

test('hostile bytes end only their own connection', async () => {
  const attacks = [
    ['wrong magic', Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')],
    ['garbage after the handshake', Buffer.from([0x00, 0x05, 0xde, 0xad, 0xbe, 0xef, 0x99, 0, 0])],
    ['an unknown message', frame(msg(0x55, 1, 2))],
    ['RUN before HELLO', frame(RUN('RETURN 1'))],
    ['a message over --max-message', Buffer.concat(Array.from({ length: 3 },
      () => Buffer.concat([Buffer.from([0xff, 0xff]), Buffer.alloc(0xffff, 0x41)])))],
    ['a string longer than its message', frame(Buffer.from([0xb1, 0x01, 0xd2, 0x7f, 0xff, 0xff, 0xff]))],
    ['values nested too deep', frame(Buffer.concat([Buffer.from([0xb1, 0x01]), Buffer.alloc(5000, 0x91)]))],
    ['a map with an integer key', frame(Buffer.from([0xb1, 0x01, 0xa1, 0x01, 0x02]))],
    ['invalid UTF-8', frame(Buffer.from([0xb1, 0x01, 0xa1, 0x81, 0x61, 0x82, 0xc3, 0x28]))],
    ['a truncated frame, then silence', Buffer.from([0x00, 0x40, 0xb1, 0x01])],
  ];
  for (const [name, bytes] of attacks) {
    const c = await new RawConn(server.port).open();
    if (name === 'wrong magic') {
      c.send(bytes);
    } else {
      assert.deepEqual(await c.handshake(), [5, 4], name);
      c.send(bytes);
    }
    if (name === 'a truncated frame, then silence') {
      // the server waits for the rest: meanwhile it serves others
      await stillServing();
      c.close();
      continue;
    }
    assert.ok(await c.until(() => c.closed, 5000), `${name}: the connection stayed open`);
    await stillServing();
  }
  assert.match(server.log(), /nested too deep/);
  assert.match(server.log(), /larger than --max-message/);
});

test('DISCARD of everything drops a huge result without computing it', async () => {
  const { c } = await ready();
  const started = Date.now();
  c.send(Buffer.concat([frame(RUN('UNWIND range(1, 100000) AS i UNWIND range(1, 100000) AS j RETURN i, j')),
    frame(msg(0x2f, { n: -1 })), frame(RUN('RETURN 3 AS three')), frame(PULL())]));
  const replies = await c.take(5, 10000);
  assert.deepEqual(replies.map((r) => r.tag), [SUCCESS, SUCCESS, SUCCESS, RECORD, SUCCESS]);
  assert.ok(Date.now() - started < 5000);
  c.close();
});

test('LOGOFF, LOGON again, TELEMETRY and ROUTE', async () => {
  const { c } = await ready();
  c.send(Buffer.concat([frame(msg(0x54, 1)), frame(msg(0x66, {}, [], {})), frame(msg(0x6b))]));
  const [tel, route, off] = await c.take(3);
  assert.deepEqual([tel.tag, route.tag, off.tag], [SUCCESS, SUCCESS, SUCCESS]);
  assert.ok(mentions(route, `127.0.0.1:${server.port}`));
  assert.ok(mentions(route, 'WRITE') && mentions(route, 'READ') && mentions(route, 'ROUTE'));
  // logged off: LOGON again works, and then queries do
  c.send(Buffer.concat([frame(LOGON()), frame(RUN('RETURN 1 AS one')), frame(PULL())]));
  const again = await c.take(4);
  assert.deepEqual(again.map((r) => r.tag), [SUCCESS, SUCCESS, RECORD, SUCCESS]);
  // logged off, a query ends the connection
  c.send(Buffer.concat([frame(msg(0x6b)), frame(RUN('RETURN 1'))]));
  assert.ok(await c.until(() => c.closed, 5000));
});
