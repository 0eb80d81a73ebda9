import { loadConfig } from '../config/load.js';
import { openDatabase } from '../store/db.js';
import { DEFAULT_TENANT } from '../model/types.js';
import { GslbError } from '../errors.js';
import { UserStore } from './user-store.js';
import { checkEmail, checkPasswordRules, hashPassword } from './passwords.js';
import { TerminalPrompt } from './terminal-prompt.js';

/**
 * `gslbd --config FILE --create-admin` (gslb-config-auth.md §4): prompts for an e-mail and a
 * password (not echoed, asked twice), creates a tenant_admin in the default tenant and exits 0.
 * Exits 1 at once when any user exists, and on bad input or a bad config file. Returns undefined
 * when the flag is absent, so the daemon starts normally.
 */
export async function createAdminCommand(flags: Record<string, string | boolean>, configPath: string): Promise<number | undefined> {
  if (!flags['create-admin']) return undefined;
  let db;
  try {
    const config = loadConfig(configPath);
    db = openDatabase(config.database.path);
    const users = new UserStore(db);
    if (users.count() > 0) {
      process.stderr.write('gslbd: a user already exists; --create-admin only creates the first administrator\n');
      return 1;
    }
    const prompt = new TerminalPrompt(process.stdin, process.stdout);
    let email: string; let password: string;
    try {
      email = checkEmail(await prompt.ask('E-mail: '));
      password = checkPasswordRules(await prompt.ask('Password: ', { secret: true }));
      const again = await prompt.ask('Repeat password: ', { secret: true });
      if (again !== password) throw new GslbError('API_BAD_REQUEST', 'passwords do not match');
    } finally {
      prompt.close();
    }
    const hash = await hashPassword(password, config.auth.bcryptCost);
    const user = users.createFirst({ tenantId: DEFAULT_TENANT, email, role: 'tenant_admin', passwordHash: hash });
    if (!user) {
      process.stderr.write('gslbd: a user already exists; --create-admin only creates the first administrator\n');
      return 1;
    }
    process.stdout.write(`created tenant_admin ${user.email} (${user.id}) in tenant ${DEFAULT_TENANT}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`gslbd: --create-admin: ${(err as Error).message}\n`);
    return 1;
  } finally {
    db?.close();
  }
}
