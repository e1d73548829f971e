/**
 * `<PROVIDER>_API_KEY` default channels and the 2.0 renames, on the real server in both modes: an
 * installation started with OPENAI_API_KEY (and OPENAI_BASE_URL at a fake OpenAI) has an `openai`
 * channel that relays for the official SDK; a restart creates nothing again; an admin's deletion
 * is not undone by a restart; two distributed instances starting together create one channel.
 * Every log line is captured (trace level, before any scrubbing): the key is never in one.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDefaultChannels, defaultChannelsFromEnv, ENV_CHANNEL_MODELS } from '../../src/bootstrap/default-channels.js';
import { TokenService } from '../../src/auth/tokens.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes, type ModeEnv } from '../support/modes.js';
import { sdk } from '../support/relay.js';

const services = inject('services');
const urls = inject('serviceUrls');
const MODES = appModes(services, urls);

interface LogLine {
  level: number;
  msg: string;
  event?: string;
  variable?: string;
  provider?: string;
  channel_name?: string;
}

/** Every line the app writes, as written (a plain pino logger: no redaction to hide a leak). */
function capturingLogger(): { logger: Logger; lines: LogLine[]; raw: string[] } {
  const lines: LogLine[] = [];
  const raw: string[] = [];
  const logger = pino({ level: 'trace' }, {
    write: (line: string) => {
      raw.push(line);
      lines.push(JSON.parse(line) as LogLine);
    },
  });
  return { logger, lines, raw };
}

const created = (lines: LogLine[]) => lines.filter((l) => l.event === 'default_channel_created');

describe.each(MODES.map((m) => [m.name, m] as const))('default channels from OPENAI_API_KEY (%s)', (_name, mode) => {
  const apiKey = `sk-env-${randomBytes(12).toString('hex')}`;
  let upstream: OpenAiFake;
  let stores: ModeEnv = { env: {}, cleanup: async () => undefined };
  const dataDir = mkdtempSync(join(tmpdir(), 'sy-env-channels-'));
  const logs: string[] = [];
  const env = () => ({
    ...stores.env,
    HEALTH_CHECK_ENABLED: 'false',
    OPENAI_API_KEY: apiKey,
    OPENAI_BASE_URL: upstream.baseUrl,
    JWT_SECRET: 'an-old-1x-jwt-secret-value',
    LEGACY_AUTH_ENABLED: 'true',
    OLD_API_FORMAT: 'true',
  });
  /** Starts an instance on this suite's stores (the data dir is kept: restarts in embedded mode). */
  async function start(): Promise<{ s: RunningApp; lines: LogLine[] }> {
    const capture = capturingLogger();
    const s = await startApp(env(), { logger: capture.logger, keepDataDir: dataDir });
    logs.push(...capture.raw);
    return { s, lines: capture.lines };
  }
  const channelList = async (s: RunningApp) => {
    const res = await call(`${s.url}/v1/admin/channels`, { token: s.adminToken });
    expect(res.status).toBe(200);
    return res.json.data as Array<Record<string, unknown>>;
  };
  const eventsOf = async (s: RunningApp) => (await s.app.ctx.store.readStream('channel-ch_default_openai')).map((e) => e.type);

  beforeAll(async () => {
    if (!mode.enabled) return;
    upstream = await startOpenAiFake({ apiKey });
    stores = mode.env();
  });
  afterAll(async () => {
    await upstream?.close();
    await stores.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.runIf(mode.enabled)('first start: an enabled openai channel with the usual models relays for the SDK; the renames are logged; the key is not', async () => {
    const { s, lines } = await start();
    try {
      const list = await channelList(s);
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ id: 'ch_default_openai', name: 'openai', type: 'openai', enabled: true, base_url: upstream.baseUrl, models: [...ENV_CHANNEL_MODELS.openai], priority: 0, weight: 1 });
      expect(list[0]!.key).toBe(`sk-****${apiKey.slice(-4)}`);

      const completion = await sdk(s).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi through the default channel' }] });
      expect(completion.choices[0]!.message.content).toBe('Hello! You said: hi through the default channel');
      const sent = upstream.requests.at(-1)!;
      expect(sent.headers.authorization).toBe(`Bearer ${apiKey}`);
      expect((sent.json as { model: string }).model).toBe('gpt-4o-mini');

      expect(created(lines).map((l) => [l.level, l.provider, l.channel_name, l.msg])).toEqual([[30, 'openai', 'openai', 'default channel "openai" (openai) created from OPENAI_API_KEY']]);
      const warnings = lines.filter((l) => l.event === 'config_warning');
      expect(warnings.map((l) => [l.level, l.variable])).toEqual([
        [40, 'JWT_SECRET'],
        [40, 'LEGACY_AUTH_ENABLED'],
        [40, 'OLD_API_FORMAT'],
      ]);
      expect(warnings[0]!.msg).toBe('JWT_SECRET is ignored: SECRET is set (JWT_SECRET was renamed SECRET in 2.0; remove it)');
    } finally {
      await s.app.close();
    }
  });

  it.runIf(mode.enabled)('a restart creates no second channel and logs no creation', async () => {
    const { s, lines } = await start();
    try {
      expect((await channelList(s)).map((c) => c.id)).toEqual(['ch_default_openai']);
      expect(await eventsOf(s)).toEqual(['ChannelCreated']);
      expect(created(lines)).toEqual([]);
      // The renames are logged at every start (once each).
      expect(lines.filter((l) => l.event === 'config_warning').map((l) => l.variable)).toEqual(['JWT_SECRET', 'LEGACY_AUTH_ENABLED', 'OLD_API_FORMAT']);
    } finally {
      await s.app.close();
    }
  });

  it.runIf(mode.enabled)('after an admin deletes it, a restart does not create it again', async () => {
    const first = await start();
    try {
      const res = await call(`${first.s.url}/v1/admin/channels/ch_default_openai`, { method: 'DELETE', token: first.s.adminToken });
      expect(res.status).toBe(200);
    } finally {
      await first.s.app.close();
    }
    const { s, lines } = await start();
    try {
      expect(await channelList(s)).toEqual([]);
      expect(await eventsOf(s)).toEqual(['ChannelCreated', 'ChannelDeleted']);
      expect(created(lines)).toEqual([]);
      const refused = await sdk(s).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch((error: { status?: number }) => error);
      expect((refused as { status?: number }).status).toBeGreaterThanOrEqual(400);
    } finally {
      await s.app.close();
    }
  });

  it.runIf(mode.enabled)('no log line of any start holds the key', () => {
    expect(logs.length).toBeGreaterThan(20);
    expect(logs.filter((line) => line.includes(apiKey))).toEqual([]);
    expect(logs.filter((line) => line.includes(apiKey.slice(7)))).toEqual([]); // not even without its prefix
  });
});

