/**
 * The goal, end to end: the real Claude Code CLI (`claude -p`, the dev dependency
 * @anthropic-ai/claude-code) pointed at Switchyard with ANTHROPIC_BASE_URL and an API key, its
 * model served by an OpenAI-compatible, Gemini, Bedrock, Ollama or anthropic channel (each
 * against its fake upstream). Claude Code sends what it always sends (its system blocks with
 * cache_control, its tool definitions, metadata.user_id, anthropic-beta headers, a stream): the
 * answer it prints is the upstream's, and each of its requests has one usage event.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelType } from '../../src/relay/channel.js';
import { call, startApp, type RunningApp } from '../support/app.js';
import { startAnthropicFake } from '../support/fake-upstreams/anthropic.js';
import { BEDROCK_API_KEY, startBedrockFake } from '../support/fake-upstreams/bedrock.js';
import { FAKE_COMPLETION_TOKENS, FAKE_PROMPT_TOKENS, type FakeUpstream } from '../support/fake-upstreams/fake.js';
import { startGeminiFake } from '../support/fake-upstreams/gemini.js';
import { startOllamaFake } from '../support/fake-upstreams/ollama.js';
import { startOpenAiFake } from '../support/fake-upstreams/openai.js';
import { createChannel, usageEvents } from '../support/relay.js';

const CLAUDE = join(process.cwd(), 'node_modules/.bin/claude');

interface ClaudeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `claude -p <prompt> --output-format json` in a home of its own, talking to Switchyard only. */
function runClaude(s: RunningApp, key: string, model: string, prompt: string, home: string, extraArgs: string[] = []): Promise<ClaudeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE, ['-p', prompt, '--output-format', 'json', ...extraArgs], {
      cwd: home,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        CLAUDE_CONFIG_DIR: join(home, '.claude'),
        ANTHROPIC_BASE_URL: s.url,
        ANTHROPIC_AUTH_TOKEN: key,
        ANTHROPIC_MODEL: model,
        ANTHROPIC_SMALL_FAST_MODEL: model,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(!existsSync(CLAUDE))('Claude Code through the Messages API', () => {
  let s: RunningApp;
  let key: string;
  let home: string;
  const fakes = new Map<ChannelType, FakeUpstream>();

  beforeAll(async () => {
    const [anthropic, openai, gemini, bedrock, ollama] = await Promise.all([startAnthropicFake(), startOpenAiFake(), startGeminiFake(), startBedrockFake(), startOllamaFake()]);
    fakes.set('anthropic', anthropic).set('openai', openai).set('gemini', gemini).set('bedrock', bedrock).set('ollama', ollama);
    s = await startApp({ HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0' });
    await createChannel(s, { type: 'anthropic', base_url: anthropic.baseUrl, models: ['anthropic-model'] });
    await createChannel(s, { type: 'openai', base_url: openai.baseUrl, models: ['openai-model'] });
    await createChannel(s, { type: 'gemini', base_url: gemini.baseUrl, models: ['gemini-model'] });
    await createChannel(s, { type: 'bedrock', base_url: bedrock.baseUrl, key: BEDROCK_API_KEY, config: { region: 'us-east-1' }, models: ['bedrock-model'] });
    await createChannel(s, { type: 'ollama', base_url: ollama.baseUrl, key: '', models: ['ollama-model'] });
    const created = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'claude-code', user_id: 'user-1' } });
    expect(created.status, created.text).toBe(201);
    key = (created.json as { key: string }).key;
    home = mkdtempSync(join(tmpdir(), 'sy-claude-home-'));
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([...fakes.values()].map((f) => f.close()));
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it.each(['openai', 'gemini', 'bedrock', 'ollama', 'anthropic'] as ChannelType[])('claude -p answers with a %s channel', async (type) => {
    const fake = fakes.get(type)!;
    const before = fake.requests.length;
    const eventsBefore = (await usageEvents(s)).length;
    const run = await runClaude(s, key, `${type}-model`, `say hello to switchyard via ${type}`, home);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as { is_error: boolean; result: string; usage: { input_tokens: number; output_tokens: number } };
    expect(result.is_error).toBe(false);
    // The fake echoes the last user text: Claude Code's prompt went through and the answer came back.
    expect(result.result).toMatch(/^Hello! You said: /);
    expect(result.result).toContain(`say hello to switchyard via ${type}`);
    expect(result.usage).toMatchObject({ input_tokens: FAKE_PROMPT_TOKENS, output_tokens: FAKE_COMPLETION_TOKENS });

    const sent = fake.requests.slice(before);
    expect(sent.length).toBeGreaterThanOrEqual(1);
    const events = (await usageEvents(s)).slice(eventsBefore);
    expect(events).toHaveLength(sent.length);
    expect(events.every((e) => e.status === 200 && e.provider === type && e.key_id !== null)).toBe(true);
    if (type !== 'anthropic') {
      // Claude Code's own request shape reached a non-Anthropic upstream without cache_control.
      expect(sent.every((r) => !r.body.includes('cache_control'))).toBe(true);
    }
  });

  it('a tool call round trip: the model calls one of Claude Code’s tools, Claude Code answers with a tool_result (openai channel)', async () => {
    const fake = fakes.get('openai')!;
    fake.mode = { kind: 'tool_call' }; // the fake calls the first tool it is offered, with {"city":"Paris"}
    const before = fake.requests.length;
    try {
      const run = await runClaude(s, key, 'openai-model', 'use a tool', home, ['--max-turns', '2']);
      expect(run.stdout).toContain('"type":"result"');
    } finally {
      fake.mode = { kind: 'reply' };
    }
    const [first, second] = fake.requests.slice(before).map((r) => r.json as { tools: { function: { name: string } }[]; messages: { role: string; tool_call_id?: string; tool_calls?: { id: string; function: { name: string } }[]; content?: unknown }[] });
    expect(first!.tools.length).toBeGreaterThan(0);
    const called = first!.tools[0]!.function.name;
    // The second request carries the call (assistant tool_calls) and Claude Code's result for it (a tool message).
    const call = second!.messages.find((m) => m.role === 'assistant' && m.tool_calls)!.tool_calls![0]!;
    expect(call).toMatchObject({ id: 'call_1', function: { name: called } });
    const result = second!.messages.find((m) => m.role === 'tool')!;
    expect(result.tool_call_id).toBe('call_1');
    expect(typeof result.content).toBe('string');
  });
});
