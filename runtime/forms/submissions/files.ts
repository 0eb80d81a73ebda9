import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, type ReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../../config/types.js';

/**
 * The directory of uploaded files: `forms.files.dir`, else `form-files` beside the database, or a
 * directory of this process under the system's temporary directory when the database is in memory.
 */
export function filesDirOf(config: Pick<Config, 'forms' | 'database'>): string {
  if (config.forms.files.dir) return resolve(config.forms.files.dir);
  if (config.database.path === ':memory:') return join(tmpdir(), `gslbd-form-files-${process.pid}`);
  return join(dirname(resolve(config.database.path)), 'form-files');
}

/** The cluster's copy of the uploaded files (../replication/files.ts), by vault path. */
export interface RemoteFiles {
  get(rel: string): Promise<Uint8Array | undefined>;
  remove(rels: readonly string[]): Promise<void>;
}

/**
 * Uploaded files on disk: `<dir>/<form id>/<uuid>`. The visitor's file name is metadata only, so
 * nothing a visitor sends chooses a path. A form's files go with the form. In a cluster
 * (`remote` set) a file this node does not hold is fetched from the cluster's copy when it is
 * asked for, and kept.
 */
export class FileVault {
  remote: RemoteFiles | undefined;

  constructor(readonly dir: string) {}

  /** Writes a stream to a new file of the form; returns its path relative to the vault and its size. */
  async save(formId: string, stream: Readable): Promise<{ path: string; size: number }> {
    const rel = `${formId}/${randomUUID()}`;
    const abs = this.abs(rel);
    mkdirSync(dirname(abs), { recursive: true, mode: 0o700 });
    const out = createWriteStream(abs, { mode: 0o600 });
    try {
      await pipeline(stream, out);
    } catch (err) {
      // a stream destroyed while still opening creates its file afterwards: remove it once closed
      if (!out.closed) await once(out, 'close').catch(() => undefined);
      rmSync(abs, { force: true });
      throw err;
    }
    return { path: rel, size: statSync(abs).size };
  }

  /** A stored file's bytes. */
  open(rel: string): ReadStream {
    return createReadStream(this.abs(rel));
  }

  /** A stored file's bytes, fetched first from the cluster's copy when this node does not hold it (then it throws like `open` when neither does). */
  async openShared(rel: string): Promise<ReadStream> {
    const abs = this.abs(rel);
    if (this.remote && !existsSync(abs)) {
      const data = await this.remote.get(rel);
      if (data) {
        mkdirSync(dirname(abs), { recursive: true, mode: 0o700 });
        writeFileSync(abs, data, { mode: 0o600 });
      }
    }
    return createReadStream(abs);
  }

  /** A stored file's bytes, read at once (to copy it to the cluster). */
  read(rel: string): Uint8Array {
    return readFileSync(this.abs(rel));
  }

  /** Removes files (a refused submission's, a deleted form's); missing ones are fine. */
  remove(rels: readonly string[]): void {
    for (const rel of rels) rmSync(this.abs(rel), { force: true });
  }

  /** Removes a form's directory of files. */
  removeForm(formId: string): void {
    rmSync(this.abs(formId), { recursive: true, force: true });
  }

  /** The absolute path of a vault path; a path that would leave the vault throws. */
  private abs(rel: string): string {
    const p = resolve(this.dir, rel);
    if (!p.startsWith(resolve(this.dir) + sep)) throw new Error(`file path outside the form files directory: ${rel}`);
    return p;
  }
}
