// What other features may use of real-user measurement: the subnet store the DNS worker threads
// keep their copy in.
export { RumStore, RUM_STORE_DEFAULTS, type RumStoreLimits } from './store.js';
