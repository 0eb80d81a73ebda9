/**
 * The health state machine of one endpoint (gslb-api.md §3), apart from any probe or timer so it
 * can be driven by a fake clock. Pure: `recordProbe` returns the next state and never mutates.
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
  /** last N results, oldest first (only with scoring on) */
  window: readonly boolean[];
  /** consecutive probes whose condition disagreed with `healthy` */
  streak: number;
  /** time of the last probe whose condition agreed with `healthy` (or of the start) */
  lastAgreedAt: number;
  probes: number;
}

export interface ProbeOutcome {
  state: EndpointState;
  /** true when `healthy` changed with this probe */
  flipped: boolean;
  /** on a flip: ms since the last probe that still agreed with the old state (or since the start) */
  detectionMs: number;
}

/** Optimistic start: healthy, score 1, before the first probe (§3 "none → healthy"). */
export function initialState(now: number): EndpointState {
  return { healthy: true, score: 1, window: [], streak: 0, lastAgreedAt: now, probes: 0 };
}

/** Score over a window: successes / recorded (the divisor is the number recorded before N exist). */
export function windowScore(window: readonly boolean[]): number {
  if (window.length === 0) return 1;
  let ok = 0;
  for (const r of window) if (r) ok++;
  return ok / window.length;
}

/**
 * Records one probe result at `now`. Scoring off: the condition is the probe result itself.
 * Scoring on: the score is taken over the last `scoreWindow` results and the condition is
 * "score above 0" (healthy) or "score reached 0" (unhealthy). Either way the state flips only after
 * the opposite condition held for `fall` (healthy → unhealthy) or `rise` (unhealthy → healthy)
 * consecutive probes; with the defaults of 1 that is the spec's table exactly.
 */
export function recordProbe(s: EndpointState, ok: boolean, now: number, cfg: StateSettings): ProbeOutcome {
  const n = cfg.scoreWindow;
  let window: readonly boolean[] = s.window;
  let condition: boolean;
  let score: number;
  if (n > 0) {
    const w = s.window.length >= n ? s.window.slice(s.window.length - n + 1) : s.window.slice();
    w.push(ok);
    window = w;
    score = windowScore(w);
    condition = score > 0;
  } else {
    condition = ok;
    score = ok ? 1 : 0;
  }
  const probes = s.probes + 1;
  if (condition === s.healthy) {
    const state = { healthy: s.healthy, score: n > 0 ? score : s.healthy ? 1 : 0, window, streak: 0, lastAgreedAt: now, probes };
    return { state, flipped: false, detectionMs: 0 };
  }
  const streak = s.streak + 1;
  const need = Math.max(1, s.healthy ? cfg.fall : cfg.rise);
  if (streak < need) {
    // Not yet: the endpoint keeps its state; with scoring off its score stays that of the state.
    const state = { healthy: s.healthy, score: n > 0 ? score : s.healthy ? 1 : 0, window, streak, lastAgreedAt: s.lastAgreedAt, probes };
    return { state, flipped: false, detectionMs: 0 };
  }
  const state = { healthy: condition, score: n > 0 ? score : condition ? 1 : 0, window, streak: 0, lastAgreedAt: now, probes };
  return { state, flipped: true, detectionMs: Math.max(0, now - s.lastAgreedAt) };
}
