import { standardWebhookHeaders } from '../deliveries/signing.js';
import { configString, defineAdapter, subscribedEvents } from './adapter.js';
import { configKey, eventsKey } from './config-keys.js';
import { JSON_TYPE, sendHttpCall, webhookBody, type HttpCall } from './http-call.js';

/**
 * `webhook`: POSTs the Standard Webhooks envelope to `url`, signed with `secret`
 * (webhook-signature; one is generated when the action is written without it), with the
 * operator's extra `headers` under the ones it sets itself.
 */
export const webhookAdapter = defineAdapter<HttpCall>({
  type: 'webhook', description: 'POSTs each submission as JSON to a URL',
  config: [
    configKey('url', 'url', 'http(s) URL to POST to', { required: true }),
    configKey('secret', 'string', 'Standard Webhooks signing secret (whsec_<base64>, or any string): the webhook-signature header; generated when not given, and answered once as signing_secret', { secret: true }),
    configKey('headers', 'headers', 'extra request headers (name → value)', { secret: true }),
    eventsKey,
  ],
  example: { url: 'https://hooks.example.com/forms', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
  signsDeliveries: true,
  takesEvent: subscribedEvents,
  payload: ({ config }, ctx) => {
    const body = webhookBody(ctx);
    const extra = (config.headers ?? {}) as Record<string, string>;
    return { url: configString(config, 'url')!, headers: { ...extra, ...JSON_TYPE, ...standardWebhookHeaders(ctx.deliveryId, ctx.timestamp, body, configString(config, 'secret')) }, body };
  },
  send: sendHttpCall,
});
