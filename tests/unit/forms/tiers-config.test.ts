import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigInvalidError, configWarnings, parseConfigText } from '../../../runtime/config/load.js';
import { formatProblem } from '../../../runtime/config/problem.js';
import { tierOf } from '../../../runtime/forms/forms/tiers.js';

// forms.plans / defaultPlan / tenantPlans were renamed forms.tiers / defaultTier / tenantTiers
// (docs/forms.md "Tiers"): the new keys are read without a word, the old ones still work, each
// with a deprecation warning at its line.

const problemsOf = (yaml: string): string[] => {
  try {
    parseConfigText(yaml);
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigInvalidError);
    return err.located.map(formatProblem);
  }
};

test('the new keys: tiers, default tier and tenant tiers read, no warning', () => {
  const c = parseConfigText('forms:\n  tiers: {team: {forms: 3, actionsPerForm: 1, submissionsPerMonth: 10, fileBytes: 0}, big: {forms: 9, actionsPerForm: 9, submissionsPerMonth: 9, fileBytes: 0}}\n  defaultTier: team\n  tenantTiers: {acme: big}\n');
  assert.deepEqual(Object.keys(c.forms.tiers), ['team', 'big']);
  assert.deepEqual([tierOf(c.forms, 'acme').name, tierOf(c.forms, 'other').name], ['big', 'team']);
  assert.deepEqual(configWarnings(c), []);
  assert.deepEqual(configWarnings(parseConfigText('')), []);
});

test('the old keys: read as the new ones, each a deprecation warning at its line', () => {
  const c = parseConfigText('forms:\n  plans: {team: {forms: 3, actionsPerForm: 1, submissionsPerMonth: 10, fileBytes: 0}, big: {forms: 9, actionsPerForm: 9, submissionsPerMonth: 9, fileBytes: 0}}\n  defaultPlan: team\n  tenantPlans: {acme: big}\n', 'gslbd.yaml');
  assert.deepEqual(Object.keys(c.forms.tiers), ['team', 'big']);
  assert.deepEqual([tierOf(c.forms, 'acme').name, tierOf(c.forms, 'other').name], ['big', 'team']);
  assert.equal((c.forms as Record<string, unknown>).plans, undefined);
  assert.deepEqual(configWarnings(c).map(formatProblem), [
    'gslbd.yaml:2:3: forms.plans is deprecated: it is read as forms.tiers (a plan in gslbd is a change set); rename it, the old name will be removed (deprecated-key)',
    'gslbd.yaml:3:3: forms.defaultPlan is deprecated: it is read as forms.defaultTier (a plan in gslbd is a change set); rename it, the old name will be removed (deprecated-key)',
    'gslbd.yaml:4:3: forms.tenantPlans is deprecated: it is read as forms.tenantTiers (a plan in gslbd is a change set); rename it, the old name will be removed (deprecated-key)',
  ]);
});

test('a problem under an old key names the key as the file wrote it, at its line', () => {
  assert.deepEqual(problemsOf('forms:\n  defaultPlan: gold\n'), ['config.yaml:2:16: forms.defaultPlan = "gold": must be one of the tiers in forms.tiers (free, pro, business) (semantic)']);
  const bad = problemsOf('forms:\n  plans:\n    free: {forms: -1, actionsPerForm: 1, submissionsPerMonth: 1, fileBytes: 0}\n');
  assert.equal(bad.length, 1);
  assert.match(bad[0]!, /^config\.yaml:3:\d+: forms\.plans\.free\.forms = -1: must be >= 0/);
});

test('an old key next to its new name is refused: which one was meant cannot be guessed', () => {
  assert.deepEqual(problemsOf('forms:\n  defaultTier: pro\n  defaultPlan: free\n'), [
    'config.yaml:3:3: forms.defaultPlan is the deprecated name of forms.defaultTier, and both are given: keep only forms.defaultTier (deprecated-key)',
  ]);
});
