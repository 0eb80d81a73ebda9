/** Health checking: checkers, the state machine, the scheduler and the view DNS reads (docs/health.md). */
export type { Checker, CheckResult, CheckTarget } from './types.js';
export { targetKey } from './types.js';
export { createCheckers, type CheckerSet } from './checkers/index.js';
export { applyProbe, initialState, NO_FLIP, type EndpointState, type StateSettings } from './state.js';
export { HealthScheduler, SLOT_MS, MAX_START_SPREAD_MS, REAL_TIMERS, type ProbeRecord, type SyncResult, type Timers } from './scheduler.js';
export { HealthMonitor, type HealthSink, type DetectionObserver } from './monitor.js';
export { desiredTargets, snapshotTargets, staticTargets, checkFieldsOf, checkKeyOf } from './targets.js';
export { staticCheckFields } from '../config/static-pool.js';
export { registerHealthMetrics, DETECTION_BUCKETS, type HealthMetrics } from './metrics.js';
export { HealthView, STATIC_POOL_ID, localPolicy, type HealthEntry, type HealthPolicy } from '../ports/health-view.js';