describe.runIf(MODES[1]!.enabled)('default channels: two distributed instances starting together', () => {
  let stores: ModeEnv;
  afterAll(async () => {
    await stores?.cleanup();
  });

  it('create one channel per provider and log each creation once', async () => {
    stores = MODES[1]!.env();
    const keys = { OPENAI_API_KEY: `sk-race-${randomBytes(8).toString('hex')}`, ANTHROPIC_API_KEY: `sk-ant-race-${randomBytes(8).toString('hex')}` };
    const env = { ...stores.env, HEALTH_CHECK_ENABLED: 'false', ...keys };
    const captures = [capturingLogger(), capturingLogger()];
    const [a, b] = await Promise.all(captures.map(({ logger }) => startApp(env, { logger })));
    try {
      for (const s of [a!, b!]) {
        await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition(), { projections: ['channels'] });
        const list = (await call(`${s.url}/v1/admin/channels`, { token: s.adminToken })).json.data as Array<{ id: string; name: string }>;
        expect(list.map((c) => [c.id, c.name]).sort()).toEqual([
          ['ch_default_anthropic', 'anthropic'],
          ['ch_default_openai', 'openai'],
        ]);
      }
      expect(await a!.app.ctx.store.readStream('channel-ch_default_openai')).toHaveLength(1);
      expect(await a!.app.ctx.store.readStream('channel-ch_default_anthropic')).toHaveLength(1);
      const lines = captures.flatMap((c) => created(c.lines));
      expect(lines.map((l) => l.provider).sort()).toEqual(['anthropic', 'openai']);
      const raw = captures.flatMap((c) => c.raw);
      for (const key of Object.values(keys)) expect(raw.filter((line) => line.includes(key))).toEqual([]);
    } finally {
      await Promise.all([a?.close(), b?.close()]);
    }
  });
});

