import { randomBytes } from 'node:crypto';
import { adapterOf } from '../actions/index.js';
import type { ActionFields } from './actions.js';

/** Random bytes of a generated signing secret (Standard Webhooks asks for 24 to 64). */
export const SIGNING_SECRET_BYTES = 32;

/** A new Standard Webhooks signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(SIGNING_SECRET_BYTES).toString('base64')}`;
}

/** Whether an action signs its deliveries with `config.secret` (webhook-signature): its adapter says so (the `webhook` type). */
export const signsDeliveries = (a: Pick<ActionFields, 'type'>): boolean => adapterOf(a.type).signsDeliveries;

/**
 * A `webhook` action written through the API always has a signing secret (docs/forms.md
 * "Actions"): when the fields to store have none (a new action sent without one, a change that
 * removed it, or an action stored unsigned before secrets were generated), one is generated.
 * Returns the fields to store and the generated secret, which the answer shows once; other types
 * and actions with a secret pass unchanged. `generate` is injected for tests.
 */
export function withSigningSecret(fields: ActionFields, generate: () => string = newSigningSecret): { fields: ActionFields; generated: string | undefined } {
  if (!signsDeliveries(fields) || (typeof fields.config.secret === 'string' && fields.config.secret !== '')) return { fields, generated: undefined };
  const secret = generate();
  return { fields: { ...fields, config: { ...fields.config, secret } }, generated: secret };
}

/** The warnings an action is shown with: a `webhook` action without a secret sends unsigned deliveries (declared so in git, or stored before secrets were generated). */
export function actionWarnings(a: Pick<ActionFields, 'type' | 'config'>): string[] {
  if (!signsDeliveries(a) || (typeof a.config.secret === 'string' && a.config.secret !== '')) return [];
  return ['unsigned: this webhook has no secret, so its deliveries carry no webhook-signature; set config.secret, or change the action (PATCH /action/{id}) to have one generated'];
}
