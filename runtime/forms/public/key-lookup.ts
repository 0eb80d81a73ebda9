import type { FormCaller } from '../keys/types.js';

/** What /public/v1 needs of the form keys (runtime/forms/keys/store.ts): who a raw key is, and a note that it was used. */
export interface FormKeyLookup {
  /** the caller of a valid key, or undefined */
  authenticate(raw: string): FormCaller | undefined;
  /** records a successful request of the key (last-used time) */
  touch(keyId: string): void;
}
