import { loadConfig } from '../config/load.js';
import { createCore, type Core } from '../app.js';
import { createLogger } from '../log/logger.js';
import { ConfigLedger, outboxHook } from '../cluster/port.js';
import { DEFAULT_TENANT } from '../../core/model/types.js';
import { GslbError } from '../errors.js';
import { UserStore } from './user-store.js';
import { checkEmail, checkPasswordRules, hashPassword } from './passwords.js';
import { TerminalPrompt } from './terminal-prompt.js';

/**
 * With config sync on, the daemon is not running here to publish the plan, so it goes to the
 * cluster outbox in the apply's own transaction (the same hook the cluster part registers); the
 * daemon publishes it when it starts and the user reaches every node.
 */
function queueForConfigSync(core: Core): void {
  if (!core.config.state.enableConfigSync) return;
  core.applyHooks.add(outboxHook(new ConfigLedger(core.db), core.config.node.id));
}

/**
 * `gslbd --config FILE --create-admin` (gslb-config-auth.md §4): prompts for an e-mail and a
 * password (not echoed, asked twice), creates a tenant_admin in the default tenant and exits 0.
 * The user is a normal `user` row written through the one write path (a plan), queued for config
 * sync when it is on. Exits 1 at once when any user exists, and on bad input or a bad config
 * file. Returns undefined when the flag is absent, so the daemon starts normally.
 */
export async function createAdminCommand(flags: Record<string, string | boolean>, configPath: string): Promise<number | undefined> {
  if (!flags['create-admin']) return undefined;
  let core: Core | undefined;
  try {
    const config = loadConfig(configPath);
    core = createCore(config, createLogger({ format: 'json', level: 'silent' }));
    queueForConfigSync(core);
    const users = new UserStore(core);
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
    core?.db.close();
  }
}
