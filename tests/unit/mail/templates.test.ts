import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MailTemplates } from '../../../runtime/mail/templates.js';
import { mailVars } from '../../../runtime/alerts/targets/mail.js';

const resetVars = { email: 'ann@example.test', link: 'https://gslb.example.test/reset?t=abc&x=1', displayName: 'Ann <admin>', expiresInMinutes: 30, node: 'n1' };

test('built-in password-reset: link in text, escaped in HTML', async () => {
  const m = await new MailTemplates(undefined).render('password-reset', resetVars);
  assert.equal(m.subject, 'Reset your gslbd password');
  assert.match(m.text, /https:\/\/gslb\.example\.test\/reset\?t=abc&x=1/);
  assert.match(m.text, /within 30 minutes/);
  assert.match(m.html!, /href="https:\/\/gslb\.example\.test\/reset\?t=abc&amp;x=1"/);
  assert.match(m.html!, /Ann &lt;admin&gt;/);
});

test('an operator file overrides one part; the others stay built-in', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-tpl-'));
  try {
    writeFileSync(join(dir, 'password-reset.subject.liquid'), 'ACME: reset for {{ email }}\nX-Injected: yes');
    const m = await new MailTemplates(dir).render('password-reset', resetVars);
    assert.equal(m.subject, 'ACME: reset for ann@example.test X-Injected: yes', 'one line, no header injection');
    assert.match(m.text, /someone asked to reset/);
    writeFileSync(join(dir, 'password-reset.text.liquid'), '{{ link | no_such_filter }}');
    await assert.rejects(new MailTemplates(dir).render('password-reset', resetVars), /password-reset\.text\.liquid/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('alert-health subject for one flip and for a burst', async () => {
  const t = new MailTemplates(undefined);
  const e = (ip: string, healthy: boolean) => ({ type: 'health_transition' as const, poolId: 'web', ipAddress: ip, healthy, timestamp: 0, node: 'n1', score: 0, rttMs: 0 });
  const one = await t.render('alert-health', mailVars([e('10.0.0.1', false)], 'n1'));
  assert.equal(one.subject, '[gslbd] DOWN: 10.0.0.1 in pool web');
  const many = await t.render('alert-health', mailVars([e('10.0.0.1', false), e('10.0.0.2', false), e('10.0.0.3', true)], 'n1'));
  assert.equal(many.subject, '[gslbd] 3 health changes: 2 down, 1 recovered');
  assert.equal(many.text.split('\n').filter((l) => l.startsWith('- ')).length, 3);
});
