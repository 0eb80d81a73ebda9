import type { Timers } from '../../../runtime/health/scheduler.js';

/** A manual clock for the scheduler: `advance(ms)` runs due timers in time order. */
export class FakeTimers implements Timers {
  t = 0;
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();
  now = () => this.t;
  set = (fn: () => void, ms: number) => {
    const id = ++this.seq;
    this.pending.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  };
  defer = (fn: () => void) => {
    fn();
  };
  clear = (h: unknown) => {
    this.pending.delete(h as number);
  };
  /** Advances the clock, running each timer at its due time; awaits microtasks between timers. */
  async advance(ms: number): Promise<void> {
    await flush(); // settle what the test just resolved before time moves
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.pending) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.pending.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
      await flush();
    }
    this.t = end;
    await flush();
  }
}

/** Lets pending promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}
