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

test('alert-rollback names the bad revision, the one rolled back to and the breach; or that nothing was rolled back', async () => {
  const t = new MailTemplates(undefined);
  const bad = 'b'.repeat(40);
  const good = 'a'.repeat(40);
  const base = { type: 'gitops_rollback' as const, revision: bad, reason: 'healthy members 0/2 (0%) below minHealthyShare 50%', creates: 2, updates: 0, deletes: 2, timestamp: 0, node: 'n1', applied: { commit: good, at: 0 } };
  const rolled = await t.render('alert-rollback', mailVars([{ ...base, rolledBackTo: good, result: 'RolledBack', message: 'rolled back' }], 'n1'));
  assert.equal(rolled.subject, `[gslbd] GitOps revision ${bad.slice(0, 12)} rolled back to ${good.slice(0, 12)}`);
  assert.match(rolled.text, new RegExp(`revision ${bad}\\n  breach: healthy members 0/2 \\(0%\\) below minHealthyShare 50%\\n  rolled back to ${good} \\(creates=2 updates=0 deletes=2\\)`));
  assert.match(rolled.text, new RegExp(`now serving commit ${good}`));
  const none = await t.render('alert-rollback', mailVars([{ ...base, rolledBackTo: null, result: 'NoGoodRevision', message: 'no earlier revision passed its window; it stays applied' }], 'n1'));
  assert.equal(none.subject, `[gslbd] GitOps revision ${bad.slice(0, 12)} breached; not rolled back`);
  assert.match(none.text, /no earlier revision passed its window; it stays applied/);
});
