#!/usr/bin/env node
/**
 * The `switchyard` command.
 *
 *   switchyard serve                         run the server (what `npm start` does)
 *   switchyard projections status            position and lag of every projection
 *   switchyard projections rebuild <name>... | --all
 *                                            drop projections' tables and replay the log into
 *                                            them, reading it once for all of them
 *   switchyard projections quarantine list [<name>] [--all]
 *                                            events projections set aside as poison (JSON lines)
 *   switchyard projections quarantine replay [<name>]
 *                                            re-apply them after a fix (exit status 2 if some still fail)
 *   switchyard events tail [--from N] [--follow] [--stream S]
 *                                            print commits of the log as JSON lines
 *   switchyard usage archive [--before ISO] [--verify]
 *                                            move usage events older than --before (default: now
 *                                            minus USAGE_ARCHIVE_AFTER_DAYS) out of the log into
 *                                            USAGE_ARCHIVE_DIR; --verify checks the archive files
 *   switchyard migrate                       apply pending schema migrations and exit
 *   switchyard token --user U [--tenant T] [--role admin|user] [--ttl 1h]
 *                                            mint an access token of an existing user (HS256 from
 *                                            SECRET, or RS256 with JWT_PRIVATE_KEY_FILE) with a
 *                                            session of its own, revocable by logging out with it;
 *                                            for automation and emergencies
 *   switchyard audit replay [--tenant T] [--from ISO] [--to ISO] [--scratch FILE]
 *                                            rebuild usage and billing from the log into a scratch
 *                                            database and compare them with the live read models
 *                                            (JSON report; exit status 2 when they differ)
 *   switchyard audit history <key_id|user_id> [--tenant T] [--after N] [--limit N]
 *                                            every event that changed that key's / user's usage or
 *                                            balance, from the log, as JSON lines
 *   switchyard upgrade --from <database URL> [--uploads <dir>] [--dry-run]
 *   switchyard upgrade fixture <1.6.0|…|1.9.0> --to <database URL> --uploads <dir>
 *                                            upgrade a v1.x installation (src/upgrade, docs/upgrading.md)
 *   switchyard secret rotate --old <old SECRET> --new <new SECRET>  (or --old-file / --new-file)
 *                                            re-seal everything sealed with SECRET under a new one
 *                                            (src/secrets, docs/secret-rotation.md)
 *   switchyard import one-api|new-api --from <database URL> [--dry-run] [--tenant T]
 *                                            import a one-api / new-api gateway's channels, users
 *                                            (with their quota as credits) and tokens (as API keys);
 *                                            JSON report on stdout (docs/importing.md)
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createApp, openStores, type Stores } from './app.js';
import { Role, TokenService } from './auth/tokens.js';
import { loadConfig, parseDuration, type Config } from './config.js';
import { ConfigError, UsageError } from './errors.js';
import { VERSION } from './version.js';
import { ownValue } from './own.js';
import { startProgress, type Progress } from './progress.js';
import { askInitAnswers, initChannel, initSnippet, runInit, type InitAnswers } from './bootstrap/init.js';
import { ENV_CHANNEL_KINDS, envNamesOf } from './bootstrap/default-channels.js';
import { randomBytes } from 'node:crypto';
import { hashPassword } from './auth/passwords.js';
import { createUser } from './commands/users/create-user.js';
import { createCommandLogger, createLogger, type Logger } from './logger.js';
import { auditHistory, auditReplay } from './audit/replay.js';
import { projectionsOf } from './projections/index.js';
import { listQuarantine, replayQuarantine } from './projections/runtime/quarantine.js';
import { ProjectionRunner } from './projections/runtime/runner.js';
import { loadUser } from './queries/accounts.js';
import { hashRefreshToken, newRefreshToken, newSessionId } from './auth/refresh-tokens.js';
import { CommandBus } from './commands/bus.js';
import { sessions } from './commands/sessions/decider.js';
import { Metrics } from './api/metrics.js';
import { SECRET_USAGE, secretCommand } from './secrets/cli.js';
import { UPGRADE_USAGE, upgradeCommand, upgradeNeedsNoSecret } from './upgrade/cli.js';

const USAGE = `usage: switchyard <command>
  serve                                   run the server
  init [--provider KIND --key KEY [--base-url URL] [--models a,b] [--key-name NAME]]
                                          the first channel and an API key, and a snippet to paste
                                          (asks on a terminal; else flags or one <PROVIDER>_API_KEY)
  projections status                      position and lag of every projection
  projections rebuild <name>... | --all   drop projections' tables and replay the log (one pass)
  projections quarantine list [<name>] [--all]
                                          events projections set aside as poison (--all: replayed too)
  projections quarantine replay [<name>]  re-apply quarantined events after a fix
  events tail [--from N] [--follow] [--stream S]
  usage archive [--before ISO] [--verify] move old usage events into archive files (or check them)
  migrate                                 apply pending schema migrations
  token --user U | --service-account NAME [--tenant T] [--role admin|user] [--ttl 1h]
  audit replay [--tenant T] [--from ISO] [--to ISO] [--scratch FILE]
                                          compare usage and billing with a replay of the log
  audit history <key_id|user_id> [--tenant T] [--after N] [--limit N]
  import one-api|new-api --from <database URL> [--dry-run] [--tenant T]
                                          import a one-api / new-api gateway (JSON report)
${SECRET_USAGE}
${UPGRADE_USAGE}`;

async function serve(config: Config) {
  const logger = createLogger(config.server.logLevel);
  const app = await createApp(config, logger);
  const { url, metricsUrl } = await app.listen();
  logger.info({ component: 'app', event: 'listening', url, metricsUrl, mode: app.ctx.mode, eventStore: app.ctx.store.kind, readModels: app.ctx.sql.dialect, counters: app.ctx.counters.kind }, 'switchyard is serving');
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ component: 'app', event: 'shutdown_signal', signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ component: 'app', event: 'shutdown_failed', err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

async function withRunner(config: Config, work: (runner: ProjectionRunner) => Promise<void>) {
  const logger = createCommandLogger(config.server.logLevel === 'info' ? 'warn' : config.server.logLevel);
  const { store, sql, counters } = await openStores(config, logger);
  try {
    await work(new ProjectionRunner(store, sql.db, projectionsOf(config), logger));
  } finally {
    await Promise.all([store.close(), sql.close(), counters.close()]);
  }
}

/** The stores (read models migrated), closed afterwards; for commands that are not projectors. */
async function withStores(config: Config, work: (stores: Stores, logger: Logger) => Promise<void>) {
  const logger = createCommandLogger(config.server.logLevel === 'info' ? 'warn' : config.server.logLevel);
  const stores = await openStores(config, logger);
  try {
    await work(stores, logger);
  } finally {
    await Promise.all([stores.store.close(), stores.sql.close(), stores.counters.close()]);
  }
}

