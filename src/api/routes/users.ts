/**
 * Users: the admin API (`/v1/admin/users`, scoped to the caller's tenant; operators may name
 * another tenant with `tenant_id`), and self-service (`/v1/users/me`: profile, preferences,
 * password, multi-factor login).
 */
import { truncateWal } from '../../adapters/data-keys/sql.js';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import type { UsersTable } from '../../adapters/sql/schema.js';
import { mfaProof } from '../../auth/mfa.js';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, verifyPassword } from '../../auth/passwords.js';
import { Permission } from '../../auth/rbac.js';
import { newRecoveryCodes } from '../../auth/recovery-codes.js';
import { Role, type Principal } from '../../auth/tokens.js';
import { base32Decode, newTotpSecret, otpauthUrl, verifyTotp } from '../../auth/totp.js';
import { sessions } from '../../commands/sessions/decider.js';
import { createUser } from '../../commands/users/create-user.js';
import { deleteUser } from '../../commands/users/delete-user.js';
import { DEFAULT_TENANT } from '../../commands/tenants/decider.js';
import { ROOT_ADMIN_ID } from '../../bootstrap.js';
import { users, type UserCommand } from '../../commands/users/decider.js';
import { AppError, BadRequestError, DomainError, NotFoundError, UnauthorizedError } from '../../errors.js';
import { activeSessionIds } from '../../queries/sessions.js';
import { requirePermission, requirePrincipal } from '../auth.js';
import type { AppContext } from '../context.js';
import { EntityId, isOperator, tenantNotAllowed } from './tenants.js';
import { nullPrototype } from '../../own.js';
import { ChatDefaults, ChatPreferenceFields, chatDefaults, MAX_PREFERRED_MAX_TOKENS } from '../../conversations/preferences.js';

const UserId = z.object({ user_id: EntityId });
const TenantQuery = z.object({ tenant_id: EntityId.optional().describe("operators only: another tenant's users (403 tenant_not_allowed for anyone else naming a tenant not their own)") });
const Password = z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(MAX_PASSWORD_LENGTH);

export const CreateUserRequest = z.object({
  email: z.string().trim().max(254).pipe(z.email()),
  password: Password,
  role: Role.default('user'),
  tenant_id: EntityId.optional().describe("operators only: the new user's tenant (default: the caller's; 403 tenant_not_allowed for anyone else naming a tenant not their own)"),
}).meta({ id: 'CreateUserRequest' });
export const UpdateUserRequest = z.object({ role: Role.optional() });

export const UserView = z.object({
  id: z.string(),
  object: z.literal('user'),
  email: z.string(),
  tenant_id: z.string(),
  role: Role,
  disabled: z.boolean(),
  mfa_enabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
}).meta({ id: 'User' });
export type UserView = z.infer<typeof UserView>;

export const DeletedUserView = z.object({
  id: z.string(),
  object: z.literal('user'),
  deleted: z.literal(true),
  sessions_revoked: z.number().int().describe("the user's sessions this call ended"),
  api_keys_revoked: z.number().int().describe("the user's API keys this call revoked"),
  data_keys_destroyed: z.number().int().describe("data keys of the user's conversations and files this call destroyed"),
  files_deleted: z.number().int().describe("the user's files this call deleted (their bytes go once no other file has the same content)"),
}).meta({ id: 'DeletedUser' });

export const MeView = z.object({
  id: z.string(),
  email: z.string(),
  tenant_id: z.string(),
  role: Role,
  permissions: z.array(z.string()),
  mfa_enabled: z.boolean(),
  preferences: z.record(z.string(), z.unknown()).describe('the stored preferences, as set'),
  chat_defaults: ChatDefaults,
}).meta({ id: 'Me' });

/** The known chat keys are checked (null removes one, as for any key); any other key is free-form. */
const PreferencesPatch = z
  .object({
    theme: ChatPreferenceFields.theme.nullable().optional(),
    language: ChatPreferenceFields.language.nullable().optional(),
    default_model: ChatPreferenceFields.default_model.nullable().optional(),
    temperature: ChatPreferenceFields.temperature.nullable().optional().describe('0 to 2 (default 0.7)'),
    max_tokens: ChatPreferenceFields.max_tokens.nullable().optional().describe(`1 to ${MAX_PREFERRED_MAX_TOKENS} (default 2048)`),
  })
  .catchall(z.unknown());

export const UpdateMeRequest = z.object({
  preferences: PreferencesPatch.describe(
    'merged into the stored preferences; a key set to null is removed. The chat keys (theme: light|dark|system, language: a BCP 47 tag, default_model, temperature, max_tokens) are validated (400 invalid_request, param `preferences.<key>`); other keys are stored as given',
  ),
});
export const ChangePasswordRequest = z.object({ current_password: z.string().min(1).max(MAX_PASSWORD_LENGTH), new_password: Password });
export const MfaEnrollResponse = z.object({
  secret: z.string().describe('base32 TOTP secret (SHA-1, 6 digits, 30 s)'),
  otpauth_url: z.string(),
  recovery_codes: z.array(z.string()).describe('10 single-use codes, shown this once'),
});
export const MfaCodeRequest = z.object({ code: z.string().min(1).max(64) });

