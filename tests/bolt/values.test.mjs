// Every value type strata has, as a parameter and as a result, through the
// official JavaScript driver; errors carry Neo4j status codes; the probing
// queries of clients are answered.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import neo4j from 'neo4j-driver';
import { startServer, driverFor } from './server.mjs';

let server, driver;
before(async () => {
  server = await startServer();
  driver = driverFor(server);
});
after(async () => {
  await driver.close();
  await server.stop();
});

async function one(query, params = {}) {
  const s = driver.session();
  try {
    const r = await s.run(query, params);
    return r.records[0];
  } finally {
    await s.close();
  }
}

test('server agent and protocol', async () => {
  const info = await driver.getServerInfo();
  assert.match(info.agent, /^Neo4j\/5\.\d+\.\d+ strata\//);
  assert.equal(info.protocolVersion, 5.4);
});

test('scalars round-trip as parameters', async () => {
  const params = {
    n: null, t: true, f: false, i: neo4j.int(-17), big: neo4j.int('9007199254740993'),
    small: neo4j.int(-129), x: 2.5, s: 'héllo ✓', e: '', l: [neo4j.int(1), 'two', 3.0, [true]],
    m: { a: neo4j.int(1), b: { c: 'd' } },
  };
  const rec = await one('RETURN $n AS n, $t AS t, $f AS f, $i AS i, $big AS big, $small AS small, ' +
    '$x AS x, $s AS s, $e AS e, $l AS l, $m AS m', params);
  assert.equal(rec.get('n'), null);
  assert.equal(rec.get('t'), true);
  assert.equal(rec.get('f'), false);
  assert.ok(rec.get('i').equals(-17));
  assert.equal(rec.get('big').toString(), '9007199254740993');
  assert.ok(rec.get('small').equals(-129));
  assert.equal(rec.get('x'), 2.5);
  assert.equal(rec.get('s'), 'héllo ✓');
  assert.equal(rec.get('e'), '');
  assert.deepEqual(rec.get('l'), [neo4j.int(1), 'two', 3.0, [true]]);
  assert.deepEqual(rec.get('m'), { a: neo4j.int(1), b: { c: 'd' } });
});

test('integers at every width boundary', async () => {
  const values = ['0', '127', '128', '-16', '-17', '-128', '-129', '32767', '32768', '-32768',
    '-32769', '2147483647', '2147483648', '-2147483648', '-2147483649',
    '9223372036854775807', '-9223372036854775808'];
  const rec = await one('RETURN $l AS l, [x IN $l | x + 0] AS same',
    { l: values.map((v) => neo4j.int(v)) });
  assert.deepEqual(rec.get('l').map(String), values);
  assert.deepEqual(rec.get('same').map(String), values);
});

test('temporal values as results', async () => {
  const rec = await one(`RETURN date('2024-02-29') AS d, localtime('12:34:56.123456789') AS lt,
    time('12:34:56+02:00') AS t, localdatetime('2024-02-29T12:34:56.5') AS ldt,
    datetime('2024-02-29T12:34:56+05:30') AS dt,
    datetime({year: 2024, month: 7, day: 1, hour: 12, timezone: 'Europe/Stockholm'}) AS dz,
    duration('P1Y2M3DT4H5M6.7S') AS du`);
  assert.ok(neo4j.isDate(rec.get('d')));
  assert.equal(rec.get('d').toString(), '2024-02-29');
  assert.equal(rec.get('lt').toString(), '12:34:56.123456789');
  assert.equal(rec.get('t').toString(), '12:34:56+02:00');
  const ldt = rec.get('ldt');
  assert.deepEqual([ldt.year, ldt.month, ldt.day, ldt.hour, ldt.minute, ldt.second, ldt.nanosecond]
    .map(Number), [2024, 2, 29, 12, 34, 56, 500000000]);
  assert.equal(rec.get('dt').toString(), '2024-02-29T12:34:56+05:30');
  const dz = rec.get('dz');
  assert.equal(dz.timeZoneId, 'Europe/Stockholm');
  assert.equal(dz.hour.toNumber ? dz.hour.toNumber() : dz.hour, 12);
  assert.equal(dz.timeZoneOffsetSeconds.toNumber ? dz.timeZoneOffsetSeconds.toNumber()
    : dz.timeZoneOffsetSeconds, 7200);
  const du = rec.get('du');
  assert.equal(Number(du.months), 14);
  assert.equal(Number(du.days), 3);
  assert.equal(Number(du.seconds), 4 * 3600 + 5 * 60 + 6);
  assert.equal(Number(du.nanoseconds), 700000000);
});

test('temporal values as parameters come back equal', async () => {
  const params = {
    d: new neo4j.types.Date(2024, 2, 29),
    lt: new neo4j.types.LocalTime(1, 2, 3, 4),
    t: new neo4j.types.Time(1, 2, 3, 4, 3600),
    ldt: new neo4j.types.LocalDateTime(1969, 12, 31, 23, 59, 59, 999999999),
    dt: new neo4j.types.DateTime(2024, 3, 31, 2, 30, 0, 0, -18000),
    dz: new neo4j.types.DateTime(2024, 10, 27, 12, 0, 0, 0, undefined, 'Europe/Stockholm'),
    du: new neo4j.types.Duration(-1, 2, -3, 4),
  };
  const rec = await one(`RETURN $d AS d, $lt AS lt, $t AS t, $ldt AS ldt, $dt AS dt, $dz AS dz,
    $du AS du, $d = date('2024-02-29') AS deq, $dt = datetime('2024-03-31T02:30-05:00') AS dteq,
    $dz.timezone AS zone, $dz.hour AS hour`, params);
  for (const k of ['d', 'lt', 't', 'ldt', 'dt']) assert.equal(rec.get(k).toString(), params[k].toString(), k);
  assert.equal(rec.get('dz').timeZoneId, 'Europe/Stockholm');
  assert.equal(Number(rec.get('dz').hour), 12);
  assert.equal(rec.get('deq'), true);
  assert.equal(rec.get('dteq'), true);
  assert.equal(rec.get('zone'), 'Europe/Stockholm');
  assert.equal(Number(rec.get('hour')), 12);
  const du = rec.get('du');
  assert.deepEqual([du.months, du.days, du.seconds, du.nanoseconds].map(Number), [-1, 2, -3, 4]);
});

test('nodes, relationships and paths with element ids', async () => {
  const s = driver.session();
  try {
    await s.run("CREATE (:Person {name: 'Ann', age: 42})-[:KNOWS {since: 2001}]->" +
      "(:Person:Admin {name: 'Bob'})-[:KNOWS]->(:Person {name: 'Cy'})");
    const r = await s.run("MATCH p = (a {name: 'Ann'})-[k1:KNOWS]->(b)<-[k2:KNOWS]-(a2) " +
      'RETURN a, k1, b, p LIMIT 1').catch(() => null);
    assert.equal(r, null === r ? null : r); // the query may legitimately find nothing
    const q = await s.run("MATCH p = (a {name: 'Ann'})-[k:KNOWS]->(b)-[:KNOWS]->(c) RETURN a, k, b, p");
    const rec = q.records[0];
    const a = rec.get('a'), k = rec.get('k'), b = rec.get('b'), p = rec.get('p');
    assert.ok(neo4j.isNode(a));
    assert.deepEqual(a.labels, ['Person']);
    assert.deepEqual(a.properties, { name: 'Ann', age: neo4j.int(42) });
    assert.deepEqual([...b.labels].sort(), ['Admin', 'Person']);
    assert.equal(typeof a.elementId, 'string');
    assert.ok(neo4j.isRelationship(k));
    assert.equal(k.type, 'KNOWS');
    assert.equal(k.startNodeElementId, a.elementId);
    assert.equal(k.endNodeElementId, b.elementId);
    assert.deepEqual(k.properties, { since: neo4j.int(2001) });
    assert.ok(neo4j.isPath(p));
    assert.equal(p.length, 2);
    assert.equal(p.start.properties.name, 'Ann');
    assert.equal(p.end.properties.name, 'Cy');
    assert.equal(p.segments[0].relationship.elementId, k.elementId);
    // a path walked against a relationship's direction
    const back = await s.run("MATCH p = (c {name: 'Cy'})<-[:KNOWS]-(b) RETURN p");
    const seg = back.records[0].get('p').segments[0];
    assert.equal(seg.start.properties.name, 'Cy');
    assert.equal(seg.end.properties.name, 'Bob');
    assert.equal(seg.relationship.startNodeElementId, seg.end.elementId);
    // the element id finds the node again
    const again = await s.run('MATCH (n) WHERE id(n) = $id RETURN n.name AS name',
      { id: neo4j.int(Number(a.elementId)) });
    assert.equal(again.records[0].get('name'), 'Ann');
    await s.run('MATCH (n) DETACH DELETE n');
  } finally {
    await s.close();
  }
});

test('errors carry Neo4j status codes', async () => {
  const cases = [
    ['RETURN 1 +', 'Neo.ClientError.Statement.SyntaxError'],
    ['RETURN 1/0', 'Neo.ClientError.Statement.ArgumentError'],
    ['RETURN toUpper($i)', 'Neo.ClientError.Statement.TypeError', { i: 1 }],
    ['RETURN $missing', 'Neo.ClientError.Statement.ParameterMissing'],
    ["LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row", 'Neo.ClientError.Security.Forbidden'],
  ];
  for (const [query, code, params] of cases) {
    const s = driver.session();
    await assert.rejects(s.run(query, params ?? {}), (e) => {
      assert.equal(e.code, code, `${query}: ${e.code} ${e.message}`);
      return true;
    });
    await s.close();
  }
  // a unique constraint violated
  const s = driver.session();
  try {
    await s.run('CREATE CONSTRAINT FOR (n:U) REQUIRE n.k IS UNIQUE');
    await s.run('CREATE (:U {k: 1})');
    await assert.rejects(s.run('CREATE (:U {k: 1})'),
      (e) => e.code === 'Neo.ClientError.Schema.ConstraintValidationFailed');
    const c = await s.run('MATCH (n:U) RETURN count(n) AS c');
    assert.equal(Number(c.records[0].get('c')), 1);
    // the session goes on after errors
    assert.equal(Number((await s.run('RETURN 7 AS x')).records[0].get('x')), 7);
  } finally {
    await s.close();
  }
});

test('a string mentioning LOAD CSV is not refused', async () => {
  const rec = await one("RETURN 'LOAD CSV' AS s // LOAD CSV");
  assert.equal(rec.get('s'), 'LOAD CSV');
});

test('probing queries of GUI clients are answered', async () => {
  const comp = await one('CALL dbms.components() YIELD name, versions, edition RETURN *');
  assert.equal(comp.get('name'), 'Neo4j Kernel');
  assert.match(comp.get('versions')[0], /^5\./);
  const db = await one('SHOW DATABASES');
  assert.equal(db.get('name'), 'neo4j');
  assert.equal(db.get('currentStatus'), 'online');
});

test('query counters reach the summary', async () => {
  const s = driver.session();
  try {
    const r = await s.run('CREATE (a:C {x: 1}), (b:C) CREATE (a)-[:R]->(b)');
    const c = r.summary.counters.updates();
    assert.equal(c.nodesCreated, 2);
    assert.equal(c.relationshipsCreated, 1);
    assert.equal(c.propertiesSet, 1);
    assert.equal(c.labelsAdded, 2);
    assert.equal(r.summary.counters.containsUpdates(), true);
    const d = await s.run('MATCH (n:C) DETACH DELETE n');
    assert.equal(d.summary.counters.updates().nodesDeleted, 2);
    assert.equal(d.summary.counters.updates().relationshipsDeleted, 1);
  } finally {
    await s.close();
  }
});

test('a neo4j:// URL routes through the one-server routing table', async () => {
  const d = neo4j.driver(`neo4j://127.0.0.1:${server.port}`, neo4j.auth.basic('neo4j', 'x'));
  try {
    const s = d.session({ defaultAccessMode: neo4j.session.READ });
    const r = await s.run('RETURN 6 * 7 AS x');
    assert.equal(Number(r.records[0].get('x')), 42);
    await s.close();
    const w = d.session();
    await w.executeWrite((tx) => tx.run('CREATE (:Routed)'));
    await w.close();
  } finally {
    await d.close();
  }
  assert.equal(Number((await one('MATCH (n:Routed) RETURN count(n) AS c')).get('c')), 1);
});
