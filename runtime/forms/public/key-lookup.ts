import { createHash, timingSafeEqual } from 'node:crypto';
import type { SnapshotHolder } from '../../../controller/apply/apply.js';
import { rowsOf } from '../../snapshot/snapshot.js';
import type { FormCaller, FormKeyRow } from '../keys/types.js';

/** What /public/v1 needs of the form keys: who a raw key is, and a note that it was used. */
export interface FormKeyLookup {
  /** the caller of a valid key, or undefined */
  authenticate(raw: string): FormCaller | undefined;
  /** records a successful request of the key (last-used time) */
  touch(keyId: string): void;
}

/**
 * A lookup over the `formkey` rows of the current Snapshot: the SHA-256 hex of the raw key
 * compared in constant time with each stored hash. Used until the key store provides its own.
 */
export function snapshotKeyLookup(holder: Pick<SnapshotHolder, 'current'>): FormKeyLookup {
  return {
    authenticate(raw) {
      const hash = Buffer.from(createHash('sha256').update(raw).digest('hex'));
      for (const row of rowsOf<FormKeyRow>(holder.current, 'formkey').values()) {
        const stored = Buffer.from(String(row.keyHash));
        if (stored.length === hash.length && timingSafeEqual(stored, hash)) {
          return { keyId: row.id, keyName: row.name, tenantId: row.tenantId, scopes: row.scopes, formId: row.formId };
        }
      }
      return undefined;
    },
    touch() {},
  };
}
