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
    logger.warn(
      { admin_email: email },
      `ROOT ADMIN CREATED. No ADMIN_PASSWORD was set, so this password was generated: ${password} ` +
        `— log in as ${email} with it and change it (POST /v1/users/me/password). It is shown this once and never again.`,
    );
  } else {
    logger.info({ admin_email: email }, 'root admin created from ADMIN_EMAIL / ADMIN_PASSWORD');
  }
  return position;
}
