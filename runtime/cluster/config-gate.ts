import type { ConfigApplyResult } from './config-apply.js';
import type { ConfigMsg } from './config-msg.js';

/** One step the config consumer runs for the stream, in stream order. */
export interface ConfigStep {
  seq: number;
  /** what the step records in the ledger: a plan's revision, or an extension's own key */
  revision: string;
  /** the plan message the step applies, if any: a peer's gives the merge lag */
  msg?: Pick<ConfigMsg, 'node' | 'at'>;
  /** the step records nothing (a held message): the consumer's position stays where it was */
  holds?: boolean;
  /** runs the step; applied, or stalled with the reason (the consumer retries from the same sequence) */
  run(): Promise<ConfigApplyResult>;
  /** the log line once the step went through */
  note?: { level: 'info' | 'warn'; fields: Record<string, unknown>; message: string };
}

/** The consumer's admission of messages: one per consumer, since each consumer starts from the ledger. */
export interface ConfigAdmission<I extends { seq: number }> {
  /** the steps to run now for one message, in order (none while it is held) */
  admit(item: I): ConfigStep[];
  /** what is held, and how many messages wait behind it (it included) */
  holding(): { revision: string; seq: number; messages: number } | undefined;
}

/**
 * What the config consumer does with the stream's messages (docs/cluster.md "Config sync"): each
 * message's JSON is parsed into an item (or skipped by every node alike when it is none), and a
 * fresh admission per consumer turns items into steps. Config sync without an extension uses
 * `plainGate`; the canary of gitops installs its own (gitops/canary/stream-gate.ts).
 */
export interface ConfigGate<I extends { seq: number } = { seq: number }> {
  parse(seq: number, body: unknown): I | undefined;
  open(): ConfigAdmission<I>;
}
