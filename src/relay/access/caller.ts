/**
 * Who is calling the relay: an API key (`Bearer sk-...`, or `x-api-key: sk-...` as Anthropic's
 * clients send it; from the in-memory key directory: 401
 * unauthorized / key_expired) or a signed-in user (access token or session cookie, with the
 * permission chat:use). Nothing here is specific to one endpoint.
 */
import { principalNow, requirePrincipal } from '../../api/auth.js';
import type { Rbac } from '../../auth/rbac.js';
import type { Principal, TokenService } from '../../auth/tokens.js';
import { ForbiddenError, UnauthorizedError } from '../../errors.js';
import type { HttpRequestLike } from '../../http-exchange.js';
import type { AccessState } from '../../views/access.js';
import type { ActiveKey, KeyDirectory } from '../../views/keys.js';
import { KEY_PREFIX, type KeyGate } from './key-gate.js';

/** Who is calling the relay, as authentication resolved it. */
export interface RelayCaller {
  readonly tenantId: string;
  readonly userId: string | null;
  readonly keyId: string | null;
  /**
   * An admin signed in (a session, not an API key): upstream failures name the channel for them.
   * API-key callers are told what failed, never which channel or where it lives.
   */
  readonly seesChannels?: boolean;
}

export interface ResolvedCaller {
  readonly caller: RelayCaller;
  /** The API key, when the caller presented one. */
  readonly key: ActiveKey | null;
}

const BEARER_KEY = `Bearer ${KEY_PREFIX}`;

/** 401 for a request that brought no usable credentials: what is missing, said as OpenAI says it. */
function noCredentials(request: HttpRequestLike): UnauthorizedError {
  const raw = request.headers.authorization;
  const header = Array.isArray(raw) ? raw.join(',') : raw;
  if (header === undefined || header.trim() === '') {
    return new UnauthorizedError("You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", 'missing_api_key');
  }
  const scheme = /^(\S+)\s/.exec(header.trim())?.[1];
  return new UnauthorizedError(
    scheme !== undefined && scheme.toLowerCase() !== 'bearer'
      ? `The Authorization header uses the ${scheme} scheme: send the API key with Bearer auth (i.e. Authorization: Bearer YOUR_KEY).`
      : 'The Authorization header is not Bearer auth: send the API key as Authorization: Bearer YOUR_KEY.',
    'invalid_authorization_header',
  );
}

export class Callers {
  constructor(
    private readonly keyGate: KeyGate,
    private readonly keys: () => KeyDirectory,
    private readonly tokens: TokenService,
    private readonly rbac: Rbac,
    private readonly access: () => AccessState,
  ) {}

  /** The caller, or the 401 / 403 to answer (thrown). */
  resolve(request: HttpRequestLike): ResolvedCaller | Promise<ResolvedCaller> {
    return this.resolvedNow(request) ?? this.verified(request);
  }

  /**
   * The caller when it is known without waiting (an API key, or an access token whose signature
   * check is cached), else undefined: most requests then take no promise and no microtask.
   */
  private resolvedNow(request: HttpRequestLike): ResolvedCaller | undefined {
    const header = request.headers.authorization;
    if (typeof header === 'string' && header.startsWith(BEARER_KEY)) {
      const key = this.ownerActive(this.keyGate.authenticate(header.slice(7).trim(), this.keys(), request));
      return { caller: { tenantId: key.tenantId, userId: key.userId, keyId: key.id }, key };
    }
    // Anthropic's clients send the key as `x-api-key` (only when there is no Authorization header).
    const apiKey = header === undefined ? request.headers['x-api-key'] : undefined;
    if (typeof apiKey === 'string' && apiKey.startsWith(KEY_PREFIX)) {
      const key = this.ownerActive(this.keyGate.authenticate(apiKey.trim(), this.keys(), request));
      return { caller: { tenantId: key.tenantId, userId: key.userId, keyId: key.id }, key };
    }
    const principal = principalNow(request, this.tokens);
    if (principal === undefined) return undefined;
    if (principal === null) throw noCredentials(request);
    return this.sessionCaller(principal);
  }

  /** A key works while its user and tenant are enabled (disabling them stops their keys at once, on every instance). */
  private ownerActive(key: ActiveKey): ActiveKey {
    const access = this.access();
    if (access.disabledTenants.has(key.tenantId)) throw new UnauthorizedError("This API key's tenant is disabled: an operator can enable it again.", 'account_deactivated');
    if (access.disabledUsers.has(key.userId)) throw new UnauthorizedError("This API key's user is disabled: an admin of the tenant can enable the account again.", 'account_deactivated');
    return key;
  }

  /** The caller once its access token is verified (the signature check not cached yet, or a cookie). */
  private async verified(request: HttpRequestLike): Promise<ResolvedCaller> {
    return this.sessionCaller(await requirePrincipal(request, this.tokens));
  }

  private sessionCaller(principal: Principal): ResolvedCaller {
    if (!this.rbac.allows(principal.role, 'chat:use')) throw new ForbiddenError('this account may not use the relay (permission chat:use)', 'forbidden');
    const seesChannels = !this.rbac.enabled || principal.role === 'admin';
    return { caller: { tenantId: principal.tenantId, userId: principal.userId, keyId: null, seesChannels }, key: null };
  }
}
