/**
 * Usage archival end to end on an embedded installation: after real relay traffic, `switchyard
 * usage archive` (a separate process, the server running) moves the usage events out of the log;
 * `--verify` finds the files sound; `audit replay` still finds no difference and a rebuild of the
 * usage projection gives the same tables: both read the archive merged back into the log.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadModelDb } from '../../src/projections/runtime/projection.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { call, startApp, TEST_SECRET, type RunningApp } from '../support/app.js';
import { runCli, runCliOk } from '../support/cli.js';
import { createChannel } from '../support/relay.js';

const usageRows = (db: ReadModelDb) => db.selectFrom('usage_requests').selectAll().orderBy('request_key').execute();

describe('switchyard usage archive', () => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  const env = () => ({ ...process.env, SECRET: TEST_SECRET, DATA_DIR: s.dataDir, LOG_LEVEL: 'warn' });
  const cli = (...args: string[]) => runCliOk(args, env());

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false' });
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['gpt-a'] });
    // Usage in several commits (at least one per flush), so that some can leave the log.
    for (let i = 0; i < 3; i++) {
      for (const token of [s.userToken, s.adminToken]) {
        const res = await call(`${s.url}/v1/chat/completions`, { token, body: { model: 'gpt-a', messages: [{ role: 'user', content: 'hi' }] } });
        expect(res.status).toBe(200);
      }
      await s.app.ctx.usage.flush();
    }
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition());
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
  });

  it('moves usage events out of the log; verify, audit and rebuild still see them', { timeout: 90_000 }, async () => {
    const before = await usageRows(s.app.ctx.sql.db);
    expect(before).toHaveLength(6);
    const usageStream = s.app.ctx.usage.stream;
    const usageEventsInLog = async () => {
      const { stdout } = await cli('events', 'tail', '--stream', usageStream);
      return stdout.trim().split('\n').filter(Boolean).length;
    };
    expect(await usageEventsInLog()).toBe(6);
    const commits = (await s.app.ctx.store.readAll({ after: 0, limit: 10_000 })).filter((c) => c.stream === usageStream);
    expect(commits.length).toBeGreaterThanOrEqual(3);

    // Without a cutoff and with no age policy, it says what it needs.
    expect(await runCli(['usage', 'archive'], env())).toMatchObject({ code: 1, stderr: expect.stringContaining('--before') });

    const { stdout } = await cli('usage', 'archive', '--before', new Date(Date.now() + 60_000).toISOString());
    const result = JSON.parse(stdout) as { removed: number; file: { commits: number; events: number } };
    expect(result.file).toMatchObject({ commits: commits.length - 1, events: 6 - commits.at(-1)!.events.length });
    expect(result.removed).toBe(commits.length - 1);

    // The log file holds only the last usage commit of the stream now (read by a new process:
    // `events tail` reads the merged log, so the raw file is asked directly).
    const { SqliteEventStore } = await import('../../src/adapters/event-store/sqlite.js');
    const raw = new SqliteEventStore({ file: join(s.dataDir, 'events.db') });
    const left = (await raw.readAll({ after: 0, limit: 10_000 })).filter((c) => c.stream === usageStream);
    await raw.close();
    expect(left).toEqual([commits.at(-1)]);
    // ...while every reader through the configured store still sees all of them.
    expect(await usageEventsInLog()).toBe(6);

    const verify = await cli('usage', 'archive', '--verify');
    expect(verify.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { ok: boolean }).ok)).toEqual([true]);

    const audit = await cli('audit', 'replay', '--tenant', 'default', '--from', '2000-01-01T00:00:00Z', '--to', '2100-01-01T00:00:00Z');
    expect((JSON.parse(audit.stdout) as { differences: number }).differences).toBe(0);

    await cli('projections', 'rebuild', 'usage');
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition());
    expect(await usageRows(s.app.ctx.sql.db)).toEqual(before);

    // The server keeps relaying and recording usage after the archival.
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'gpt-a', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(200);
    await s.app.ctx.usage.flush();
    await s.app.ctx.runner.waitFor(await s.app.ctx.store.headPosition());
    expect(await usageRows(s.app.ctx.sql.db)).toHaveLength(7);
  });
});
