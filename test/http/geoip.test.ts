/**
 * API keys' country rules on the real server with a GEOIP_DATABASE (a .mmdb written by the test
 * MaxMind DB writer): the client address (X-Forwarded-For through a trusted proxy; the tests'
 * socket is 127.0.0.1, which TRUSTED_PROXIES lists) decides the country, an address the database
 * does not know fails closed, and the database wins over GEOIP_COUNTRY_HEADER.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApp, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { writeCountryDatabase } from '../support/mmdb-writer.js';
import { createChannel } from '../support/relay.js';

const IN = {
  DE: '10.1.2.3', // 10.0.0.0/8
  FR: '192.0.2.77', // 192.0.2.0/24
  US: '198.51.100.200', // 198.51.100.128/25
  DE6: '2001:db8:de::1', // 2001:db8:de::/48
  FR6: '2001:db8:f::9', // 2001:db8:f::/48
  NOWHERE: '203.0.113.5', // in no network of the database
  NOWHERE6: '2001:db8:ffff::1',
};

let dir: string;
let database: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sy-geoip-'));
  database = writeCountryDatabase(join(dir, 'GeoLite2-Country.mmdb'), [
    { network: '10.0.0.0/8', country: 'DE' },
    { network: '192.0.2.0/24', country: 'FR' },
    { network: '198.51.100.128/25', country: 'US' },
    { network: '2001:db8:de::/48', country: 'DE' },
    { network: '2001:db8:f::/48', country: 'FR' },
  ]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const variants: Array<[string, Record<string, string>]> = [
  ['GEOIP_DATABASE', {}],
  ['GEOIP_DATABASE and GEOIP_COUNTRY_HEADER', { GEOIP_COUNTRY_HEADER: 'cf-ipcountry' }],
];

describe.each(variants)('country rules with %s', (_name, env) => {
  let s: RunningApp;
  let upstream: OpenAiFake;

  beforeAll(async () => {
    upstream = await startOpenAiFake();
    s = await startApp({ ...env, GEOIP_DATABASE: database, TRUSTED_PROXIES: '127.0.0.1/32, ::1', HEALTH_CHECK_ENABLED: 'false' });
    await createChannel(s, { type: 'openai', base_url: upstream.baseUrl, models: ['gpt-a'] });
  });
  afterAll(async () => {
    await s.close();
    await upstream.close();
  });

  async function newKey(geographic_restrictions: { allowed_countries?: string[]; blocked_countries?: string[] }): Promise<string> {
    const res = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'geo', user_id: 'user-1', ip_restrictions: { geographic_restrictions } } });
    expect(res.status, res.text).toBe(201);
    return (res.json as { key: string }).key;
  }
  const chat = (key: string, from?: string, headers: Record<string, string> = {}) =>
    call(`${s.url}/v1/chat/completions`, {
      token: key,
      headers: { ...(from !== undefined && { 'x-forwarded-for': from }), ...headers },
      body: { model: 'gpt-a', messages: [{ role: 'user', content: 'hi' }] },
    });
  async function expectRefused(key: string, from?: string, headers: Record<string, string> = {}) {
    const res = await chat(key, from, headers);
    expect(res.status, `${from}: ${res.text}`).toBe(403);
    expect(res.json.error.code).toBe('ip_not_allowed');
  }
  async function expectRelayed(key: string, from?: string, headers: Record<string, string> = {}) {
    const res = await chat(key, from, headers);
    expect(res.status, `${from}: ${res.text}`).toBe(200);
  }

  it('admits only addresses in allowed countries (IPv4 and IPv6)', async () => {
    const key = await newKey({ allowed_countries: ['de', 'FR'] });
    await expectRelayed(key, IN.DE);
    await expectRelayed(key, IN.FR);
    await expectRelayed(key, IN.DE6);
    await expectRelayed(key, IN.FR6);
    await expectRelayed(key, `${IN.NOWHERE}, ${IN.DE}`); // the rightmost untrusted hop counts
    await expectRefused(key, IN.US);
    await expectRefused(key, `${IN.DE}, ${IN.US}`);
  });

  it('refuses addresses in blocked countries', async () => {
    const key = await newKey({ blocked_countries: ['US'] });
    await expectRelayed(key, IN.DE);
    await expectRelayed(key, IN.FR6);
    await expectRefused(key, IN.US);
  });

  it('applies the block list on top of the allow list', async () => {
    const key = await newKey({ allowed_countries: ['DE', 'FR'], blocked_countries: ['FR'] });
    await expectRelayed(key, IN.DE);
    await expectRefused(key, IN.FR);
    await expectRefused(key, IN.FR6);
    await expectRefused(key, IN.US);
  });

  it('fails closed for an address the database does not know', async () => {
    const allow = await newKey({ allowed_countries: ['DE'] });
    const block = await newKey({ blocked_countries: ['US'] });
    for (const key of [allow, block]) {
      await expectRefused(key, IN.NOWHERE);
      await expectRefused(key, IN.NOWHERE6);
      await expectRefused(key); // no X-Forwarded-For: the client is the socket peer, 127.0.0.1
    }
  });

  it('lets keys without country rules through from anywhere', async () => {
    const key = await newKey({});
    await expectRelayed(key, IN.US);
    await expectRelayed(key, IN.NOWHERE);
  });

  if (env.GEOIP_COUNTRY_HEADER) {
    it('takes the country from the database, not the header, for an address it knows', async () => {
      const key = await newKey({ allowed_countries: ['DE'] });
      await expectRefused(key, IN.US, { 'cf-ipcountry': 'DE' });
      await expectRefused(key, IN.FR6, { 'cf-ipcountry': 'DE' });
      await expectRelayed(key, IN.DE, { 'cf-ipcountry': 'US' });
      const blockDe = await newKey({ blocked_countries: ['DE'] });
      await expectRefused(blockDe, IN.DE6, { 'cf-ipcountry': 'FR' });
      await expectRelayed(blockDe, IN.FR, { 'cf-ipcountry': 'DE' });
    });
  }
});
