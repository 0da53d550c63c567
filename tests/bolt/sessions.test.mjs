// Transactions, batches, concurrency and the transaction timeout through the
// driver (RESET during a query: hostile.test.mjs, over a raw socket).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import neo4j from 'neo4j-driver';
import { startServer, driverFor } from './server.mjs';

let server, driver;
before(async () => {
  server = await startServer(['--tx-timeout', '2']);
  driver = driverFor(server);
});
after(async () => {
  await driver.close();
  await server.stop();
});

async function count(label) {
  const s = driver.session({ defaultAccessMode: neo4j.session.READ });
  try {
    const r = await s.run(`MATCH (n:${label}) RETURN count(n) AS c`);
    return Number(r.records[0].get('c'));
  } finally {
    await s.close();
  }
}

test('explicit transactions commit and roll back', async () => {
  const s = driver.session();
  try {
    let tx = s.beginTransaction();
    await tx.run('CREATE (:T {i: 1})');
    await tx.run('CREATE (:T {i: 2})');
    // inside the transaction its own writes are seen; outside not yet
    assert.equal(Number((await tx.run('MATCH (n:T) RETURN count(n) AS c')).records[0].get('c')), 2);
    assert.equal(await count('T'), 0);
    await tx.commit();
    assert.equal(await count('T'), 2);
    tx = s.beginTransaction();
    await tx.run('CREATE (:T {i: 3})');
    await tx.rollback();
    assert.equal(await count('T'), 2);
  } finally {
    await s.close();
  }
});

test('a failure inside a transaction rolls it back whole', async () => {
  const s = driver.session();
  try {
    const tx = s.beginTransaction();
    await tx.run('CREATE (:F {i: 1})');
    await assert.rejects(tx.run('RETURN 1/0'),
      (e) => e.code === 'Neo.ClientError.Statement.ArgumentError');
    await tx.rollback().catch(() => {});
    assert.equal(await count('F'), 0);
    // the session is usable again
    assert.equal(Number((await s.run('RETURN 5 AS x')).records[0].get('x')), 5);
  } finally {
    await s.close();
  }
});

test('managed transactions: executeWrite and executeRead', async () => {
  const s = driver.session();
  try {
    await s.executeWrite((tx) => tx.run('UNWIND range(1, 10) AS i CREATE (:M {i: i})'));
    const total = await s.executeRead(async (tx) => {
      const r = await tx.run('MATCH (n:M) RETURN sum(n.i) AS s');
      return Number(r.records[0].get('s'));
    });
    assert.equal(total, 55);
  } finally {
    await s.close();
  }
});

test('a read transaction cannot write', async () => {
  const s = driver.session({ defaultAccessMode: neo4j.session.READ });
  try {
    await assert.rejects(s.executeRead((tx) => tx.run('CREATE (:Nope)')),
      (e) => e.code === 'Neo.ClientError.Statement.SemanticError');
  } finally {
    await s.close();
  }
  assert.equal(await count('Nope'), 0);
});

test('large results arrive in batches of fetchSize', async () => {
  const s = driver.session({ fetchSize: 100 });
  try {
    const r = await s.run('UNWIND range(1, 25000) AS i RETURN i, toString(i) AS s');
    assert.equal(r.records.length, 25000);
    assert.equal(Number(r.records[24999].get('i')), 25000);
    assert.equal(r.records[123].get('s'), '124');
    // a stream consumed one record at a time, stopped early
    let seen = 0;
    const stream = s.run('UNWIND range(1, 1000000) AS i RETURN i');
    for await (const rec of stream) {
      seen++;
      if (Number(rec.get('i')) === 250) break;
    }
    assert.equal(seen, 250);
  } finally {
    await s.close();
  }
});

test('two results open in one transaction, pulled in turn', async () => {
  const s = driver.session({ fetchSize: 10 });
  try {
    const tx = s.beginTransaction();
    const a = tx.run('UNWIND range(1, 50) AS i RETURN i');
    const b = tx.run('UNWIND range(101, 150) AS i RETURN i');
    const [ra, rb] = await Promise.all([a, b]);
    assert.equal(ra.records.length, 50);
    assert.equal(Number(rb.records[49].get('i')), 150);
    await tx.commit();
  } finally {
    await s.close();
  }
});

test('twenty sessions read while one writes', async () => {
  const s = driver.session();
  await s.run('UNWIND range(1, 2000) AS i CREATE (:R {i: i})');
  await s.close();
  let writing = true;
  const writer = (async () => {
    const w = driver.session();
    let n = 0;
    try {
      while (writing && n < 200) {
        await w.run('CREATE (:W {n: $n})', { n: neo4j.int(n) });
        n++;
      }
    } finally {
      await w.close();
    }
    return n;
  })();
  const readers = Array.from({ length: 20 }, async (_, k) => {
    const r = driver.session({ defaultAccessMode: neo4j.session.READ });
    try {
      for (let round = 0; round < 10; round++) {
        const res = await r.run('MATCH (n:R) WHERE n.i % 20 = $k RETURN count(n) AS c, sum(n.i) AS s',
          { k: neo4j.int(k) });
        assert.equal(Number(res.records[0].get('c')), 100);
      }
    } finally {
      await r.close();
    }
  });
  await Promise.all(readers);
  writing = false;
  const written = await writer;
  assert.equal(await count('W'), written);
});

test('a write transaction idle past --tx-timeout is rolled back', async () => {
  const s = driver.session();
  const tx = s.beginTransaction();
  await tx.run('CREATE (:Late)');
  await new Promise((r) => setTimeout(r, 3500));
  // meanwhile the writer is free again for others
  await assert.rejects(tx.commit(),
    (e) => e.code === 'Neo.ClientError.Transaction.TransactionTimedOut');
  await s.close();
  assert.equal(await count('Late'), 0);
  const w = driver.session();
  await w.run('CREATE (:After)');
  await w.close();
  assert.equal(await count('After'), 1);
});
