import { ApiClient } from './client.js';
import { COMMANDS, output } from './commands.js';
import { inputError } from './exit-codes.js';
import { table, when } from './format.js';

type Flags = Record<string, string | boolean>;
const str = (f: Flags, k: string) => (typeof f[k] === 'string' ? (f[k] as string) : undefined);

interface FormKey { id: string; tenantId: string; name: string; scopes: string[]; formId: string | null; origin: string; createdAt: number; lastUsedAt: number | null }

const USAGE = 'apikey create NAME --scopes forms:read[,forms:write,submissions:read] [--form ID] | apikey list | apikey delete ID  [--tenant T] [--server URL]';

/** `?tenant=T` when given (supra-tenant callers pick the workspace; docs/forms.md). */
const tenantQuery = (flags: Flags) => (str(flags, 'tenant') ? `?tenant=${encodeURIComponent(str(flags, 'tenant')!)}` : '');

/**
 * `gslbctl apikey`: a workspace's form-service API keys over /api/v1/apikeys (docs/forms.md).
 * `create` prints the secret once; only its hash is kept, so it cannot be shown again.
 */
COMMANDS.apikey = {
  usage: USAGE,
  summary: 'make, list and delete form-service API keys (the secret is printed once, at creation)',
  values: ['server', 'scopes', 'form', 'tenant'],
  booleans: [],
  async run(flags, args) {
    const [sub, arg] = args;
    const client = new ApiClient(str(flags, 'server'));
    const q = tenantQuery(flags);
    switch (sub) {
      case 'create': {
        const scopes = str(flags, 'scopes');
        if (!arg || !scopes) throw inputError('usage: apikey create NAME --scopes forms:read[,forms:write,submissions:read] [--form ID]');
        const form = str(flags, 'form');
        const k = await client.call<FormKey & { key: string }>('POST', `/apikeys${q}`, {
          name: arg, scopes: scopes.split(',').map((s) => s.trim()).filter(Boolean), ...(form ? { formId: form } : {}),
        });
        output(flags, k, () => `created API key "${k.name}" (${k.id}) of workspace ${k.tenantId}: ${k.scopes.join(', ')}${k.formId ? `, form ${k.formId} only` : ''}\n${k.key}\nThis secret is shown once and cannot be read again: store it now.`);
        return 0;
      }
      case 'list': {
        const keys = await client.call<FormKey[]>('GET', `/apikeys${q}`);
        output(flags, keys, () => (keys.length === 0 ? 'no API keys' : table([
          ['ID', 'NAME', 'SCOPES', 'FORM', 'ORIGIN', 'CREATED', 'LAST USED'],
          ...keys.map((k) => [k.id, k.name, k.scopes.join(','), k.formId ?? '*', k.origin, when(k.createdAt * 1000), when(k.lastUsedAt === null ? null : k.lastUsedAt * 1000)]),
        ])));
        return 0;
      }
      case 'delete': {
        if (!arg) throw inputError('usage: apikey delete ID');
        await client.call('DELETE', `/apikeys/${encodeURIComponent(arg)}${q}`);
        output(flags, { deleted: arg }, () => `deleted API key ${arg}`);
        return 0;
      }
      default:
        throw inputError(`usage: ${USAGE}`);
    }
  },
};
