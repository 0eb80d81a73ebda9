// The ceiling of one Node thread answering UDP DNS: a plain dgram socket that copies one
// precomputed reply, patches the query ID and sends it. It decodes nothing and is not a DNS
// server; `npm run bench:dns` runs it beside gslbd and gdnsd so every run shows how close gslbd's
// real answer path gets to Node's own per-packet send cost.
// Usage: node tests/bench/dns-raw-server.mjs <port>
import dgram from 'node:dgram';

function name(n) {
  return Buffer.concat([...n.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
}
const header = Buffer.from([0, 0, 0x84, 0, 0, 1, 0, 4, 0, 0, 0, 0]);
const question = Buffer.concat([name('www.bench.test'), Buffer.from([0, 1, 0, 1])]);
const answers = [1, 2, 3, 4].map((i) => Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, i]));
const reply = Buffer.concat([header, question, ...answers]);

const sock = dgram.createSocket({ type: 'udp4', recvBufferSize: 8 << 20, sendBufferSize: 8 << 20 });
sock.on('message', (msg, rinfo) => {
  const b = Buffer.allocUnsafe(reply.length);
  reply.copy(b);
  b[0] = msg[0];
  b[1] = msg[1];
  sock.send(b, rinfo.port, rinfo.address);
});
sock.bind(Number(process.argv[2]), '127.0.0.1', () => process.send?.({ ready: true }));
process.on('SIGTERM', () => sock.close(() => process.exit(0)));
