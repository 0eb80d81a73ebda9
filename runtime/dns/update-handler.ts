import type { Core } from '../app.js';
import type { Logger } from '../log/logger.js';
import { toFqdn } from '../tenancy/names.js';
import { applyDnsUpdate, UPDATE_RCODE } from '../txt/dns-update.js';
import type { AnswerDeps } from './answer.js';
import { ReplayGuard } from './tsig-replay.js';
import { parseUpdate } from './update-message.js';
import type { ZoneIndex } from './zone-index.js';

/**
 * RFC 2136 UPDATE of TXT records (docs/dns.md "Dynamic updates"): the grant of the key that
 * signed the message decides the tenant; a signature seen before, or older than the key's last
 * accepted one, is a replay and refused (RFC 8945 §5.2.3); every message is logged with its outcome.
 */
export function createUpdateHandler(core: Core, index: () => ZoneIndex, log: Logger): NonNullable<AnswerDeps['update']> {
  const grants = new Map(core.config.dns.update.grants.map((g) => [toFqdn(g.key), g]));
  const replay = new ReplayGuard();
  return (req, signed) => {
    const msg = parseUpdate(req);
    if (!msg.ok) return msg.rcode;
    const key = signed?.key;
    if (signed && !replay.accept(signed.key, signed.timeSigned, signed.mac, Math.floor(Date.now() / 1000))) {
      log.warn({ key, zone: msg.zone }, 'dns update refused: a replayed or older signature');
      return UPDATE_RCODE.REFUSED;
    }
    try {
      const out = applyDnsUpdate(core, key === undefined ? undefined : grants.get(toFqdn(key)), (z) => index().zones.has(z), msg);
      log.info({ key, zone: msg.zone, rcode: out.rcode, ...(out.reason ? { reason: out.reason } : {}), ...(out.names ? { names: out.names } : {}) }, 'dns update');
      return out.rcode;
    } catch (err) {
      log.error({ err, key, zone: msg.zone }, 'dns update failed');
      return UPDATE_RCODE.SERVFAIL;
    }
  };
}

