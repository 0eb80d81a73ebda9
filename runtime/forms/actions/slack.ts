import { clip, fieldPairs } from '../deliveries/context.js';
import { configString, defineAdapter, newSubmissionsOnly } from './adapter.js';
import { webhookUrlKey } from './config-keys.js';
import { JSON_TYPE, sendHttpCall, title, type HttpCall } from './http-call.js';

/** `slack`: an incoming-webhook message, a header block and a section per field (Block Kit limits: 50 blocks, 3000 characters). */
export const slackAdapter = defineAdapter<HttpCall>({
  type: 'slack', description: 'posts each submission to a Slack channel',
  config: [webhookUrlKey('incoming webhook URL')],
  example: { webhook_url: 'https://hooks.slack.com/services/T000/B000/XXXX' },
  takesEvent: newSubmissionsOnly,
  payload: ({ config }, ctx) => ({
    url: configString(config, 'webhook_url')!, headers: JSON_TYPE,
    body: JSON.stringify({
      text: title(ctx),
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: clip(title(ctx), 150) } },
        ...fieldPairs(ctx.submission.data).slice(0, 45).map(([k, v]) => ({ type: 'section', text: { type: 'mrkdwn', text: clip(`*${k}*\n${v}`, 3000) } })),
      ],
    }),
  }),
  send: sendHttpCall,
});
