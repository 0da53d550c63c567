// A minimal Bolt client over a raw socket, for what the driver never sends:
// RESET in the middle of a query, truncated, oversized and garbage frames.
import net from 'node:net';

// PackStream, just enough: null, booleans, small and large integers,
// strings, lists, maps, structures.
export function pack(v) {
  if (v === null || v === undefined) return Buffer.from([0xc0]);
  if (v === true) return Buffer.from([0xc3]);
  if (v === false) return Buffer.from([0xc2]);
  if (typeof v === 'number') {
    if (Number.isInteger(v) && v >= -16 && v <= 127) return Buffer.from([v & 0xff]);
    const b = Buffer.alloc(9);
    b[0] = 0xcb;
    b.writeBigInt64BE(BigInt(v), 1);
    return b;
  }
  if (typeof v === 'string') {
    const s = Buffer.from(v, 'utf8');
    return Buffer.concat([sizeHeader(0x80, 0xd0, s.length), s]);
  }
  if (Array.isArray(v)) return Buffer.concat([sizeHeader(0x90, 0xd4, v.length), ...v.map(pack)]);
  if (v.tag !== undefined) {
    return Buffer.concat([Buffer.from([0xb0 | v.fields.length, v.tag]), ...v.fields.map(pack)]);
  }
  const keys = Object.keys(v);
  return Buffer.concat([sizeHeader(0xa0, 0xd8, keys.length),
    ...keys.flatMap((k) => [pack(k), pack(v[k])])]);
}

function sizeHeader(tiny, base, n) {
  if (n < 16) return Buffer.from([tiny | n]);
  if (n < 256) return Buffer.from([base, n]);
  if (n < 65536) return Buffer.from([base + 1, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = base + 2;
  b.writeUInt32BE(n, 1);
  return b;
}

export const msg = (tag, ...fields) => pack({ tag, fields });
export const HELLO = (extra = {}) => msg(0x01, { user_agent: 'raw/1', ...extra });
export const LOGON = (auth = { scheme: 'none' }) => msg(0x6a, auth);
export const RUN = (q, p = {}, extra = {}) => msg(0x10, q, p, extra);
export const PULL = (n = -1) => msg(0x3f, { n });
export const RESET = () => msg(0x0f);
export const GOODBYE = () => msg(0x02);

// One message as chunks and the end marker.
export function frame(body) {
  const parts = [];
  for (let at = 0; at < body.length; at += 0xffff) {
    const chunk = body.subarray(at, at + 0xffff);
    const head = Buffer.alloc(2);
    head.writeUInt16BE(chunk.length);
    parts.push(head, chunk);
  }
  parts.push(Buffer.from([0, 0]));
  return Buffer.concat(parts);
}

export const handshakeBytes = (proposals = [[5, 4, 4], [4, 4, 0], [0, 0, 0], [0, 0, 0]]) =>
  Buffer.concat([Buffer.from([0x60, 0x60, 0xb0, 0x17]),
    ...proposals.map(([major, minor, range]) => Buffer.from([0, range, minor, major]))]);

// A connection that collects replies: each reply is its tag (0x70 SUCCESS,
// 0x71 RECORD, 0x7e IGNORED, 0x7f FAILURE) and its raw bytes.
export class RawConn {
  constructor(port) {
    this.port = port;
    this.buf = Buffer.alloc(0);
    this.replies = [];
    this.waiters = [];
    this.closed = false;
  }

  async open() {
    this.sock = net.connect(this.port, '127.0.0.1');
    await new Promise((resolve, reject) => {
      this.sock.once('connect', resolve);
      this.sock.once('error', reject);
    });
    this.sock.on('data', (d) => { this.buf = Buffer.concat([this.buf, d]); this.parse(); this.wake(); });
    this.sock.on('close', () => { this.closed = true; this.wake(); });
    this.sock.on('error', () => {});
    return this;
  }

  parse() {
    if (this.version === undefined) {
      if (this.buf.length < 4) return;
      this.version = [this.buf[3], this.buf[2]];
      this.buf = this.buf.subarray(4);
    }
    for (;;) {
      let at = 0;
      const parts = [];
      let done = false;
      while (this.buf.length - at >= 2) {
        const n = this.buf.readUInt16BE(at);
        if (n === 0) { at += 2; done = parts.length > 0; if (done) break; continue; }
        if (this.buf.length - at - 2 < n) break;
        parts.push(this.buf.subarray(at + 2, at + 2 + n));
        at += 2 + n;
      }
      if (!done) return;
      const body = Buffer.concat(parts);
      this.replies.push({ tag: body[1], body });
      this.buf = this.buf.subarray(at);
    }
  }

  wake() {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  send(bytes) {
    this.sock.write(bytes);
  }

  async handshake(proposals) {
    this.send(handshakeBytes(proposals));
    await this.until(() => this.version !== undefined || this.closed, 5000);
    return this.version;
  }

  // Waits until pred() holds, or the connection closes, or ms pass.
  async until(pred, ms = 10000) {
    const end = Date.now() + ms;
    while (!pred()) {
      if (this.closed || Date.now() > end) return false;
      await new Promise((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return true;
  }

  // The next n replies (waiting for them).
  async take(n, ms = 10000) {
    await this.until(() => this.replies.length >= n, ms);
    return this.replies.splice(0, n);
  }

  close() {
    this.sock.destroy();
  }
}

// Whether a reply body mentions text (codes and messages are plain UTF-8).
export const mentions = (reply, text) => reply.body.includes(Buffer.from(text));
