import type { GenericRow } from '../../../core/model/types.js';

/** Row kind of a workspace's custom domain (core/model/kinds.ts). */
export const DOMAIN_KIND = 'formdomain';

/** A custom domain: pending until its TXT record is found, then active. */
export interface FormDomainRow extends GenericRow {
  kind: 'formdomain';
  /** lower case, no trailing dot */
  hostname: string;
  /** the value the TXT record must hold: `gslbd-verify=<token>` */
  token: string;
  status: 'pending' | 'active';
  verifiedAt: number | null;
  createdAt: number;
}

/** The name of the TXT record that proves control of a hostname. */
export const challengeName = (hostname: string) => `_gslbd-challenge.${hostname}`;

/** The value that record must hold. */
export const challengeValue = (token: string) => `gslbd-verify=${token}`;
