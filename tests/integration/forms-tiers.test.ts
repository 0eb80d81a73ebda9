import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestDaemon } from '../helpers/daemon.js';
import { runEntry } from '../helpers/proc.js';
import { addFormKey, publicClient } from './forms-fixture.js';

// The billing tiers of the form service under their new keys and their old ones (forms.plans,
// defaultPlan, tenantPlans: still read, each a deprecation warning logged once at start and
// printed by gslbctl validate --config; docs/forms.md "Tiers"). GET /plan keeps the spec's names.

const TIERS = { starter: { forms: 2, actionsPerForm: 1, submissionsPerMonth: 50, fileBytes: 0, features: [] } };
const deprecations = (lines: Record<string, unknown>[]) => lines.filter((l) => l.msg === 'deprecated configuration key').map((l) => String(l.detail).split(' ')[0]);

test('forms.tiers, defaultTier, tenantTiers: GET /plan answers the tier as `plan`; no deprecation logged', async () => {
  const d = await startTestDaemon({ forms: { tiers: TIERS, defaultTier: 'starter', tenantTiers: { big: 'starter' }, deliveries: { enabled: false } } } as never);
  try {
    const r = await publicClient(d, addFormKey(d, { tenantId: 'big' }).key)('GET', '/plan');
    assert.equal(r.status, 200);
    assert.equal(r.body.plan, 'starter');
    assert.deepEqual(r.body.limits, { forms: 2, actions_per_form: 1, submissions_per_month: 50, file_bytes: 0, features: { recaptcha: false, custom_domains: false } });
    assert.deepEqual(deprecations(d.logs.lines), []);
  } finally { await d.stop(); }
});

test('the old keys still work: the same answers, and one deprecation warning per key at start', async () => {
  const d = await startTestDaemon({ forms: { plans: TIERS, defaultPlan: 'starter', tenantPlans: { big: 'starter' }, deliveries: { enabled: false } } } as never);
  try {
    const call = publicClient(d, addFormKey(d, { tenantId: 'big' }).key);
    const r = await call('GET', '/plan');
    assert.equal(r.status, 200);
    assert.equal(r.body.plan, 'starter');
    await call('POST', '/form', { name: 'one' });
    await call('POST', '/form', { name: 'two' });
    const third = await call('POST', '/form', { name: 'three' });
    assert.equal(third.status, 403);
    assert.equal(third.body.message, 'plan starter allows 2 forms');
    assert.deepEqual(deprecations(d.logs.lines), ['forms.plans', 'forms.defaultPlan', 'forms.tenantPlans']);
    const line = d.logs.lines.find((l) => l.msg === 'deprecated configuration key')!;
    assert.equal(line.level, 40, 'logged as a warning');
    assert.match(String(line.detail), /^forms\.plans is deprecated: it is read as forms\.tiers/);
  } finally { await d.stop(); }
});

test('gslbctl validate --config: old keys are valid with a warning naming each at its line; new keys print none', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbctl-tiers-'));
  try {
    const old = join(dir, 'old.yaml');
    writeFileSync(old, 'forms:\n  plans: {team: {forms: 3, actionsPerForm: 1, submissionsPerMonth: 10, fileBytes: 0}}\n  defaultPlan: team\n');
    const v = await runEntry('gslbctl', ['validate', '--config', old]);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /old\.yaml: valid/);
    assert.deepEqual(v.stderr.trim().split('\n'), [
      `warning: ${old}:2:3: forms.plans is deprecated: it is read as forms.tiers (a plan in gslbd is a change set); rename it, the old name will be removed (deprecated-key)`,
      `warning: ${old}:3:3: forms.defaultPlan is deprecated: it is read as forms.defaultTier (a plan in gslbd is a change set); rename it, the old name will be removed (deprecated-key)`,
    ]);
    const json = await runEntry('gslbctl', ['validate', '--config', old, '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    const out = JSON.parse(json.stdout) as { valid: boolean; warnings: string[] };
    assert.equal(out.valid, true);
    assert.equal(out.warnings.length, 2);
    const fresh = join(dir, 'new.yaml');
    writeFileSync(fresh, 'forms:\n  tiers: {team: {forms: 3, actionsPerForm: 1, submissionsPerMonth: 10, fileBytes: 0}}\n  defaultTier: team\n');
    const n = await runEntry('gslbctl', ['validate', '--config', fresh]);
    assert.equal(n.code, 0, n.stderr);
    assert.equal(n.stderr, '');
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
