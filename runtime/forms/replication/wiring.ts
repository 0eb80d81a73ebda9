import type { Core } from '../../app.js';
import type { ClusterLease, ClusterStreams } from '../../cluster/port.js';
import { alreadyExists, encodeToken } from '../../cluster/port.js';
import { conflict, GslbError } from '../../errors.js';
import type { Deliveries } from '../deliveries/wiring.js';
import { dueReminderJobs } from '../deliveries/reminders.js';
import { recordDigestRun } from '../deliveries/digests.js';
import type { FormRow } from '../forms/rows.js';
import type { FormKeyStore } from '../keys/store.js';
import type { SharedSubmissions } from '../submissions/service.js';
import type { FileVault } from '../submissions/files.js';
import type { SubmissionStore } from '../submissions/store.js';
import type { SubmissionFields } from '../submissions/types.js';
import { applyFormEvents } from './apply.js';
import { KvDeliveryGate } from './delivery-gate.js';
import type { DeliveryJobs, FormStreamEvent } from './events.js';
import { FileObjects } from './files.js';
import { formClusterNames, formReplicas } from './names.js';
import { FormStream } from './stream.js';

/** What the form service does differently in a cluster (docs/forms.md "In a cluster"). */
export interface FormReplication {
  submissions: SharedSubmissions;
  /** queues the due reminders on every node; resolves with how many submissions were reminded */
  reminders(forms: readonly FormRow[], pick: (form: FormRow, fields: SubmissionFields) => string[], now: number): Promise<number>;
  /** held by the one node that runs the scheduled work (reminders, digests) */
  lease: ClusterLease;
  stop(): Promise<void>;
}

/** 500 naming why: the cluster could not make the change durable, so nothing changed (a retry is safe). */
function unavailable(what: string, err: unknown): GslbError {
  return new GslbError('API_INTERNAL', `${what}: the cluster cannot store it now (${(err as Error).message}); nothing was stored, try again`, { cause: err });
}

/**
 * Sets up the form service for a cluster (docs/forms.md "In a cluster"): submissions are made
 * durable in the form stream (their files first in the object store) before they are written
 * and answered; every node applies the stream to its own tables; claims are decided in KV; one
 * node at a time sends each delivery (KV); the scheduled runs take the cluster's lease. Returns
 * undefined on a node without NATS or with `forms.cluster.enabled: false`: everything stays local.
 */
