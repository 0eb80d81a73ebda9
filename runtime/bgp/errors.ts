/**
 * BGP error codes and subcodes (RFC 4271 §4.5 and §6, RFC 5492, RFC 6608 FSM errors, RFC 4486
 * Cease subcodes) and the error a decoder throws: the NOTIFICATION the session must send.
 */
export const ErrCode = {
  MessageHeader: 1,
  Open: 2,
  Update: 3,
  HoldTimerExpired: 4,
  Fsm: 5,
  Cease: 6,
} as const;

/** Message Header Error subcodes (RFC 4271 §6.1). */
export const HeaderSub = { NotSynchronized: 1, BadLength: 2, BadType: 3 } as const;

/** OPEN Message Error subcodes (RFC 4271 §6.2, RFC 5492 §5). */
export const OpenSub = {
  Unspecific: 0, UnsupportedVersion: 1, BadPeerAs: 2, BadBgpId: 3, UnsupportedOptionalParameter: 4,
  UnacceptableHoldTime: 6, UnsupportedCapability: 7,
} as const;

/** UPDATE Message Error subcodes (RFC 4271 §6.3). */
export const UpdateSub = {
  MalformedAttributeList: 1, UnrecognizedWellKnown: 2, MissingWellKnown: 3, AttributeFlags: 4, AttributeLength: 5,
  InvalidOrigin: 6, InvalidNextHop: 8, OptionalAttribute: 9, InvalidNetworkField: 10, MalformedAsPath: 11,
} as const;

/** FSM Error subcodes (RFC 6608 §3): an unexpected message in OpenSent, OpenConfirm, Established. */
export const FsmSub = { Unspecified: 0, InOpenSent: 1, InOpenConfirm: 2, InEstablished: 3 } as const;

/** Cease subcodes (RFC 4486 §4). */
export const CeaseSub = {
  AdministrativeShutdown: 2, PeerDeconfigured: 3, AdministrativeReset: 4, ConnectionRejected: 5, ConnectionCollision: 7,
} as const;

const CODE_NAMES: Record<number, string> = {
  1: 'Message Header Error', 2: 'OPEN Message Error', 3: 'UPDATE Message Error', 4: 'Hold Timer Expired',
  5: 'Finite State Machine Error', 6: 'Cease',
};

const SUB_NAMES: Record<number, Record<number, string>> = {
  1: { 1: 'Connection Not Synchronized', 2: 'Bad Message Length', 3: 'Bad Message Type' },
  2: {
    1: 'Unsupported Version Number', 2: 'Bad Peer AS', 3: 'Bad BGP Identifier', 4: 'Unsupported Optional Parameter',
    6: 'Unacceptable Hold Time', 7: 'Unsupported Capability',
  },
  3: {
    1: 'Malformed Attribute List', 2: 'Unrecognized Well-known Attribute', 3: 'Missing Well-known Attribute',
    4: 'Attribute Flags Error', 5: 'Attribute Length Error', 6: 'Invalid ORIGIN Attribute', 8: 'Invalid NEXT_HOP Attribute',
    9: 'Optional Attribute Error', 10: 'Invalid Network Field', 11: 'Malformed AS_PATH',
  },
  5: { 1: 'Unexpected Message in OpenSent', 2: 'Unexpected Message in OpenConfirm', 3: 'Unexpected Message in Established' },
  6: {
    1: 'Maximum Number of Prefixes Reached', 2: 'Administrative Shutdown', 3: 'Peer De-configured', 4: 'Administrative Reset',
    5: 'Connection Rejected', 6: 'Other Configuration Change', 7: 'Connection Collision Resolution', 8: 'Out of Resources',
  },
};

/** `Hold Timer Expired`, `OPEN Message Error / Unacceptable Hold Time (2/6)`: for logs and the status route. */
export function describeNotification(code: number, subcode: number): string {
  const name = CODE_NAMES[code] ?? `error code ${code}`;
  const sub = SUB_NAMES[code]?.[subcode];
  return sub ? `${name} / ${sub} (${code}/${subcode})` : `${name} (${code}/${subcode})`;
}

/**
 * A received message broke a rule: the session sends NOTIFICATION `code`/`subcode` with `data`
 * (as RFC 4271 §6 says for that error) and closes the connection.
 */
export class BgpProtocolError extends Error {
  override readonly name = 'BgpProtocolError';
  constructor(readonly code: number, readonly subcode: number, readonly data: Buffer = Buffer.alloc(0), readonly detail = '') {
    super(detail ? `${describeNotification(code, subcode)}: ${detail}` : describeNotification(code, subcode));
  }
}
