/**
 * First start: the `default` tenant (the installation's operators) and the root admin, from
 * ADMIN_EMAIL / ADMIN_PASSWORD, or with a generated password printed to the log once.
 *
 * Idempotent and safe with several instances starting together: every step is a command at an
 * expected version (the tenant stream, the email reservation and the root admin's fixed stream
 * `user-usr_root` are each written once); an instance that loses a race finds the work done, and
 * only the instance whose root-admin creation was appended prints the generated password.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashPassword } from './auth/passwords.js';
import type { CommandBus } from './commands/bus.js';
import { streamName } from './commands/decider.js';
import { DEFAULT_TENANT, tenants } from './commands/tenants/decider.js';
import { createUser } from './commands/users/create-user.js';
import { users } from './commands/users/decider.js';
import type { Config } from './config.js';
import { AppError } from './errors.js';
import type { Logger } from './logger.js';
import type { EventStore } from './ports/event-store.js';

/** The root admin's user id (fixed, so that concurrent first starts create it once). */
export const ROOT_ADMIN_ID = 'usr_root';
const CAUSE = 'bootstrap';

function refusedWith(error: unknown, code: string): boolean {
  return error instanceof AppError && error.code === code;
}

/**
 * Creates what is missing. Returns the log position to wait for before serving: the root admin's
 * creation when this start made it or raced another instance making it (so that it can log in at
 * once here too); 0 on a restart of a bootstrapped installation (nothing to wait for).
 */
/** The file a generated root admin password is written to, under DATA_DIR (README "First start"). */
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

/** Writes the generated password, readable by the server's user alone; null when DATA_DIR cannot take it. */
function writeInitialPassword(dataDir: string, email: string, password: string): string | null {
  const file = join(dataDir, INITIAL_PASSWORD_FILE);
  try {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `${email}\n${password}\n`, { mode: 0o600, flag: 'w' });
    chmodSync(file, 0o600); // an existing file keeps its mode on write
    return file;
  } catch {
    return null;
  }
}

export async function bootstrap(store: EventStore, commands: CommandBus, config: Config, logger: Logger): Promise<number> {
  const rootStream = streamName(users.category, ROOT_ADMIN_ID);
  const rootCreatedAt = async () => (await store.readStream(rootStream))[0]?.position ?? 0;
  if ((await rootCreatedAt()) > 0) return 0;
  let position = 0;
  try {
    const created = await commands.execute(tenants, DEFAULT_TENANT, { type: 'CreateTenant', tenantId: DEFAULT_TENANT, name: 'Default' }, { tenantId: DEFAULT_TENANT, causationId: CAUSE });
    position = created.position ?? 0;
  } catch (error) {
    if (!refusedWith(error, 'tenant_exists')) throw error;
  }

  const { email } = config.auth.bootstrapAdmin;
  const generated = config.auth.bootstrapAdmin.password === null;
  const password = config.auth.bootstrapAdmin.password ?? randomBytes(18).toString('base64url');
  try {
    const created = await createUser(commands, { userId: ROOT_ADMIN_ID, tenantId: DEFAULT_TENANT, email, passwordHash: await hashPassword(password), role: 'admin' }, CAUSE);
    position = Math.max(position, created ?? 0);
  } catch (error) {
    if (refusedWith(error, 'user_exists')) return Math.max(position, await rootCreatedAt()); // another instance was first
    if (refusedWith(error, 'email_taken')) throw new Error(`cannot create the root admin: the email ${email} (ADMIN_EMAIL) belongs to another user`);
    throw error;
  }
  if (generated) {
    const file = writeInitialPassword(config.dirs.data, email, password);
    // On the terminal whatever LOG_LEVEL says (a JSON log line at error level would never show it).
    process.stderr.write(
      `\nROOT ADMIN CREATED. No ADMIN_PASSWORD was set; this password was generated:\n\n    ${email}\n    ${password}\n\n` +
        `Log in with it and change it (web UI > Account, or POST /v1/users/me/password).${file ? ` It is also in ${file} (mode 0600): delete that file once you have changed it.` : ''}\n\n`,
    );
    logger.warn({ admin_email: email, password_file: file }, `root admin ${email} created with a generated password (printed on the terminal${file ? ` and written to ${file}` : ''}, not logged)`);
  } else {
    logger.info({ admin_email: email }, 'root admin created from ADMIN_EMAIL / ADMIN_PASSWORD');
  }
  return position;
}
