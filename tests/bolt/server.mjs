// Starts `strata serve` on 127.0.0.1 with an ephemeral port and stops it.
// The binary comes from STRATA_BIN (tests/bolt/run.sh sets it).
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import neo4j from 'neo4j-driver';

export const strataBin = process.env.STRATA_BIN;

export async function startServer(args = []) {
  if (!strataBin) throw new Error('STRATA_BIN is not set');
  const proc = spawn(strataBin, ['serve', '--listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stderr.on('data', (d) => { log += d; });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no listening line; log:\n${log}`)), 10000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on 127\.0\.0\.1:(\d+)/);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`strata serve exited with ${code}; log:\n${log}`));
    });
  });
  const exited = new Promise((resolve) => proc.on('exit', (code, sig) => resolve({ code, sig })));
  return {
    port,
    pid: proc.pid,
    url: `bolt://127.0.0.1:${port}`,
    log: () => log,
    // SIGTERM: the server closes its connections and exits 0 (under ASan,
    // leaks would make it fail)
    async stop() {
      proc.kill('SIGTERM');
      const r = await exited;
      if (r.code !== 0) throw new Error(`strata serve exited ${r.code} ${r.sig}; log:\n${log}`);
    },
  };
}

// From /proc/PID/status (Linux): a field's number, e.g. VmRSS in kB, Threads.
export function procStatus(pid, field) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = text.match(new RegExp(`^${field}:\\s+(\\d+)`, 'm'));
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]);
}

// The descriptors the process has open (sockets included).
export const openFds = (pid) => readdirSync(`/proc/${pid}/fd`).length;

export function driverFor(server, auth = neo4j.auth.basic('neo4j', 'unused'), config = {}) {
  return neo4j.driver(server.url, auth, { logging: undefined, ...config });
}
