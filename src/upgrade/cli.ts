/**
 * `switchyard upgrade …`: argument parsing and output only; the work is in ./upgrade.ts and
 * ./legacy/fixtures.ts.
 *
 *   switchyard upgrade --from <database URL> [--uploads <dir>] [--dry-run]
 *   switchyard upgrade fixture <1.6.0|1.7.0|1.8.0|1.9.0> --to <database URL> --uploads <dir>
 *                      [--users N] [--messages N] [--channel-base-url URL] [--channel-key K]
 *                      [--admin-password P] [--seed N]
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.js';
import { UsageError } from '../errors.js';
import { generateFixture } from './legacy/fixtures.js';
import { UPGRADABLE_VERSIONS, type UpgradableVersion } from './legacy/schema.js';
import { upgrade } from './upgrade.js';
import { createCommandLogger } from '../logger.js';

export const UPGRADE_USAGE = `  upgrade --from <database URL> [--uploads <dir>] [--dry-run]
                                          upgrade a Switchyard 1.6-1.9 installation and import it
  upgrade fixture <1.6.0|1.7.0|1.8.0|1.9.0> --to <database URL> --uploads <dir> [--users N] [--messages N]
                                          write a made-up 1.x installation to rehearse on`;

/** Writing a fixture and a dry run sign, seal and open nothing: they run without SECRET. */
export function upgradeNeedsNoSecret(argv: string[]): boolean {
  return argv[0] === 'upgrade' && (argv[1] === 'fixture' || argv.includes('--dry-run'));
}

function count(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number (got "${value}")`, 'upgrade');
  return Number(value);
}

/** parseArgs, strict; its complaints are UsageErrors (one line, pointing at `upgrade --help`). */
function parse<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\s*\n\s*/g, ' '), 'upgrade');
  }
}

/** Runs the command; resolves with the exit status. */
export async function upgradeCommand(args: string[], config: Config): Promise<number> {
  if (args[0] === 'fixture') {
    const { values, positionals } = parse({
      args: args.slice(1),
      allowPositionals: true,
      options: {
        to: { type: 'string' },
        uploads: { type: 'string' },
        users: { type: 'string' },
        messages: { type: 'string' },
        'channel-base-url': { type: 'string' },
        'channel-key': { type: 'string' },
        'admin-password': { type: 'string' },
        seed: { type: 'string' },
      },
    });
    const version = positionals[0];
    if (!version || !(UPGRADABLE_VERSIONS as readonly string[]).includes(version)) throw new UsageError(`upgrade fixture: the version is one of ${UPGRADABLE_VERSIONS.join(', ')}${version ? ` (got "${version}")` : ''}`, 'upgrade');
    if (!values.to || !values.uploads) throw new UsageError('upgrade fixture needs --to <database URL> and --uploads <dir>', 'upgrade');
    const summary = await generateFixture({
      version: version as UpgradableVersion,
      url: values.to,
      uploads: values.uploads,
      users: count(values.users, 'users'),
      messages: count(values.messages, 'messages'),
      channelBaseUrl: values['channel-base-url'] ?? null,
      channelKey: values['channel-key'],
      adminPassword: values['admin-password'],
      seed: count(values.seed, 'seed'),
    });
    // The rehearsal credentials are made up for this fixture: printing them is the point.
    console.log(JSON.stringify(summary, null, 2));
    return 0;
  }
  const { values } = parse({ args, options: { from: { type: 'string' }, uploads: { type: 'string' }, 'dry-run': { type: 'boolean', default: false } } });
  if (!values.from) throw new UsageError('upgrade needs --from <database URL> (sqlite:/path/file.db, mysql://…, postgres://…)', 'upgrade');
  const logger = createCommandLogger(config.server.logLevel === 'info' ? 'warn' : config.server.logLevel);
  const report = await upgrade({ url: values.from, uploads: values.uploads ?? null, dryRun: values['dry-run'], config, logger, out: (line) => console.log(line) });
  return report.exitCode;
}
