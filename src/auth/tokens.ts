/**
 * Access tokens: JWT, HS256 signed with a key derived from SECRET. The algorithm is pinned on
 * verify, so `none` and algorithm-confusion tokens are refused.
 */
import { createHmac } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { z } from 'zod';
import { UnauthorizedError } from '../errors.js';

export const Role = z.enum(['admin', 'user']);
export type Role = z.infer<typeof Role>;

/** Who is calling, as every layer below HTTP sees it. */
export interface Principal {
  userId: string;
  tenantId: string;
  role: Role;
}

const Claims = z.object({ sub: z.string().min(1), tid: z.string().min(1), role: Role });

const ISSUER = 'switchyard';
const ALGORITHM = 'HS256';

/** Separate keys for separate purposes, all derived from the one SECRET. */
export function deriveKey(secret: string, purpose: string): Buffer {
  return createHmac('sha256', secret).update(`switchyard:${purpose}`).digest();
}

export class TokenService {
  private readonly key: Uint8Array;

  constructor(
    secret: string,
    private readonly accessTtlMs: number,
  ) {
    this.key = deriveKey(secret, 'jwt-hs256');
  }

  async issueAccessToken(principal: Principal, ttlMs = this.accessTtlMs): Promise<string> {
    return new SignJWT({ tid: principal.tenantId, role: principal.role })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(principal.userId)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(Math.floor((Date.now() + ttlMs) / 1000))
      .sign(this.key);
  }

  /** Throws UnauthorizedError for anything but a valid, unexpired token of ours. */
  async verifyAccessToken(token: string): Promise<Principal> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: [ALGORITHM], issuer: ISSUER });
      const claims = Claims.parse(payload);
      return { userId: claims.sub, tenantId: claims.tid, role: claims.role };
    } catch (error) {
      if (error instanceof joseErrors.JOSEError || error instanceof z.ZodError) throw new UnauthorizedError();
      throw error;
    }
  }
}
