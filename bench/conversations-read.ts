/**
 * Conversations, the read side: the list view and opening a long conversation, over the real
 * HTTP server, on SQLite and on MariaDB read models (issue 17: under 20 ms p50 each).
 *
 *   npx tsx bench/conversations-read.ts [--db sqlite|mysql|all] [--conversations N] [--messages M] [--requests R]
 *
 * One user with N conversations (default 10,000, each with a sealed title) and one conversation
 * of M messages (default 1,000, ~300 characters each, user and assistant in turn), seeded by
 * appending the events straight to the log (one commit per conversation, commits of 100 messages)
 * with their data keys made as the API makes them, then projected. Each measurement is R
 * sequential requests (default 300, after 30 unmeasured) on one keep-alive connection:
 *
 *   - list, first page: GET /v1/conversations?limit=50
 *   - list, deep page: the same with the cursor of the page ~N/2 conversations down
 *   - open, default page: GET /v1/conversations/{id} (the latest 100 messages)
 *   - open, all: GET /v1/conversations/{id}?limit=1000
 *   - search: GET /v1/conversations/search?q=<a word of one title> (LIKE over the user's titles and messages)
 *
 * Also reported: a rebuild of the conversations projection over the seeded log (every text
 * opened with its key again, every write with secure_delete on SQLite), and one DELETE of the long
 * conversation (key destroyed, 1,000 message rows deleted with secure_delete on SQLite, WAL
 * truncated). The event log is SQLite in both cases (the read side is what is measured); MariaDB:
 * MYSQL_URL (default the local test server), a fresh database dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import type { ConversationEvent } from '../src/commands/conversations/events.js';
import { ConversationTexts, messageField, TITLE } from '../src/conversations/texts.js';
import type { NewEvent } from '../src/ports/event-store.js';
import { startApp, type RunningApp } from '../test/support/app.js';
import { readModelConfig } from '../test/support/databases.js';
import { percentile } from './stats.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'all' },
    conversations: { type: 'string', default: '10000' },
    messages: { type: 'string', default: '1000' },
    requests: { type: 'string', default: '300' },
  },
});
const CONVERSATIONS = Number(args.conversations);
const MESSAGES = Number(args.messages);
const REQUESTS = Number(args.requests);
const WARMUP = 30;
const WORDS = ['budget', 'travel', 'recipe', 'python', 'garden', 'invoice', 'poem', 'lesson', 'meeting', 'design', 'fitness', 'history'];
const urls = { mysql: process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test', postgres: '' };

type Event = Extract<ConversationEvent, { type: string }>;
const asNew = (e: Event): NewEvent => ({ type: e.type, data: e.data as Record<string, unknown> });

async function seed(s: RunningApp): Promise<{ longId: string; events: number }> {
  const ctx = s.app.ctx;
  const owner = { tenantId: 'default', userId: s.userId };
  const texts = new ConversationTexts(ctx.dataKeys);
  const started = performance.now();
  let events = 0;
  const start = (id: string, title: string): Event => ({
    type: 'ConversationStarted',
    data: { conversation_id: id, tenant_id: owner.tenantId, user_id: owner.userId, title, model: 'gpt-4o-mini', preset_id: null, temperature: null, max_tokens: null, system_prompt: null },
  });
  for (let i = 0; i < CONVERSATIONS; i++) {
    const id = `conv_bench${i.toString().padStart(8, '0')}${randomBytes(4).toString('hex')}`;
    const seal = await texts.sealerFor(owner, id);
    const title = `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} notes ${i}`;
    await ctx.store.append(`conversation-${id}`, [asNew(start(id, seal(TITLE, title)))], { expectedVersion: 0, tenantId: owner.tenantId });
    events++;
  }
  const longId = `conv_benchlong${randomBytes(6).toString('hex')}`;
  const seal = await texts.sealerFor(owner, longId);
  let version = (await ctx.store.append(`conversation-${longId}`, [asNew(start(longId, seal(TITLE, 'the long one')))], { expectedVersion: 0, tenantId: owner.tenantId })).version;
  events++;
  for (let i = 0; i < MESSAGES; i += 100) {
    const batch: NewEvent[] = [];
    for (let j = i; j < Math.min(MESSAGES, i + 100); j++) {
      const messageId = `msg_${j.toString().padStart(6, '0')}${randomBytes(6).toString('hex')}`;
      const assistant = j % 2 === 1;
      const content = `${assistant ? 'Here is what I suggest' : 'Could you help me with'} ${WORDS[j % WORDS.length]}: ${'lorem ipsum dolor sit amet '.repeat(10)}(${j})`;
      batch.push(
        asNew({
          type: 'ConversationMessageAppended',
          data: {
            message_id: messageId,
            role: assistant ? 'assistant' : 'user',
            content: seal(messageField(messageId), content),
            model_requested: assistant ? 'gpt-4o-mini' : null,
            model_served: assistant ? 'gpt-4o-mini' : null,
            finish_reason: assistant ? 'stop' : null,
            usage: assistant ? { prompt_tokens: 100, completion_tokens: 80, total_tokens: 180 } : null,
            latency_ms: assistant ? 900 : null,
            usage_request_id: null,
          },
        }),
      );
    }
    version = (await ctx.store.append(`conversation-${longId}`, batch, { expectedVersion: version, tenantId: owner.tenantId })).version;
    events += batch.length;
  }
  const appended = performance.now();
  await ctx.runner.waitFor(await ctx.store.headPosition(), { projections: ['conversations'], timeoutMs: 3_600_000 });
  const projected = performance.now();
  console.log(`  seeded ${events} events in ${((appended - started) / 1000).toFixed(1)} s; projected in ${((projected - appended) / 1000).toFixed(1)} s`);
  return { longId, events };
}

async function measure(dispatcher: Agent, url: string, token: string): Promise<{ p50: number; p99: number; bytes: number }> {
  const once = async () => {
    const t = performance.now();
    const res = await request(url, { dispatcher, headers: { authorization: `Bearer ${token}` } });
    const body = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${body.slice(0, 200)}`);
    return { ms: performance.now() - t, bytes: body.length };
  };
  for (let i = 0; i < WARMUP; i++) await once();
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const r = await once();
    times.push(r.ms);
    bytes = r.bytes;
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), bytes };
}

async function run(db: 'sqlite' | 'mysql'): Promise<Array<[string, string, string, string]>> {
  console.log(`\n${db}:`);
  const database = db === 'mysql' ? readModelConfig('mysql', urls) : null;
  const env: Record<string, string> = { HEALTH_CHECK_ENABLED: 'false', LOG_LEVEL: 'warn' };
  if (database && database.config.kind === 'mysql') {
    const c = database.config;
    Object.assign(env, { SQLDB_DIALECT: 'mysql', SQLDB_HOST: c.host, SQLDB_PORT: String(c.port), SQLDB_USER: c.user, SQLDB_PASSWORD: c.password, SQLDB_NAME: c.database });
  }
  const s = await startApp(env);
  const dispatcher = new Agent({ connections: 1 });
  try {
    const { longId, events } = await seed(s);
    const base = `${s.url}/v1/conversations`;
    const token = s.userToken;
    // The deep cursor: walk down to about the middle of the list.
    let cursor: string | null = null;
    for (let page = 0; page < Math.floor(CONVERSATIONS / 2 / 50); page++) {
      const res: Awaited<ReturnType<typeof request>> = await request(`${base}?limit=50${cursor ? `&cursor=${cursor}` : ''}`, { dispatcher, headers: { authorization: `Bearer ${token}` } });
      cursor = ((await res.body.json()) as { next_cursor: string | null }).next_cursor;
    }
    const rows: Array<[string, string, string, string]> = [];
    const cases: Array<[string, string]> = [
      ['list 50, first page', `${base}?limit=50`],
      [`list 50, deep page (~${Math.floor(CONVERSATIONS / 2)} down)`, `${base}?limit=50&cursor=${cursor}`],
      [`open ${MESSAGES} messages, default page (100)`, `${base}/${longId}`],
      [`open ${MESSAGES} messages, limit=1000`, `${base}/${longId}?limit=1000`],
      ['search one title word + number', `${base}/search?q=${encodeURIComponent(`notes ${Math.floor(CONVERSATIONS / 3)}`)}`],
    ];
    for (const [name, url] of cases) {
      const r = await measure(dispatcher, url, token);
      console.log(`  ${name}: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms (${r.bytes} bytes)`);
      rows.push([db, name, r.p50.toFixed(2), r.p99.toFixed(2)]);
    }
    const r0 = performance.now();
    await s.app.ctx.runner.rebuild('conversations');
    const rebuildMs = performance.now() - r0;
    console.log(`  rebuild of the conversations projection (${events} events): ${(rebuildMs / 1000).toFixed(2)} s, ${Math.round(events / (rebuildMs / 1000))} events/s`);
    const t = performance.now();
    const del = await request(`${base}/${longId}`, { method: 'DELETE', dispatcher, headers: { authorization: `Bearer ${token}` } });
    await del.body.text();
    const deleteMs = performance.now() - t;
    console.log(`  DELETE of the ${MESSAGES}-message conversation: ${deleteMs.toFixed(1)} ms (status ${del.statusCode})`);
    rows.push([db, `DELETE the ${MESSAGES}-message conversation (one request)`, deleteMs.toFixed(1), '']);
    rows.push([db, `rebuild of the projection (${events} events)`, `${(rebuildMs / 1000).toFixed(2)} s (${Math.round(events / (rebuildMs / 1000)).toLocaleString('en')} events/s)`, '']);
    return rows;
  } finally {
    await dispatcher.close();
    await s.close();
    await database?.cleanup();
  }
}

const dbs = args.db === 'all' ? (['sqlite', 'mysql'] as const) : [args.db as 'sqlite' | 'mysql'];
const all: Array<[string, string, string, string]> = [];
for (const db of dbs) all.push(...(await run(db)));
console.log('\n| read models | request | p50 ms | p99 ms |\n|---|---|---:|---:|');
for (const [db, name, p50, p99] of all) console.log(`| ${db} | ${name} | ${p50} | ${p99} |`);
