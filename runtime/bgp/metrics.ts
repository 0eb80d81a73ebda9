import { Counter, Gauge, type Registry } from 'prom-client';
import type { SessionState } from './session.js';

/** Session states as numbers for `gslbd_bgp_session_state` (the order of RFC 4271 §8.2.2). */
export const STATE_NUMBER: Record<SessionState, number> = { Idle: 0, Connect: 1, Active: 2, OpenSent: 3, OpenConfirm: 4, Established: 5 };

/** The BGP speaker's Prometheus metrics (prefix `gslbd_bgp_`). */
export interface BgpMetrics {
  updatesSent: Counter<'peer'>;
  notificationsSent: Counter<'peer' | 'code'>;
  notificationsReceived: Counter<'peer' | 'code'>;
  establishedTransitions: Counter<'peer'>;
}

/** What the gauges read at scrape time: per peer, its state and how many prefixes it holds from us. */
export interface BgpGaugeSource { peers(): { peer: string; state: SessionState; announced: number }[] }

/** Registers the metrics on the core registry; the gauges read `source` when scraped. */
export function createBgpMetrics(registry: Registry, source: BgpGaugeSource): BgpMetrics {
  const registers = [registry];
  new Gauge({
    name: 'gslbd_bgp_session_state', help: 'BGP session state per peer: 0 Idle, 1 Connect, 2 Active, 3 OpenSent, 4 OpenConfirm, 5 Established',
    labelNames: ['peer'], registers,
    collect() { this.reset(); for (const p of source.peers()) this.set({ peer: p.peer }, STATE_NUMBER[p.state]); },
  });
  new Gauge({
    name: 'gslbd_bgp_prefixes_announced', help: 'prefixes currently announced to each peer',
    labelNames: ['peer'], registers,
    collect() { this.reset(); for (const p of source.peers()) this.set({ peer: p.peer }, p.announced); },
  });
  return {
    updatesSent: new Counter({ name: 'gslbd_bgp_updates_sent_total', help: 'UPDATE messages sent per peer', labelNames: ['peer'], registers }),
    notificationsSent: new Counter({ name: 'gslbd_bgp_notifications_sent_total', help: 'NOTIFICATION messages sent per peer and error code', labelNames: ['peer', 'code'], registers }),
    notificationsReceived: new Counter({ name: 'gslbd_bgp_notifications_received_total', help: 'NOTIFICATION messages received per peer and error code', labelNames: ['peer', 'code'], registers }),
    establishedTransitions: new Counter({ name: 'gslbd_bgp_established_total', help: 'times a session with the peer reached Established', labelNames: ['peer'], registers }),
  };
}