/** The usage lines of one command (with their continuation lines); the whole text for an unknown one. */
export function helpOf(command: string): string {
  const lines = USAGE.split('\n').slice(1);
  const picked: string[] = [];
  let inside = false;
  for (const line of lines) {
    if (/^ {2}\S/.test(line)) inside = line.trimStart().split(' ')[0] === command;
    if (inside) picked.push(line);
  }
  return picked.length > 0 ? `usage: switchyard\n${picked.join('\n')}` : USAGE;
}

const SERVICE_ACCOUNT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * A service user for automation: a real account (UserCreated in the log, caused by the CLI, listed
 * with the tenant's users) with a random password nobody holds, so it acts only through the
 * tokens minted here and the keys they create. Made once; later calls reuse it (its role must match).
 */
async function ensureServiceAccount(commands: CommandBus, db: Stores['sql']['db'], tenantId: string, name: string, role: Role): Promise<{ userId: string; created: boolean; role: Role }> {
  const userId = `svc_${name}`;
  if (await loadUser(db, tenantId, userId)) return { userId, created: false, role };
  const email = `${name}@service-accounts.invalid`;
  const passwordHash = await hashPassword(randomBytes(32).toString('base64url'));
  try {
    await createUser(commands, { userId, tenantId, email, passwordHash, role }, `cli-service-account-${name}`);
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'user_exists')) throw error;
  }
  console.error(`created service account ${userId} (${role}) in tenant ${tenantId}`);
  return { userId, created: true, role };
}

