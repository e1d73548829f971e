/**
 * Access tokens: JWT, HS256 signed with a key derived from SECRET, or RS256 with the PEM key pair
 * of JWT_PRIVATE_KEY_FILE / JWT_PUBLIC_KEY_FILE. The algorithm is pinned on verify to the one
 * configured, so `none`, algorithm-confusion tokens (an HS256 token "signed" with the RS256 public
 * key) and tokens of the other algorithm are refused.
 *
 * Claims: `sub` (user id), `tid` (tenant id), `role`, `sid` (session id: logins and CLI-minted
 * tokens alike), `iss`, `iat`, `exp`. A token without `exp` is refused: none of ours lacks one,
 * and one that never expires could not be contained by rotating anything but SECRET.
 */
import { createHmac, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { z } from 'zod';
import type { JwtSigningConfig } from '../config.js';
import { UnauthorizedError } from '../errors.js';

export const Role = z.enum(['admin', 'user']);
export type Role = z.infer<typeof Role>;

/** Who is calling, as every layer below HTTP sees it. */
export interface Principal {
  userId: string;
  tenantId: string;
  role: Role;
  /** The session the token belongs to (a login, or a CLI-minted token's own); the access policy refuses tokens without one. */
  sessionId?: string;
}

/**
 * Whether a principal whose token verified may act now: refuses (null) unknown or disabled users,
 * users of disabled tenants, and unknown, revoked or ended sessions, and may replace a role that
 * changed since the token was issued. Set by the composition root from in-memory live views (no
 * I/O): src/auth/access-policy.ts.
 */
export type AccessPolicy = (principal: Principal) => AccessDecision;

/**
 * The principal as it may act (possibly with a changed role), `null` (refused), or `'unknown'`:
 * its user or session is not (yet) in the views — e.g. a login on another instance whose events
 * are still on their way. Unknown is refused too, but only after the views caught up with the log.
 */
export type AccessDecision = Principal | null | 'unknown';

const Claims = z.object({ sub: z.string().min(1), tid: z.string().min(1), role: Role, sid: z.string().min(1).optional() });

const ISSUER = 'switchyard';

/** Separate keys for separate purposes, all derived from the one SECRET. */
export function deriveKey(secret: string, purpose: string): Buffer {
  return createHmac('sha256', secret).update(`switchyard:${purpose}`).digest();
}

export class TokenService {
  readonly algorithm: 'HS256' | 'RS256';
  private readonly signingKey: Uint8Array | KeyObject;
  private readonly verifyingKey: Uint8Array | KeyObject;
  private policy: AccessPolicy | null = null;
  private catchUp: () => Promise<void> = async () => undefined;

  constructor(
    secret: string,
    readonly accessTtlMs: number,
    signing: JwtSigningConfig = { algorithm: 'HS256' },
  ) {
    this.algorithm = signing.algorithm;
    if (signing.algorithm === 'RS256') {
      this.signingKey = createPrivateKey(signing.privateKeyPem);
      this.verifyingKey = createPublicKey(signing.publicKeyPem);
    } else {
      this.signingKey = this.verifyingKey = deriveKey(secret, 'jwt-hs256');
    }
  }

  async issueAccessToken(principal: Principal, ttlMs = this.accessTtlMs): Promise<string> {
    return new SignJWT({ tid: principal.tenantId, role: principal.role, ...(principal.sessionId && { sid: principal.sessionId }) })
      .setProtectedHeader({ alg: this.algorithm, typ: 'JWT' })
      .setSubject(principal.userId)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(Math.floor((Date.now() + ttlMs) / 1000))
      .sign(this.signingKey);
  }

  /** Throws UnauthorizedError for anything but a valid, unexpired token of ours (signature and claims only: see `admit`). */
  async verifyAccessToken(token: string): Promise<Principal> {
    try {
      const { payload } = await jwtVerify(token, this.verifyingKey, { algorithms: [this.algorithm], issuer: ISSUER, requiredClaims: ['exp'] });
      const claims = Claims.parse(payload);
      return { userId: claims.sub, tenantId: claims.tid, role: claims.role, ...(claims.sid && { sessionId: claims.sid }) };
    } catch (error) {
      if (error instanceof joseErrors.JOSEError || error instanceof z.ZodError) throw new UnauthorizedError();
      throw error;
    }
  }

  /**
   * Installs the access policy (`admit` lets everyone through until then), and how to wait until
   * what it reads is current (`catchUp`, for `'unknown'` decisions).
   */
  useAccessPolicy(policy: AccessPolicy, catchUp?: () => Promise<void>): void {
    this.policy = policy;
    if (catchUp) this.catchUp = catchUp;
  }

  /** The policy's decision now (no waiting); a principal when no policy is installed. */
  decide(principal: Principal): AccessDecision {
    return this.policy ? this.policy(principal) : principal;
  }

  /**
   * Like `admit`, but an `'unknown'` user or session is decided again once the views have caught
   * up with the log (a token fresh from another instance), instead of refused at once.
   */
  async admitEventually(principal: Principal): Promise<Principal> {
    let decision = this.decide(principal);
    if (decision === 'unknown') {
      await this.catchUp().catch(() => undefined);
      decision = this.decide(principal);
    }
    if (decision === null || decision === 'unknown') throw new UnauthorizedError();
    return decision;
  }

  /**
   * The principal as it may act right now, or UnauthorizedError. Runs on every request after the
   * (cacheable) signature check, so a disabled user is refused at once even with a cached token.
   */
  admit(principal: Principal): Principal {
    const admitted = this.decide(principal);
    if (admitted === null || admitted === 'unknown') throw new UnauthorizedError();
    return admitted;
  }
}

/** The token service the configuration asks for. */
export function createTokenService(config: { secret: string; auth: { jwtExpireMs: number; jwt: JwtSigningConfig } }): TokenService {
  return new TokenService(config.secret, config.auth.jwtExpireMs, config.auth.jwt);
}
