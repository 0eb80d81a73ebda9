/**
 * What other features may use of health (docs/architecture.md "Folders and import directions"):
 * the health view answers are made from, its entries (cluster health sync) and the policy that
 * merges peers' verdicts (the cluster installs it). Re-exports only.
 */
export { HealthView, type HealthEntry, type HealthPolicy } from './view.js';
