import { clip, fieldPairs } from '../deliveries/context.js';
import { configString, defineAdapter, newSubmissionsOnly } from './adapter.js';
import { webhookUrlKey } from './config-keys.js';
import { JSON_TYPE, sendHttpCall, title, type HttpCall } from './http-call.js';

/** `teams`: an Adaptive Card (a title and a fact per field) to a workflow or incoming webhook. */
export const teamsAdapter = defineAdapter<HttpCall>({
  type: 'teams', description: 'posts each submission to a Microsoft Teams channel',
  config: [webhookUrlKey('workflow or incoming webhook URL')],
  example: { webhook_url: 'https://example.webhook.office.com/webhookb2/XXXX' },
  takesEvent: newSubmissionsOnly,
  payload: ({ config }, ctx) => ({
    url: configString(config, 'webhook_url')!, headers: JSON_TYPE,
    body: JSON.stringify({
      type: 'message',
      attachments: [{
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4',
          body: [
            { type: 'TextBlock', text: title(ctx), weight: 'Bolder', size: 'Medium', wrap: true },
            { type: 'FactSet', facts: fieldPairs(ctx.submission.data).map(([k, v]) => ({ title: k, value: clip(v, 1000) })) },
          ],
        },
      }],
    }),
  }),
  send: sendHttpCall,
});
