import { forbidden } from '../../errors.js';
import type { FormCaller, FormScope } from '../keys/types.js';

/** How a route reaches forms, for the single-form restriction of a key (docs/forms.md). */
export type FormAccess =
  /** the form named by the path id (and the body's `form_id`) */
  | 'path'
  /** creates a form (POST /form, duplicate): never with a single-form key */
  | 'new'
  /** the workspace as a whole (its domains): never changed with a single-form key */
  | 'workspace'
  /** the form of the action named by the path id: the handler checks it with {@link requireActionAccess} once it has the action */
  | 'action';

/** Throws 403 when the key lacks the route's scope (forms-api.md §5). */
export function requireScope(caller: FormCaller, scope: FormScope): void {
  if (!caller.scopes.includes(scope)) throw forbidden(`API key "${caller.keyName}" lacks the scope ${scope}`);
}

/**
 * Throws 403 when a single-form key reaches beyond its form: a route that creates forms, or a path
 * or body form id that is not its form. Both ids are checked (the path id wins for the operation,
 * but a body naming another form is refused rather than ignored). Keys for every form pass.
 */
export function requireFormAccess(caller: FormCaller, access: FormAccess | undefined, ids: readonly (string | undefined)[]): void {
  if (caller.formId === null || access === undefined || access === 'action') return;
  if (access === 'new') throw forbidden(`API key "${caller.keyName}" is restricted to form ${caller.formId} and cannot create forms`);
  if (access === 'workspace') throw forbidden(`API key "${caller.keyName}" is restricted to form ${caller.formId} and cannot change the workspace's domains`);
  const other = ids.find((id) => id !== undefined && id !== caller.formId);
  if (other !== undefined) throw forbidden(`API key "${caller.keyName}" is restricted to form ${caller.formId}`);
}

/** Throws 403 when a single-form key reaches an action of another form. */
export function requireActionAccess(caller: FormCaller, formId: string): void {
  if (caller.formId !== null && caller.formId !== formId) throw forbidden(`API key "${caller.keyName}" is restricted to form ${caller.formId}`);
}
