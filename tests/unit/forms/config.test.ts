import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigText } from '../../../runtime/config/load.js';
import { ValidationError } from '../../../runtime/errors.js';
import { assertActionsAllowed, assertFeature, assertFormsAllowed, tierOf, tierView } from '../../../runtime/forms/forms/tiers.js';

const problemsOf = (yaml: string): string[] => {
  try {
    parseConfigText(yaml);
    return [];
  } catch (err) {
    assert.ok(err instanceof ValidationError);
    return err.problems;
  }
};

test('forms.* defaults: free, pro and business plans, free by default, 600 requests a minute per key', () => {
  const c = parseConfigText('');
  assert.deepEqual(Object.keys(c.forms.tiers), ['free', 'pro', 'business']);
  assert.deepEqual(c.forms.tiers.free, { forms: 5, actionsPerForm: 2, submissionsPerMonth: 100, fileBytes: 0, features: [] });
  assert.deepEqual(c.forms.tiers.pro!.features, ['recaptcha']);
  assert.deepEqual(c.forms.tiers.business!.features, ['recaptcha', 'customDomains']);
  assert.equal(c.forms.defaultTier, 'free');
  assert.deepEqual(c.forms.tenantTiers, {});
  assert.equal(c.forms.rateLimits.perKeyPerMinute, 600);
  assert.equal(c.forms.rateLimits.perIpPerMinute, 60);
  assert.deepEqual(c.forms.intake, { maxBodyBytes: 1048576, maxFileBytes: 10485760, maxFiles: 10, maxFields: 200 });
  assert.deepEqual(c.forms.files, {});
  assert.deepEqual(c.forms.recaptcha, { verifyURL: 'https://www.google.com/recaptcha/api/siteverify', timeoutMs: 5000 });
  assert.deepEqual(c.forms.spam, {});
  assert.deepEqual(c.forms.deliveries, {
    enabled: true, pollIntervalMs: 1000, concurrency: 8, retryDelaysMs: [30000, 120000, 600000, 3600000, 21600000], pauseAfterFailures: 10,
    timeoutMs: 10000, maxResponseBytes: 65536, allowPrivateTargets: [], digestCheckMs: 60000,
  });
  assert.deepEqual(c.forms.services, { telegramURL: 'https://api.telegram.org', sheetsURL: 'https://sheets.googleapis.com', googleTokenURL: 'https://oauth2.googleapis.com/token' });
});

test('forms.tiers given in the file replace the built-in ones', () => {
  const c = parseConfigText('forms: {tiers: {team: {forms: 3, actionsPerForm: 1, submissionsPerMonth: 10, fileBytes: 0}}, defaultTier: team}');
  assert.deepEqual(Object.keys(c.forms.tiers), ['team']);
  assert.equal(tierOf(c.forms, 'acme').name, 'team');
});

const BAD: { name: string; yaml: string; want: RegExp }[] = [
  { name: 'default plan not in plans', yaml: 'forms: {defaultTier: gold}', want: /forms\.defaultTier = "gold": must be one of the tiers in forms\.tiers \(free, pro, business\)/ },
  { name: 'tenant plan not in plans', yaml: 'forms: {tenantTiers: {acme: gold}}', want: /forms\.tenantTiers\.acme = "gold": must be one of the tiers in forms\.tiers/ },
  { name: 'negative limit', yaml: 'forms: {tiers: {free: {forms: -1, actionsPerForm: 1, submissionsPerMonth: 1, fileBytes: 0}}}', want: /forms\.tiers\.free\.forms = -1: must be >= 0/ },
  { name: 'unknown feature', yaml: 'forms: {tiers: {free: {forms: 1, actionsPerForm: 1, submissionsPerMonth: 1, fileBytes: 0, features: [sso]}}}', want: /forms\.tiers\.free\.features\.0 = "sso"/ },
  { name: 'rate limit zero', yaml: 'forms: {rateLimits: {perKeyPerMinute: 0}}', want: /forms\.rateLimits\.perKeyPerMinute = 0: must be >= 1/ },
  { name: 'per-address limit zero', yaml: 'forms: {rateLimits: {perIpPerMinute: 0}}', want: /forms\.rateLimits\.perIpPerMinute = 0: must be >= 1/ },
  { name: 'more than 100 files', yaml: 'forms: {intake: {maxFiles: 101}}', want: /forms\.intake\.maxFiles = 101: must be <= 100/ },
  { name: 'a tiny body limit', yaml: 'forms: {intake: {maxBodyBytes: 10}}', want: /forms\.intake\.maxBodyBytes = 10: must be >= 1024/ },
  { name: 'unknown intake key', yaml: 'forms: {intake: {maxFilez: 1}}', want: /forms\.intake.*maxFilez/ },
  { name: 'siteverify not http', yaml: 'forms: {recaptcha: {verifyURL: "ftp://x.example"}}', want: /forms\.recaptcha\.verifyURL/ },
  { name: 'an allowed target that is not a range', yaml: 'forms: {deliveries: {allowPrivateTargets: [intranet]}}', want: /forms\.deliveries\.allowPrivateTargets\.0/ },
  { name: 'plan missing a limit', yaml: 'forms: {tiers: {free: {forms: 1}}}', want: /forms\.tiers\.free/ },
];

for (const row of BAD) {
  test(`forms config refused: ${row.name}`, () => {
    const problems = problemsOf(row.yaml);
    assert.ok(problems.some((p) => row.want.test(p)), `got:\n${problems.join('\n')}`);
  });
}

test('a workspace is on its tenant plan, else the default plan; limits and features answer 403 with the plan named', () => {
  const c = parseConfigText('forms: {tenantTiers: {acme: pro}}');
  const pro = tierOf(c.forms, 'acme');
  const free = tierOf(c.forms, 'other');
  assert.deepEqual([pro.name, free.name], ['pro', 'free']);
  assert.doesNotThrow(() => assertFormsAllowed(free, 4));
  assert.throws(() => assertFormsAllowed(free, 5), { status: 403, message: 'plan free allows 5 forms' });
  assert.throws(() => assertFormsAllowed(free, 3, 3), { status: 403 });
  assert.throws(() => assertActionsAllowed(free, 2), { status: 403, message: 'plan free allows 2 actions per form' });
  assert.throws(() => assertFeature(free, 'recaptcha', 'recaptcha_min_score'), { status: 403, message: 'plan free does not include recaptcha (needed by recaptcha_min_score)' });
  assert.doesNotThrow(() => assertFeature(pro, 'recaptcha', 'recaptcha_min_score'));
  assert.deepEqual(tierView(pro, { forms: 2, actions: 3, submissionsThisMonth: 0 }), {
    plan: 'pro',
    limits: { forms: 50, actions_per_form: 10, submissions_per_month: 10000, file_bytes: 1073741824, features: { recaptcha: true, custom_domains: false } },
    usage: { forms: 2, actions: 3, submissions_this_month: 0 },
  });
});
