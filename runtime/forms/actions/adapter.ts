import type { Config } from '../../config/types.js';
import type { MailPort } from '../../ports/mail.js';
import type { HttpClient } from '../../net/http-client.js';
import type { DeliveryContext, DeliveryEvent } from '../deliveries/context.js';
import type { TemplateRenderer } from '../deliveries/templates.js';
import type { ConfigKey } from './config-keys.js';

/** The action types of forms-api.md §2 "Action", in the spec's order. */
export const ACTION_TYPES = ['email', 'email_template', 'autoreply', 'email_digest', 'webhook', 'ntfy', 'n8n', 'slack', 'discord', 'teams', 'telegram', 'sheets'] as const;
export type ActionTypeName = (typeof ACTION_TYPES)[number];

/** An action's stored config (keys by type, checked against the adapter's `config` keys). */
export type ActionConfig = Readonly<Record<string, unknown>>;

/** The action being performed: its workspace and its config. */
export interface ActionRun { tenantId: string; config: ActionConfig }

/** What adapters send with: the guarded HTTP client, a workspace's mailer, the service URLs, the template renderer. */
export interface AdapterEnv {
  http: HttpClient;
  render: TemplateRenderer;
  mailer: (tenantId: string) => MailPort;
  services: () => Config['forms']['services'];
}

/** A payload that is not sent, with the reason (an autoreply without an address): a permanent failure. */
export interface Skip { skip: string }

/** What a send that went through reports: the HTTP status (null for mail) and a line for the delivery log. */
export interface Sent { status: number | null; detail: string }

/**
 * One action type (docs/forms.md "Action adapters"): its name, its settings (config keys, with
 * the example GET /action-types shows; validation and masking follow from the keys), which
 * delivery events it takes, how it builds the payload of a delivery and how it sends it, and how
 * the test endpoint (POST /action/{id}/test) runs it. `payload` is pure but for template renders;
 * `send` performs the request or the mail and throws on failure (an `HttpRequestError` says
 * whether a retry may help; an error with `permanent: true` says it cannot).
 */
export interface ActionAdapter<P = unknown> {
  type: ActionTypeName;
  description: string;
  config: readonly ConfigKey[];
  example: ActionConfig;
  /** true when deliveries are signed with `config.secret` (webhook-signature), so one is generated when missing */
  signsDeliveries: boolean;
  /** whether a delivery of `event` is queued for an action of this type (docs/forms.md "Events") */
  takesEvent(config: ActionConfig, event: DeliveryEvent): boolean;
  payload(run: ActionRun, ctx: DeliveryContext, env: AdapterEnv): P | Skip | Promise<P | Skip>;
  send(payload: P, run: ActionRun, env: AdapterEnv, signal?: AbortSignal): Promise<Sent>;
  /** the test endpoint's run on sample data (`ctx.event` is `action.test`); nothing is stored */
  test(run: ActionRun, ctx: DeliveryContext, env: AdapterEnv, signal?: AbortSignal): Promise<Sent | Skip>;
}

/** An adapter as written in its file: `test` defaults to a delivery of the sample, and `signsDeliveries` to false. */
export type AdapterSpec<P> = Omit<ActionAdapter<P>, 'test' | 'signsDeliveries'> & Partial<Pick<ActionAdapter<P>, 'test' | 'signsDeliveries'>>;

/** Builds the payload of a delivery and sends it; a skipped payload is returned, not sent. */
export async function deliverWith<P>(a: Pick<ActionAdapter<P>, 'payload' | 'send'>, run: ActionRun, ctx: DeliveryContext, env: AdapterEnv, signal?: AbortSignal): Promise<Sent | Skip> {
  const p = await a.payload(run, ctx, env);
  if (p !== null && typeof p === 'object' && 'skip' in p) return p as Skip;
  return a.send(p as P, run, env, signal);
}

/** An adapter with its defaults filled in (see {@link AdapterSpec}). */
export function defineAdapter<P>(spec: AdapterSpec<P>): ActionAdapter<P> {
  return {
    signsDeliveries: false,
    test: (run, ctx, env, signal) => deliverWith(spec, run, ctx, env, signal),
    ...spec,
  };
}

/** `takesEvent` of types that send new submissions only. */
export const newSubmissionsOnly = (_config: ActionConfig, event: DeliveryEvent): boolean => event === 'submission.created';

/** `takesEvent` of types that subscribe with `config.events` (default `submission.created`). */
export const subscribedEvents = (config: ActionConfig, event: DeliveryEvent): boolean =>
  (Array.isArray(config.events) ? (config.events as string[]) : ['submission.created']).includes(event);

/** A string config value, or undefined when absent or empty. */
export const configString = (c: ActionConfig, k: string): string | undefined => (typeof c[k] === 'string' && c[k] !== '' ? (c[k] as string) : undefined);
