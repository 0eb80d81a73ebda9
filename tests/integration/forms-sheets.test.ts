import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { importSPKI, jwtVerify } from 'jose';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/proc.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// The `sheets` action (docs/forms.md "Deliveries"): a service-account JWT signed with the
// account's key is exchanged for a token at forms.services.googleTokenURL, then the submission is
// appended as a row at forms.services.sheetsURL. A local server stands in for both endpoints.

let d: TestDaemon;
let google: Server;
let url = '';
const got: { path: string; headers: Record<string, unknown>; body: string }[] = [];
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });

before(async () => {
  google = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      got.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.url === '/token') res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"ya29.test-token","expires_in":3599,"token_type":"Bearer"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"updates":{"updatedRows":1}}');
    });
  });
  await new Promise<void>((r) => google.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(google.address() as AddressInfo).port}`;
  d = await startTestDaemon({
    forms: {
      defaultTier: 'pro',
      deliveries: { pollIntervalMs: 50, allowPrivateTargets: ['127.0.0.0/8'] },
      services: { sheetsURL: `${url}/sheets`, googleTokenURL: `${url}/token` },
    },
  } as never);
});
after(async () => {
  try {
    await d?.stop();
  } finally {
    google.closeAllConnections();
    await new Promise((r) => google.close(r));
  }
});

test('sheets: a signed service-account JWT for a token, then the submission appended as a row', async () => {
  const call = publicClient(d, addFormKey(d).key);
  const form = (await call('POST', '/form', { name: 'Leads' })).body.id as string;
  const credentials = JSON.stringify({ type: 'service_account', client_email: 'forms@project.iam.gserviceaccount.com', private_key: privateKey, token_uri: 'http://169.254.169.254/ignored' });
  const made = await call('POST', `/form/${form}/action`, { form_id: form, type: 'sheets', config: { spreadsheet_id: 'sheet-1', sheet_name: "Q1 'leads'", credentials } });
  assert.equal(made.status, 201);
  assert.equal(made.body.config.credentials, '********');
  const res = await fetch(`${d.url}/f/${form}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }) });
  assert.equal(res.status, 200);
  await waitFor(() => got.length >= 2, 8000);
  const [token, append] = got;
  assert.equal(token!.path, '/token', 'the configured token endpoint, not the one in the credentials');
  const form1 = new URLSearchParams(token!.body);
  assert.equal(form1.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
  const { payload, protectedHeader } = await jwtVerify(form1.get('assertion')!, await importSPKI(publicKey, 'RS256'), { audience: `${url}/token`, issuer: 'forms@project.iam.gserviceaccount.com' });
  assert.equal(protectedHeader.alg, 'RS256');
  assert.equal(payload.scope, 'https://www.googleapis.com/auth/spreadsheets');
  assert.equal(append!.path, `/sheets/v4/spreadsheets/sheet-1/values/${encodeURIComponent("'Q1 ''leads'''")}:append?valueInputOption=RAW&insertDataOption=INSERT_ROWS`);
  assert.equal(append!.headers.authorization, 'Bearer ya29.test-token');
  const row = JSON.parse(append!.body).values[0] as string[];
  assert.deepEqual(row.slice(2), ['Ada', 'ada@example.com']);
  assert.match(row[0]!, /^\d{4}-\d\d-\d\dT/);
  const action = made.body.id as string;
  await waitFor(async () => (await call('GET', `/action/${action}/deliveries?state=sent`)).body.total === 1, 5000);

  const bad = await call('POST', `/form/${form}/action`, { form_id: form, type: 'sheets', config: { spreadsheet_id: 's', credentials: '{"client_email":"x"}' } });
  const out = await call('POST', `/action/${bad.body.id}/test`, { action_id: bad.body.id, data: { a: 1 } });
  assert.deepEqual([out.body.ok, out.body.detail], [false, 'credentials: need client_email and private_key']);
});