/**
 * Commands that only read (positions, the log as stored) need no SECRET: nothing is signed,
 * sealed or opened. They get a stand-in so that the configuration loads.
 */
const READ_ONLY_SECRET = 'not-set:read-only-command';
function readOnly(command: string, sub: string | undefined): boolean {
  return (command === 'projections' && sub === 'status') || (command === 'events' && sub === 'tail');
}

/** One progress display per projection an audit replays (counts, rate and ETA in log positions). */
function replayDisplay(): ((projection: string, position: number, target: number, done: boolean) => void) | undefined {
  // Off a terminal the replay's own progress lines (JSON, every 2 s) say it.
  if (!process.stderr.isTTY) return undefined;
  let current: { name: string; progress: Progress } | null = null;
  return (projection, position, target, done) => {
    if (current?.name !== projection) {
      current?.progress.finish();
      current = { name: projection, progress: startProgress(`replaying ${projection} (log position)`, target) };
    }
    current.progress.update(position);
    if (done) {
      current.progress.finish();
      current = null;
    }
  };
}

/** A whole number of at least `min`, or a UsageError naming the option. */
function wholeNumber(option: string, value: string, min = 0, command?: string): number {
  if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) throw new UsageError(`${option} must be a whole number${min > 0 ? ` of at least ${min}` : ''} (got "${value}")`, command);
  return Number(value);
}

