// What other features may use of the resources feature: the dashboard's counts (the WebSocket
// feed sends them to each tenant).
export { dashboardStats, snapshotDocument } from './dashboard.js';
export { membersOf, visiblePools } from './pool-rows.js';
