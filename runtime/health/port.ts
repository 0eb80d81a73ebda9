// What other features may use of health checking: the view of every endpoint's verdict that DNS,
// BGP, the cluster and the GitOps routing tests read, and its entry and policy types.
export { HealthView, STATIC_POOL_ID, localPolicy, type HealthChanges, type HealthEntry, type HealthPolicy } from './view.js';
