import type { ObjectStore } from '@nats-io/obj';
import type { ClusterStreams } from '../../cluster/port.js';
import type { StoredFile } from '../submissions/types.js';

/**
 * Uploaded files in the cluster's object store `<kvBucket>_FILES` (docs/forms.md "In a cluster"),
 * named by their vault path (`<form id>/<uuid>`): put before the submission that names them is
 * published, fetched by a node that serves a download of a file it does not hold.
 */
export class FileObjects {
  private os: Promise<ObjectStore> | undefined;

  constructor(private readonly deps: { streams: ClusterStreams; bucket: string; replicas: () => number }) {}

  /** Puts the files (their bytes read by `read`); resolves once the store holds every one. */
  async put(files: readonly StoredFile[], read: (rel: string) => Uint8Array): Promise<void> {
    if (files.length === 0) return;
    const os = await this.store();
    await Promise.all(files.map(async (f) => {
      const info = await os.putBlob({ name: f.path }, read(f.path));
      if (info.size !== f.size) throw new Error(`form file ${f.path}: the object store holds ${info.size} bytes of ${f.size}`);
    }));
  }

  /** A file's bytes, or undefined when the store does not hold it. */
  async get(rel: string): Promise<Uint8Array | undefined> {
    return (await (await this.store()).getBlob(rel)) ?? undefined;
  }

  /** Deletes files (their form was deleted); missing ones are fine. */
  async remove(rels: readonly string[]): Promise<void> {
    if (rels.length === 0) return;
    const os = await this.store();
    await Promise.all(rels.map((r) => os.delete(r).catch(() => undefined)));
  }

  /** Opens (makes) the store. */
  async open(): Promise<void> {
    await this.store();
  }

  private store(): Promise<ObjectStore> {
    this.os ??= this.deps.streams.objectStore(this.deps.bucket, this.deps.replicas());
    this.os.catch(() => { this.os = undefined; });
    return this.os;
  }
}
