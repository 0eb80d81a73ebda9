import { clip } from '../deliveries/context.js';
import { configString, defineAdapter, newSubmissionsOnly } from './adapter.js';
import { configKey } from './config-keys.js';
import { asciiHeader, lines, sendHttpCall, title, type HttpCall } from './http-call.js';

/** `ntfy`: a plain-text publish to the topic URL, the title and priority as headers, a bearer token for protected topics. */
export const ntfyAdapter = defineAdapter<HttpCall>({
  type: 'ntfy', description: 'publishes each submission to an ntfy topic',
  config: [
    configKey('url', 'url', 'topic URL, e.g. https://ntfy.sh/my-topic', { required: true }),
    configKey('token', 'string', 'access token of a protected topic', { secret: true }),
    configKey('priority', 'integer', 'message priority 1 (min) to 5 (max)'),
  ],
  example: { url: 'https://ntfy.sh/example-forms', priority: 3 },
  takesEvent: newSubmissionsOnly,
  payload: ({ config }, ctx) => {
    const token = configString(config, 'token');
    const priority = typeof config.priority === 'number' ? String(config.priority) : undefined;
    return {
      url: configString(config, 'url')!,
      headers: { 'content-type': 'text/plain; charset=utf-8', title: asciiHeader(title(ctx)), tags: 'incoming_envelope', ...(priority ? { priority } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: clip(lines(ctx, 500), 4000),
    };
  },
  send: sendHttpCall,
});
