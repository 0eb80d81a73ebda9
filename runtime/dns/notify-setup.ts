import type { Config } from '../config/types.js';
import { parseDuration } from '../config/duration.js';
import type { Logger } from '../log/logger.js';
import { toFqdn } from '../tenancy/names.js';
import type { DnsMetrics } from './metrics.js';
import { Notifier, type NotifyTarget } from './notifier.js';
import { parseNotifyAddress } from '../net/notify-address.js';
import type { TsigKeyring } from './tsig.js';

/**
 * The notifier of `dns.axfr.notify` (targets checked in config/semantic.ts), or undefined when
 * zone transfers are off or there is no target: with no transfer to start, a NOTIFY would only
 * make a secondary fail.
 */
export function createNotifier(cfg: Config, keys: TsigKeyring, metrics: DnsMetrics, log: Logger): Notifier | undefined {
  const axfr = cfg.dns.axfr;
  if (!axfr.enabled || axfr.notify.length === 0) return undefined;
  const targets: NotifyTarget[] = [];
  for (const t of axfr.notify) {
    const a = parseNotifyAddress(t.address);
    if (a) targets.push({ ...a, address: t.address, key: t.key === undefined ? undefined : keys.get(toFqdn(t.key)) });
  }
  return new Notifier({ targets, timeoutMs: parseDuration(axfr.notifyTimeout) ?? 1000, listenAddr: cfg.dns.listenAddr, metrics, log });
}
