import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { authenticator } from 'otplib';
import { chromium } from 'playwright-core';
import { startTestDaemon, api } from '../helpers/daemon.js';

const ARTIFACTS = join(process.cwd(), 'tests', 'artifacts');

test('login page in headless Chromium: password, then TOTP, lands on the signed-in page', async () => {
  const SYS = randomBytes(32).toString('hex');
  const d = await startTestDaemon({ auth: { bcryptCost: 10 } } as never, { GSLB_API_KEY: SYS, GSLB_SECRET_KEY: randomBytes(32).toString('hex') });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const password = 'browser-pass-1';
    await api(d.url, 'POST', '/api/v1/auth/setup', { email: 'ui@example.test', password, displayName: 'Uma' });
    // enrol TOTP through the API with codes the test computes
    const tok = (await api(d.url, 'POST', '/api/v1/auth/login', { email: 'ui@example.test', password })).body.token as string;
    const setup = await api(d.url, 'POST', '/api/v1/auth/totp/setup', undefined, { authorization: `Bearer ${tok}` });
    const secret: string = setup.body.secret;
    const enrolAt = Date.now();
    assert.equal((await api(d.url, 'POST', '/api/v1/auth/totp/verify', { code: authenticator.clone({ epoch: enrolAt }).generate(secret) }, { authorization: `Bearer ${tok}` })).status, 200);

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${d.url}/ui/login`);
    assert.equal(await page.title(), 'Sign in · gslbd');
    assert.equal(await page.locator('#sso').isHidden(), true, 'no SSO button while single sign-on is off');
    // accessible names come from the labels
    await page.getByLabel('E-mail').first().fill('ui@example.test');
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const code = page.getByLabel('Code from your authenticator app');
    await code.waitFor({ state: 'visible', timeout: 10_000 });
    assert.match(await page.locator('#status').innerText(), /6-digit code/);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'login-totp-prompt.png') });
    // the enrolment used the current step; the next step's code is within the one-step tolerance
    await code.fill(authenticator.clone({ epoch: enrolAt + 30_000 }).generate(secret));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // signing in lands on the dashboard; the account page is one link away
    await page.waitForURL('**/ui/', { timeout: 10_000 });
    await page.goto(`${d.url}/ui/account`);
    await page.locator('#me').waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(await page.locator('#me-email').innerText(), 'ui@example.test');
    assert.equal(await page.locator('#me-role').innerText(), 'tenant_admin');
    assert.equal(await page.locator('#me-totp').innerText(), 'on');
    assert.match(await page.locator('#status').innerText(), /Signed in as ui@example\.test/);
    // the session cookie is HttpOnly: scripts cannot read it
    assert.ok(!(await page.evaluate(() => document.cookie)).includes('gslb_session'));
    const shot = join(ARTIFACTS, 'login-signed-in.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 1000);
    // sign out returns to the login page and the session is gone
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/ui/login', { timeout: 10_000 });
    const after = await page.evaluate(async () => (await fetch('/api/v1/auth/me')).status);
    assert.equal(after, 401);
    assert.deepEqual(errors, []);
    const logs = d.logs.text();
    for (const s of [SYS, password, secret, tok]) assert.ok(!logs.includes(s), `secret …${s.slice(-4)} in logs`);
  } finally {
    await browser.close();
    await d.stop();
  }
});
