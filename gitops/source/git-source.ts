import * as fs from 'node:fs';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import { transient } from '../errors.js';

const run = promisify(execFile);

/** Where and how to fetch the config repo (gitops.* in the daemon config). */
export interface SourceOptions {
  url: string;
  branch: string;
  /** bare repository used as the local object cache */
  gitdir: string;
  /** HTTPS token (the value of the env var gitops.auth.tokenEnv names) */
  token?: string | undefined;
  /** private key for SSH URLs (gitops.auth.sshKeyPath) */
  sshKeyPath?: string | undefined;
  /** per-fetch time limit */
  timeoutMs?: number;
  /** fetch the repo's tags too, pruning deleted ones (gitops.quorum counts signed tags) */
  tags?: boolean | undefined;
}

/** A manifest file read from a commit: repo-relative path, text and (from git) the blob id. */
export interface SourceFile { path: string; text: string; oid?: string }

const isHttp = (url: string) => /^https?:\/\//i.test(url);

/**
 * isomorphic-git's object cache (parsed pack indexes) per local repository, shared by fetches and
 * reads: without it every fetch and every read re-parses the pack indexes, which dominates the time
 * of a small change in a large repo.
 */
const caches = new Map<string, object>();
const cacheFor = (gitdir: string): object => {
  let c = caches.get(gitdir);
  if (!c) caches.set(gitdir, (c = {}));
  return c;
};

/** Drops the shared object cache of a local repository (call when it is deleted). */
export function forgetRepo(gitdir: string): void {
  caches.delete(gitdir);
}

async function ensureRepo(gitdir: string): Promise<void> {
  if (fs.existsSync(`${gitdir}/HEAD`)) return;
  fs.mkdirSync(gitdir, { recursive: true });
  await git.init({ fs, gitdir, bare: true });
}

/**
 * Fetches `branch` of the config repo into the local bare cache and returns the branch head SHA.
 * HTTP(S) URLs are fetched with isomorphic-git (token as basic-auth password); SSH URLs and local
 * paths with the system `git` (GIT_SSH_COMMAND with the configured key). Full history is fetched so
 * that ancestry can be checked. Errors: transient FetchFailed (the loop retries with backoff).
 */
export async function fetchHead(o: SourceOptions): Promise<string> {
  await ensureRepo(o.gitdir);
  const timeoutMs = o.timeoutMs ?? 60_000;
  try {
    if (isHttp(o.url)) {
      await git.addRemote({ fs, gitdir: o.gitdir, remote: 'origin', url: o.url, force: true });
      const fetching = git.fetch({
        // isomorphic-git updates tags only on a fetch of every branch (its single-branch path writes one ref)
        fs, http, gitdir: o.gitdir, url: o.url, ref: o.branch, singleBranch: !o.tags, tags: Boolean(o.tags), pruneTags: Boolean(o.tags), cache: cacheFor(o.gitdir),
        remoteRef: o.branch,
        ...(o.token ? { onAuth: () => ({ username: 'x-access-token', password: o.token! }) } : {}),
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, rej) => { timer = setTimeout(() => rej(new Error(`fetch timed out after ${timeoutMs} ms`)), timeoutMs); });
      const res = await Promise.race([fetching, timeout]).finally(() => clearTimeout(timer));
      if (!res.fetchHead) throw new Error(`branch ${o.branch} not found`);
      // isomorphic-git offers the local `refs/heads/<branch>` as a "have" on a single-branch fetch;
      // keeping it at the fetched head makes the next fetch send only new objects
      await git.writeRef({ fs, gitdir: o.gitdir, ref: `refs/heads/${o.branch}`, value: res.fetchHead, force: true });
      return res.fetchHead;
    }
    const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
    if (o.sshKeyPath) env.GIT_SSH_COMMAND = `ssh -i '${o.sshKeyPath.replace(/'/g, '')}' -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=accept-new`;
    const tagSpec = o.tags ? ['--prune', '+refs/tags/*:refs/tags/*'] : [];
    await run('git', ['--git-dir', o.gitdir, 'fetch', '--quiet', '--no-tags', o.url, `+refs/heads/${o.branch}:refs/gitops/head`, ...tagSpec], { env, timeout: timeoutMs });
    const { stdout } = await run('git', ['--git-dir', o.gitdir, 'rev-parse', 'refs/gitops/head^{commit}'], { env });
    return stdout.trim();
  } catch (err) {
    const msg = redact((err as Error).message, o.token);
    throw transient('FetchFailed', `fetching ${o.branch} of ${redact(o.url, o.token)} failed: ${msg}`, { cause: err });
  }
}

