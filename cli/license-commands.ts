import { issueLicense, type LicenseState } from '../runtime/license/license.js';
import { ApiClient } from './client.js';
import { COMMANDS, output } from './commands.js';
import { inputError } from './exit-codes.js';
import { when } from './format.js';

type Flags = Record<string, string | boolean>;
const str = (f: Flags, k: string) => (typeof f[k] === 'string' ? (f[k] as string) : undefined);

const USAGE = 'license issue --tier free|pro|enterprise --licensee NAME --expires YYYY-MM-DD | license show [--server URL]';

/**
 * The expiry of `--expires`: a date means through the end of that day, UTC (`2027-12-31` →
 * 2028-01-01T00:00:00Z, the first second it is no longer valid); a full ISO time is taken as it is.
 * Returns Unix seconds. Errors: exit 2 for anything else.
 */
export function parseExpiry(text: string): number {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (day) {
    const [y, m, d] = day.slice(1).map(Number) as [number, number, number];
    const at = Date.UTC(y, m - 1, d + 1);
    if (new Date(Date.UTC(y, m - 1, d)).getUTCDate() !== d) throw inputError(`--expires ${text}: not a date`);
    return at / 1000;
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text) && !Number.isNaN(Date.parse(text))) return Math.floor(Date.parse(text) / 1000);
  throw inputError(`--expires ${text}: expected a date (YYYY-MM-DD, valid through that day UTC) or an ISO time with a zone`);
}

/**
 * `gslbctl license issue`: signs a license token with GSLB_LICENSE_SECRET (never a flag: command
 * lines show up in `ps`) and prints it alone on stdout, for GSLB_LICENSE_KEY or license.licenseKey.
 * `gslbctl license show`: the daemon's license (GET /api/v1/license). docs/license.md.
 */
COMMANDS.license = {
  usage: USAGE,
  summary: 'sign a license token with GSLB_LICENSE_SECRET (issue), or show the daemon\'s license (show)',
  values: ['server', 'tier', 'licensee', 'expires'],
  booleans: [],
  async run(flags, args) {
    const [sub] = args;
    if (args.length !== 1) throw inputError(`usage: ${USAGE}`);
    switch (sub) {
      case 'issue': {
        const tier = str(flags, 'tier');
        const licensee = str(flags, 'licensee');
        const expires = str(flags, 'expires');
        if (!tier || !licensee || !expires) throw inputError('usage: license issue --tier free|pro|enterprise --licensee NAME --expires YYYY-MM-DD');
        if (!process.env.GSLB_LICENSE_SECRET) throw inputError('GSLB_LICENSE_SECRET is not set: export the signing secret the daemons use (license.secret), e.g. from openssl rand -hex 32');
        const expiresAt = parseExpiry(expires);
        let token: string;
        try {
          token = await issueLicense({ tier, licensee, expiresAt }, process.env.GSLB_LICENSE_SECRET);
        } catch (err) {
          throw inputError((err as Error).message);
        }
        output(flags, { token, tier, licensee, expiresAt }, () => token);
        return 0;
      }
      case 'show': {
        const l = await new ApiClient(str(flags, 'server')).call<LicenseState>('GET', '/license');
        output(flags, l, () => [
          `Status:    ${l.status}${l.reason ? ` (${l.reason})` : ''}`,
          `Tier:      ${l.tier}${l.licensedTier && l.licensedTier !== l.tier ? ` (licensed: ${l.licensedTier})` : ''}`,
          `Licensee:  ${l.licensee ?? '-'}`,
          `Expires:   ${when(l.expiresAt === null ? null : l.expiresAt * 1000)}`,
        ].join('\n'));
        return 0;
      }
      default:
        throw inputError(`usage: ${USAGE}`);
    }
  },
};
