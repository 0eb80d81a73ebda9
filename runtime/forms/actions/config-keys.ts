import { isHttpUrl } from '../../config/text-rules.js';
import type { SettingProblem } from './settings.js';

/** The action types of forms-api.md §2 "Action". */
export const ACTION_TYPES = ['email', 'email_template', 'autoreply', 'email_digest', 'webhook', 'ntfy', 'n8n', 'slack', 'discord', 'teams', 'telegram', 'sheets'] as const;
export type ActionTypeName = (typeof ACTION_TYPES)[number];

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

/** An action type: what it does, its config keys and an example config. */
export interface ActionType {
  type: ActionTypeName;
  description: string;
  config: readonly ConfigKey[];
  example: Readonly<Record<string, unknown>>;
}

const key = (k: string, type: ConfigValueType, description: string, opts: { required?: boolean; secret?: boolean } = {}): ConfigKey =>
  ({ key: k, required: opts.required ?? false, secret: opts.secret ?? false, type, description });

const to = key('to', 'emails', 'recipients: one address or a list', { required: true });
const replyTo = key('reply_to_field', 'string', 'submission field whose value becomes Reply-To');
/** The events a webhook or n8n action can subscribe to (docs/forms.md "Events"). */
export const ACTION_EVENTS = ['submission.created', 'submission.claimed', 'submission.reminder'] as const;
const events = key('events', 'events', `events to send: ${ACTION_EVENTS.join(', ')}; default submission.created`);
const webhookUrl = (what: string) => key('webhook_url', 'url', what, { required: true, secret: true });

