import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSchema } from '../../../runtime/paths.js';
import { ACTION_TYPES } from '../../../runtime/forms/actions/index.js';
import { CONDITION_OPS } from '../../../runtime/forms/forms/conditions.js';
import { PUBLIC_ERROR_NAMES } from '../../../runtime/forms/public/errors.js';
import { SETTING_NAMES, createSettings } from '../../../runtime/forms/forms/settings.js';
import { FORM_SORTS } from '../../../runtime/forms/forms/service.js';
import { actionView, formView } from '../../../runtime/forms/forms/views.js';
import type { FormActionRow, FormRow } from '../../../runtime/forms/forms/rows.js';

type Def = { enum?: unknown[]; required?: string[]; properties?: Record<string, { enum?: unknown[] }> };
const defs = loadSchema<{ $defs: Record<string, Def> }>('api-forms.v1.schema.json').$defs;

const form: FormRow = { kind: 'form', id: 'f1', origin: 'api', revision: 'api:1', tenantId: 't1', ...createSettings({ name: 'a' }), schema: { fields: [], enforce: false }, createdAt: 1, updatedAt: 1 };
const action: FormActionRow = {
  kind: 'formaction', id: 'a1', origin: 'api', revision: 'api:1', tenantId: 't1', formId: 'f1', type: 'slack', name: null, enabled: true,
  config: {}, conditions: [], conditions_mode: 'all', createdAt: 1, updatedAt: 1,
};

// The API schema repeats lists the code owns; a change to one must reach the other.
const rows: { name: string; given: () => unknown; want: unknown }[] = [
  { name: 'ActionType lists every action type', given: () => defs.ActionType!.enum, want: [...ACTION_TYPES] },
  { name: 'Condition.op lists every operator', given: () => defs.Condition!.properties!.op!.enum, want: [...CONDITION_OPS] },
  { name: 'ErrorName lists every error name', given: () => defs.ErrorName!.enum, want: Object.values(PUBLIC_ERROR_NAMES) },
  { name: 'FormCreate declares exactly the settings', given: () => Object.keys(defs.FormCreate!.properties!), want: [...SETTING_NAMES] },
  { name: 'FormChange declares form_id and the settings', given: () => Object.keys(defs.FormChange!.properties!), want: ['form_id', ...SETTING_NAMES] },
  { name: 'FormListQuery.sort lists the sort keys', given: () => defs.FormListQuery!.properties!.sort!.enum, want: [...FORM_SORTS] },
  { name: 'Form requires exactly the view', given: () => defs.Form!.required, want: Object.keys(formView(form)) },
  { name: 'Action requires exactly the view', given: () => defs.Action!.required, want: Object.keys(actionView(action)) },
];

for (const r of rows) test(`forms API schema: ${r.name}`, () => assert.deepEqual(r.given(), r.want));
