import type { Config } from '../config/types.js';
import { parseDuration } from '../config/duration.js';
import type { SpeakerConfig } from './speaker.js';


/**
 * The speaker's settings from a validated `bgp` block (runtime/config/semantic.ts has checked that
 * enabled means localASN and routerID are set and the times are whole seconds).
 */
export function speakerConfigOf(b: Config['bgp']): SpeakerConfig {
  const seconds = (d: string, fallback: number) => Math.floor((parseDuration(d) ?? fallback * 1000) / 1000);
  return {
    localAsn: b.localASN ?? 0,
    routerId: b.routerID ?? '0.0.0.0',
    holdTime: seconds(b.holdTime, 90),
    keepAliveTime: seconds(b.keepAliveTime, 30),
    listenAddr: b.listenAddr,
    listenPort: b.listenPort,
    peers: b.peers.map((p) => ({ remoteAsn: p.remoteASN, remoteAddr: p.remoteAddr, remotePort: p.remotePort })),
  };
}
