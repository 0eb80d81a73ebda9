import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway certificate authority and a server certificate for 127.0.0.1, made with openssl. */
export interface TestCa { ca: string; key: string; cert: string }

/** Creates the CA and a leaf for IP 127.0.0.1 and localhost (valid one day); files are removed afterwards. */
export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-ca-'));
  const ossl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    ossl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=gslbd test CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
    ossl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n');
    ossl('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.crt', '-days', '1', '-extfile', 'leaf.ext');
    const read = (f: string) => readFileSync(join(dir, f), 'utf8');
    return { ca: read('ca.crt'), key: read('leaf.key'), cert: read('leaf.crt') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
