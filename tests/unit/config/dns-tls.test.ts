import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfigText } from '../../../runtime/config/load.js';

// dns.tls (docs/dns.md "Zone transfers over TLS"): certificate and key files are read at load time
// and a pair the listener could not use stops startup, naming the key; the rules of tlsOnly and the
// catalog zone.

let dir: string;
const cert = () => join(dir, 'cert.pem');
const key = () => join(dir, 'key.pem');
const otherKey = () => join(dir, 'other.pem');

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-dns-tls-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-keyout', key(), '-out', cert(), '-subj', '/CN=t'], { stdio: 'ignore' });
  execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', otherKey()], { stdio: 'ignore' });
  writeFileSync(join(dir, 'junk.pem'), 'not a certificate\n');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const load = (tls: string, axfr = '') => parseConfigText(`dns:\n  tls: ${tls}\n${axfr}`);
const fails = (f: () => unknown, re: RegExp) => assert.throws(f, (err: Error) => { assert.match(err.message, re); return true; });

test('a usable pair loads, with port 853 and the DNS address as defaults', () => {
  const c = load(`{certFile: ${cert()}, keyFile: ${key()}}`);
  assert.equal(c.dns.tls?.port, 853);
  assert.equal(c.dns.tls?.listenAddr, undefined);
});

test('a missing certificate file names dns.tls.certFile', () => {
  fails(() => load(`{certFile: ${join(dir, 'none.pem')}, keyFile: ${key()}}`), /dns\.tls\.certFile = ".*none\.pem": cannot be read: ENOENT/);
});

test('a file that is no certificate names dns.tls.certFile; a key of another certificate names dns.tls.keyFile', () => {
  fails(() => load(`{certFile: ${join(dir, 'junk.pem')}, keyFile: ${key()}}`), /dns\.tls\.certFile = ".*junk\.pem": is not a PEM certificate/);
  fails(() => load(`{certFile: ${cert()}, keyFile: ${otherKey()}}`), /dns\.tls\.keyFile = ".*other\.pem": is not the private key of the certificate/);
  fails(() => load(`{certFile: ${cert()}, keyFile: ${join(dir, 'junk.pem')}}`), /dns\.tls\.keyFile = ".*junk\.pem": is not a PEM private key/);
});

test('the error never quotes the key material', () => {
  try { load(`{certFile: ${cert()}, keyFile: ${join(dir, 'junk.pem')}}`); assert.fail('loaded'); } catch (err) {
    assert.doesNotMatch((err as Error).message, /BEGIN|PRIVATE/);
  }
});

test('dns.axfr.tlsOnly needs dns.tls; dns.catalog needs transfers and a name outside dns.domain', () => {
  fails(() => parseConfigText('dns:\n  axfr: {enabled: true, tlsOnly: true}\n'), /dns\.axfr\.tlsOnly = true: needs dns\.tls/);
  fails(() => parseConfigText('dns:\n  catalog: {zone: catalog.invalid}\n'), /dns\.catalog\.zone = "catalog\.invalid": needs dns\.axfr\.enabled/);
  fails(() => parseConfigText('dns:\n  domain: example.test\n  axfr: {enabled: true}\n  catalog: {zone: cat.example.test}\n'), /must not be dns\.domain or a name under it/);
  assert.equal(parseConfigText('dns:\n  axfr: {enabled: true}\n  catalog: {zone: catalog.invalid}\n').dns.catalog?.zone, 'catalog.invalid');
});
