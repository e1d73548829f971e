/**
 * `switchyard import one-api|new-api --from <database URL> [--dry-run] [--tenant T]`: the gateway's
 * database in, a JSON report on stdout (what was imported, what could not be and why), progress
 * and a short summary on stderr. Exit status 0 when the database could be read (rows that did not
 * map are in the report), 1 when it could not.
 */
import { parseArgs } from 'node:util';
import type { Config } from '../../config.js';
import { UsageError } from '../../errors.js';
import { createCommandLogger } from '../../logger.js';
import { ownValue } from '../../own.js';
import { openDatabaseUrl } from '../database-url.js';
import { startProgress, type Progress } from '../../progress.js';
import { openImportSink } from '../sink.js';
import { newApi } from '../new-api/index.js';
import { oneApi } from '../one-api/index.js';
import { importGateway, missingTables, type ImportReport, type LegacyTable } from './import.js';
import type { GatewaySource } from './source.js';

const SOURCES: Record<string, GatewaySource> = { 'one-api': oneApi, 'new-api': newApi };

function summary(report: ImportReport): string {
  const line = (what: string, c: { created: number; existing: number; not_mapped: number }) => `${what}: ${c.created} ${report.dry_run ? 'to create' : 'created'}, ${c.existing} already there, ${c.not_mapped} not mapped`;
  return [
    `${report.source} import${report.dry_run ? ' (dry run: nothing written)' : ''}`,
    line('users', report.users),
    line('credit top-ups', report.credits),
    line('channels', report.channels),
    line('API keys', report.keys),
    ...(report.not_mapped.length > 0 ? [`${report.not_mapped.length} row(s) not imported: see "not_mapped" in the report`] : []),
  ].join('\n');
}

/** Runs the command; resolves with the exit status. */
export async function importCommand(config: Config, args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { from: { type: 'string' }, 'dry-run': { type: 'boolean', default: false }, tenant: { type: 'string' } } });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\s*\n\s*/g, ' '), 'import');
  }
  const { values, positionals } = parsed;
  const source = ownValue(SOURCES, positionals[0] ?? '');
  if (!source || positionals.length !== 1) throw new UsageError(`import names the gateway: one-api or new-api${positionals.length > 0 ? ` (got "${positionals.join(' ')}")` : ''}`, 'import');
  if (!values.from) throw new UsageError(`import needs --from <database URL> (sqlite:/path/one-api.db, mysql://user:pass@host:3306/oneapi)`, 'import');
  const dryRun = values['dry-run'];
  const legacy = await openDatabaseUrl(values.from);
  let report: ImportReport;
  try {
    // Before Switchyard is opened: a database that is not the gateway's changes nothing anywhere.
    const missing = await missingTables(legacy.db);
    if (missing.length > 0) throw new Error(`it has no ${missing.join(', ')} table${missing.length > 1 ? 's' : ''}: is it ${source.name}'s database?`);
    // A log line per imported row would bury the progress and the summary: warnings and up, unless asked for.
    const logger = createCommandLogger(config.server.logLevel === 'info' ? 'warn' : config.server.logLevel);
    const sink = await openImportSink(config, logger, { source: source.name, tenantId: values.tenant, dryRun });
    let progress: { table: LegacyTable; bar: Progress } | null = null;
    try {
      report = await importGateway(source, legacy.db, sink, {
        dryRun,
        onProgress: (table, _done, total) => {
          if (progress?.table !== table) {
            progress?.bar.finish();
            progress = { table, bar: startProgress(`${source.name} ${table}`, total) };
          }
          progress.bar.tick();
        },
      });
      (progress as { bar: Progress } | null)?.bar.finish();
    } finally {
      // Waits until the read models show the import (the report is true once printed).
      await sink.close();
    }
  } catch (error) {
    console.error(`${source.name} import from ${legacy.display} failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await legacy.close();
  }
  console.log(JSON.stringify(report, null, 2));
  console.error(summary(report));
  return 0;
}