describe('JWT_SECRET alone (a 1.x environment file)', () => {
  it('keys the server like SECRET would, and the warning reaches the system log file without the value', async () => {
    const jwtSecret = `jwt-${randomBytes(12).toString('hex')}`;
    const stdout: string[] = [];
    const s = await startApp({ SECRET: '', JWT_SECRET: jwtSecret, LOG_FILES_ENABLED: 'true' }, { logger: createLogger('info', { write: (line: string) => void stdout.push(line) }) });
    try {
      // The token the server issued at login verifies with a key derived from JWT_SECRET's value.
      const principal = await new TokenService(jwtSecret, 60_000).verifyAccessToken(s.adminToken);
      expect(principal).toMatchObject({ userId: s.adminUserId, tenantId: 'default', role: 'admin' });
      await expect(new TokenService(`${jwtSecret}-other`, 60_000).verifyAccessToken(s.adminToken)).rejects.toThrow();
      await s.app.logFiles!.flush();
      const day = new Date().toISOString().slice(0, 10);
      const system = readFileSync(join(s.dataDir, 'logs', day, 'system.log'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { level: string; event: string; message: string; details: Record<string, unknown> });
      const warnings = system.filter((e) => e.event === 'config_warning');
      expect(warnings.map((e) => [e.level, e.message, e.details.variable])).toEqual([
        ['WARNING', 'JWT_SECRET is deprecated: it was renamed SECRET in 2.0. It is used because SECRET is not set; rename it to SECRET', 'JWT_SECRET'],
      ]);
      expect(stdout.filter((line) => line.includes('config_warning'))).toHaveLength(1);
      expect([...stdout, readFileSync(join(s.dataDir, 'logs', day, 'system.log'), 'utf8')].filter((text) => text.includes(jwtSecret))).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

describe('createDefaultChannels on a started installation (embedded)', () => {
  it('creates nothing while the read model may be behind, then seals the key when it is current', async () => {
    const key = `sk-direct-${randomBytes(8).toString('hex')}`;
    const { logger, lines, raw } = capturingLogger();
    const s = await startApp({ HEALTH_CHECK_ENABLED: 'false' });
    try {
      const { ctx } = s.app;
      const wanted = defaultChannelsFromEnv({ DEEPSEEK_API_KEY: key }).channels;
      const deps = { commands: ctx.commands, db: ctx.sql.db, secrets: ctx.secrets, logger, channelsCaughtUp: async () => Promise.reject(new Error('projection timed out')) };
      expect(await createDefaultChannels(wanted, deps)).toBe(0);
      expect(await ctx.store.readStream('channel-ch_default_deepseek')).toEqual([]);
      expect(lines.filter((l) => l.event === 'default_channels_skipped')).toHaveLength(1);

      const caughtUp = async () => ctx.runner.waitFor(await ctx.store.headPosition(), { projections: ['channels'] });
      const position = await createDefaultChannels(wanted, { ...deps, channelsCaughtUp: caughtUp });
      expect(position).toBeGreaterThan(0);
      await ctx.runner.waitFor(position, { projections: ['channels'] });
      const row = await ctx.sql.db.selectFrom('channels').selectAll().where('id', '=', 'ch_default_deepseek').executeTakeFirstOrThrow();
      expect([row.tenant_id, row.name, row.type, row.base_url, JSON.parse(row.models)]).toEqual(['default', 'deepseek', 'deepseek', null, [...ENV_CHANNEL_MODELS.deepseek]]);
      expect(row.key_sealed).not.toContain(key);
      expect(ctx.secrets.open(row.key_sealed)).toBe(key);
      const events = await ctx.store.readStream('channel-ch_default_deepseek');
      expect(JSON.stringify(events)).not.toContain(key);
      // The tenant has a channel now: another call creates nothing, even for another provider.
      expect(await createDefaultChannels(defaultChannelsFromEnv({ GROQ_API_KEY: 'gsk-other' }).channels, { ...deps, channelsCaughtUp: caughtUp })).toBe(0);
      expect(await ctx.store.readStream('channel-ch_default_groq')).toEqual([]);
      expect(raw.filter((line) => line.includes(key))).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
