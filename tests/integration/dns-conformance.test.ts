import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { digText, makeService } from '../helpers/dns-tools.js';

/**
 * RFC conformance of the answer path, each checked with real clients (dig from BIND, kdig from
 * Knot): OPT in FORMERR and NOTIMP replies (RFC 6891 §7), BADKEY for an unknown TSIG key (RFC 8945
 * §5.2.1, also with transfers off), and ANY at the apex (RFC 8482 §4).
 */
let d: TestDaemon;
let port: number;
const SECRET = Buffer.from('conformance-key-of-thirty-two-b!').toString('base64');

before(async () => {
  // transfers off: TSIG still applies to every query, with whatever keys are configured
  d = await startTestDaemon({ dns: { listenAddr: '127.0.0.1', port: 0, domain: 'example.test', nsNames: ['ns1.example.test.', 'ns2.example.test.'], axfr: { enabled: false, requireTsig: false, tsigKeys: [{ name: 'known.example.test', algorithm: 'hmac-sha256', secret: SECRET }] } } as never });
  port = d.ports.dnsPort as number;
  await makeService(d, { name: 'web', domain: 'www.example.test.' }, [{ ipAddress: '192.0.2.1' }]);
});
after(async () => { await d?.stop(); });

const status = (text: string) => /status: ([A-Z]+)/.exec(text)?.[1] ?? /;; ->>HEADER<<- opcode: \w+; status: ([A-Z]+)/.exec(text)?.[1];
const hasOpt = (text: string) => /OPT PSEUDOSECTION|;; EDNS PSEUDOSECTION/.test(text);

test('a: FORMERR and NOTIMP replies to an EDNS query carry an OPT record; without EDNS they do not', async () => {
  const rows: { name: string; bin: 'dig' | 'kdig'; args: string[]; status: string; opt: boolean }[] = [
    { name: 'no question (FORMERR), EDNS', bin: 'dig', args: ['+header-only'], status: 'FORMERR', opt: true },
    { name: 'no question (FORMERR), no EDNS', bin: 'dig', args: ['+header-only', '+noedns'], status: 'FORMERR', opt: false },
    { name: 'a malformed ECS option (FORMERR), EDNS', bin: 'dig', args: ['www.example.test', '+ednsopt=8:00012000'], status: 'FORMERR', opt: true },
    { name: 'opcode STATUS (NOTIMP), EDNS', bin: 'dig', args: ['+opcode=status', 'www.example.test'], status: 'NOTIMP', opt: true },
    { name: 'opcode STATUS (NOTIMP), no EDNS', bin: 'dig', args: ['+opcode=status', '+noedns', 'www.example.test'], status: 'NOTIMP', opt: false },
    { name: 'a malformed ECS option (FORMERR), kdig', bin: 'kdig', args: ['www.example.test', '+ednsopt=8:00012000'], status: 'FORMERR', opt: true },
  ];
  for (const r of rows) {
    const text = await digText(port, r.args, r.bin);
    assert.equal(status(text), r.status, `${r.name}:\n${text}`);
    assert.equal(hasOpt(text), r.opt, `${r.name}: OPT\n${text}`);
    if (r.opt) assert.match(text, /udp: 1232|UDP size: 1232/, `${r.name}: our payload size`);
  }
});

test('b: a query signed with a key this server does not have gets NOTAUTH with TSIG error BADKEY', async () => {
  const rows: { name: string; bin: 'dig' | 'kdig'; args: string[]; want: RegExp }[] = [
    { name: 'dig, A', bin: 'dig', args: ['-y', `hmac-sha256:stranger.example.test:${SECRET}`, 'www.example.test', 'A'], want: /stranger\.example\.test\.\s+0\s+ANY\s+TSIG\s+hmac-sha256\.\s+\d+\s+300\s+0\s+\d+\s+BADKEY/ },
    { name: 'dig, AXFR while transfers are off', bin: 'dig', args: ['-y', `hmac-sha256:stranger.example.test:${SECRET}`, 'example.test', 'AXFR'], want: /BADKEY/ },
    { name: 'kdig, SOA over TCP', bin: 'kdig', args: ['+tcp', '-y', `hmac-sha512:stranger.example.test:${SECRET}`, 'example.test', 'SOA'], want: /BADKEY/ },
  ];
  for (const r of rows) {
    const text = await digText(port, r.args, r.bin);
    assert.match(text, r.want, `${r.name}:\n${text}`);
    // kdig prints the TSIG error as the status of the reply, dig the RCODE
    if (!r.args.includes('AXFR')) assert.equal(status(text), r.bin === 'kdig' ? 'BADKEY' : 'NOTAUTH', `${r.name}:\n${text}`);
    assert.doesNotMatch(text, /192\.0\.2\.1/, `${r.name}: no answer`);
  }
  // the known key: a normal, signed answer that both clients verify
  for (const bin of ['dig', 'kdig'] as const) {
    const text = await digText(port, ['-y', `hmac-sha256:known.example.test:${SECRET}`, 'www.example.test', 'A'], bin);
    assert.equal(status(text), 'NOERROR', text);
    assert.match(text, /192\.0\.2\.1/);
    assert.match(text, /known\.example\.test\.\s+0\s+ANY\s+TSIG\s+hmac-sha256\.\s+\d+\s+300\s+32\s+\S+\s+\d+\s+NOERROR/, `${bin}: signed\n${text}`);
    assert.doesNotMatch(text, /Couldn't verify|could not be validated|TSIG error|tsig verify failure/i, `${bin}:\n${text}`);
  }
});

test('c: ANY at the apex answers the SOA and the NS set', async () => {
  for (const [bin, extra] of [['dig', []], ['dig', ['+notcp']], ['kdig', []]] as const) {
    const text = await digText(port, ['example.test', 'ANY', ...extra], bin);
    assert.equal(status(text), 'NOERROR', text);
    const answers = text.split('\n').filter((l) => /^example\.test\.\s+\d+\s+IN\s+/.test(l)).map((l) => l.split(/\s+/).slice(3).join(' ').replace(/\. \d+ 3600/, '. N 3600'));
    assert.deepEqual(answers.sort(), ['NS ns1.example.test.', 'NS ns2.example.test.', 'SOA ns1.example.test. hostmaster.example.test. N 3600 600 604800 60'].sort(), `${bin} ${extra.join(' ')}:\n${text}`);
  }
});
