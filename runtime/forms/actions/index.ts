import type { ActionAdapter, ActionConfig, ActionTypeName } from './adapter.js';
import { autoreplyAdapter } from './autoreply.js';
import { keyProblems, maskKeys, type ConfigKey } from './config-keys.js';
import { discordAdapter } from './discord.js';
import { emailDigestAdapter } from './email-digest.js';
import { emailTemplateAdapter } from './email-template.js';
import { emailAdapter } from './email.js';
import { n8nAdapter } from './n8n.js';
import { ntfyAdapter } from './ntfy.js';
import { sheetsAdapter } from './sheets.js';
import { slackAdapter } from './slack.js';
import { teamsAdapter } from './teams.js';
import { telegramAdapter } from './telegram.js';
import { webhookAdapter } from './webhook.js';
import type { SettingProblem } from '../forms/settings.js';

export { ACTION_TYPES, type ActionAdapter, type ActionTypeName } from './adapter.js';
export { ACTION_EVENTS, MASK, type ConfigKey, type ConfigValueType } from './config-keys.js';

/**
 * Every action adapter by type (docs/forms.md "Action adapters"), one file each. The only place
 * that knows which types exist: validation, masking, the action-types list, which events queue a
 * delivery, the delivery worker and the test endpoint all look the adapter up here.
 */
const ADAPTERS: { readonly [T in ActionTypeName]: ActionAdapter } = {
  email: emailAdapter,
  email_template: emailTemplateAdapter,
  autoreply: autoreplyAdapter,
  email_digest: emailDigestAdapter,
  webhook: webhookAdapter,
  ntfy: ntfyAdapter,
  n8n: n8nAdapter,
  slack: slackAdapter,
  discord: discordAdapter,
  teams: teamsAdapter,
  telegram: telegramAdapter,
  sheets: sheetsAdapter,
};

/** The adapter of an action type. */
export function adapterOf(type: ActionTypeName): ActionAdapter {
  return ADAPTERS[type];
}

/** An action type as GET /action-types lists it: what it does, its config keys and an example config. */
export interface ActionType {
  type: ActionTypeName;
  description: string;
  config: readonly ConfigKey[];
  example: ActionConfig;
}

/** The action types with their config keys, in the spec's order (GET /action-types). */
export const ACTION_TYPE_TABLE: readonly ActionType[] = Object.values(ADAPTERS).map(({ type, description, config, example }) => ({ type, description, config, example }));

/** Problems of an action's complete config against its type's keys, each at `config.<key>` (config-keys.ts `keyProblems`). Pure. */
export function configProblems(type: ActionTypeName, config: ActionConfig): SettingProblem[] {
  return keyProblems(type, adapterOf(type).config, config);
}

/** A config as listed, secrets masked (config-keys.ts `maskKeys`). Pure. */
export function maskConfig(type: ActionTypeName, config: ActionConfig): Record<string, unknown> {
  return maskKeys(adapterOf(type).config, config);
}
