import type { GenericRow } from '../../core/model/types.js';
import type { AlertEvent } from './events.js';
import type { SecretRef } from './secret-ref.js';

/** The row kind of alert targets stored as resources (git `AlertTarget`, REST `/alert-targets`). */
export const ALERT_TARGET_KIND = 'alerttarget';

/** The sender of an alert-target row; the file's `alerts.*` keys have the same shapes. */
export type AlertTargetType = 'webhook' | 'oncall_a' | 'oncall_b' | 'email';
export const ALERT_TARGET_TYPES: readonly AlertTargetType[] = ['webhook', 'oncall_a', 'oncall_b', 'email'];

/** What a target subscribes to (`events[]`). */
export type AlertEventName = 'health' | 'apply' | 'rejection' | 'rollback';

/** The alert event type each name stands for (runtime/alerts/events.ts). */
export const EVENT_TYPE_OF: Readonly<Record<AlertEventName, AlertEvent['type']>> = {
  health: 'health_transition', apply: 'gitops_applied', rejection: 'gitops_rejected', rollback: 'gitops_rollback',
};

/** `events` absent or empty: the alarms; `apply` is information and only sent when asked for. */
export const DEFAULT_EVENTS: readonly AlertEventName[] = ['health', 'rejection', 'rollback'];

export interface WebhookSettings { url: string; secret?: SecretRef }
export interface OncallASettings { routingKey: SecretRef; severity: 'critical' | 'error' | 'warning' | 'info'; baseUrl?: string }
export interface OncallBSettings { apiKey: SecretRef; priority: 'P1' | 'P2' | 'P3' | 'P4' | 'P5'; region: 'us' | 'eu'; baseUrl?: string }
export interface EmailSettings { to: string[] }

/** The content of an alert target: its type's settings under the key of the same name, and filters. */
export interface AlertTargetFields {
  name: string;
  type: AlertTargetType;
  webhook?: WebhookSettings;
  oncall_a?: OncallASettings;
  oncall_b?: OncallBSettings;
  email?: EmailSettings;
  /** pool names or ids; empty: every pool of the tenant */
  pools: string[];
  /** service names or ids; empty: no narrowing */
  services: string[];
  events: AlertEventName[];
  enabled: boolean;
}

export interface AlertTargetRow extends GenericRow, AlertTargetFields { kind: typeof ALERT_TARGET_KIND }

/** A body or manifest spec as the schema lets it through (defaults not yet applied). */
export interface AlertTargetInput {
  name: string;
  type: AlertTargetType;
  webhook?: { url: string; secret?: SecretRef };
  oncall_a?: { routingKey: SecretRef; severity?: OncallASettings['severity']; baseUrl?: string };
  oncall_b?: { apiKey: SecretRef; priority?: OncallBSettings['priority']; region?: OncallBSettings['region']; baseUrl?: string };
  email?: { to: string[] };
  pools?: string[];
  services?: string[];
  events?: AlertEventName[];
  enabled?: boolean;
}

const copyRef = (r: SecretRef): SecretRef => ('env' in r ? { env: r.env } : { file: r.file });

/**
 * The stored fields of a schema-valid input: only the settings of its own type (with the file's
 * defaults: severity critical, priority P1, region us), filters as given, `events` defaulted to
 * DEFAULT_EVENTS and kept in a fixed order, `enabled` true unless false. Pure.
 */
export function alertTargetFields(b: AlertTargetInput): AlertTargetFields {
  const out: AlertTargetFields = {
    name: b.name, type: b.type, pools: [...(b.pools ?? [])], services: [...(b.services ?? [])],
    events: b.events && b.events.length > 0 ? (Object.keys(EVENT_TYPE_OF) as AlertEventName[]).filter((e) => b.events!.includes(e)) : [...DEFAULT_EVENTS],
    enabled: b.enabled !== false,
  };
  const w = b.webhook, a = b.oncall_a, o = b.oncall_b;
  if (b.type === 'webhook' && w) out.webhook = { url: w.url, ...(w.secret ? { secret: copyRef(w.secret) } : {}) };
  if (b.type === 'oncall_a' && a) out.oncall_a = { routingKey: copyRef(a.routingKey), severity: a.severity ?? 'critical', ...(a.baseUrl ? { baseUrl: a.baseUrl } : {}) };
  if (b.type === 'oncall_b' && o) out.oncall_b = { apiKey: copyRef(o.apiKey), priority: o.priority ?? 'P1', region: o.region ?? 'us', ...(o.baseUrl ? { baseUrl: o.baseUrl } : {}) };
  if (b.type === 'email' && b.email) out.email = { to: [...b.email.to] };
  return out;
}

/** A rule the schema cannot express, at a field path of the body or spec. */
export interface AlertTargetProblem { path: string[]; rule: string }

const SECRET_FIELDS: readonly [AlertTargetType, string][] = [['webhook', 'secret'], ['oncall_a', 'routingKey'], ['oncall_b', 'apiKey']];

/**
 * The settings key must match `type`, no other type's key may be given, and a secret given as a
 * plain string is named as such (the schema only says "must be object"). Pure.
 */
export function alertTargetProblems(b: Partial<Record<AlertTargetType, unknown>> & { type?: unknown }): AlertTargetProblem[] {
  const out: AlertTargetProblem[] = [];
  for (const [t, field] of SECRET_FIELDS) {
    const v = (b[t] as Record<string, unknown> | undefined)?.[field];
    if (typeof v === 'string') out.push({ path: [t, field], rule: 'secrets are never inline: give {env: NAME} or {file: PATH}' });
  }
  if (typeof b.type !== 'string' || !ALERT_TARGET_TYPES.includes(b.type as AlertTargetType)) return out;
  if (b[b.type as AlertTargetType] === undefined) out.push({ path: [b.type], rule: `type ${b.type} needs its settings under "${b.type}"` });
  for (const t of ALERT_TARGET_TYPES) if (t !== b.type && b[t] !== undefined) out.push({ path: [t], rule: `settings of type ${t} given, but type is ${b.type}` });
  return out;
}

/** The secret references of a target, each with its field path. */
export function secretRefsOf(f: AlertTargetFields): { path: string[]; ref: SecretRef }[] {
  const out: { path: string[]; ref: SecretRef }[] = [];
  if (f.webhook?.secret) out.push({ path: ['webhook', 'secret'], ref: f.webhook.secret });
  if (f.oncall_a) out.push({ path: ['oncall_a', 'routingKey'], ref: f.oncall_a.routingKey });
  if (f.oncall_b) out.push({ path: ['oncall_b', 'apiKey'], ref: f.oncall_b.apiKey });
  return out;
}
