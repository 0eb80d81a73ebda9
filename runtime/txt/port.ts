// What other features may use of TXT records: the row type DNS serves and transfers. (RFC 2136
// UPDATE is the TXT part's own step of the DNS answer chain: dns-step.ts.)
export { txtRdata, type TxtRecordRow } from './record.js';
