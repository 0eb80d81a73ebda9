import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, schemaProblems } from '../../../runtime/forms/forms/schema-fields.js';
import { buildSnippets, escapeHtml } from '../../../runtime/forms/forms/snippets.js';
import { sortForms } from '../../../runtime/forms/forms/service.js';
import { createSettings, problemsMessage } from '../../../runtime/forms/forms/settings.js';
import type { FormRow } from '../../../runtime/forms/forms/rows.js';

const form = (over: Partial<FormRow> = {}): FormRow => ({
  kind: 'form', id: 'f1', origin: 'api', revision: 'api:1', tenantId: 't1', ...createSettings({ name: 'Contact' }),
  schema: { fields: [], enforce: false }, createdAt: 1, updatedAt: 1, ...over,
});

test('schema: entries keep the spec keys only, enforce defaults to false, an empty list clears everything', () => {
  assert.deepEqual(buildSchema([{ name: ' email ', type: 'email', required: true, options: null }], undefined), { fields: [{ name: 'email', type: 'email', required: true }], enforce: false });
  assert.deepEqual(buildSchema([{ name: 'plan', type: 'select', required: false, options: ['a', 'b'], label: 'Plan', maxLength: 10 }], true),
    { fields: [{ name: 'plan', type: 'select', required: false, maxLength: 10, label: 'Plan', options: ['a', 'b'] }], enforce: true });
  assert.deepEqual(buildSchema([], true), { fields: [], enforce: false });
});

test('schema: names must be unique and not empty', () => {
  assert.equal(problemsMessage(schemaProblems([{ name: 'a', type: 'text', required: true }, { name: 'a ', type: 'text', required: false }, { name: ' ', type: 'text', required: false }])),
    'fields[1].name: "a" is already the name of fields[0]; fields[2].name: must not be empty');
});

test('snippets: the endpoint under the base URL, the honeypot hidden, schema fields as controls, everything escaped', () => {
  const s = buildSnippets(form({ honeypot_field: 'trap', schema: { fields: [{ name: 'a"b', type: 'email', required: true, label: '<Mail>' }, { name: 'plan', type: 'select', required: false, options: ['x&y'] }], enforce: false } }), 'https://forms.example.com/');
  assert.equal(s.endpoint, 'https://forms.example.com/f/f1');
  assert.match(s.html, /^<form action="https:\/\/forms\.example\.com\/f\/f1" method="POST">/);
  assert.match(s.html, /<input type="text" name="trap" style="position:absolute;left:-9999px" tabindex="-1" autocomplete="off" aria-hidden="true">/);
  assert.match(s.html, /<label>&lt;Mail&gt; <input type="email" name="a&quot;b" required><\/label>/);
  assert.match(s.html, /<select name="plan"><option>x&amp;y<\/option><\/select>/);
  assert.match(s.fetch, /fetch\("https:\/\/forms\.example\.com\/f\/f1"/);
  const plain = buildSnippets(form(), 'http://127.0.0.1:8080');
  assert.match(plain.html, /name="email"/);
  assert.match(plain.html, /name="message"/);
  assert.match(plain.html, /name="fc_honeypot"/);
  const upload = buildSnippets(form({ schema: { fields: [{ name: 'cv', type: 'file', required: true }], enforce: false } }), 'http://127.0.0.1:8080');
  assert.match(upload.html, /^<form action="[^"]+" method="POST" enctype="multipart\/form-data">/, 'a file field makes the form multipart');
  assert.match(upload.html, /<input type="file" name="cv" required>/);
  assert.equal(escapeHtml(`<a href='x'>&"`), '&lt;a href=&#39;x&#39;&gt;&amp;&quot;');
});

test('form list order: by the key and direction, ties by id; git forms (no times) sort as oldest', () => {
  const rows = [form({ id: 'b', name: 'beta', createdAt: 2, updatedAt: 9 }), form({ id: 'a', name: 'Alpha', createdAt: 2, updatedAt: 5 }), form({ id: 'c', name: 'gamma', createdAt: null, updatedAt: null })];
  assert.deepEqual(sortForms(rows, 'created_at', 'desc').map((r) => r.id), ['b', 'a', 'c']);
  assert.deepEqual(sortForms(rows, 'created_at', 'asc').map((r) => r.id), ['c', 'a', 'b']);
  assert.deepEqual(sortForms(rows, 'updated_at', 'desc').map((r) => r.id), ['b', 'a', 'c']);
  assert.deepEqual(sortForms(rows, 'name', 'asc').map((r) => r.id), ['a', 'b', 'c'], 'case-insensitive');
});
