import { isHttpUrl } from '../../config/text-rules.js';
import type { SettingProblem } from '../forms/settings.js';

/** What a config value must be. */
export type ConfigValueType = 'string' | 'url' | 'emails' | 'integer' | 'headers' | 'interval' | 'events';

/** One config key of an action type. */
export interface ConfigKey {
  key: string;
  required: boolean;
  /** masked when actions are listed (docs/forms.md "Actions") */
  secret: boolean;
  type: ConfigValueType;
  description: string;
}

/** A config key of an action type (not required, not secret unless told). */
export const configKey = (k: string, type: ConfigValueType, description: string, opts: { required?: boolean; secret?: boolean } = {}): ConfigKey =>
  ({ key: k, required: opts.required ?? false, secret: opts.secret ?? false, type, description });

/** The events a webhook or n8n action can subscribe to (docs/forms.md "Events"). */
export const ACTION_EVENTS = ['submission.created', 'submission.claimed', 'submission.reminder'] as const;

/** `config.events` of the types that subscribe to events (webhook, n8n). */
export const eventsKey = configKey('events', 'events', `events to send: ${ACTION_EVENTS.join(', ')}; default submission.created`);

/** `config.webhook_url` of the chat types and n8n: required, and a secret (it is the credential). */
export const webhookUrlKey = (what: string): ConfigKey => configKey('webhook_url', 'url', what, { required: true, secret: true });

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const INTERVALS = ['hourly', 'daily', 'weekly'];

/** The rule a value of `type` breaks, or undefined. */
function valueRule(type: ConfigValueType, v: unknown): string | undefined {
  switch (type) {
    case 'string': return typeof v === 'string' ? undefined : 'must be a string';
    case 'url': return typeof v === 'string' && isHttpUrl(v) ? undefined : 'must be an http or https URL';
    case 'integer': return Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 5 ? undefined : 'must be an integer from 1 to 5';
    case 'interval': return typeof v === 'string' && INTERVALS.includes(v) ? undefined : `must be one of ${INTERVALS.join(', ')}`;
    case 'emails': {
      const list = typeof v === 'string' ? [v] : Array.isArray(v) ? v : undefined;
      if (!list || list.length === 0 || list.length > 50) return 'must be an e-mail address or a list of 1 to 50';
      return list.every((e) => typeof e === 'string' && EMAIL.test(e)) ? undefined : 'must hold e-mail addresses only';
    }
    case 'events': {
      if (!Array.isArray(v) || v.length === 0) return `must be a non-empty list of ${ACTION_EVENTS.join(', ')}`;
      return v.every((e) => (ACTION_EVENTS as readonly unknown[]).includes(e)) && new Set(v).size === v.length ? undefined : `must hold ${ACTION_EVENTS.join(', ')} only, each once`;
    }
    case 'headers': {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return 'must be an object of header names and values';
      return Object.entries(v).every(([n, x]) => /^[A-Za-z0-9-]{1,100}$/.test(n) && typeof x === 'string') ? undefined : 'must map header names to string values';
    }
  }
}

/**
 * Problems of an action's complete config against the keys of its type (`type` names it in the
 * messages): a required key missing or empty, an unknown key (a typo would otherwise be stored
 * and silently ignored), a value of the wrong kind. Each at `config.<key>`. Pure.
 */
export function keyProblems(type: string, keys: readonly ConfigKey[], config: Readonly<Record<string, unknown>>): SettingProblem[] {
  const out: SettingProblem[] = [];
  const known = new Map(keys.map((k) => [k.key, k]));
  for (const [k, v] of Object.entries(config)) {
    const spec = known.get(k);
    if (!spec) {
      out.push({ field: `config.${k}`, rule: `unknown key for type ${type} (keys: ${keys.map((c) => c.key).join(', ')})` });
      continue;
    }
    if (v === null || v === '') {
      if (spec.required) out.push({ field: `config.${k}`, rule: `required for type ${type}` });
      continue;
    }
    const rule = valueRule(spec.type, v);
    if (rule) out.push({ field: `config.${k}`, rule });
  }
  for (const spec of keys) {
    if (spec.required && !Object.hasOwn(config, spec.key)) out.push({ field: `config.${spec.key}`, rule: `required for type ${type}` });
  }
  return out;
}

/** Config key names that hold secrets whatever the type says (docs/forms.md "Actions"). */
const SECRET_NAME = /secret|token|password|passwd|api_?key|webhook_url|credential|authorization/i;

/** The value shown instead of a secret. */
export const MASK = '********';

/**
 * A config as listed: the value of every secret key (declared secret in `keys`, or named like
 * one) replaced by {@link MASK}. Pure; the stored config is unchanged.
 */
export function maskKeys(keys: readonly ConfigKey[], config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const secret = new Set(keys.filter((k) => k.secret).map((k) => k.key));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) out[k] = secret.has(k) || SECRET_NAME.test(k) ? MASK : v;
  return out;
}
