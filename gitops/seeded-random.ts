/**
 * A deterministic [0, 1) random source (mulberry32) that can be restarted from a seed: the
 * selection code runs with it where an answer must not depend on chance (routing tests, traffic
 * replay), so the same query gives the same answer every run.
 */
export function seededRandom(seed = 0): { rand: () => number; reset: (seed: number) => void } {
  let a = seed >>> 0;
  return {
    reset(s) { a = s >>> 0; },
    rand() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}