function redact(s: string, token: string | undefined): string {
  let out = s.replace(/\/\/[^/@\s]+@/g, '//***@');
  if (token) out = out.split(token).join('***');
  return out;
}

/** The raw bytes of a commit object. Errors: throws when the object is missing or not a commit. */
export async function readCommitRaw(gitdir: string, sha: string): Promise<Uint8Array> {
  const { object, type } = await git.readObject({ fs, gitdir, oid: sha, format: 'content', cache: cacheFor(gitdir) });
  if (type !== 'commit') throw new Error(`${sha} is a ${type}, not a commit`);
  return object as Uint8Array;
}

/** True when `ancestor` is `sha` or one of its ancestors. */
export async function descendsFrom(gitdir: string, sha: string, ancestor: string): Promise<boolean> {
  if (sha === ancestor) return true;
  try {
    return await git.isDescendent({ fs, gitdir, oid: sha, ancestor, depth: -1, cache: cacheFor(gitdir) });
  } catch {
    return false;
  }
}

/**
 * The commits reachable from `head` but not from `base` (`git rev-list base..head`), oldest first
 * by committer time; every parent of a merge is followed. Without `base`, every ancestor of `head`.
 * The walk goes newest first by committer time, marking what `base` reaches as excluded (a commit
 * first taken as included is walked again when an excluded path reaches it), and stops once only
 * excluded commits are queued — git's own rev-list walk, so a merged branch that forked before
 * `base` costs no more than its own commits. Errors: throws when an object is missing.
 */
export async function commitsBetween(gitdir: string, head: string, base: string | undefined): Promise<string[]> {
  const cache = cacheFor(gitdir);
  const info = new Map<string, { time: number; parents: string[] }>();
  /** true: reachable from base */
  const excluded = new Map<string, boolean>();
  const walked = new Set<string>();
  const queue: string[] = [];
  let includedQueued = 0;
  const push = async (oid: string, ex: boolean): Promise<void> => {
    const prev = excluded.get(oid);
    if (prev === true || (prev === false && !ex)) return;
    excluded.set(oid, ex);
    if (prev === false && !walked.has(oid)) { includedQueued--; return; } // queued: walked with the new mark
    walked.delete(oid);
    if (!info.has(oid)) {
      const { commit } = await git.readCommit({ fs, gitdir, oid, cache });
      info.set(oid, { time: commit.committer.timestamp, parents: commit.parent });
    }
    const t = info.get(oid)!.time;
    let i = queue.length;
    while (i > 0 && info.get(queue[i - 1]!)!.time < t) i--;
    queue.splice(i, 0, oid);
    if (!ex) includedQueued++;
  };
  if (base) await push(base, true);
  await push(head, false);
  while (includedQueued > 0) {
    const oid = queue.shift()!;
    const ex = excluded.get(oid)!;
    if (!ex) includedQueued--;
    walked.add(oid);
    for (const p of info.get(oid)!.parents) await push(p, ex);
  }
  return [...excluded].filter(([, ex]) => !ex).map(([oid]) => oid).sort((a, b) => info.get(a)!.time - info.get(b)!.time);
}

/**
 * Repo-relative paths of the files that differ between the trees of `from` and `to` (added,
 * removed or changed); without `from`, every file of `to`. Unchanged subtrees are not read.
 */
export async function changedPaths(gitdir: string, from: string | undefined, to: string): Promise<string[]> {
  const cache = cacheFor(gitdir);
  const treeOf = async (sha: string) => (await git.readCommit({ fs, gitdir, oid: sha, cache })).commit.tree;
  const entries = async (oid: string | undefined) => (oid ? (await git.readTree({ fs, gitdir, oid, cache })).tree : []);
  const out: string[] = [];
  const visit = async (a: string | undefined, b: string | undefined, dir: string): Promise<void> => {
    if (a === b) return;
    const left = new Map((await entries(a)).map((e) => [e.path, e]));
    const right = new Map((await entries(b)).map((e) => [e.path, e]));
    for (const name of new Set([...left.keys(), ...right.keys()])) {
      const l = left.get(name);
      const r = right.get(name);
      if (l?.oid === r?.oid && l?.type === r?.type) continue;
      const p = dir ? `${dir}/${name}` : name;
      const lt = l?.type === 'tree' ? l.oid : undefined;
      const rt = r?.type === 'tree' ? r.oid : undefined;
      if (lt || rt) await visit(lt, rt, p);
      if ((l && l.type !== 'tree') || (r && r.type !== 'tree')) out.push(p);
    }
  };
  await visit(from ? await treeOf(from) : undefined, await treeOf(to), '');
  return out.sort();
}

