import { EventEmitter } from 'node:events';
import type { Plan } from '../plan/types.js';
import type { Snapshot } from '../snapshot/snapshot.js';

/** A health flip of one endpoint (gslb-api.md §3 and §6 `health_update`). */
export interface HealthTransition {
  poolId: string;
  ipAddress: string;
  healthy: boolean;
  score: number;
  timestamp: number;
  rttMs: number;
  node: string;
  /** ms from the last probe that still agreed with the old state (or the checker start) to the flip (docs/health.md) */
  detectionMs?: number;
}

/** The events inside one daemon. Readers subscribe; the applier and the health state machine emit. */
export interface BusEvents {
  /** after a plan's snapshot is swapped in */
  plan_applied: [{ plan: Plan; snapshot: Snapshot; previous: Snapshot }];
  /** a WebSocket-shaped message `{type, payload}` for the live feed */
  ws_message: [{ type: string; payload: unknown }];
  health_transition: [HealthTransition];
  /** a GitOps revision was refused (bad signature, invalid manifests, held-back plan) */
  gitops_rejected: [{ revision: string; reason: string; message: string }];
  /** a revision breached the health thresholds after its apply (docs/gitops.md "Automatic rollback") */
  gitops_rollback: [GitopsRollback];
  /** the config stream settled a canary revision on this node: promoted, or aborted with the reason (docs/gitops.md "Canary apply") */
  gitops_canary: [{ revision: string; verdict: 'promote' | 'abort'; reason: string | null }];
  /** the git leader took a promoted canary revision as applied: announced once in the cluster as `gitops_applied` (docs/alerts.md) */
  gitops_promoted: [{ revision: string; creates: number; updates: number; deletes: number }];
  /** an event of the form service (`submission.created`, `submission.claimed`; docs/forms.md "Events"), of one workspace */
  form_event: [FormEvent];
}

/**
 * The outcome of a health breach after an apply: `revision` breached; `rolledBackTo` is the revision
 * re-applied (null when none was: `result` NoGoodRevision or RollbackFailed); `reason` names the
 * breach; the counts are those of the rollback plan.
 */
export interface GitopsRollback {
  revision: string;
  rolledBackTo: string | null;
  reason: string;
  result: 'RolledBack' | 'NoGoodRevision' | 'RollbackFailed';
  message: string;
  creates: number;
  updates: number;
  deletes: number;
}

/** An event of the form service, of one workspace (tenant); its payload in the API's snake_case. */
export interface FormEvent {
  tenantId: string;
  formId: string;
  type: 'submission.created' | 'submission.claimed';
  payload: Record<string, unknown>;
}

/** Typed event bus. Listeners must not throw; errors are caught and reported to `onError`. */
export class EventBus {
  private readonly ee = new EventEmitter();
  constructor(private readonly onError: (err: unknown, event: string) => void = () => {}) {
    this.ee.setMaxListeners(100);
  }
  on<K extends keyof BusEvents>(event: K, fn: (...args: BusEvents[K]) => void): () => void {
    const wrapped = (...args: BusEvents[K]) => {
      try {
        fn(...args);
      } catch (err) {
        this.onError(err, event);
      }
    };
    this.ee.on(event, wrapped as (...a: unknown[]) => void);
    return () => this.ee.off(event, wrapped as (...a: unknown[]) => void);
  }
  emit<K extends keyof BusEvents>(event: K, ...args: BusEvents[K]): void {
    this.ee.emit(event, ...args);
  }
}
