// What other features may use of redirects: which names another tenant's redirect rules claim
// (a service may not serve them).
export { foreignRedirectClaims } from './ownership.js';
