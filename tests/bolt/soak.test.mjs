// Soak: N clients × queries for a bounded time — point reads, updates,
// explicit transactions committed and rolled back, read transactions,
// failing statements, results pulled in batches, and connections opened
// and closed all along, one connection per query on the side.  The server's resident memory (VmRSS) must stay
// flat after a warm-up, and every connection must be gone at the end (its
// descriptors and its own log of connections opened and closed).
//   STRATA_SOAK_SECONDS (default 3) and STRATA_SOAK_CLIENTS (default 8)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import neo4j from 'neo4j-driver';
import { startServer, driverFor, procStatus, openFds } from './server.mjs';
import { RawConn, HELLO, LOGON, RUN, PULL, GOODBYE, frame } from './rawbolt.mjs';

const SECONDS = Number(process.env.STRATA_SOAK_SECONDS ?? 3);
const CLIENTS = Number(process.env.STRATA_SOAK_CLIENTS ?? 8);
const KEYS = 2000;

let server, fdsIdle;
before(async () => {
  server = await startServer(['--threads', '4']);
  fdsIdle = openFds(server.pid);   // no connection yet
  const d = driverFor(server);
  const s = d.session();
  await s.run('UNWIND range(0, $n - 1) AS k CREATE (:S {key: k, v: 0})', { n: neo4j.int(KEYS) });
  await s.close();
  await d.close();
});
after(async () => {
  await server.stop();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const key = () => neo4j.int(Math.floor(Math.random() * KEYS));

// One round of a client's work on a session of driver d.
async function round(d, i) {
  const s = d.session({ fetchSize: 50 });
  try {
    switch (i % 6) {
      case 0: {
        const r = await s.run('MATCH (n:S {key: $k}) RETURN n.v AS v', { k: key() });
        assert.equal(r.records.length, 1);
        break;
      }
      case 1:
        await s.run('MATCH (n:S {key: $k}) SET n.v = n.v + 1', { k: key() });
        break;
      case 2: {
        const tx = s.beginTransaction();
        await tx.run('MATCH (n:S {key: $k}) SET n.t = $k', { k: key() });
        await tx.run('CREATE (:Gone)');
        await tx.rollback();
        break;
      }
      case 3: {
        const n = await s.executeRead(async (tx) => {
          const r = await tx.run('MATCH (n:S) WHERE n.key < 500 RETURN n.key AS k');
          return r.records.length;
        });
        assert.equal(n, 500);
        break;
      }
      case 4:
        await assert.rejects(s.run('MATCH (n:S RETURN n'),
          (e) => e.code === 'Neo.ClientError.Statement.SyntaxError');
        break;
      default: {
        const tx = s.beginTransaction();
        await tx.run('MATCH (n:S {key: $k}) SET n.w = $k', { k: key() });
        await tx.commit();
      }
    }
  } finally {
    await s.close();
  }
}

// A client: a driver (a connection pool of its own) replaced every 25 rounds.
async function client(deadline) {
  let done = 0;
  while (Date.now() < deadline) {
    const d = driverFor(server);
    try {
      for (let i = 0; i < 25 && Date.now() < deadline; i++, done++) await round(d, done);
    } finally {
      await d.close();
    }
  }
  return done;
}

// Connection churn: a connection per query, over a raw socket (four at a
// time), so that whatever a connection leaks shows in the memory.
async function churn(deadline) {
  let done = 0;
  const one = async () => {
    while (Date.now() < deadline) {
      const c = await new RawConn(server.port).open();
      await c.handshake();
      c.send(Buffer.concat([frame(HELLO()), frame(LOGON()),
        frame(RUN('MATCH (n:S {key: 7}) RETURN n.v')), frame(PULL()), frame(GOODBYE())]));
      assert.equal((await c.take(5)).length, 5);
      await c.until(() => c.closed, 5000);
      c.close();
      done++;
    }
  };
  await Promise.all([one(), one(), one(), one()]);
  return done;
}

function sanitized(pid) {
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8');
  return /lib[at]san|asan|tsan/.test(maps) || process.env.STRATA_SANITIZED === '1';
}

test(`${CLIENTS} clients for ${SECONDS} s: memory flat, no connection left behind`, async () => {
  const pid = server.pid;
  const start = Date.now();
  const deadline = start + SECONDS * 1000;
  const samples = [];   // [ms since start, VmRSS kB]
  const sampler = setInterval(() => samples.push([Date.now() - start, procStatus(pid, 'VmRSS')]), 50);
  const [churned, ...done] = await Promise.all([churn(deadline),
    ...Array.from({ length: CLIENTS }, () => client(deadline))]);
  clearInterval(sampler);
  const queries = done.reduce((a, b) => a + b, 0);
  // every client got answers all along (slow builds do few rounds)
  assert.ok(done.every((n) => n > 0), `rounds per client: ${done}`);
  assert.ok(churned > 0, 'no one-query connection was served');

  // no connection left behind: descriptors back to where they were, and the
  // server logged a close for every connection it logged opening
  const until = Date.now() + 5000;
  while (openFds(pid) > fdsIdle && Date.now() < until) await sleep(50);
  assert.equal(openFds(pid), fdsIdle, 'descriptors left open');
  const log = server.log();
  const opened = (log.match(/: connected$/gm) || []).length;
  let closed = (log.match(/: closed \(/g) || []).length;
  for (let t = Date.now(); closed < opened && Date.now() - t < 2000; await sleep(50))
    closed = (server.log().match(/: closed \(/g) || []).length;
  assert.equal(closed, opened, 'connections never closed');

  // resident memory: the largest value in the last third no more than the
  // largest in the middle third (after a warm-up third), give or take
  // allocator noise.  A leak of a few kB per connection needs a longer
  // soak to show here; the sanitizer run of this test (LeakSanitizer at
  // the server's exit) finds it exactly.  Sanitizer builds hold freed
  // memory in quarantine, so there only the connections are checked.
  const third = SECONDS * 1000 / 3;
  const middle = Math.max(...samples.filter(([t]) => t >= third && t < 2 * third).map(([, r]) => r));
  const last = Math.max(...samples.filter(([t]) => t >= 2 * third).map(([, r]) => r));
  const note = `${queries} rounds by ${CLIENTS} clients, ${churned} one-query connections; ` +
    `VmRSS middle third ${middle} kB, last third ${last} kB`;
  console.log(note);
  if (!sanitized(pid))
    assert.ok(last <= middle * 1.03 + 1536, `resident memory grew: ${note}`);
});
