/**
 * one-api / new-api users -> Switchyard users and their credits, as pure functions.
 *
 * - Roles: root (100) and admin (10) become `admin`, common users (1) `user`.
 * - Status: 1 is enabled; 2 (disabled) imports a disabled user; deleted users are not imported.
 * - Passwords: the gateways store bcrypt hashes, which Switchyard verifies at login (and re-hashes).
 * - Email: Switchyard logs in by email, the gateways by username, and their email column is often
 *   empty (and not unique). A user without a usable email of its own logs in as
 *   `<username>@<source>.local` (e.g. `root@one-api.local`); the report lists every such user.
 * - Quota: the gateways count QuotaPerUnit (500,000 by default, an option of theirs) quota per US
 *   dollar; Switchyard counts credits, and 1 credit is taken as 1 dollar: a user's remaining quota
 *   becomes a one-time credit top-up of quota × 1,000,000 / QuotaPerUnit micro-credits (× 2 by default).
 */
import { MICRO_PER_CREDIT } from '../../billing/money.js';
import type { ImportSink } from '../sink.js';
import type { Mapped } from './channels.js';
import type { LegacyUser } from './rows.js';

export type UserInput = Parameters<ImportSink['user']>[0];

export const DEFAULT_QUOTA_PER_UNIT = 500_000;

const BCRYPT = /^\$2[abxy]\$\d\d\$[./A-Za-z0-9]{53}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Quota units as micro-credits (1 credit = 1 dollar = quotaPerUnit quota), rounded to the micro-credit. */
export function quotaToMicro(quota: number, quotaPerUnit = DEFAULT_QUOTA_PER_UNIT): number {
  return Math.round((quota * MICRO_PER_CREDIT) / quotaPerUnit);
}

/** The email of a user without a usable one of its own: its username under `<source>.local`. */
export function fallbackEmail(user: Pick<LegacyUser, 'id' | 'username'>, source: string, taken: ReadonlySet<string>): string {
  const local =
    user.username
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[.-]+|[.-]+$/g, '') || `user-${user.id}`;
  const plain = `${local}@${source}.local`;
  return taken.has(plain) ? `${local}+${user.id}@${source}.local` : plain;
}

export interface MappedUser {
  user: Omit<UserInput, 'passwordHash'> & { passwordHash: string | null };
  /** The one-time top-up of the remaining quota; 0: none. */
  creditsMicro: number;
}

/**
 * A legacy user as a Switchyard user, or why it is not imported. `taken`: emails already given to
 * users of this import (lower case). passwordHash null: the user has no bcrypt password (signed
 * up through GitHub, WeChat, …): the caller gives it a random one, to be reset.
 */
export function mapUser(user: LegacyUser, source: string, taken: ReadonlySet<string>, quotaPerUnit = DEFAULT_QUOTA_PER_UNIT): Mapped<MappedUser> {
  if (user.deleted) return { ok: false, reason: 'it is deleted' };
  const notes: string[] = [];
  const own = user.email.trim().toLowerCase();
  let email = own;
  if (!own || !EMAIL.test(own) || taken.has(own)) {
    email = fallbackEmail(user, source, taken);
    notes.push(!own ? `no email: logs in as ${email}` : taken.has(own) ? `email ${own} belongs to another imported user: logs in as ${email}` : `email "${own}" is not an address: logs in as ${email}`);
  }
  const passwordHash = BCRYPT.test(user.password) ? user.password : null;
  if (!passwordHash) notes.push('no password of its own (signed up through an external login): imported with a random one, to be reset');
  const creditsMicro = quotaToMicro(user.quota, quotaPerUnit);
  if (creditsMicro < 0) notes.push(`negative quota ${user.quota}: no credits`);
  if (user.group && user.group !== 'default') notes.push(`group "${user.group}": its keys may use the models of that group's channels`);
  return {
    ok: true,
    value: {
      user: { legacyId: user.id, email, passwordHash, role: user.role >= 10 ? 'admin' : 'user', disabled: user.status !== 1 },
      creditsMicro: Math.max(0, creditsMicro),
    },
    notes,
  };
}