export function startFormReplication(core: Core, deps: {
  streams: ClusterStreams | undefined; store: SubmissionStore; vault: FileVault; deliveries: Deliveries;
  /** the actions a claim of a submission with these fields goes to (`submission.claimed` subscribers) */
  claimActions: (form: FormRow, fields: SubmissionFields) => string[];
  keys: FormKeyStore;
}): FormReplication | undefined {
  const cfg = core.config.forms.cluster;
  const { streams, store, vault, deliveries: d, claimActions } = deps;
  if (!streams || !cfg.enabled) return undefined;
  const names = formClusterNames(cfg, streams.clusterToken);
  const replicas = () => formReplicas(cfg, streams.servers());
  const log = core.log.child({ component: 'forms-cluster' });
  const target = {
    store, outbox: d.outbox, now: Date.now,
    keyUsed: (id: string, at: number) => deps.keys.recordUse(id, at),
    digestCovered: (id: string, end: number, at: number, n: number) => recordDigestRun(core.db, id, end, at, n),
  };
  /** applies events inside the caller's transaction; returns what to do after the commit */
  const applyIn = (items: readonly { seq: number; e: FormStreamEvent }[]) => {
    const out = applyFormEvents(target, items);
    return () => {
      for (const e of out.events) core.bus.emit('form_event', e);
      if (out.kick) d.worker.kick();
    };
  };
  /** applies an event this node published at once (the stream brings it again; nothing changes then) */
  const applyNow = (seq: number, e: FormStreamEvent) => core.db.transaction(() => applyIn([{ seq, e }]))()();
  const stream = new FormStream({ streams, names, replicas, db: core.db, log, apply: applyIn });
  const files = new FileObjects({ streams, bucket: names.files, replicas });
  vault.remote = files;
  const gate = new KvDeliveryGate({
    streams, bucket: names.deliveries, replicas, leaseMs: Math.max(cfg.leaseMs, 2 * core.config.forms.deliveries.timeoutMs),
    publishSettled: (key, d) => stream.publish({ t: 'settled', key, d, node: streams.node }),
  });

  store.writeThrough(async (batch) => Promise.allSettled(batch.map(async ({ s, actionIds }) => {
    try {
      await files.put(s.files, (rel) => vault.read(rel));
      return await stream.publish({ t: 'submission', s, actionIds: [...actionIds] });
    } catch (err) {
      // the files stay in the store: a publish whose ack was lost may have stored the submission
      // (its node then fetches them from the store, the intake having removed its own copies)
      throw unavailable('the submission', err);
    }
  })));

  const claimsKv = () => streams.bucket(names.claims, { history: 1, replicas: replicas() });
  const enc = new TextEncoder();
  const submissions: SharedSubmissions = {
    async claim(form, s, by, at) {
      const key = `${streams.clusterToken}.${encodeToken(form.id)}.${s.id}`;
      let kv;
      let rev: number;
      try {
        kv = await claimsKv();
        rev = await kv.create(key, enc.encode(JSON.stringify({ by, at })));
      } catch (err) {
        if (!kv || !alreadyExists(err)) throw unavailable('the claim', err);
        const e = await kv.get(key).catch(() => null);
        const first = e && e.operation === 'PUT' ? JSON.parse(e.string()) as { by: string; at: number } : undefined;
        throw conflict(first ? `submission ${s.id} was claimed by ${first.by} at ${new Date(first.at).toISOString()}` : `submission ${s.id} was claimed meanwhile`);
      }
      const actionIds = claimActions(form, s.fields);
      const e: FormStreamEvent = { t: 'claim', tenantId: form.tenantId, formId: form.id, submissionId: s.id, by, at, actionIds };
      let seq: number;
      try {
        seq = await stream.publish(e);
      } catch (err) {
        // not on the stream: no node learns of it, so the claim is given back
        await kv.delete(key, { previousSeq: rev }).catch(() => undefined);
        throw unavailable('the claim', err);
      }
      applyNow(seq, e);
    },
    async replay(form, jobs, at) {
      const e: FormStreamEvent = { t: 'replay', formId: form.id, jobs, at };
      let seq: number;
      try { seq = await stream.publish(e); } catch (err) { throw unavailable('the replay', err); }
      applyNow(seq, e);
      return jobs.reduce((n, j) => n + j.actionIds.length, 0);
    },
  };
  // a key's last use (written at most once a minute per key and node) told to every node; best effort
  deps.keys.onTouch = (keyId, at) => void stream.publish({ t: 'keyUsed', keyId, at }).catch(() => undefined);
  // a digest window covered by the lease holder is recorded by every node, so the next holder does not send it again
  d.digestRuns.onCovered = (actionId, windowEnd, sentAt, submissions) => void stream.publish({ t: 'digest', actionId, windowEnd, sentAt, submissions })
    .catch((err: unknown) => log.warn({ err, action: actionId }, 'a digest window covered could not be told to the cluster; a new holder of the lease may send it again'));
  d.worker.useGate(gate);
  d.service.shared = {
    retry: async (actionId, keys, at) => {
      try {
        await gate.reopen(keys);
        await stream.publish({ t: 'retry', actionId, at });
      } catch (err) {
        throw unavailable('the retry', err);
      }
    },
  };

  // the buckets and the store are made when the bus comes up, not by the first claim or delivery
  // (making a replicated bucket takes a while, and two nodes may make it at once)
  streams.onReady(async () => { await Promise.all([claimsKv(), gate.open(), files.open()]); });
  const lease = streams.lease('formsScheduler', names.lease, cfg.leaseMs);
  return {
    submissions,
    async reminders(forms, pick, now) {
      let n = 0;
      for (const { form, jobs } of dueReminderJobs(forms, (f, before, limit) => store.dueReminders(f, before, limit), pick, now)) {
        const e: FormStreamEvent = { t: 'reminder', formId: form.id, jobs: jobs as DeliveryJobs[], at: now };
        applyNow(await stream.publish(e), e);
        n += jobs.length;
      }
      return n;
    },
    lease,
    stop: async () => {
      stream.stop();
      await lease.stop();
    },
  };
}
