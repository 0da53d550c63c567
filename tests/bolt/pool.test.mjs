// The worker pool (--threads): any number of connections share a fixed set
// of threads, and a connection waiting for the writer holds none of them,
// so reads go on while writes queue behind an open write transaction.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import neo4j from 'neo4j-driver';
import { startServer, driverFor, procStatus } from './server.mjs';
import { RawConn, HELLO, LOGON, RUN, PULL, RESET, GOODBYE, frame, mentions } from './rawbolt.mjs';

const SUCCESS = 0x70, RECORD = 0x71, FAILURE = 0x7f;
let server, driver;
before(async () => {
  server = await startServer(['--threads', '2', '--tx-timeout', '2']);
  driver = driverFor(server);
});
after(async () => {
  await driver.close();
  await server.stop();
});

async function ready() {
  const c = await new RawConn(server.port).open();
  assert.deepEqual(await c.handshake(), [5, 4]);
  c.send(Buffer.concat([frame(HELLO()), frame(LOGON())]));
  assert.deepEqual((await c.take(2)).map((r) => r.tag), [SUCCESS, SUCCESS]);
  return c;
}

async function count(label, d = driver) {
  const s = d.session({ defaultAccessMode: neo4j.session.READ });
  try {
    const r = await s.run(`MATCH (n:${label}) RETURN count(n) AS c`);
    return Number(r.records[0].get('c'));
  } finally {
    await s.close();
  }
}

test('thirty connections are served by two workers; threads do not grow with connections', async () => {
  const first = await ready();
  const threadsWithOne = procStatus(server.pid, 'Threads');
  const conns = [first];
  for (let i = 1; i < 30; i++) conns.push(await ready());
  // every connection sends at once; all are answered
  conns.forEach((c, i) => c.send(Buffer.concat([frame(RUN(`RETURN ${i} AS i`)), frame(PULL())])));
  for (const c of conns) assert.deepEqual((await c.take(3)).map((r) => r.tag), [SUCCESS, RECORD, SUCCESS]);
  assert.equal(procStatus(server.pid, 'Threads'), threadsWithOne);
  // the main thread, the watchdog and two workers (the engine may add its own)
  assert.ok(threadsWithOne <= 6, `${threadsWithOne} threads for --threads 2`);
  for (const c of conns) {
    c.send(frame(GOODBYE()));
    c.close();
  }
});

test('writes wait for an open write transaction without holding a worker; reads go on', async () => {
  // a --tx-timeout well above the bound on the reads: reads held up behind
  // the waiting writes would take until the writes time out
  const own = await startServer(['--threads', '2', '--tx-timeout', '10']);
  const d = driverFor(own);
  try {
    const holder = d.session();
    const tx = holder.beginTransaction();
    await tx.run('CREATE (:Held)');
    // six auto-commit writes, more than the two workers: each waits parked
    const writes = Array.from({ length: 6 }, async () => {
      const s = d.session();
      try {
        await s.run('CREATE (:Waited)');
      } finally {
        await s.close();
      }
    });
    await new Promise((r) => setTimeout(r, 200));
    // both workers are free for readers, which see neither the transaction nor the waiting writes
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) {
      assert.equal(await count('Waited', d), 0);
      assert.equal(await count('Held', d), 0);
    }
    assert.ok(Date.now() - t0 < 5000, 'reads were held up behind the waiting writes');
    await tx.commit();
    await holder.close();
    await Promise.all(writes);
    assert.equal(await count('Held', d), 1);
    assert.equal(await count('Waited', d), 6);
  } finally {
    await d.close();
    await own.stop();
  }
});

test('a write waiting past --tx-timeout fails with LockClientStopped', async () => {
  const holder = driver.session();
  const tx = holder.beginTransaction();
  await tx.run('CREATE (:Kept)');
  const waiter = await ready();
  waiter.send(Buffer.concat([frame(RUN('CREATE (:TooLate)')), frame(PULL())]));
  // the holder stays active, so its transaction is not the one that expires
  const t0 = Date.now();
  while (Date.now() - t0 < 3000) {
    await tx.run('RETURN 1');
    await new Promise((r) => setTimeout(r, 300));
  }
  const replies = await waiter.take(2, 5000);
  assert.equal(replies[0].tag, FAILURE);
  assert.ok(mentions(replies[0], 'Neo.TransientError.Transaction.LockClientStopped'));
  await tx.commit();
  await holder.close();
  waiter.close();
  assert.equal(await count('Kept'), 1);
  assert.equal(await count('TooLate'), 0);
});

test('connections sharing a worker with a long query move to a free one', async () => {
  const own = await startServer(['--threads', '2']);
  try {
    const d = driverFor(own);
    const s = d.session();
    await s.run('UNWIND range(1, 12) AS i CREATE (:K {i: i})');
    await s.run('MATCH (a:K), (b:K) WHERE a <> b CREATE (a)-[:E]->(b)');
    await s.close();
    await d.close();
    await new Promise((r) => setTimeout(r, 200));   // the driver's connection is gone
    const open = async () => {
      const c = await new RawConn(own.port).open();
      assert.deepEqual(await c.handshake(), [5, 4]);
      c.send(Buffer.concat([frame(HELLO()), frame(LOGON())]));
      assert.equal((await c.take(2)).length, 2);
      return c;
    };
    // accepted in turn onto the two workers; the long query takes one of them
    const conns = [await open(), await open(), await open(), await open()];
    const long = conns[0];
    long.send(Buffer.concat([frame(RUN('MATCH p = (a:K {i: 1})-[*]->(b) WHERE length(p) > 100 RETURN count(*)')),
      frame(PULL())]));
    await new Promise((r) => setTimeout(r, 300));
    for (const c of conns.slice(1)) {
      const t0 = Date.now();
      c.send(Buffer.concat([frame(RUN('RETURN 1 AS one')), frame(PULL())]));
      assert.deepEqual((await c.take(3, 10000)).map((r) => r.tag), [SUCCESS, RECORD, SUCCESS]);
      // behind the long query it would never be answered: well within take's 10 s
      assert.ok(Date.now() - t0 < 8000, `answered after ${Date.now() - t0} ms, behind the long query`);
    }
    assert.equal(long.replies.length, 0, 'the long query ended early: the test proves nothing');
    long.send(frame(RESET()));
    await long.take(3, 15000);
    for (const c of conns) {
      c.send(frame(GOODBYE()));
      c.close();
    }
  } finally {
    await own.stop();
  }
});
