/**
 * `switchyard secret rotate --old <old> --new <new>` (or `--old-file` / `--new-file`, which keep the
 * values out of the process list): re-seals what the old SECRET sealed with the new one
 * (src/secrets/rotate.ts). JSON report on stdout, a summary on stderr. Exit status 0 when
 * everything opens with the new SECRET, 2 when some values opened with neither (listed in the
 * report, left as they were), 1 when --old does not open the data.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openStores } from '../app.js';
import { Metrics } from '../api/metrics.js';
import { CommandBus } from '../commands/bus.js';
import { loadConfig } from '../config.js';
import { UsageError } from '../errors.js';
import { createCommandLogger } from '../logger.js';
import { dataLocation } from './canary.js';
import { rotateSecret, type RotationReport } from './rotate.js';

export const SECRET_USAGE = `  secret rotate --old <old SECRET> --new <new SECRET>
  secret rotate --old-file <file> --new-file <file>
                                          re-seal channel keys, MFA secrets, webhook secrets and
                                          data keys with a new SECRET (as events; resumable), then
                                          start the servers with SECRET=<new> (docs/secret-rotation.md);
                                          the -file forms read each SECRET from a file (one line),
                                          out of sight of the process list`;

/** Stands in for SECRET while the configuration loads: rotate uses --old and --new, never SECRET. */
const NOT_USED = 'not-used:secret-rotate-takes-old-and-new';

function summary(report: RotationReport): string {
  const line = (what: string, c: RotationReport['channel_keys']) =>
    `${what}: ${c.resealed} re-sealed, ${c.already} already under the new SECRET${c.unopenable.length > 0 ? `, ${c.unopenable.length} open with neither (left as they are)` : ''}`;
  const codes = report.recovery_codes_invalidated_for.length;
  return [
    line('channel keys', report.channel_keys),
    line('MFA secrets', report.mfa_secrets),
    line('webhook secrets', report.webhook_secrets),
    line('data keys', report.data_keys),
    ...(codes > 0 ? [`${codes} user(s) with multi-factor login: their recovery codes no longer work; they make new ones (see "recovery_codes_invalidated_for")`] : []),
    'access tokens signed with the old SECRET are refused from the restart on: clients renew them with their refresh token (or log in again)',
    'now start every server with SECRET=<new>',
  ].join('\n');
}

/** `--<name>` itself, or the first line of the file `--<name>-file` names. */
function secretOption(given: Record<string, string | undefined>, name: 'old' | 'new'): string | undefined {
  const value = given[name];
  const file = given[`${name}-file`];
  if (value !== undefined && file !== undefined) throw new UsageError(`give --${name} or --${name}-file, not both`, 'secret');
  if (file === undefined) return value;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--${name}-file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 'secret');
  }
  const line = text.replace(/\r?\n$/, '');
  if (line.includes('\n')) throw new UsageError(`--${name}-file ${file}: more than one line (the file holds the SECRET alone)`, 'secret');
  return line;
}

/** Runs `secret <args>`; resolves with the exit status. */
export async function secretCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'rotate') throw new UsageError(sub === undefined ? 'name a subcommand: secret rotate' : `unknown subcommand "secret ${sub}"`, 'secret');
  let given: { old?: string; new?: string; 'old-file'?: string; 'new-file'?: string };
  try {
    ({ values: given } = parseArgs({ args: rest, options: { old: { type: 'string' }, new: { type: 'string' }, 'old-file': { type: 'string' }, 'new-file': { type: 'string' } } }));
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\s*\n\s*/g, ' '), 'secret');
  }
  const values = { old: secretOption(given, 'old'), new: secretOption(given, 'new') };
  if (!values.old || !values.new) throw new UsageError('secret rotate needs --old <the SECRET the data is sealed with> and --new <the SECRET to seal it with> (or --old-file / --new-file)', 'secret');
  if (values.old === values.new) throw new UsageError('--old and --new are the same SECRET: nothing to rotate', 'secret');
  // The servers must accept the new SECRET as SECRET (src/config.ts: at least 16 characters).
  if (values.new.length < 16) throw new UsageError('--new must be at least 16 characters, as SECRET must', 'secret');
  const config = loadConfig({ ...process.env, SECRET: NOT_USED, JWT_SECRET: undefined });
  const logger = createCommandLogger(config.server.logLevel === 'info' ? 'warn' : config.server.logLevel);
  const stores = await openStores(config, logger);
  try {
    const report = await rotateSecret({
      store: stores.store,
      sql: stores.sql,
      commands: new CommandBus(stores.store, new Metrics()),
      oldSecret: values.old,
      newSecret: values.new,
      location: dataLocation(config),
    });
    console.log(JSON.stringify(report, null, 2));
    console.error(summary(report));
    const unopenable = [report.channel_keys, report.mfa_secrets, report.webhook_secrets, report.data_keys].some((c) => c.unopenable.length > 0);
    return unopenable ? 2 : 0;
  } finally {
    await Promise.all([stores.store.close(), stores.sql.close(), stores.counters.close()]);
  }
}