/** parseArgs, strict, whose complaints are UsageErrors of `command`. */
function options<T extends ParseArgsConfig>(command: string, config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\s*\n\s*/g, ' '), command);
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === '--version' || command === '-V' || command === 'version') {
    console.log(VERSION);
    return 0;
  }
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(USAGE);
    return command ? 0 : 1;
  }
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(helpOf(command));
    return 0;
  }
  if (argv.includes('--version')) {
    console.log(VERSION);
    return 0;
  }
  // Takes its SECRETs from --old and --new: SECRET itself may be either, or not set.
  if (command === 'secret') return secretCommand(argv.slice(1));
  const config = loadConfig((readOnly(command, sub) || upgradeNeedsNoSecret(argv)) && !process.env.SECRET && !process.env.JWT_SECRET ? { ...process.env, SECRET: READ_ONLY_SECRET } : process.env);
  switch (command) {
    case 'serve':
      await serve(config);
      return -1; // keep running
    case 'migrate':
      await withRunner(config, async () => undefined);
      console.log('schema is up to date');
      return 0;
    case 'projections': {
      if (sub === 'status') {
        await withRunner(config, async (runner) => {
          for (const s of await runner.status()) {
            console.log(`${s.name.padEnd(24)} v${s.version}  position ${s.position}  lag ${s.lag}${s.quarantined > 0 ? `  QUARANTINED ${s.quarantined} (see: projections quarantine list ${s.name})` : ''}`);
          }
        });
        return 0;
      }
      if (sub === 'rebuild' && rest[0]) {
        // `all` (the older spelling) and `--all` name every projection.
        const all = rest.includes('--all') || (rest.length === 1 && rest[0] === 'all');
        await withRunner(config, async (runner) => {
          const names = all ? runner.names : rest;
          const started = Date.now();
          const progress = startProgress(`rebuilding ${names.length === 1 ? names[0] : `${names.length} projections`} (log position)`, await runner.headPosition());
          await runner.rebuildTogether(names, (position) => progress.update(position));
          progress.finish();
          const elapsed = Date.now() - started;
          const status = await runner.status();
          const quarantined = names.flatMap((name) => {
            const count = status.find((s) => s.name === name)?.quarantined ?? 0;
            return count > 0 ? [`${count} event(s) quarantined in ${name} (see: projections quarantine list ${name})`] : [];
          });
          console.log(`rebuilt ${names.join(', ')} in ${elapsed} ms${quarantined.length > 0 ? `; ${quarantined.join('; ')}` : ''}`);
        });
        return 0;
      }
      if (sub === 'quarantine' && (rest[0] === 'list' || rest[0] === 'replay')) {
        const { values, positionals } = options('projections', { args: rest.slice(1), allowPositionals: true, options: { all: { type: 'boolean', default: false } } });
        const names = positionals[0] === undefined ? undefined : [positionals[0]];
        let stillQuarantined = 0;
        await withStores(config, async ({ store, sql }) => {
          for (const name of names ?? []) if (!projectionsOf(config).some((p) => p.name === name)) throw new Error(`unknown projection "${name}" (known: ${projectionsOf(config).map((p) => p.name).join(', ')})`);
          if (rest[0] === 'list') {
            for (const row of await listQuarantine(sql.db, { projections: names, includeReplayed: values.all })) console.log(JSON.stringify(row));
            return;
          }
          const outcomes = await replayQuarantine(sql.db, store, projectionsOf(config), names);
          for (const outcome of outcomes) console.log(JSON.stringify(outcome));
          stillQuarantined = outcomes.filter((o) => o.result !== 'applied').length;
          console.error(`replayed ${outcomes.length - stillQuarantined} event(s); ${stillQuarantined} still quarantined`);
        });
        return stillQuarantined === 0 ? 0 : 2;
      }
      break;
    }
    case 'usage': {
      if (sub !== 'archive') break;
      const { values } = options('usage', { args: rest, options: { before: { type: 'string' }, verify: { type: 'boolean', default: false } } });
      const dir = config.retention.usageArchiveDir;
      const { archiveBefore, archiveUsageNow, verifyArchive } = await import('./archive/index.js');
      if (values.verify) {
        const checks = await verifyArchive(dir);
        for (const check of checks) console.log(JSON.stringify(check));
        return checks.every((c) => c.ok) ? 0 : 2;
      }
      const before = values.before !== undefined ? new Date(values.before) : archiveBefore(config.retention.usageArchiveAfterDays, new Date());
      if (!before || Number.isNaN(before.getTime())) {
        console.error('name a cutoff: --before ISO-time, or set USAGE_ARCHIVE_AFTER_DAYS');
        return 1;
      }
      let exit = 0;
      await withStores(config, async ({ store, sql }) => {
        const result = await archiveUsageNow(store, sql, dir, before);
        console.log(JSON.stringify({ before: before.toISOString(), removed: result.removed, archived_up_to: result.upTo, file: result.entry }, null, 2));
      }).catch((error: unknown) => {
        if (!(error instanceof Error && error.name === 'ArchivalNotSupportedError')) throw error;
        console.error(error.message);
        exit = 1;
      });
      return exit;
    }
    case 'events': {
      if (sub !== 'tail') break;
      const { values } = options('events', { args: rest, options: { from: { type: 'string', default: '0' }, follow: { type: 'boolean', default: false }, stream: { type: 'string' } } });
      const from = wholeNumber('--from', values.from, 0, 'events');
      const print = (commit: { stream: string; events: unknown[] }) => {
        if (!values.stream || commit.stream === values.stream) for (const e of commit.events) console.log(JSON.stringify(e));
      };
      await withRunner(config, async () => undefined); // migrates; harmless
      const { openEventStore } = await import('./adapters/index.js');
      const store = await openEventStore(config.eventStore);
      let after = from;
      if (!values.follow) {
        for (;;) {
          const commits = await store.readAll({ after, limit: 500 });
          if (commits.length === 0) break;
          commits.forEach(print);
          after = commits.at(-1)!.position;
        }
        await store.close();
        return 0;
      }
      const subscription = store.subscribe({ after, onCommit: async (c) => print(c) });
      process.on('SIGINT', () => void subscription.close().then(() => store.close()).then(() => process.exit(0)));
      return -1;
    }
    case 'audit': {
      const { values, positionals } = options('audit', {
        args: rest,
        allowPositionals: true,
        options: { tenant: { type: 'string', default: 'default' }, from: { type: 'string' }, to: { type: 'string' }, scratch: { type: 'string' }, after: { type: 'string', default: '0' }, limit: { type: 'string' } },
      });
      /** A report about a tenant that does not exist is empty and would look like "no differences". */
      const requireTenant = async (db: Stores['sql']['db']) => {
        const tenant = await db.selectFrom('tenants').select('tenant_id').where('tenant_id', '=', values.tenant).executeTakeFirst();
        if (!tenant) throw new UsageError(`no tenant "${values.tenant}"`, 'audit');
      };
      if (sub === 'replay') {
        const from = new Date(values.from ?? '1970-01-01T00:00:00Z');
        const to = values.to !== undefined ? new Date(values.to) : new Date();
        if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || from >= to) {
          console.error('--from and --to must be ISO times, --from before --to');
          return 1;
        }
        let differences = 0;
        await withStores(config, async ({ store, sql }, logger) => {
          await requireTenant(sql.db);
          // Progress on stderr at info, whatever LOG_LEVEL quiets; stdout is the report.
          const progress = createCommandLogger(['warn', 'error', 'fatal', 'silent'].includes(config.server.logLevel) ? config.server.logLevel : 'info');
          const settings = { ...config.audit, secret: config.secret };
          const onReplay = replayDisplay();
          const report = await auditReplay({ store, live: sql.db, liveDialect: sql.dialect, logger, progress, onReplay, projections: projectionsOf(config), settings }, { tenantId: values.tenant, from, to }, { scratchFile: values.scratch });
          differences = report.differences;
          console.log(JSON.stringify(report, null, 2));
        });
        return differences === 0 ? 0 : 2;
      }
      if (sub === 'history' && positionals[0]) {
        const subjectId = positionals[0];
        const limit = values.limit !== undefined ? wholeNumber('--limit', values.limit, 1, 'audit') : Infinity;
        const afterOption = wholeNumber('--after', values.after, 0, 'audit');
        await withStores(config, async ({ store, sql }) => {
          await requireTenant(sql.db);
          let after = afterOption;
          let printed = 0;
          while (printed < limit) {
            const page = await auditHistory({ store, projections: projectionsOf(config) }, { tenantId: values.tenant, subjectId, after, limit: Math.min(1000, limit - printed) });
            for (const entry of page.entries) console.log(JSON.stringify(entry));
            printed += page.entries.length;
            if (page.next_after === null) return;
            after = page.next_after;
          }
          console.error(`more events follow: continue with --after ${after}`);
        });
        return 0;
      }
      break;
    }
    case 'upgrade':
      return upgradeCommand(argv.slice(1), config);
    case 'init': {
      const { values } = options('init', {
        args: argv.slice(1),
        options: { provider: { type: 'string' }, key: { type: 'string' }, 'base-url': { type: 'string' }, models: { type: 'string' }, 'key-name': { type: 'string', default: 'init' } },
      });
      let answers: InitAnswers = { provider: values.provider, key: values.key, baseUrl: values['base-url'], models: values.models };
      const envHasKey = ENV_CHANNEL_KINDS.some((kind) => ownValue(process.env, envNamesOf(kind).apiKey));
      if (process.stdin.isTTY && (answers.provider === undefined ? !envHasKey : answers.key === undefined)) answers = await askInitAnswers(answers);
      const channel = initChannel(answers, process.env);
      const logger = createCommandLogger(config.server.logLevel === 'info' ? 'warn' : config.server.logLevel);
      const result = await runInit(config, logger, channel, values['key-name']);
      const model = result.channel.models[0]!;
      console.log(`channel  ${result.channel.name} (${channel.kind}) ${result.channel.created ? 'created' : 'already there, kept'}; models: ${result.channel.models.join(', ')}`);
      console.log(`API key  ${result.apiKey}   (shown once; owned by the root admin)`);
      console.log('');
      console.log(`Start the server (npm start, or switchyard serve) and try it:`);
      console.log('');
      console.log(initSnippet(`http://localhost:${config.server.port}`, result.apiKey, model));
      return 0;
    }
    case 'import': {
      const { importCommand } = await import('./imports/gateways/cli.js');
      return importCommand(config, [sub ?? '', ...rest].filter(Boolean));
    }
    case 'token': {
      const { values } = options('token', {
        args: [sub ?? '', ...rest].filter(Boolean),
        options: { user: { type: 'string' }, 'service-account': { type: 'string' }, tenant: { type: 'string', default: 'default' }, role: { type: 'string' }, ttl: { type: 'string', default: '1h' } },
      });
      const serviceAccount = values['service-account'];
      if ((values.user === undefined) === (serviceAccount === undefined)) throw new UsageError('name an existing user with --user, or a service account with --service-account (not both)', 'token');
      const role = values.role === undefined ? undefined : Role.safeParse(values.role).data;
      if (values.role !== undefined && role === undefined) throw new UsageError(`--role must be ${Role.options.join(' or ')} (got "${values.role}")`, 'token');
      let ttlMs: number;
      try {
        ttlMs = parseDuration(values.ttl);
      } catch (error) {
        throw new UsageError(`--ttl: ${(error as Error).message}`, 'token');
      }
      if (ttlMs <= 0) throw new UsageError('--ttl must be longer than zero', 'token');
      if (serviceAccount !== undefined && !SERVICE_ACCOUNT_NAME.test(serviceAccount)) throw new UsageError('--service-account: lower-case letters, digits, ".", "_" and "-", up to 64, starting with a letter or digit', 'token');
      let code = 0;
      await withStores(config, async ({ store, sql }) => {
        const commands = new CommandBus(store, new Metrics());
        const tenant = await sql.db.selectFrom('tenants').select('tenant_id').where('tenant_id', '=', values.tenant).executeTakeFirst();
        if (!tenant) throw new UsageError(`no tenant "${values.tenant}"`, 'token');
        const made = serviceAccount !== undefined ? await ensureServiceAccount(commands, sql.db, values.tenant, serviceAccount, role ?? 'user') : null;
        const userId = made?.userId ?? values.user!;
        // A service account made just now is not in the read model yet (no projector runs here).
        const user = made?.created ? { tenant_id: values.tenant, role: made.role } : await loadUser(sql.db, values.tenant, userId);
        if (!user) {
          console.error(`no user ${userId} in tenant ${values.tenant} (a token is minted only for an existing user; --service-account NAME makes one for automation)`);
          code = 1;
          return;
        }
        // The token's role is the user's: a CLI token grants nothing the account does not hold.
        if (role !== undefined && role !== user.role) {
          console.error(`user ${userId} has the role ${user.role}, not ${role}`);
          code = 1;
          return;
        }
        // A session of its own, so that the token can be revoked (POST /v1/auth/logout with it).
        const sessionId = newSessionId();
        await commands.execute(
          sessions,
          sessionId,
          { type: 'StartSession', sessionId, userId, refreshHash: hashRefreshToken(newRefreshToken(sessionId)), expiresAt: new Date(Date.now() + ttlMs).toISOString(), userAgent: 'switchyard token', ip: null },
          { tenantId: user.tenant_id, causationId: `cli-token-${sessionId}` },
        );
        const tokens = new TokenService(config.secret, ttlMs, config.auth.jwt);
        console.log(await tokens.issueAccessToken({ userId, tenantId: user.tenant_id, role: Role.parse(user.role), sessionId }));
      });
      return code;
    }
  }
  console.error(USAGE);
  return 1;
}

/**
 * Exits once stdout and stderr have handed everything to the OS: process.exit() right away drops
 * what a pipe (`switchyard events tail | wc -l`) has not taken yet.
 */
async function exitAfterOutput(code: number): Promise<never> {
  const flush = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => (stream.writableLength === 0 ? resolve() : stream.write('', () => resolve())));
  await Promise.all([flush(process.stdout), flush(process.stderr)]);
  process.exit(code);
}

// A reader that went away (`| head`) ends the command quietly, as other Unix tools do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) void exitAfterOutput(code);
  },
  (error: unknown) => {
    // Startup problems and bad command lines are the operator's to fix: one line, no stack.
    if (error instanceof UsageError) console.error(`switchyard: ${error.message}${error.command ? ` (see: switchyard ${error.command} --help)` : ''}`);
    else if (error instanceof ConfigError) console.error(error.message);
    else if (error instanceof Error && /Failed to connect to database/.test(error.message)) console.error(error.message);
    else console.error(error);
    void exitAfterOutput(1);
  },
);
