import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changeSettings, createSettings, DEFAULT_SETTINGS, problemsMessage, settingsProblems, type FormSettings, type SettingsInput } from '../../../runtime/forms/forms/settings.js';

const base: FormSettings = { name: 'Contact', ...structuredClone(DEFAULT_SETTINGS) as Omit<FormSettings, 'name'> };

test('a new form takes the defaults of forms-api.md §2 for every field not sent, and for nulls', () => {
  assert.deepEqual(createSettings({ name: 'Contact' }), base);
  assert.deepEqual(createSettings({
    name: ' Contact ', allowed_domains: null, recaptcha_min_score: null, submissions_enabled: null, collect_visitor_info: null,
    max_links: null, block_disposable_emails: null, max_per_email_per_hour: null, blocked_ips: null,
  }), base);
  assert.equal(base.honeypot_field, 'fc_honeypot');
  assert.equal(base.submissions_enabled, true);
  assert.equal(base.success_redirect, '', 'the built-in thank-you page');
  assert.equal(createSettings({ name: 'x', honeypot_field: '' }).honeypot_field, 'fc_honeypot');
});

const CHANGES: { name: string; given: FormSettings; patch: SettingsInput; want: Partial<FormSettings> }[] = [
  { name: 'only sent fields change', given: base, patch: { description: 'hello' }, want: { description: 'hello' } },
  { name: 'null name leaves it', given: base, patch: { name: null }, want: {} },
  { name: 'null leaves booleans and numbers', given: { ...base, submissions_enabled: false, max_links: 3 }, patch: { submissions_enabled: null, max_links: null, collect_visitor_info: null, block_disposable_emails: null, max_per_email_per_hour: null }, want: {} },
  { name: 'null leaves lists', given: { ...base, blocked_ips: ['10.0.0.1'], allowed_domains: ['example.com'] }, patch: { blocked_ips: null, allowed_domains: null }, want: {} },
  { name: 'null recaptcha_min_score switches the check off', given: { ...base, recaptcha_min_score: 0.5 }, patch: { recaptcha_min_score: null }, want: { recaptcha_min_score: null } },
  { name: 'absent recaptcha_min_score leaves it', given: { ...base, recaptcha_min_score: 0.5 }, patch: { name: 'x' }, want: { name: 'x' } },
  { name: 'empty group ungroups', given: { ...base, group: 'sales' }, patch: { group: '' }, want: { group: '' } },
  { name: 'empty success_redirect resets to the built-in page', given: { ...base, success_redirect: '/thanks' }, patch: { success_redirect: '' }, want: { success_redirect: '' } },
  { name: 'empty honeypot_field resets to fc_honeypot', given: { ...base, honeypot_field: 'trap' }, patch: { honeypot_field: '' }, want: { honeypot_field: 'fc_honeypot' } },
  { name: 'a list replaces the whole list', given: { ...base, blocked_ips: ['10.0.0.1', '10.0.0.2'] }, patch: { blocked_ips: ['192.0.2.0/24'] }, want: { blocked_ips: ['192.0.2.0/24'] } },
  { name: 'an empty list clears it', given: { ...base, allowed_domains: ['example.com'] }, patch: { allowed_domains: [] }, want: { allowed_domains: [] } },
  { name: 'lists are trimmed and lose repeats and empty entries', given: base, patch: { allowed_domains: [' example.com', 'example.com', '', 'https://a.example'] }, want: { allowed_domains: ['example.com', 'https://a.example'] } },
  { name: 'false and 0 are values, not "leave"', given: { ...base, max_links: 5 }, patch: { submissions_enabled: false, max_links: 0 }, want: { submissions_enabled: false, max_links: 0 } },
  { name: 'undefined is absent', given: base, patch: { group: undefined }, want: {} },
];

for (const c of CHANGES) {
  test(`change semantics: ${c.name}`, () => {
    const before = structuredClone(c.given);
    assert.deepEqual(changeSettings(c.given, c.patch), { ...c.given, ...c.want });
    assert.deepEqual(c.given, before, 'the current settings are not modified');
  });
}

