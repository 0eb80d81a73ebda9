import { standardWebhookHeaders } from '../deliveries/signing.js';
import { configString, defineAdapter, subscribedEvents } from './adapter.js';
import { configKey, eventsKey, webhookUrlKey } from './config-keys.js';
import { JSON_TYPE, sendHttpCall, webhookBody, type HttpCall } from './http-call.js';

/** `n8n`: the webhook envelope to a Webhook node, authenticated by `x-webhook-secret` (unsigned). */
export const n8nAdapter = defineAdapter<HttpCall>({
  type: 'n8n', description: 'starts an n8n workflow through its Webhook node',
  config: [webhookUrlKey('production URL of the Webhook node'), configKey('secret', 'string', 'value of the header the node authenticates with', { secret: true }), eventsKey],
  example: { webhook_url: 'https://n8n.example.com/webhook/forms' },
  takesEvent: subscribedEvents,
  payload: ({ config }, ctx) => {
    const body = webhookBody(ctx);
    const secret = configString(config, 'secret');
    return { url: configString(config, 'webhook_url')!, headers: { ...JSON_TYPE, ...standardWebhookHeaders(ctx.deliveryId, ctx.timestamp, body, undefined), ...(secret ? { 'x-webhook-secret': secret } : {}) }, body };
  },
  send: sendHttpCall,
});
