import type { GateHold } from '../../core/apply/gate.js';
import type { Core } from '../../runtime/app.js';

/**
 * The write gate of one reconcile: taken when a plan arrives from the offload worker
 * (gitops/reconcile/plan.ts) and held through the test and apply steps; the Reconciler releases
 * it when the reconcile ends.
 */
export class RunHold {
  private hold: GateHold | undefined;

  constructor(private readonly gate: Core['applyGate']) {}

  /** The hold, taken now if it is not yet. */
  async take(): Promise<GateHold> {
    this.hold ??= await this.gate.acquire();
    return this.hold;
  }

  /** The hold when it was taken (an apply runs under it), else undefined (the apply takes the gate itself). */
  get held(): GateHold | undefined {
    return this.hold;
  }

  release(): void {
    this.hold?.release();
    this.hold = undefined;
  }
}
