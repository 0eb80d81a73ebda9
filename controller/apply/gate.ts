/**
 * The write gate of one core (docs/architecture.md "Large applies"). A large plan is written in
 * slices between turns of the event loop, inside one SQLite transaction that stays open across
 * those turns; no other plan may be applied meanwhile, or its rows would join that transaction and
 * its snapshot would be built on a base that is about to be replaced. The large apply holds the
 * gate; REST writes wait for it (`idle()`, awaited by the API before a write's handler), and a
 * synchronous `applyPlan` that still arrives while it is held is refused with a 409 (retry).
 */
export class WriteGate {
  private held: Promise<void> | undefined;

  /** True while a large apply holds the gate. */
  get busy(): boolean {
    return this.held !== undefined;
  }

  /** Resolves once the gate is free; undefined when it is free already (nothing to await). */
  idle(): Promise<void> | undefined {
    if (!this.held) return undefined;
    return this.waitFree();
  }

  private async waitFree(): Promise<void> {
    while (this.held) await this.held;
  }

  /**
   * Takes the gate, waiting for a holder before; resolves with the function that frees it (call
   * it once, also when the apply fails).
   */
  async acquire(): Promise<() => void> {
    await this.waitFree();
    let free!: () => void;
    const held = new Promise<void>((r) => { free = r; });
    this.held = held;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (this.held === held) this.held = undefined;
      free();
    };
  }
}
