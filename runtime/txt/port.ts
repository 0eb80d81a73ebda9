// What other features may use of TXT records: the row type DNS serves and transfers, and the
// RFC 2136 UPDATE handler the DNS server calls for a signed UPDATE.
export { txtRdata, type TxtRecordRow } from './record.js';
export { applyDnsUpdate, UPDATE_RCODE } from './dns-update.js';
