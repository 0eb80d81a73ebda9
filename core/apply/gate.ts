/** The write gate as held by one holder (WriteGate.acquire); `release` frees it (once; later calls do nothing). */
export interface GateHold { release(): void }

/**
 * The write gate of one core (docs/architecture.md "Large applies"). A large plan is written in
 * slices between turns of the event loop, inside one SQLite transaction that stays open across
 * those turns; no other plan may be applied meanwhile, or its rows would join that transaction and
 * its snapshot would be built on a base that is about to be replaced. The sliced apply holds the
 * gate (a reconcile takes it earlier, once its plan arrives from the offload worker, and hands it
 * to its apply); REST writes wait for it (`idle()`, awaited by the API before a write's handler),
 * and a synchronous `applyPlan` that still arrives while it is held is refused with a 409 (retry).
 */
export class WriteGate {
  private held: { hold: GateHold; freed: Promise<void> } | undefined;

  /** True while the gate is held. */
  get busy(): boolean {
    return this.held !== undefined;
  }

  /** True when `hold` is the gate's current holder. */
  heldBy(hold: GateHold | undefined): boolean {
    return hold !== undefined && this.held?.hold === hold;
  }

  /** Resolves once the gate is free; undefined when it is free already (nothing to await). */
  idle(): Promise<void> | undefined {
    if (!this.held) return undefined;
    return this.waitFree();
  }

  private async waitFree(): Promise<void> {
    while (this.held) await this.held.freed;
  }

  /** Takes the gate, waiting for the holder before; resolves with the hold (release it also when the work fails). */
  async acquire(): Promise<GateHold> {
    // The check and the take happen in one continuation: several waiters woken by one release
    // each see the gate taken by the first of them and wait again (awaiting `waitFree()` here
    // would let them all resume after the check and take it together).
    while (this.held) await this.held.freed;
    let free!: () => void;
    const freed = new Promise<void>((r) => { free = r; });
    let done = false;
    const hold: GateHold = {
      release: () => {
        if (done) return;
        done = true;
        if (this.held?.hold === hold) this.held = undefined;
        free();
      },
    };
    this.held = { hold, freed };
    return hold;
  }
}
