import { clip, fieldPairs } from '../deliveries/context.js';
import { configString, defineAdapter, newSubmissionsOnly } from './adapter.js';
import { configKey, webhookUrlKey } from './config-keys.js';
import { JSON_TYPE, sendHttpCall, title, type HttpCall } from './http-call.js';

/** `discord`: a channel webhook message with an embed of the fields (Discord's limits: 25 fields, no mentions). */
export const discordAdapter = defineAdapter<HttpCall>({
  type: 'discord', description: 'posts each submission to a Discord channel',
  config: [webhookUrlKey('channel webhook URL'), configKey('username', 'string', 'name the message is posted under')],
  example: { webhook_url: 'https://discord.com/api/webhooks/000/XXXX', username: 'Forms' },
  takesEvent: newSubmissionsOnly,
  payload: ({ config }, ctx) => ({
    url: configString(config, 'webhook_url')!, headers: JSON_TYPE,
    body: JSON.stringify({
      ...(configString(config, 'username') ? { username: configString(config, 'username') } : {}),
      content: clip(title(ctx), 2000),
      allowed_mentions: { parse: [] },
      embeds: [{
        title: clip(ctx.form.name, 256),
        fields: fieldPairs(ctx.submission.data).slice(0, 25).map(([k, v]) => ({ name: clip(k, 256), value: clip(v || '—', 1024), inline: false })),
        timestamp: ctx.submission.created_at,
      }],
    }),
  }),
  send: sendHttpCall,
});