/** The action types with their config keys, in the spec's order (GET /action-types). */
export const ACTION_TYPE_TABLE: readonly ActionType[] = [
  {
    type: 'email', description: 'e-mails each submission to the given addresses',
    config: [to, key('subject', 'string', 'subject line; default "New submission: <form name>"'), replyTo],
    example: { to: ['team@example.com'], subject: 'New contact request', reply_to_field: 'email' },
  },
  {
    type: 'email_template', description: 'e-mails each submission rendered from Liquid templates',
    config: [to, key('subject', 'string', 'Liquid template of the subject', { required: true }), key('body', 'string', 'Liquid template of the HTML body', { required: true }), replyTo],
    example: { to: ['sales@example.com'], subject: 'Lead from {{ submission.name }}', body: '<p>{{ submission.message }}</p>' },
  },
  {
    type: 'autoreply', description: 'answers the visitor by e-mail',
    config: [
      key('email_field', 'string', "submission field holding the visitor's address", { required: true }),
      key('subject', 'string', 'Liquid template of the subject', { required: true }),
      key('body', 'string', 'Liquid template of the HTML body', { required: true }),
      key('from_name', 'string', 'sender name shown to the visitor'),
    ],
    example: { email_field: 'email', subject: 'Thanks, {{ submission.name }}', body: '<p>We will get back to you soon.</p>', from_name: 'Example Inc.' },
  },
  {
    type: 'email_digest', description: 'e-mails a summary of the submissions of each period',
    config: [to, key('interval', 'interval', 'hourly, daily or weekly', { required: true }), key('subject', 'string', 'subject line')],
    example: { to: ['team@example.com'], interval: 'daily' },
  },
  {
    type: 'webhook', description: 'POSTs each submission as JSON to a URL',
    config: [
      key('url', 'url', 'http(s) URL to POST to', { required: true }),
      key('secret', 'string', 'Standard Webhooks signing secret (whsec_<base64>, or any string): the webhook-signature header; generated when not given, and answered once as signing_secret', { secret: true }),
      key('headers', 'headers', 'extra request headers (name → value)', { secret: true }),
      events,
    ],
    example: { url: 'https://hooks.example.com/forms', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
  },
  {
    type: 'ntfy', description: 'publishes each submission to an ntfy topic',
    config: [
      key('url', 'url', 'topic URL, e.g. https://ntfy.sh/my-topic', { required: true }),
      key('token', 'string', 'access token of a protected topic', { secret: true }),
      key('priority', 'integer', 'message priority 1 (min) to 5 (max)'),
    ],
    example: { url: 'https://ntfy.sh/example-forms', priority: 3 },
  },
  {
    type: 'n8n', description: 'starts an n8n workflow through its Webhook node',
    config: [webhookUrl('production URL of the Webhook node'), key('secret', 'string', 'value of the header the node authenticates with', { secret: true }), events],
    example: { webhook_url: 'https://n8n.example.com/webhook/forms' },
  },
  {
    type: 'slack', description: 'posts each submission to a Slack channel',
    config: [webhookUrl('incoming webhook URL')],
    example: { webhook_url: 'https://hooks.slack.com/services/T000/B000/XXXX' },
  },
  {
    type: 'discord', description: 'posts each submission to a Discord channel',
    config: [webhookUrl('channel webhook URL'), key('username', 'string', 'name the message is posted under')],
    example: { webhook_url: 'https://discord.com/api/webhooks/000/XXXX', username: 'Forms' },
  },
  {
    type: 'teams', description: 'posts each submission to a Microsoft Teams channel',
    config: [webhookUrl('workflow or incoming webhook URL')],
    example: { webhook_url: 'https://example.webhook.office.com/webhookb2/XXXX' },
  },
  {
    type: 'telegram', description: 'sends each submission to a Telegram chat',
    config: [key('bot_token', 'string', 'token of the bot', { required: true, secret: true }), key('chat_id', 'string', 'chat, group or channel id', { required: true })],
    example: { bot_token: '123456:ABC-DEF', chat_id: '-1001234567890' },
  },
  {
    type: 'sheets', description: 'appends each submission as a row of a Google Sheets spreadsheet',
    config: [
      key('spreadsheet_id', 'string', 'id from the spreadsheet URL', { required: true }),
      key('sheet_name', 'string', 'sheet (tab) to append to; default the first'),
      key('credentials', 'string', 'service-account key (JSON) with access to the spreadsheet', { required: true, secret: true }),
    ],
    example: { spreadsheet_id: '1AbCdEfGhIjKlMnOp', sheet_name: 'Submissions', credentials: '{"type":"service_account", …}' },
  },
];

const BY_TYPE = new Map(ACTION_TYPE_TABLE.map((t) => [t.type, t]));

/** The registration of an action type. */
export function actionType(type: ActionTypeName): ActionType {
  return BY_TYPE.get(type)!;
}

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
 * Problems of an action's complete config against its type: a required key missing or empty, an
 * unknown key (a typo would otherwise be stored and silently ignored), a value of the wrong kind.
 * Each at `config.<key>`. Pure.
 */
export function configProblems(type: ActionTypeName, config: Readonly<Record<string, unknown>>): SettingProblem[] {
  const out: SettingProblem[] = [];
  const t = actionType(type);
  const known = new Map(t.config.map((k) => [k.key, k]));
  for (const [k, v] of Object.entries(config)) {
    const spec = known.get(k);
    if (!spec) {
      out.push({ field: `config.${k}`, rule: `unknown key for type ${type} (keys: ${t.config.map((c) => c.key).join(', ')})` });
      continue;
    }
    if (v === null || v === '') {
      if (spec.required) out.push({ field: `config.${k}`, rule: `required for type ${type}` });
      continue;
    }
    const rule = valueRule(spec.type, v);
    if (rule) out.push({ field: `config.${k}`, rule });
  }
  for (const spec of t.config) {
    if (spec.required && !Object.hasOwn(config, spec.key)) out.push({ field: `config.${spec.key}`, rule: `required for type ${type}` });
  }
  return out;
}

/** Config key names that hold secrets whatever the type says (docs/forms.md "Actions"). */
const SECRET_NAME = /secret|token|password|passwd|api_?key|webhook_url|credential|authorization/i;

/** The value shown instead of a secret. */
export const MASK = '********';

/**
 * A config as listed: the value of every secret key (declared secret by the type, or named like
 * one) replaced by {@link MASK}. Pure; the stored config is unchanged.
 */
export function maskConfig(type: ActionTypeName, config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const secret = new Set(actionType(type).config.filter((k) => k.secret).map((k) => k.key));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) out[k] = secret.has(k) || SECRET_NAME.test(k) ? MASK : v;
  return out;
}
