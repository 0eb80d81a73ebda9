import { test } from 'node:test';
import assert from 'node:assert/strict';
import { finishDocument } from '../../../runtime/api/openapi-document.js';
import { FORMAT_HINTS } from '../../../runtime/config/format-patterns.js';

test('finishDocument: drops empty required lists anywhere, keeps others and the parameters\' required flag', () => {
  const doc = {
    paths: { '/x': { get: { parameters: [{ in: 'query', name: 'q', required: false, schema: { type: 'object', required: [] } }], responses: {} } } },
    components: { schemas: { A: { type: 'object', required: [], properties: { required: { type: 'boolean' }, b: { type: 'object', required: ['c'] } } } } },
  };
  const out = finishDocument(doc);
  assert.equal('required' in out.components.schemas.A, false);
  assert.deepEqual(out.components.schemas.A.properties.b.required, ['c']);
  assert.deepEqual(out.components.schemas.A.properties.required, { type: 'boolean' });
  assert.equal(out.paths['/x'].get.parameters[0]!.required, false);
  assert.equal('required' in out.paths['/x'].get.parameters[0]!.schema, false);
  assert.deepEqual(doc.components.schemas.A.required, [], 'the input is not changed');
});

test('finishDocument: a project format gets its pattern and minLength; a standard or unknown one, an own pattern, a larger minLength and examples are kept', () => {
  const doc = {
    components: {
      schemas: {
        A: {
          type: 'object',
          properties: {
            ip: { type: 'string', format: 'ip' },
            name: { type: 'string', format: 'printable', maxLength: 200 },
            url: { type: 'string', format: 'http-url', minLength: 20 },
            own: { type: 'string', format: 'domain', pattern: '^a$' },
            email: { type: 'string', format: 'email' },
            other: { type: 'string', format: 'whatever' },
          },
          example: { format: 'ip', required: [] },
        },
      },
    },
  };
  const p = finishDocument(doc).components.schemas.A;
  assert.deepEqual(p.properties.ip, { type: 'string', format: 'ip', pattern: FORMAT_HINTS.ip!.pattern, minLength: 2 });
  assert.equal((p.properties.name as { pattern?: string }).pattern, FORMAT_HINTS.printable!.pattern);
  assert.equal(p.properties.url.minLength, 20);
  assert.equal(p.properties.own.pattern, '^a$');
  assert.deepEqual(p.properties.email, { type: 'string', format: 'email' });
  assert.deepEqual(p.properties.other, { type: 'string', format: 'whatever' });
  assert.deepEqual(p.example, { format: 'ip', required: [] });
});

test('finishDocument: every tag an operation uses is declared', () => {
  const doc = { tags: [{ name: 'pools', description: 'p' }], paths: { '/a': { get: { tags: ['pools'] }, post: { tags: ['zeta', 'auth'] } } } };
  assert.deepEqual(finishDocument(doc).tags, [{ name: 'pools', description: 'p' }, { name: 'auth' }, { name: 'zeta' }]);
});
