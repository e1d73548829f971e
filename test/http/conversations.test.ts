import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';

describe('conversations smoke', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp();
  });
  afterAll(async () => {
    await s?.close();
  });
  it('creates and reads', async () => {
    const res = await call(`${s.url}/v1/conversations`, { token: s.userToken, body: { title: 'Hello', system_prompt: 'be nice', temperature: 0.5 } });
    expect(res.status, res.text).toBe(201);
    const got = await call(`${s.url}/v1/conversations/${res.json.id}`, { token: s.userToken });
    expect(got.status, got.text).toBe(200);
    expect(got.json).toMatchObject({ title: 'Hello', system_prompt: 'be nice', temperature: 0.5, messages: [], has_more: false });
    const other = await call(`${s.url}/v1/conversations/${res.json.id}`, { token: s.adminToken });
    expect(other.status).toBe(404);
    const key = await call(`${s.url}/v1/conversations/${res.json.id}`, { token: 'sk-abc' });
    expect(key.json.error.code).toBe('user_credentials_required');
  });
});
