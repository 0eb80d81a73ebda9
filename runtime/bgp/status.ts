import type { Config } from '../config/types.js';
import type { PoolVerdict } from './announce.js';
import type { PeerStatus, SpeakerConfig } from './speaker.js';

/** What the running BGP part publishes (`core.ports.bgp`) for the status route. */
export interface BgpStatusSource {
  config: SpeakerConfig;
  listenPort: number;
  peers(): PeerStatus[];
  pools(): readonly PoolVerdict[];
  announced(): readonly string[];
}

/** The body of GET /api/v1/bgp (schemas/api-bgp.v1.schema.json `BgpStatus`). */
export interface BgpStatus {
  enabled: boolean;
  localASN: number | null;
  routerID: string | null;
  listenAddr: string;
  listenPort: number | null;
  holdTime: number | null;
  keepAliveTime: number | null;
  nodePrefixes: string[];
  announced: string[];
  peers: PeerStatus[];
  pools: { poolID: string; poolId: string | null; prefixes: string[]; withdrawThreshold: number; enabledMembers: number; healthyMembers: number; announced: boolean; reason: string }[];
}

/**
 * The status body: the speaker's view when it runs; with BGP off, the configuration's values and
 * no peers or pools (nothing is announced).
 */
export function bgpStatus(b: Config['bgp'], src: BgpStatusSource | undefined): BgpStatus {
  if (!src) {
    return {
      enabled: false, localASN: b.localASN ?? null, routerID: b.routerID ?? null, listenAddr: b.listenAddr, listenPort: null,
      holdTime: null, keepAliveTime: null, nodePrefixes: [...b.nodePrefixes], announced: [], peers: [], pools: [],
    };
  }
  return {
    enabled: true, localASN: src.config.localAsn, routerID: src.config.routerId, listenAddr: src.config.listenAddr, listenPort: src.listenPort,
    holdTime: src.config.holdTime, keepAliveTime: src.config.keepAliveTime, nodePrefixes: [...b.nodePrefixes], announced: [...src.announced()],
    peers: src.peers(),
    pools: src.pools().map((v) => ({
      poolID: v.poolID, poolId: v.poolId, prefixes: [...v.prefixes], withdrawThreshold: v.withdrawThreshold,
      enabledMembers: v.enabledMembers, healthyMembers: v.healthyMembers, announced: v.announce, reason: v.reason,
    })),
  };
}
