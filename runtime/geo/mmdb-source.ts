import { watch, watchFile, unwatchFile, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { Reader, type Response } from 'maxmind';
import type { Logger } from '../log/logger.js';

/**
 * One MaxMind database file, kept loaded and re-read when the file is replaced — in place or by
 * atomic rename (a directory watch sees the rename; a stat poll backs it up on filesystems where
 * watching is unreliable). A new file is parsed completely off to the side and swapped in with one
 * assignment, so lookups never see a half-loaded database and no query is dropped. A file that
 * fails to parse is logged and the previous database stays active.
 */
export class MmdbSource<T extends Response> {
  /** the active reader; undefined until the first successful load */
  reader: Reader<T> | undefined;
  /** increases on every successful (re)load, so callers can cache derived data */
  generation = 0;
  /** called after every successful (re)load, e.g. to rebuild data derived from the database */
  onLoad: (() => void) | undefined;
  private waiters: (() => void)[] = [];
  private dirWatcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(readonly path: string, private readonly log: Logger, private readonly pollMs = 1000) {}

  /** Loads the file once and starts watching it. Never throws: a missing or bad file is logged. */
  async start(): Promise<void> {
    await this.reload();
    try {
      const name = basename(this.path);
      this.dirWatcher = watch(dirname(this.path), { persistent: false }, (_ev, file) => {
        if (file === null || file === name) this.schedule();
      });
      this.dirWatcher.on('error', () => { /* the poll still covers changes */ });
    } catch { /* directory missing: the poll still covers it */ }
    watchFile(this.path, { persistent: false, interval: this.pollMs }, (cur, prev) => {
      if (cur.mtimeMs !== prev.mtimeMs || cur.ino !== prev.ino || cur.size !== prev.size) this.schedule();
    });
  }

  /** Resolves once a database is loaded (at once when one is). */
  ready(): Promise<void> {
    if (this.reader) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops watching. */
  close(): void {
    this.closed = true;
    this.dirWatcher?.close();
    unwatchFile(this.path);
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.waiters.splice(0)) w();
  }

  // Events arrive in bursts (create, write, rename); settle briefly, then read once.
  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.timer = undefined; void this.reload(); }, 50);
    this.timer.unref();
  }

  /** Reads and parses the file; on success swaps the reader in, on failure keeps the old one. */
  async reload(): Promise<void> {
    if (this.loading) { this.again = true; return this.loading; }
    this.loading = (async () => {
      do {
        this.again = false;
        let buf: Buffer;
        try {
          buf = await readFile(this.path);
        } catch (err) {
          if (!this.reader || (err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn({ err, path: this.path }, 'geo database not readable; keeping the previous one');
          continue;
        }
        try {
          const reader = new Reader<T>(buf);
          this.reader = reader;
          this.generation++;
          this.log.info({ path: this.path, type: reader.metadata.databaseType, generation: this.generation }, 'geo database loaded');
          for (const w of this.waiters.splice(0)) w();
          this.onLoad?.();
        } catch (err) {
          this.log.error({ err, path: this.path }, 'geo database reload failed; keeping the previous one');
        }
      } while (this.again && !this.closed);
    })().finally(() => { this.loading = undefined; });
    return this.loading;
  }
}