const PROBLEMS: { name: string; given: Partial<FormSettings>; want: string }[] = [
  { name: 'redirect neither URL nor path', given: { success_redirect: 'thanks.html' }, want: 'success_redirect: must be an http or https URL or a path starting with /' },
  { name: 'redirect to another scheme', given: { success_redirect: 'javascript:alert(1)' }, want: 'success_redirect: must be an http or https URL or a path starting with /' },
  { name: 'protocol-relative redirect', given: { success_redirect: '//evil.example/x' }, want: 'success_redirect: must be an http or https URL or a path starting with /' },
  { name: 'blocked IP not an IP', given: { blocked_ips: ['10.0.0.1', '10.0.0.300'] }, want: 'blocked_ips[1]: "10.0.0.300" is neither an IP address nor a CIDR range' },
  { name: 'blocked CIDR bad prefix', given: { blocked_ips: ['10.0.0.0/33'] }, want: 'blocked_ips[0]: "10.0.0.0/33" is neither an IP address nor a CIDR range' },
  { name: 'allowed domain not a host', given: { allowed_domains: ['not a host'] }, want: 'allowed_domains[0]: "not a host" is neither a host name nor an http or https URL' },
  { name: 'allowed domain with another scheme', given: { allowed_domains: ['ftp://example.com'] }, want: 'allowed_domains[0]: "ftp://example.com" is neither a host name nor an http or https URL' },
  { name: 'allowed domain *', given: { allowed_domains: ['*'] }, want: 'allowed_domains[0]: * covers every name (the DNS root); name a site (example.com) or the subdomains of one (*.example.com)' },
  { name: 'allowed domain *.', given: { allowed_domains: ['*.'] }, want: 'allowed_domains[0]: *. covers every name (the DNS root); name a site (example.com) or the subdomains of one (*.example.com)' },
  { name: 'allowed domain *.com', given: { allowed_domains: ['example.com', '*.com'] }, want: 'allowed_domains[1]: *.com covers every name under the public suffix com; name a site (example.com) or the subdomains of one (*.example.com)' },
  { name: 'allowed domain *.co.uk', given: { allowed_domains: ['*.co.uk'] }, want: 'allowed_domains[0]: *.co.uk covers every name under the public suffix co.uk; name a site (example.com) or the subdomains of one (*.example.com)' },
  { name: 'allowed domain with an inner wildcard', given: { allowed_domains: ['www.*.example.com'] }, want: 'allowed_domains[0]: "www.*.example.com": a wildcard may only be the first label (*.example.com)' },
  { name: 'honeypot with spaces', given: { honeypot_field: 'my trap' }, want: 'honeypot_field: must be letters, digits or _ . - [ ]' },
  { name: 'empty name', given: { name: ' ' }, want: 'name: must not be empty' },
];

for (const p of PROBLEMS) {
  test(`settings refused: ${p.name}`, () => assert.equal(problemsMessage(settingsProblems({ ...base, ...p.given })), p.want));
}

test('valid settings have no problems: URLs, paths, hosts, wildcards, IPs and CIDRs of both families', () => {
  assert.deepEqual(settingsProblems({
    ...base, success_redirect: '/thanks?from=form', allowed_domains: ['example.com', '*.example.org', '*.shop.co.uk', 'localhost', 'https://shop.example:8443', '192.0.2.1'],
    blocked_ips: ['203.0.113.7', '198.51.100.0/24', '2001:db8::1', '2001:db8::/32'], recaptcha_min_score: 0, honeypot_field: 'data[trap]',
  }), []);
  assert.deepEqual(settingsProblems({ ...base, success_redirect: 'https://example.com/thanks', recaptcha_min_score: 1 }), []);
});

test('every problem is reported, not only the first', () => {
  const problems = settingsProblems({ ...base, success_redirect: 'x', blocked_ips: ['a', 'b'] });
  assert.deepEqual(problems.map((p) => p.field), ['success_redirect', 'blocked_ips[0]', 'blocked_ips[1]']);
});
