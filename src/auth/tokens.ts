/**
 * Access tokens: JWT, HS256 signed with a key derived from SECRET, or RS256 with the PEM key pair
 * of JWT_PRIVATE_KEY_FILE / JWT_PUBLIC_KEY_FILE. The algorithm is pinned on verify to the one
 * configured, so `none`, algorithm-confusion tokens (an HS256 token "signed" with the RS256 public
 * key) and tokens of the other algorithm are refused.
 *
 * Claims: `sub` (user id), `tid` (tenant id), `role`, `sid` (session id; absent on tokens minted
 * by the CLI), `iss`, `iat`, `exp`.
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
  /** The login session the token belongs to (absent on CLI-minted tokens). */
  sessionId?: string;
}

/**
 * Whether a principal whose token verified may act now: refuses (null) disabled users, users of
 * disabled tenants and revoked sessions, and may replace a role that changed since the token was
 * issued. Set by the composition root from in-memory live views (no I/O).
 */
export type AccessPolicy = (principal: Principal) => Principal | null;

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
      const { payload } = await jwtVerify(token, this.verifyingKey, { algorithms: [this.algorithm], issuer: ISSUER });
      const claims = Claims.parse(payload);
      return { userId: claims.sub, tenantId: claims.tid, role: claims.role, ...(claims.sid && { sessionId: claims.sid }) };
    } catch (error) {
      if (error instanceof joseErrors.JOSEError || error instanceof z.ZodError) throw new UnauthorizedError();
      throw error;
    }
  }

  /** Installs the access policy (`admit` lets everyone through until then). */
  useAccessPolicy(policy: AccessPolicy): void {
    this.policy = policy;
  }

  /**
   * The principal as it may act right now, or UnauthorizedError. Runs on every request after the
   * (cacheable) signature check, so a disabled user is refused at once even with a cached token.
   */
  admit(principal: Principal): Principal {
    if (!this.policy) return principal;
    const admitted = this.policy(principal);
    if (!admitted) throw new UnauthorizedError();
    return admitted;
  }
}

/** The token service the configuration asks for. */
export function createTokenService(config: { secret: string; auth: { jwtExpireMs: number; jwt: JwtSigningConfig } }): TokenService {
  return new TokenService(config.secret, config.auth.jwtExpireMs, config.auth.jwt);
}
