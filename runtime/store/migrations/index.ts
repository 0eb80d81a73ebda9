import * as m0001 from './0001-init.js';
import * as m0002 from './0002-auth.js';
import * as m0003 from './0003-alerts.js';
import * as m0004 from './0004-gitops.js';
import * as m0005 from './0005-cluster.js';
import * as m0006 from './0006-auth-rows.js';
import * as m0007 from './0007-mail-rows.js';
import * as m0008 from './0008-form-key-usage.js';
import * as m0009 from './0009-form-submissions.js';
import * as m0010 from './0010-form-deliveries.js';
import * as m0011 from './0011-form-digests.js';
import * as m0012 from './0012-form-reminders.js';
import * as m0013 from './0013-dns-serial.js';
import * as m0014 from './0014-cluster-canary.js';
import * as m0015 from './0015-outbox-parts.js';
import * as m0016 from './0016-form-delivery-attempts.js';
import * as m0017 from './0017-dns-tsig-replay.js';
import * as m0018 from './0018-alert-queue.js';
import * as m0019 from './0019-dns-ixfr-journal.js';
import * as m0020 from './0020-form-cluster.js';

/**
 * Numbered schema migrations, applied in order at start inside one transaction each. Append new
 * ones; never edit an applied one.
 */
export const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  { version: 1, name: 'init', sql: m0001.sql },
  { version: 2, name: 'auth', sql: m0002.sql },
  { version: 3, name: 'alerts', sql: m0003.sql },
  { version: 4, name: 'gitops', sql: m0004.sql },
  { version: 5, name: 'cluster', sql: m0005.sql },
  { version: 6, name: 'auth-rows', sql: m0006.sql },
  { version: 7, name: 'mail-rows', sql: m0007.sql },
  { version: 8, name: 'form-key-usage', sql: m0008.sql },
  { version: 9, name: 'form-submissions', sql: m0009.sql },
  { version: 10, name: 'form-deliveries', sql: m0010.sql },
  { version: 11, name: 'form-digests', sql: m0011.sql },
  { version: 12, name: 'form-reminders', sql: m0012.sql },
  { version: 13, name: 'dns-serial', sql: m0013.sql },
  { version: 14, name: 'cluster-canary', sql: m0014.sql },
  { version: 15, name: 'outbox-parts', sql: m0015.sql },
  { version: 16, name: 'form-delivery-attempts', sql: m0016.sql },
  { version: 17, name: 'dns-tsig-replay', sql: m0017.sql },
  { version: 18, name: 'alert-queue', sql: m0018.sql },
  { version: 19, name: 'dns-ixfr-journal', sql: m0019.sql },
  { version: 20, name: 'form-cluster', sql: m0020.sql },
];
