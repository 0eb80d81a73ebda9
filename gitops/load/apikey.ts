import { registerManifestKind } from './kinds.js';
import { formKeys } from './form.js';

/**
 * `kind: ApiKey` → one `formkey` row (docs/forms.md): the key's name is `metadata.name`, the hash
 * and scopes come from `spec`, and `spec.form` names a Form manifest and becomes a reference the
 * planner resolves to the form's id. Only the hash is in the repo; the secret never is. A git key
 * has no creation time (`createdAt` 0) and is deleted in git, not over REST.
 */
registerManifestKind({
  kind: 'ApiKey',
  schema: 'apikey.v1.schema.json',
  map(m) {
    const form = typeof m.spec.form === 'string' ? m.spec.form : null;
    return [{
      kind: 'formkey', key: m.name, source: m.file,
      fields: { name: m.name, keyHash: String(m.spec.hash), scopes: [...new Set(m.spec.scopes as string[])], createdAt: 0 },
      refs: [{ field: 'formId', kind: 'form', key: form === null ? null : formKeys.form(form) }],
    }];
  },
  check(m, index, _env, report) {
    const form = typeof m.spec.form === 'string' ? m.spec.form : undefined;
    if (form !== undefined && !index.get('Form')?.has(form)) report(['spec', 'form'], `no Form named "${form}" in the repo`);
    for (const other of index.get('ApiKey')?.values() ?? []) {
      if (other !== m && other.spec.hash === m.spec.hash) { report(['spec', 'hash'], `the same key as ApiKey "${other.name}" (${other.file})`); break; }
    }
  },
});
