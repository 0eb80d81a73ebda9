import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// A real browser posting real HTML forms to POST /f/{form_id} from pages of another origin
// (docs/forms.md "Submitting"): the redirect flow, the fetch flow, a file upload, the paste-in
// snippet with its honeypot, and a page whose origin the form does not allow.
// The daemon listens on 127.0.0.1:P; the pages come from http://localhost:Q (allowed) and from
// http://127.0.0.1:Q (not allowed), served by a small server of the test.

let d: TestDaemon;
let browser: Browser;
let site: Server;
let pages: Map<string, string>;
let call: ReturnType<typeof publicClient>;
let key: string;
let siteUrl: string;
let refusedUrl: string;

before(async () => {
  d = await startTestDaemon({ forms: { tenantTiers: { browser: 'pro' } } } as never);
  key = addFormKey(d, { tenantId: 'browser' }).key;
  call = publicClient(d, key);
  pages = new Map([['/thanks', '<!doctype html><title>Site thanks</title><h1>Thanks from the site</h1>']]);
  site = createServer((req, res) => {
    const html = pages.get((req.url ?? '/').split('?')[0]!);
    res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end(html ?? 'not found');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const port = (site.address() as AddressInfo).port;
  siteUrl = `http://localhost:${port}`;
  refusedUrl = `http://127.0.0.1:${port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
});
after(async () => {
  await browser?.close();
  site?.closeAllConnections();
  await new Promise((r) => site?.close(r));
  await d?.stop();
});

/** A form of the workspace allowing pages of `localhost` only. */
async function makeForm(settings: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/form', { name: 'Browser form', allowed_domains: ['localhost'], ...settings });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id as string;
}

/** The form's submissions, spam included, oldest first. */
async function stored(id: string) {
  return (await call('GET', `/form/${id}/submission?getSpam=true&order=asc`)).body.data as Record<string, any>[];
}

/** Serves `body` as a page of the site at `path` and opens it in a new browser page at `base`. */
async function open(path: string, body: string, base = siteUrl): Promise<Page> {
  pages.set(path, `<!doctype html><html><head><meta charset="utf-8"><title>${path}</title></head><body>${body}</body></html>`);
  const page = await browser.newPage();
  await page.goto(`${base}${path}`);
  return page;
}

test('redirect flow: a plain HTML form post lands on the built-in thank-you page, or on success_redirect on the posting site', async () => {
  const id = await makeForm();
  const page = await open('/plain', `<form action="${d.url}/f/${id}" method="post">
    <input name="name" value=""><input type="email" name="email"><textarea name="message"></textarea>
    <label><input type="checkbox" name="topics" value="dns" checked>dns</label><label><input type="checkbox" name="topics" value="forms" checked>forms</label>
    <button type="submit">Send</button></form>`);
  await page.fill('input[name=name]', 'Ada Lovelace');
  await page.fill('input[name=email]', 'ada@example.com');
  await page.fill('textarea[name=message]', 'Hello from a browser');
  await Promise.all([page.waitForURL(`${d.url}/f/${id}/thanks`), page.click('button[type=submit]')]);
  assert.match(await page.textContent('body') ?? '', /Thank you[\s\S]*Browser form/);
  await page.close();
  const [s] = await stored(id);
  assert.deepEqual(s!.data, { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello from a browser', topics: ['dns', 'forms'] });
  assert.equal(s!.spam, false);

  const redirecting = await makeForm({ success_redirect: '/thanks' });
  const p2 = await open('/redirecting', `<form action="${d.url}/f/${redirecting}" method="post"><input name="q" value="1"><button>Go</button></form>`);
  await Promise.all([p2.waitForURL(`${siteUrl}/thanks`), p2.click('button')]);
  assert.equal(await p2.textContent('h1'), 'Thanks from the site');
  await p2.close();
  assert.equal((await stored(redirecting)).length, 1);
});

test('fetch flow: the snippet\'s fetch() posts FormData with Accept: application/json and reads {ok: true}', async () => {
  const id = await makeForm();
  const snippets = (await call('GET', `/form/${id}/snippets`)).body as { html: string; fetch: string; endpoint: string };
  assert.equal(snippets.endpoint, `${d.url}/f/${id}`);
  const page = await open('/fetch', `${snippets.html}
    <p id="answer"></p>
    <script>
      document.querySelector('form').addEventListener('submit', async (e) => {
        e.preventDefault();
        const res = await fetch(${JSON.stringify(snippets.endpoint)}, { method: 'POST', headers: { Accept: 'application/json' }, body: new FormData(e.target) });
        document.getElementById('answer').textContent = res.status + ' ' + JSON.stringify(await res.json());
      });
    </script>`);
  await page.fill('input[name=email]', 'grace@example.com');
  await page.fill('textarea[name=message]', 'Sent with fetch');
  await page.click('button[type=submit]');
  await page.waitForFunction(() => document.getElementById('answer')!.textContent !== '');
  assert.equal(await page.textContent('#answer'), `200 ${JSON.stringify({ ok: true, next: `${d.url}/f/${id}/thanks` })}`);
  assert.equal(page.url(), `${siteUrl}/fetch`, 'the page stays where it is');
  await page.close();
  const [s] = await stored(id);
  assert.deepEqual(s!.data, { email: 'grace@example.com', message: 'Sent with fetch', fc_honeypot: '' });
  assert.equal(s!.spam, false);
});

test('the paste-in snippet as is: a person\'s post is kept, a bot filling the hidden honeypot sees the same thank-you and is stored as spam', async () => {
  const id = await makeForm();
  const { html, fetch: fetchCode } = (await call('GET', `/form/${id}/snippets`)).body as { html: string; fetch: string };
  const person = await open('/snippet', `${html}<script>${fetchCode}</script>`);
  assert.equal(await person.isVisible('input[name=fc_honeypot]'), true, 'in the page, but off-screen');
  const box = await person.locator('input[name=fc_honeypot]').boundingBox();
  assert.ok(box && box.x < 0, 'the honeypot is off-screen');
  await person.fill('input[name=email]', 'person@example.com');
  await person.fill('textarea[name=message]', 'I am a person');
  await person.click('button[type=submit]');
  await person.waitForFunction(() => document.body.textContent!.includes('Thank you!'));
  await person.close();

  const bot = await open('/snippet', `${html}<script>${fetchCode}</script>`);
  await bot.fill('input[name=email]', 'bot@example.com');
  await bot.fill('textarea[name=message]', 'buy now');
  await bot.evaluate(() => { (document.querySelector('input[name=fc_honeypot]') as HTMLInputElement).value = 'http://spam.example'; });
  await bot.click('button[type=submit]');
  await bot.waitForFunction(() => document.body.textContent!.includes('Thank you!'));
  await bot.close();
  assert.deepEqual((await stored(id)).map((s) => [s.data.email, s.spam, s.spam_reason]), [
    ['person@example.com', false, null],
    ['bot@example.com', true, 'honeypot field filled'],
  ]);
});

test('file upload: a multipart form with two files; the stored files download with the same bytes', async () => {
  const id = await makeForm();
  const page = await open('/upload', `<form action="${d.url}/f/${id}" method="post" enctype="multipart/form-data">
    <input name="name"><input type="file" name="docs" multiple><button>Upload</button></form>`);
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
  await page.fill('input[name=name]', 'Uploader');
  await page.setInputFiles('input[name=docs]', [
    { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('some notes\n') },
    { name: 'pixel.png', mimeType: 'image/png', buffer: png },
  ]);
  await Promise.all([page.waitForURL(`${d.url}/f/${id}/thanks`), page.click('button')]);
  await page.close();
  const [s] = await stored(id);
  assert.deepEqual(s!.data, { name: 'Uploader' });
  assert.deepEqual(s!.files, [
    { index: 0, field: 'docs', name: 'notes.txt', type: 'text/plain', size: 11 },
    { index: 1, field: 'docs', name: 'pixel.png', type: 'image/png', size: png.length },
  ]);
  for (const [i, want] of [[0, Buffer.from('some notes\n')], [1, png]] as const) {
    const res = await fetch(`${d.url}/public/v1/form/${id}/submission/${s!.id}/file/${i}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), want);
  }
});

test('refused origin: a page the form does not allow cannot read a fetch answer, a plain post shows the 403 page, and nothing is stored', async () => {
  const id = await makeForm();
  const page = await open('/refused', `<form action="${d.url}/f/${id}" method="post"><input name="a" value="1"><button>Send</button></form>
    <p id="answer"></p>
    <script>
      fetch(${JSON.stringify(`${d.url}/f/${id}`)}, { method: 'POST', headers: { Accept: 'application/json' }, body: new FormData(document.querySelector('form')) })
        .then((r) => { document.getElementById('answer').textContent = 'read ' + r.status; })
        .catch((e) => { document.getElementById('answer').textContent = 'blocked: ' + e.name; });
    </script>`, refusedUrl);
  await page.waitForFunction(() => document.getElementById('answer')!.textContent !== '');
  assert.equal(await page.textContent('#answer'), 'blocked: TypeError', 'no CORS headers: the script cannot read the answer');
  const [res] = await Promise.all([page.waitForNavigation(), page.click('button')]);
  assert.equal(res!.status(), 403);
  assert.match(await page.textContent('body') ?? '', /does not accept posts from http:\/\/127\.0\.0\.1:\d+/);
  await page.close();
  assert.deepEqual(await stored(id), []);
});
