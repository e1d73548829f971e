/**
 * The one-api / new-api import: reads the gateway's database page by page, maps each row with the
 * pure functions beside this file, and writes through the import sink (which makes re-runs
 * idempotent: the same legacy row always gives the same Switchyard id). Rows that cannot be mapped,
 * or that the sink refuses, are reported with the reason and the import goes on; only a failure
 * to read the gateway's database stops it.
 *
 * Order: users (and their credits) first, then channels, then tokens (which need their user, and
 * the channels of their group).
 */
import { randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { Kysely } from 'kysely';
import { AppError } from '../../errors.js';
import { ImportError, type ImportSink, type Imported } from '../sink.js';
import { mapChannel } from './channels.js';
import { groupModelsFrom, mapToken } from './keys.js';
import { num, str, type LegacyAbility, type RawRow } from './rows.js';
import type { GatewaySource } from './source.js';
import { DEFAULT_QUOTA_PER_UNIT, mapUser } from './users.js';

// The legacy schema is not Switchyard's: rows are read untyped and normalised by the source.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LegacyDb = Kysely<any>;

export type LegacyTable = 'users' | 'channels' | 'tokens';

export interface Counts {
  created: number;
  existing: number;
  not_mapped: number;
}

export interface ImportReport {
  source: GatewaySource['name'];
  dry_run: boolean;
  /** The gateway's QuotaPerUnit (quota per US dollar = per credit). */
  quota_per_unit: number;
  users: Counts;
  /** Top-ups of the users' remaining quota; total_micro: what they add up to. */
  credits: Counts & { total_micro: number };
  /** Switchyard channels (a legacy channel with several keys gives several). */
  channels: Counts;
  keys: Counts;
  not_mapped: Array<{ table: LegacyTable; id: number; name: string; reason: string }>;
  notes: Array<{ table: LegacyTable; id: number; name: string; note: string }>;
}

export interface ImportOptions {
  dryRun?: boolean;
  /** Rows read so far of a table and how many it has (for a progress display). */
  onProgress?(table: LegacyTable, done: number, total: number): void;
  /** Rows per page read from the gateway's database. */
  pageSize?: number;
}

const counts = (): Counts => ({ created: 0, existing: 0, not_mapped: 0 });
const tally = (c: Counts, result: Imported) => (result.created ? c.created++ : c.existing++);
/** Why the sink refused a row (reported, the import goes on); anything else (a store down) is rethrown. */
function refusal(error: unknown): string {
  if (error instanceof ImportError || (error instanceof AppError && error.status < 500)) return error.message;
  throw error;
}

/** QuotaPerUnit from the gateway's `options` table (an admin may have changed it), else the default. */
export async function readQuotaPerUnit(db: LegacyDb): Promise<number> {
  try {
    const row = (await db.selectFrom('options').selectAll().where('key', '=', 'QuotaPerUnit').executeTakeFirst()) as RawRow | undefined;
    const value = row ? Number(str(row.value)) : NaN;
    return Number.isFinite(value) && value > 0 ? value : DEFAULT_QUOTA_PER_UNIT;
  } catch {
    return DEFAULT_QUOTA_PER_UNIT; // no options table: the default
  }
}

/** The gateway tables the import reads that the database lacks (empty: it looks like the gateway's). */
export async function missingTables(db: LegacyDb): Promise<string[]> {
  const present = new Set((await db.introspection.getTables()).map((t) => t.name));
  return ['users', 'channels', 'tokens', 'abilities'].filter((table) => !present.has(table));
}

async function countRows(db: LegacyDb, table: LegacyTable): Promise<number> {
  const row = (await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirst()) as RawRow | undefined;
  return num(row?.n);
}

/** Every row of `table` in id order, a page at a time. */
async function* rowsOf(db: LegacyDb, table: LegacyTable, pageSize: number): AsyncGenerator<RawRow> {
  let after = -Infinity;
  for (;;) {
    let query = db.selectFrom(table).selectAll().orderBy('id').limit(pageSize);
    if (after !== -Infinity) query = query.where('id', '>', after);
    const page = (await query.execute()) as RawRow[];
    for (const row of page) yield row;
    if (page.length < pageSize) return;
    after = num(page.at(-1)!.id);
  }
}

async function readAbilities(db: LegacyDb): Promise<LegacyAbility[]> {
  const rows = (await db.selectFrom('abilities').selectAll().execute()) as RawRow[];
  return rows.map((r) => ({ group: str(r.group), model: str(r.model), channelId: num(r.channel_id) }));
}

export async function importGateway(source: GatewaySource, db: LegacyDb, sink: ImportSink, options: ImportOptions = {}): Promise<ImportReport> {
  const pageSize = options.pageSize ?? 500;
  const quotaPerUnit = await readQuotaPerUnit(db);
  const report: ImportReport = { source: source.name, dry_run: options.dryRun ?? false, quota_per_unit: quotaPerUnit, users: counts(), credits: { ...counts(), total_micro: 0 }, channels: counts(), keys: counts(), not_mapped: [], notes: [] };
  const totals = { users: await countRows(db, 'users'), channels: await countRows(db, 'channels'), tokens: await countRows(db, 'tokens') };
  const progress = (table: LegacyTable, done: number) => options.onProgress?.(table, done, totals[table]);
  const refuse = (table: LegacyTable, id: number, name: string, reason: string, c: Counts) => {
    c.not_mapped++;
    report.not_mapped.push({ table, id, name, reason });
  };
  const note = (table: LegacyTable, id: number, name: string, notes: string[]) => {
    for (const n of notes) report.notes.push({ table, id, name, note: n });
  };

  // Users, and their remaining quota as credits.
  const emails = new Set<string>();
  const userGroups = new Map<number, string>();
  const disabledUsers = new Set<number>();
  let done = 0;
  for await (const row of rowsOf(db, 'users', pageSize)) {
    progress('users', ++done);
    const user = source.user(row);
    const mapped = mapUser(user, source.name, emails, quotaPerUnit);
    if (!mapped.ok) {
      refuse('users', user.id, user.username, mapped.reason, report.users);
      continue;
    }
    const { user: input, creditsMicro } = mapped.value;
    try {
      // No bcrypt password (an external login): a random one nobody knows, until an admin resets it.
      const passwordHash = input.passwordHash ?? (await bcrypt.hash(randomBytes(24).toString('base64url'), 10));
      tally(report.users, await sink.user({ ...input, passwordHash }));
    } catch (error) {
      refuse('users', user.id, user.username, refusal(error), report.users);
      continue;
    }
    emails.add(input.email);
    userGroups.set(user.id, user.group);
    if (input.disabled) disabledUsers.add(user.id);
    note('users', user.id, user.username, mapped.notes);
    if (creditsMicro > 0) {
      try {
        tally(report.credits, await sink.credits({ legacyUserId: user.id, amountMicro: creditsMicro, reason: `${source.name} quota (${user.quota} at ${quotaPerUnit} per credit)` }));
        report.credits.total_micro += creditsMicro;
      } catch (error) {
        refuse('users', user.id, user.username, `its quota: ${refusal(error)}`, report.credits);
      }
    }
  }

  // Channels (one Switchyard channel per key).
  const importedChannels = new Set<number>();
  done = 0;
  for await (const row of rowsOf(db, 'channels', pageSize)) {
    progress('channels', ++done);
    const channel = source.channel(row);
    const mapped = mapChannel(channel, source.channelTypes);
    if (!mapped.ok) {
      refuse('channels', channel.id, channel.name, mapped.reason, report.channels);
      continue;
    }
    let any = false;
    for (const input of mapped.value) {
      try {
        const imported = await sink.channel(input);
        tally(report.channels, imported);
        if (imported.name !== undefined) note('channels', channel.id, channel.name, [`imported as "${imported.name}": a channel named "${input.name}" exists already`]);
        any = true;
      } catch (error) {
        refuse('channels', channel.id, input.name, refusal(error), report.channels);
      }
    }
    if (any) importedChannels.add(channel.id);
    note('channels', channel.id, channel.name, mapped.notes);
  }

  // Tokens -> API keys.
  const groupModels = groupModelsFrom(await readAbilities(db), importedChannels);
  done = 0;
  for await (const row of rowsOf(db, 'tokens', pageSize)) {
    progress('tokens', ++done);
    const token = source.token(row);
    const userGroup = userGroups.get(token.userId);
    if (userGroup === undefined) {
      refuse('tokens', token.id, token.name, `its user ${token.userId} was not imported`, report.keys);
      continue;
    }
    const mapped = mapToken(token, { quotaPerUnit, userGroup, userDisabled: disabledUsers.has(token.userId), groupModels });
    if (!mapped.ok) {
      refuse('tokens', token.id, token.name, mapped.reason, report.keys);
      continue;
    }
    try {
      tally(report.keys, await sink.apiKey(mapped.value));
      note('tokens', token.id, token.name, mapped.notes);
    } catch (error) {
      refuse('tokens', token.id, token.name, refusal(error), report.keys);
    }
  }
  return report;
}