/** An annotated tag pointing at a commit: its name, the bytes its signature covers, and the armored signature. */
export interface TagAt { name: string; payload: Buffer; signature: string | undefined }

const SIG_START = '-----BEGIN PGP SIGNATURE-----';

/**
 * The annotated tags of the local cache whose target is the commit `sha` (lightweight tags carry
 * no signature and are left out). A tag's signature sits at the end of its message; the payload
 * is the tag object up to it, byte for byte (what `git tag -s` signed).
 */
export async function annotatedTagsAt(gitdir: string, sha: string): Promise<TagAt[]> {
  const cache = cacheFor(gitdir);
  const out: TagAt[] = [];
  for (const name of (await git.listTags({ fs, gitdir })).sort()) {
    const oid = await git.resolveRef({ fs, gitdir, ref: `refs/tags/${name}` });
    const { object, type } = await git.readObject({ fs, gitdir, oid, format: 'content', cache });
    if (type !== 'tag') continue;
    const text = Buffer.from(object as Uint8Array).toString('latin1');
    if (!new RegExp(`^object ${sha}\ntype commit\n`).test(text)) continue;
    const at = text.lastIndexOf(SIG_START);
    out.push(at < 0 ? { name, payload: Buffer.from(text, 'latin1'), signature: undefined }
      : { name, payload: Buffer.from(text.slice(0, at), 'latin1'), signature: text.slice(at) });
  }
  return out;
}

/** A stamp of the local tags (name and object id of each): it changes when a tag is added, moved or deleted. */
export async function tagsStamp(gitdir: string): Promise<string> {
  const tags = (await git.listTags({ fs, gitdir })).sort();
  const oids = await Promise.all(tags.map((t) => git.resolveRef({ fs, gitdir, ref: `refs/tags/${t}` })));
  return createHash('sha256').update(tags.map((t, i) => `${t} ${oids[i]}`).join('\n')).digest('hex').slice(0, 16);
}

/**
 * Every `*.yaml` file under `pathPrefix` in the commit's tree (names starting with `.` skipped),
 * sorted by path. Paths are
 * repo-relative so errors name the file an operator edits. Files for which `known(path, oid)` is
 * true come back with empty text (the caller has them parsed already).
 */
export async function readManifestFiles(gitdir: string, sha: string, pathPrefix: string, known: (path: string, oid: string) => boolean = () => false): Promise<SourceFile[]> {
  const cache = cacheFor(gitdir);
  const { commit } = await git.readCommit({ fs, gitdir, oid: sha, cache });
  const prefix = pathPrefix.replace(/^\/+|\/+$/g, '');
  let treeOid = commit.tree;
  if (prefix) {
    for (const part of prefix.split('/')) {
      const { tree } = await git.readTree({ fs, gitdir, oid: treeOid, cache });
      const entry = tree.find((e) => e.path === part && e.type === 'tree');
      if (!entry) return [];
      treeOid = entry.oid;
    }
  }
  const out: SourceFile[] = [];
  const visit = async (oid: string, dir: string): Promise<void> => {
    const { tree } = await git.readTree({ fs, gitdir, oid, cache });
    for (const e of tree) {
      if (e.path.startsWith('.')) continue; // .github/, .gitea/ and the like are not config
      const p = dir ? `${dir}/${e.path}` : e.path;
      if (e.type === 'tree') await visit(e.oid, p);
      else if (e.type === 'blob' && e.path.endsWith('.yaml')) {
        if (known(p, e.oid)) { out.push({ path: p, text: '', oid: e.oid }); continue; }
        const { blob } = await git.readBlob({ fs, gitdir, oid: e.oid, cache });
        out.push({ path: p, text: Buffer.from(blob).toString('utf8'), oid: e.oid });
      }
    }
  };
  await visit(treeOid, prefix);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
