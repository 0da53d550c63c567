// --auth: users from `strata passwd`; a wrong password is refused; a
// non-loopback address needs --auth.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import neo4j from 'neo4j-driver';
import { startServer, driverFor, strataBin } from './server.mjs';

let dir, file, server;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-auth-'));
  file = join(dir, 'users');
  for (const [user, pw] of [['alice', 'wonderland'], ['bob', 'first'], ['bob', 'builder']]) {
    const r = spawnSync(strataBin, ['passwd', file, user], { input: `${pw}\n` });
    assert.equal(r.status, 0, String(r.stderr));
  }
  server = await startServer(['--auth', file]);
});
after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('passwd writes salted yescrypt hashes, one line per user, mode 0600', () => {
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  assert.equal(lines.length, 2); // bob's second password replaced his first
  for (const line of lines) assert.match(line, /^(alice|bob):\$y\$/);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const again = spawnSync(strataBin, ['passwd', file, 'bad:name'], { input: 'x\n' });
  assert.notEqual(again.status, 0);
  const empty = spawnSync(strataBin, ['passwd', file, 'carol'], { input: '' });
  assert.notEqual(empty.status, 0);
});

test('the right password connects', async () => {
  for (const [user, pw] of [['alice', 'wonderland'], ['bob', 'builder']]) {
    const d = driverFor(server, neo4j.auth.basic(user, pw));
    const s = d.session();
    const r = await s.run('RETURN 1 AS one');
    assert.equal(Number(r.records[0].get('one')), 1);
    const who = await s.run('CALL dbms.showCurrentUser()');
    assert.equal(who.records[0].get('username'), user);
    await s.close();
    await d.close();
  }
});

test('a wrong password, an unknown user or no credentials are refused', async () => {
  const cases = [neo4j.auth.basic('bob', 'first'), neo4j.auth.basic('mallory', 'wonderland'),
    neo4j.auth.basic('alice', ''), { scheme: 'none' }];
  for (const auth of cases) {
    const d = driverFor(server, auth);
    const s = d.session();
    await assert.rejects(s.run('RETURN 1'),
      (e) => e.code === 'Neo.ClientError.Security.Unauthorized', JSON.stringify(auth));
    await s.close();
    await d.close();
  }
  assert.match(server.log(), /authentication failed for user 'mallory'/);
});

test('a non-loopback address without --auth is refused at start', () => {
  const r = spawnSync(strataBin, ['serve', '--listen', '0.0.0.0:0'], { timeout: 10000 });
  assert.notEqual(r.status, 0);
  assert.match(String(r.stderr), /not a loopback address: it needs --auth/);
  const bad = spawnSync(strataBin, ['serve', '--auth', join(dir, 'missing')], { timeout: 10000 });
  assert.notEqual(bad.status, 0);
  assert.match(String(bad.stderr), /missing/);
});
