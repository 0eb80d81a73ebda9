/**
 * The health state machine of one endpoint (gslb-api.md §3), apart from any probe or timer so it
 * can be driven by a fake clock. `applyProbe` updates the state in place and allocates nothing, so
 * thousands of probes a second cost no garbage; it depends only on its arguments.
 */

/** The settings the state machine reads from a health check. */
export interface StateSettings {
  /** 0: scoring off; N > 0: score = successes / probes over the last N probes */
  scoreWindow: number;
  /** consecutive probes the "healthy" condition must hold to turn healthy (default 1) */
  rise: number;
  /** consecutive probes the "unhealthy" condition must hold to turn unhealthy (default 1) */
  fall: number;
}

export interface EndpointState {
  healthy: boolean;
  score: number;
  /** the last results with scoring on: a ring of `window.length` slots (1 = success), else empty */
  window: Uint8Array;
  /** results recorded in the ring (at most its length) and the slot the next one goes to */
  recorded: number;
  next: number;
  /** successes among the recorded results */
  successes: number;
  /** consecutive probes whose condition disagreed with `healthy` */
  streak: number;
  /** time of the last probe whose condition agreed with `healthy` (or of the start) */
  lastAgreedAt: number;
  probes: number;
}

const NO_WINDOW = new Uint8Array(0);

/** Optimistic start: healthy, score 1, before the first probe (§3 "none → healthy"). */
export function initialState(now: number): EndpointState {
  return { healthy: true, score: 1, window: NO_WINDOW, recorded: 0, next: 0, successes: 0, streak: 0, lastAgreedAt: now, probes: 0 };
}

/** Adds a result to the scoring window of size n; returns the score (successes / recorded). */
function recordInWindow(s: EndpointState, ok: boolean, n: number): number {
  if (s.window.length !== n) {
    s.window = new Uint8Array(n); // first probe with scoring on (the size is fixed per check)
    s.recorded = s.next = s.successes = 0;
  }
  if (s.recorded === n) s.successes -= s.window[s.next]!;
  else s.recorded++;
  s.window[s.next] = ok ? 1 : 0;
  s.successes += ok ? 1 : 0;
  s.next = s.next + 1 === n ? 0 : s.next + 1;
  return s.successes / s.recorded;
}

/** No flip: the value {@link applyProbe} returns when the state kept its health. */
export const NO_FLIP = -1;

/**
 * Records one probe result at `now` into `s`. Scoring off: the condition is the probe result
 * itself. Scoring on: the score is taken over the last `scoreWindow` results (the divisor is the
 * number recorded before N exist) and the condition is "score above 0" (healthy) or "score reached
 * 0" (unhealthy). Either way the state flips only after the opposite condition held for `fall`
 * (healthy → unhealthy) or `rise` (unhealthy → healthy) consecutive probes; with the defaults of 1
 * that is the spec's table exactly. Returns {@link NO_FLIP}, or on a flip the detection time: ms
 * since the last probe that still agreed with the old state (or since the start).
 */
export function applyProbe(s: EndpointState, ok: boolean, now: number, cfg: StateSettings): number {
  const n = cfg.scoreWindow;
  let condition: boolean;
  let score: number;
  if (n > 0) {
    score = recordInWindow(s, ok, n);
    condition = score > 0;
  } else {
    condition = ok;
    score = ok ? 1 : 0;
  }
  s.probes++;
  if (condition === s.healthy) {
    s.score = n > 0 ? score : s.healthy ? 1 : 0;
    s.streak = 0;
    s.lastAgreedAt = now;
    return NO_FLIP;
  }
  s.streak++;
  const need = Math.max(1, s.healthy ? cfg.fall : cfg.rise);
  if (s.streak < need) {
    // Not yet: the endpoint keeps its state; with scoring off its score stays that of the state.
    s.score = n > 0 ? score : s.healthy ? 1 : 0;
    return NO_FLIP;
  }
  const detectionMs = Math.max(0, now - s.lastAgreedAt);
  s.healthy = condition;
  s.score = n > 0 ? score : condition ? 1 : 0;
  s.streak = 0;
  s.lastAgreedAt = now;
  return detectionMs;
}
