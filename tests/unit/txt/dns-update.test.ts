import { test } from 'node:test';
import assert from 'node:assert/strict';
import dnsPacket from 'dns-packet';
import { parseUpdate } from '../../../runtime/dns/update-message.js';
import { parseConfigText } from '../../../runtime/config/load.js';
import { ValidationError } from '../../../runtime/errors.js';

/** An UPDATE message for zone `example.test.` built with dns-packet (opcode UPDATE). */
function update(opts: { zone?: { type: string; class: string }[]; answers?: unknown[]; authorities?: unknown[] } = {}): Buffer {
  return dnsPacket.encode({
    type: 'query', id: 7, flags: 5 << 11, // opcode UPDATE (RFC 2136 §2.2)
    questions: (opts.zone ?? [{ type: 'SOA', class: 'IN' }]).map((z) => ({ name: 'example.test', ...z })),
    answers: opts.answers ?? [], authorities: opts.authorities ?? [],
  } as never);
}

test('parseUpdate: the zone, prerequisites and updates, names lower-cased; malformed messages are FORMERR', () => {
  const m = parseUpdate(update({
    answers: [{ name: 'A.example.test', type: 'TXT', class: 'ANY', ttl: 0, data: [] }],
    authorities: [{ name: 'x.Example.test', type: 'TXT', class: 'IN', ttl: 60, data: ['hello'] }],
  }));
  assert.equal(m.ok, true);
  if (!m.ok) return;
  assert.equal(m.zone, 'example.test.');
  assert.deepEqual(m.prereqs.map((r) => [r.name, r.type, r.cls, r.ttl]), [['a.example.test.', 16, 255, 0]]);
  assert.deepEqual(m.updates.map((r) => [r.name, r.type, r.cls, r.ttl, r.rdata.toString('latin1')]), [['x.example.test.', 16, 1, 60, '\x05hello']]);
  const rows: { name: string; msg: Buffer }[] = [
    { name: 'no zone', msg: update({ zone: [] }) },
    { name: 'zone not SOA', msg: update({ zone: [{ type: 'A', class: 'IN' }] }) },
    { name: 'two zones', msg: update({ zone: [{ type: 'SOA', class: 'IN' }, { type: 'SOA', class: 'IN' }] }) },
    { name: 'truncated', msg: update({ authorities: [{ name: 'x.example.test', type: 'TXT', class: 'IN', ttl: 60, data: ['hello'] }] }).subarray(0, 40) },
    { name: 'shorter than a header', msg: Buffer.alloc(5) },
  ];
  for (const r of rows) assert.deepEqual(parseUpdate(r.msg), { ok: false, rcode: 1 }, r.name);
  const loop = update();
  loop.writeUInt16BE(0xc00c, 12); // a name that points at itself
  assert.deepEqual(parseUpdate(loop), { ok: false, rcode: 1 });
});

test('dns.update: enabled needs a grant, and each grant names a configured key', () => {
  const problems = (yaml: string) => { try { parseConfigText(yaml, 'config.yaml'); return []; } catch (e) { assert.ok(e instanceof ValidationError); return e.problems; } };
  const key = 'c2VjcmV0LXRzaWctMTYtYnl0ZXM=';
  assert.deepEqual(problems(`dns:\n  axfr:\n    tsigKeys: [{name: k1, secret: ${key}}]\n  update:\n    enabled: true\n    grants: [{key: k1., tenant: acme}]\n`), []);
  assert.match(problems('dns:\n  update:\n    enabled: true\n').join('\n'), /dns\.update\.enabled = true: needs at least one grant in dns\.update\.grants/);
  assert.match(problems(`dns:\n  axfr:\n    tsigKeys: [{name: k1, secret: ${key}}]\n  update:\n    grants: [{key: k2, tenant: acme}]\n`).join('\n'), /dns\.update\.grants\.0\.key = "k2": must be the name of a key in dns\.axfr\.tsigKeys/);
});
