import { importPKCS8, SignJWT } from 'jose';
import type { HttpClient } from '../../net/http-client.js';
import { fieldText, type DeliveryContext } from '../deliveries/context.js';
import { defineAdapter, newSubmissionsOnly, type ActionConfig } from './adapter.js';
import { configKey } from './config-keys.js';

/** What the `sheets` action needs of a Google service-account key (the JSON the console downloads). */
interface ServiceAccount { client_email: string; private_key: string }

const SCOPE = 'https://www.googleapis.com/auth/spreadsheets';

/** The service account of the action's `credentials`, or a reason it cannot be used. */
export function parseServiceAccount(credentials: unknown): ServiceAccount | string {
  let v: unknown;
  try { v = typeof credentials === 'string' ? JSON.parse(credentials) : credentials; } catch { return 'credentials: not JSON'; }
  const o = v as Partial<ServiceAccount> | null;
  if (!o || typeof o.client_email !== 'string' || typeof o.private_key !== 'string') return 'credentials: need client_email and private_key';
  return { client_email: o.client_email, private_key: o.private_key };
}

/** The row appended for a submission: the time, the submission id, then each field's value in order. */
export function sheetRow(ctx: DeliveryContext): string[] {
  return [ctx.submission.created_at, String(ctx.submission.id ?? 'test'), ...Object.values(ctx.submission.data).map(fieldText)];
}

/**
 * Appends a row to the spreadsheet (Sheets API `values:append`), authenticated as a
 * service account: an RS256 JWT signed with its key (jose) is exchanged at the token endpoint for
 * an access token (RFC 7523). The token endpoint and the API base are operator settings
 * (`forms.services`), never taken from the tenant's credentials. Returns the append's HTTP status.
 * `signal` aborts both requests.
 */
export async function appendRow(http: HttpClient, urls: { sheetsURL: string; googleTokenURL: string }, config: ActionConfig, row: string[], signal?: AbortSignal): Promise<number> {
  const sa = parseServiceAccount(config.credentials);
  if (typeof sa === 'string') throw Object.assign(new Error(sa), { permanent: true });
  const key = await importPKCS8(sa.private_key, 'RS256').catch(() => { throw Object.assign(new Error('credentials: private_key is not a PKCS#8 RSA key'), { permanent: true }); });
  const now = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({ scope: SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).setIssuer(sa.client_email).setAudience(urls.googleTokenURL).setIssuedAt(now).setExpirationTime(now + 3600).sign(key);
  const token = await http.send({
    method: 'POST', url: urls.googleTokenURL, headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(), signal,
  });
  const access = (JSON.parse(token.body) as { access_token?: string }).access_token;
  if (!access) throw new Error('the token endpoint answered without access_token');
  const sheet = typeof config.sheet_name === 'string' && config.sheet_name !== '' ? `'${config.sheet_name.replace(/'/g, "''")}'` : 'A1';
  const url = `${urls.sheetsURL.replace(/\/+$/, '')}/v4/spreadsheets/${encodeURIComponent(String(config.spreadsheet_id))}/values/${encodeURIComponent(sheet)}:append?valueInputOption=RAW&insertDataOption=INSERT_ROWS`;
  const res = await http.send({ method: 'POST', url, headers: { authorization: `Bearer ${access}` }, json: { values: [row] }, signal });
  return res.status;
}

/** `sheets`: the submission as a row appended to `spreadsheet_id` (`sheet_name`, else the first sheet). */
export const sheetsAdapter = defineAdapter<string[]>({
  type: 'sheets', description: 'appends each submission as a row of a Google Sheets spreadsheet',
  config: [
    configKey('spreadsheet_id', 'string', 'id from the spreadsheet URL', { required: true }),
    configKey('sheet_name', 'string', 'sheet (tab) to append to; default the first'),
    configKey('credentials', 'string', 'service-account key (JSON) with access to the spreadsheet', { required: true, secret: true }),
  ],
  example: { spreadsheet_id: '1AbCdEfGhIjKlMnOp', sheet_name: 'Submissions', credentials: '{"type":"service_account", …}' },
  takesEvent: newSubmissionsOnly,
  payload: (_run, ctx) => sheetRow(ctx),
  send: async (row, { config }, env, signal) => {
    const status = await appendRow(env.http, env.services(), config, row, signal);
    return { status, detail: `row appended (HTTP ${status})` };
  },
});
