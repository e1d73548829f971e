/**
 * `switchyard upgrade`: a Switchyard 1.6-1.9 installation (its own database and uploads
 * directory) is brought through 1.7.0, 1.8.0, 1.9.0 and 2.0.0 in place, each step recorded in its
 * schema_migrations; the 2.0.0 step imports the data into the Switchyard the environment
 * configures. Anything but those starting versions changes nothing. See docs/upgrading.md.
 */
import { existsSync, statSync } from 'node:fs';
import type { Config } from '../config.js';
import { ConfigError } from '../errors.js';
import { openDatabaseUrl } from '../imports/database-url.js';
import { startProgress } from '../progress.js';
import { openImportSink } from '../imports/sink.js';
import type { Logger } from '../logger.js';
import { IMPORT_ORDER, importCounts, importIntoSwitchyard, type ImportTally } from './import.js';
import { compareVersions, liveColumns, UPGRADABLE_VERSIONS, VERSION_DESCRIPTIONS, type LegacyVersion } from './legacy/schema.js';
import { applyRoles, countRows, recordVersion, renameFiles, STEP_1_7, STEP_1_8, STEP_1_9, type LegacyDb, type SchemaStep, type StepContext } from './steps.js';

export const CURRENT_VERSION = '2.0.0';

export interface UpgradeOptions {
  url: string;
  uploads: string | null;
  dryRun: boolean;
  config: Config;
  logger: Logger;
  /** The report, a line at a time (stdout). */
  out(line: string): void;
  /** Progress and phase lines (stderr by default). */
  err?: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface UpgradeReport {
  from: string;
  steps: LegacyVersion[];
  imported: ImportTally | null;
  exitCode: number;
}

/** The highest version in schema_migrations (null when the table is missing or empty). */
export async function installedVersion(db: LegacyDb): Promise<string | null> {
  if (!(await liveColumns(db)).has('schema_migrations')) return null;
  const versions = (await db.selectFrom('schema_migrations').select('version').execute()).map((r) => String(r.version));
  return versions.sort(compareVersions).at(-1) ?? null;
}

/** The steps from `version` to 2.0.0; null when there is no path from it. */
export function upgradePath(version: string): LegacyVersion[] | null {
  const start = (UPGRADABLE_VERSIONS as readonly string[]).indexOf(version);
  if (start < 0) return null;
  const chain: LegacyVersion[] = ['1.7.0', '1.8.0', '1.9.0', '2.0.0'];
  return chain.slice(start);
}

const SCHEMA_STEPS: Partial<Record<LegacyVersion, SchemaStep>> = { '1.7.0': STEP_1_7, '1.8.0': STEP_1_8, '1.9.0': STEP_1_9 };

function describeTarget(config: Config): string {
  const store = config.eventStore.kind === 'sqlite' ? `SQLite event store ${config.eventStore.file}` : config.eventStore.kind === 'nats' ? `NATS stream ${config.eventStore.stream} at ${config.eventStore.url.replace(/\/\/[^@/]*@/, '//')}` : 'KurrentDB';
  const models = config.readModels.kind === 'sqlite' ? `SQLite read models ${config.readModels.file}` : `${config.readModels.kind} read models ${config.readModels.database} at ${config.readModels.host}:${config.readModels.port}`;
  return `${store}, ${models}`;
}

export async function upgrade(options: UpgradeOptions): Promise<UpgradeReport> {
  const err = options.err ?? process.stderr;
  const database = await openDatabaseUrl(options.url);
  try {
    const { db, dialect } = database;
    const version = await installedVersion(db);
    if (version === null) throw new ConfigError(`${database.display} is not a Switchyard 1.x database (no schema_migrations rows)`);
    if (version === CURRENT_VERSION) {
      options.out('already current');
      return { from: version, steps: [], imported: null, exitCode: 0 };
    }
    const path = upgradePath(version);
    if (!path) throw new ConfigError(`unsupported upgrade path from ${version}`);

    // Everything that can stop the upgrade is checked before anything changes.
    const files = await countRows(db, 'files');
    if (files > 0 && !options.uploads) throw new ConfigError(`the installation has ${files} file(s): give its uploads directory with --uploads <dir>`);
    if (options.uploads && !(existsSync(options.uploads) && statSync(options.uploads).isDirectory())) throw new ConfigError(`--uploads ${options.uploads}: no such directory`);

    const ctx: StepContext = {
      db,
      dialect,
      uploads: options.uploads,
      say: (line) => err.write(`${line}\n`),
      progress: (label, total) => startProgress(label, total, { stream: err }),
    };
    options.out(`${database.display}: Switchyard ${version}, upgrading through ${path.join(', ')}${options.dryRun ? ' (dry run: nothing is changed)' : ''}`);

    if (options.dryRun) {
      for (const step of path) {
        const lines = step === '2.0.0' ? await plan20(ctx, options.config) : await SCHEMA_STEPS[step]!.plan(ctx);
        options.out(`${step} (${VERSION_DESCRIPTIONS[step]}): would`);
        for (const line of lines) options.out(`  - ${line}`);
      }
      return { from: version, steps: [], imported: null, exitCode: 0 };
    }

    let imported: ImportTally | null = null;
    for (const step of path) {
      let lines: string[];
      if (step === '2.0.0') {
        const result = await apply20(ctx, options);
        lines = result.lines;
        imported = result.tally;
      } else {
        lines = await SCHEMA_STEPS[step]!.apply(ctx);
      }
      await recordVersion(db, step);
      options.out(`${step}: done`);
      for (const line of lines) options.out(`  - ${line}`);
    }
    const skipped = imported ? IMPORT_ORDER.reduce((n, k) => n + imported!.kinds[k].skipped, 0) : 0;
    options.out(`upgraded to ${CURRENT_VERSION}${skipped > 0 ? ` (${skipped} row(s) not imported: see above)` : ''}`);
    return { from: version, steps: path, imported, exitCode: 0 };
  } finally {
    await database.close();
  }
}

async function plan20(ctx: StepContext, config: Config): Promise<string[]> {
  const users = await countRows(ctx.db, 'users');
  const live = await liveColumns(ctx.db);
  const admins = live.get('users')?.has('is_admin') ? await countRows(ctx.db, 'users', (q) => q.where('is_admin', '=', 1)) : 0;
  const files = await countRows(ctx.db, 'files');
  const counts = await importCounts(ctx);
  return [
    `create roles, permissions and user_roles: ${admins} admin(s), ${users - admins} user(s); drop users.is_admin`,
    `rename ${files} file(s) to content-hash names (sha256) under ${ctx.uploads ?? '(no uploads directory)'} and update files.path`,
    `import into Switchyard (${describeTarget(config)}): ${IMPORT_ORDER.map((k) => `${counts[k]} ${k.replace('_', ' ')}`).join(', ')}`,
  ];
}

async function apply20(ctx: StepContext, options: UpgradeOptions): Promise<{ lines: string[]; tally: ImportTally }> {
  const lines = await applyRoles(ctx);
  const files = await renameFiles(ctx);
  lines.push(`${files.renamed} file(s) at content-hash names${files.missing.length > 0 ? `, ${files.missing.length} missing from the uploads directory` : ''}`);
  const sink = await openImportSink(options.config, options.logger, { source: 'switchyard-1' });
  let tally: ImportTally;
  try {
    tally = await importIntoSwitchyard(ctx, sink, new Set(files.missing.map((f) => f.id)));
  } finally {
    await sink.close();
  }
  lines.push(`imported into Switchyard (${describeTarget(options.config)})`);
  for (const kind of IMPORT_ORDER) {
    const t = tally.kinds[kind];
    lines.push(`${kind.replace('_', ' ')}: ${t.created} new, ${t.existing} already there, ${t.skipped} skipped`);
  }
  for (const problem of tally.problems) lines.push(`not imported: ${problem}`);
  return { lines, tally };
}
