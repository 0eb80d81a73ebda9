// setTimeout's longest delay; a longer wait is taken in several steps
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface BackupSchedule {
  /** `backup.interval` in ms */
  intervalMs: number;
  /** when the newest backup already in the folder was taken (ms), undefined when there is none */
  newest: number | undefined;
  /** takes one backup; must not throw (failures are its own to log and count) */
  run: () => Promise<void>;
  now?: () => number;
}

/**
 * Runs `run` every `intervalMs`, counted from the start of the previous backup, or from the newest
 * backup already in the folder: a daemon restarted within the interval waits for the remainder
 * instead of taking a backup at every start, and one down for longer takes one at once. A backup
 * that outlasts the interval is followed by the next at once, never by two at a time. Returns the
 * function that stops the schedule (a running backup finishes; see Backups.idle).
 */
export function scheduleBackups(s: BackupSchedule): () => void {
  const now = s.now ?? Date.now;
  let due = s.newest === undefined ? now() : s.newest + s.intervalMs;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    const wait = due - now();
    if (wait > 0) {
      timer = setTimeout(tick, Math.min(wait, MAX_TIMER_MS));
      timer.unref();
      return;
    }
    const started = now();
    void s.run().finally(() => {
      due = started + s.intervalMs;
      tick();
    });
  };
  tick();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