/** The stored preferences and the chat settings they make effective. */
function preferencesOf(row: UsersTable): { preferences: Record<string, unknown>; chat_defaults: ChatDefaults } {
  const preferences = JSON.parse(row.preferences) as Record<string, unknown>;
  return { preferences, chat_defaults: chatDefaults(preferences) };
}

const UserList = z.object({ object: z.literal('list'), data: z.array(UserView) }).meta({ id: 'UserList' });

export function userRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  const mfaOn = ctx.config.auth.mfaEnabled;

  const userView = (row: UsersTable): UserView => ({
    id: row.id,
    object: 'user',
    email: row.email,
    tenant_id: row.tenant_id,
    role: row.role as Role,
    disabled: row.disabled === 1,
    mfa_enabled: mfaOn && row.mfa_enabled === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  });
  const meView = (row: UsersTable): z.infer<typeof MeView> => ({
    id: row.id,
    email: row.email,
    tenant_id: row.tenant_id,
    role: row.role as Role,
    permissions: ctx.rbac.permissionsOf(row.role),
    mfa_enabled: mfaOn && row.mfa_enabled === 1,
    ...preferencesOf(row),
  });

  const settle = async (position: number | null) => {
    if (position === null) return;
    await Promise.all([ctx.runner.waitFor(position, { projections: ['accounts'] }), ctx.views.access.waitFor(position)]);
  };

  /**
   * The tenant an admin request works in: the caller's, or for operators the one named. Another
   * admin naming a tenant other than its own is refused (403) rather than quietly served its own.
   */
  const scopeOf = (principal: Principal, named: string | undefined) => {
    if (named === undefined || named === principal.tenantId) return principal.tenantId;
    if (!isOperator(principal)) throw tenantNotAllowed();
    return named;
  };

  const found = async (tenantId: string, id: string): Promise<UsersTable> => {
    const row = await ctx.queries.user(tenantId, id);
    if (!row) throw new NotFoundError('user not found', 'user_not_found');
    return row;
  };

  /** The caller's own account (the access policy already requires it to exist; 401 should it be gone from the read model). */
  const me = async (request: FastifyRequest): Promise<{ principal: Principal; row: UsersTable }> => {
    const principal = await requirePrincipal(request, ctx.tokens);
    const row = await ctx.queries.user(principal.tenantId, principal.userId);
    if (!row) throw new UnauthorizedError();
    return { principal, row };
  };

  const execute = (row: UsersTable, command: UserCommand, request: FastifyRequest) =>
    ctx.commands.execute(users, row.id, command, { tenantId: row.tenant_id, causationId: request.id });

  const requireMfaOn = () => {
    if (!mfaOn) throw new BadRequestError('multi-factor login is not enabled on this installation (MFA_ENABLED)', 'mfa_disabled');
  };

  /** A wrong, replayed or spent code for verify / disable: 400, the caller stays logged in. */
  const invalidCode = () => new BadRequestError('the code is not valid', 'invalid_mfa_code', 'code');

  return async (app) => {
    const manage = requirePermission(ctx, Permission.usersManage);
    const adminTags = ['users'];
    const meTags = ['me'];

    app.post('/v1/admin/users', { preHandler: manage, schema: { tags: adminTags, summary: 'Create a user', body: CreateUserRequest, response: { 201: UserView } } }, async (request, reply) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      const tenantId = scopeOf(principal, request.body.tenant_id);
      const [tenant] = await ctx.queries.tenants(tenantId);
      if (!tenant) throw new NotFoundError('tenant not found', 'tenant_not_found');
      if (tenant.disabled === 1) throw new DomainError('the tenant is disabled', 'tenant_disabled');
      const id = `usr_${randomBytes(9).toString('base64url').replace(/[-_]/g, 'x')}`;
      const position = await createUser(ctx.commands, { userId: id, tenantId, email: request.body.email, passwordHash: await hashPassword(request.body.password), role: request.body.role }, request.id);
      await settle(position);
      return reply.code(201).send(userView(await found(tenantId, id)));
    });

    app.get(
      '/v1/admin/users',
      { preHandler: manage, schema: { tags: adminTags, summary: "List the tenant's users", querystring: TenantQuery, response: { 200: UserList } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        return { object: 'list' as const, data: (await ctx.queries.users(scopeOf(principal, request.query.tenant_id))).map(userView) };
      },
    );

    app.get('/v1/admin/users/:user_id', { preHandler: manage, schema: { tags: adminTags, summary: 'Get a user', params: UserId, querystring: TenantQuery, response: { 200: UserView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return userView(await found(scopeOf(principal, request.query.tenant_id), request.params.user_id));
    });

    app.patch(
      '/v1/admin/users/:user_id',
      { preHandler: manage, schema: { tags: adminTags, summary: "Change a user's role", params: UserId, querystring: TenantQuery, body: UpdateUserRequest, response: { 200: UserView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const row = await found(scopeOf(principal, request.query.tenant_id), request.params.user_id);
        if (request.body.role !== undefined) {
          if (row.id === principal.userId) throw new DomainError('admins cannot change their own role', 'cannot_change_own_role');
          await settle((await execute(row, { type: 'ChangeRole', role: request.body.role, by: principal.userId }, request)).position);
        }
        return userView(await found(row.tenant_id, row.id));
      },
    );

    /** Admin actions on one user: each is one command, answered with the user as it is afterwards. */
    const userActions: Array<{ path: string; summary: string; command: (principal: Principal, row: UsersTable) => UserCommand }> = [
      {
        path: 'disable',
        summary: 'Disable a user: refused at once on every instance, even with an unexpired token',
        command: (principal, row) => {
          if (row.id === principal.userId) throw new DomainError('admins cannot disable themselves', 'cannot_disable_self');
          return { type: 'DisableUser', by: principal.userId };
        },
      },
      { path: 'enable', summary: 'Enable a disabled user again', command: (principal) => ({ type: 'EnableUser', by: principal.userId }) },
      {
        path: 'mfa/reset',
        summary: "Turn a user's multi-factor login off (a lost authenticator): the next login needs the password only; the user may enrol again",
        command: (principal) => ({ type: 'ResetMfa', by: principal.userId }),
      },
    ];
    for (const action of userActions) {
      app.post(
        `/v1/admin/users/:user_id/${action.path}`,
        { preHandler: manage, schema: { tags: adminTags, summary: action.summary, params: UserId, querystring: TenantQuery, response: { 200: UserView } } },
        async (request) => {
          const principal = await requirePrincipal(request, ctx.tokens);
          const row = await found(scopeOf(principal, request.query.tenant_id), request.params.user_id);
          await settle((await execute(row, action.command(principal, row), request)).position);
          return userView(await found(row.tenant_id, row.id));
        },
      );
    }

    app.delete(
      '/v1/admin/users/:user_id',
      {
        preHandler: manage,
        schema: {
          tags: adminTags,
          summary: 'Delete a user for good',
          description:
            "Refused at once on every instance: no login, no session, no API key works any more; the user leaves the lists (404 afterwards) and the email may be used again. The data keys of the user's conversations are destroyed, so their texts can never be read again, not even from the log. Repeating the call on a deleted user finishes an interrupted deletion (200 again). Admins cannot delete themselves (cannot_delete_self) nor the root admin (cannot_delete_root_admin).",
          params: UserId,
          querystring: TenantQuery,
          response: { 200: DeletedUserView },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const tenantId = scopeOf(principal, request.query.tenant_id);
        const userId = request.params.user_id;
        if (userId === principal.userId) throw new DomainError('admins cannot delete themselves', 'cannot_delete_self');
        // The installation's first admin (ADMIN_EMAIL): deleting it would leave operators locked out for good.
        if (userId === ROOT_ADMIN_ID && tenantId === DEFAULT_TENANT) throw new DomainError('the root admin cannot be deleted', 'cannot_delete_root_admin');
        const result = await deleteUser({ commands: ctx.commands, db: ctx.sql.db, dataKeys: ctx.dataKeys, files: ctx.files.service }, { userId, tenantId, by: principal.userId }, request.id);
        const { position } = result;
        if (position !== null) {
          await Promise.all([
            settle(position),
            ctx.runner.waitFor(position, { projections: ['sessions', 'api_keys', 'conversations'] }),
            ctx.views.sessions.waitFor(position),
            ctx.views.keys.waitFor(position),
          ]);
          // The conversations' tombstones are in the WAL beside the pages as they were (decision 0120): empty it.
          if (!(await truncateWal(ctx.sql))) ctx.logger.warn('a user was deleted but a reader kept the WAL from being emptied; it will be at the next complete checkpoint');
        }
        return {
          id: userId,
          object: 'user' as const,
          deleted: true as const,
          sessions_revoked: result.sessionsRevoked,
          api_keys_revoked: result.apiKeysRevoked,
          data_keys_destroyed: result.dataKeysDestroyed,
          files_deleted: result.filesDeleted,
        };
      },
    );

    app.get('/v1/users/me', { schema: { tags: meTags, summary: 'The calling user', description: 'With its stored preferences and `chat_defaults`, the chat settings in effect (the stored chat keys, defaults for the rest).', response: { 200: MeView } } }, async (request) => meView((await me(request)).row));

    app.patch('/v1/users/me', { schema: { tags: meTags, summary: "Change the calling user's preferences", description: 'Merges keys into the stored preferences (null removes one). The chat keys are validated; other keys are free-form.', body: UpdateMeRequest, response: { 200: MeView } } }, async (request) => {
      const { row } = await me(request);
      // No prototype: a preference named `__proto__` (or `constructor`) is stored like any other.
      const preferences = nullPrototype(JSON.parse(row.preferences) as Record<string, unknown>);
      for (const [key, value] of Object.entries(request.body.preferences)) {
        if (value === null) delete preferences[key];
        else preferences[key] = value;
      }
      await settle((await execute(row, { type: 'SetPreferences', preferences }, request)).position);
      return meView(await found(row.tenant_id, row.id));
    });

    app.post(
      '/v1/users/me/password',
      { schema: { tags: meTags, summary: "Change the calling user's password; the user's other sessions are revoked", body: ChangePasswordRequest, response: { 200: z.object({ sessions_revoked: z.number() }) } } },
      async (request) => {
        const { principal, row } = await me(request);
        if (!(await verifyPassword(request.body.current_password, row.password_hash))) throw new BadRequestError('the current password is wrong', 'invalid_password', 'current_password');
        const changed = await execute(row, { type: 'ChangePassword', passwordHash: await hashPassword(request.body.new_password) }, request);
        let position = changed.position ?? 0;
        let revoked = 0;
        for (const sessionId of await activeSessionIds(ctx.sql.db, row.tenant_id, row.id)) {
          if (sessionId === principal.sessionId) continue;
          const result = await ctx.commands.execute(sessions, sessionId, { type: 'RevokeSession', reason: 'password_changed', by: row.id }, { tenantId: row.tenant_id, causationId: request.id });
          if (result.position !== null) revoked++;
          position = Math.max(position, result.position ?? 0);
        }
        await Promise.all([settle(position), ctx.runner.waitFor(position, { projections: ['sessions'] }), ctx.views.sessions.waitFor(position)]);
        return { sessions_revoked: revoked };
      },
    );

    app.post('/v1/users/me/mfa/enroll', { schema: { tags: meTags, summary: 'Start multi-factor enrollment: a new TOTP secret and recovery codes', response: { 200: MfaEnrollResponse } } }, async (request) => {
      requireMfaOn();
      const { row } = await me(request);
      const secret = newTotpSecret();
      const codes = newRecoveryCodes();
      const result = await execute(row, { type: 'StartMfaEnrollment', secretSealed: ctx.mfa.secrets.seal(secret), recoveryCodeHashes: codes.map((c) => ctx.mfa.recoveryCodes.hash(c)) }, request);
      await settle(result.position);
      return { secret, otpauth_url: otpauthUrl(ctx.config.auth.mfaIssuer, row.email, secret), recovery_codes: codes };
    });

    app.post('/v1/users/me/mfa/verify', { schema: { tags: meTags, summary: 'Confirm enrollment with a code from the app: multi-factor login is on', body: MfaCodeRequest, response: { 200: MeView } } }, async (request) => {
      requireMfaOn();
      const { row } = await me(request);
      const pending = row.mfa_pending_secret_sealed;
      if (row.mfa_enabled === 1) throw new AppError(409, 'conflict_error', 'mfa_already_enabled', 'multi-factor login is already enabled');
      if (!pending) throw new DomainError('no multi-factor enrollment is pending: enroll first', 'mfa_not_enrolled');
      const step = verifyTotp(base32Decode(ctx.mfa.secrets.open(pending)), request.body.code, Date.now());
      if (step === null) throw invalidCode();
      await settle((await execute(row, { type: 'ConfirmMfaEnrollment', secretSealed: pending, step }, request)).position);
      return meView(await found(row.tenant_id, row.id));
    });

    app.post('/v1/users/me/mfa/disable', { schema: { tags: meTags, summary: 'Turn multi-factor login off (needs a current code or a recovery code)', body: MfaCodeRequest, response: { 200: MeView } } }, async (request) => {
      requireMfaOn();
      const { row } = await me(request);
      if (row.mfa_enabled !== 1) throw new DomainError('multi-factor login is not enabled for this user', 'mfa_not_enabled');
      const proof = mfaProof(request.body.code, row.mfa_secret_sealed, ctx.mfa.secrets, ctx.mfa.recoveryCodes);
      if (!proof) throw invalidCode();
      try {
        await settle((await execute(row, { type: 'DisableMfa', proof }, request)).position);
      } catch (error) {
        if (error instanceof AppError && error.code === 'mfa_code_rejected') throw invalidCode();
        throw error;
      }
      return meView(await found(row.tenant_id, row.id));
    });
  };
}
