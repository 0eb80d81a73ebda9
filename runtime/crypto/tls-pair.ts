import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

/** A certificate chain and its private key, as PEM read from the configured files. */
export interface TlsPair { cert: Buffer; key: Buffer }

/** One problem with the files: the key path, the value quoted back (a file name, never key material), the rule. */
export interface TlsPairProblem { path: (string | number)[]; value: unknown; rule: string }

/**
 * Reads `certFile` and `keyFile` (keys `path`.certFile and `path`.keyFile) and checks that they
 * form a usable pair: each file readable, PEM that OpenSSL accepts, the key the certificate's.
 * Returns the pair, or every problem found, each naming its key. Messages quote the file name and
 * OpenSSL's reason, never the files' contents.
 */
export function loadTlsPair(files: { certFile: string; keyFile: string }, path: (string | number)[]): { pair?: TlsPair; problems: TlsPairProblem[] } {
  const problems: TlsPairProblem[] = [];
  const read = (k: 'certFile' | 'keyFile'): Buffer | undefined => {
    try {
      return readFileSync(files[k]);
    } catch (err) {
      problems.push({ path: [...path, k], value: files[k], rule: `cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
      return undefined;
    }
  };
  const cert = read('certFile');
  const key = read('keyFile');
  if (!cert || !key) return { problems };
  try {
    createSecureContext({ cert });
  } catch (err) {
    problems.push({ path: [...path, 'certFile'], value: files.certFile, rule: `is not a PEM certificate OpenSSL accepts (${reason(err)})` });
    return { problems };
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    const r = reason(err);
    const rule = /key values mismatch|mismatch/i.test(r) ? `is not the private key of the certificate in ${files.certFile} (${r})` : `is not a PEM private key OpenSSL accepts (${r})`;
    problems.push({ path: [...path, 'keyFile'], value: files.keyFile, rule });
    return { problems };
  }
  return { pair: { cert, key }, problems };
}

/** OpenSSL's reason text of a failed secure context, without anything of the input. */
function reason(err: unknown): string {
  const e = err as { reason?: string; code?: string; message?: string };
  return e.reason ?? e.code ?? e.message ?? String(err);
}
