import { escapeHtml } from '../forms/snippets.js';
import { clip, fieldPairs } from '../deliveries/context.js';
import { configString, defineAdapter, newSubmissionsOnly } from './adapter.js';
import { configKey } from './config-keys.js';
import { JSON_TYPE, sendHttpCall, title, type HttpCall } from './http-call.js';

/** `telegram`: a Bot API `sendMessage` in HTML to `chat_id`, at the operator's base URL (`forms.services.telegramURL`). */
export const telegramAdapter = defineAdapter<HttpCall>({
  type: 'telegram', description: 'sends each submission to a Telegram chat',
  config: [configKey('bot_token', 'string', 'token of the bot', { required: true, secret: true }), configKey('chat_id', 'string', 'chat, group or channel id', { required: true })],
  example: { bot_token: '123456:ABC-DEF', chat_id: '-1001234567890' },
  takesEvent: newSubmissionsOnly,
  payload: ({ config }, ctx, env) => {
    const text = `<b>${escapeHtml(title(ctx))}</b>\n${fieldPairs(ctx.submission.data).map(([k, v]) => `<b>${escapeHtml(k)}</b>: ${escapeHtml(v)}`).join('\n')}`;
    return {
      url: `${env.services().telegramURL.replace(/\/+$/, '')}/bot${configString(config, 'bot_token')}/sendMessage`, headers: JSON_TYPE,
      body: JSON.stringify({ chat_id: configString(config, 'chat_id'), text: clip(text, 4096), parse_mode: 'HTML', disable_web_page_preview: true }),
    };
  },
  send: sendHttpCall,
});
