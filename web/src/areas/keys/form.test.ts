import { describe, expect, it } from 'vitest';
import { EMPTY_FORM, expiryIso, expiryLocal, formOf, isIpRule, keyBody, keyStatus, parseAliases, parseList, type ApiKey } from './form';

describe('key form lists and rules', () => {
  it('splits lists on commas, spaces and lines, dropping blanks and repeats', () => {
    expect(parseList(' gpt-4o, gpt-4o-mini\n\n gpt-4o ;o3 ')).toEqual(['gpt-4o', 'gpt-4o-mini', 'o3']);
    expect(parseList('  ')).toEqual([]);
  });

  it('accepts IPv4 and IPv6 addresses and CIDR ranges, nothing else', () => {
    for (const ok of ['10.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '::1', '2001:db8::/32', 'fe80::1%eth0'.replace('%eth0', ''), '::ffff:192.168.1.1', '1:2:3:4:5:6:7:8']) expect(isIpRule(ok), ok).toBe(true);
    for (const bad of ['10.0.0', '256.1.1.1', '10.0.0.0/33', '2001:db8::/129', 'example.com', '1:2:3:4:5:6:7:8:9', '1::2::3', '10.0.0.1/8/1', '', '/24']) expect(isIpRule(bad), bad).toBe(false);
  });

  it('reads aliases as alias=model lines and names the lines it cannot read', () => {
    expect(parseAliases('fast = gpt-4o-mini\nsmart->o3\n\nbest: gpt-4o')).toEqual({ aliases: { fast: 'gpt-4o-mini', smart: 'o3', best: 'gpt-4o' }, bad: [] });
    expect(parseAliases('just-a-model').bad).toEqual(['just-a-model']);
  });

  it('turns an expiry typed in local time into an instant and back', () => {
    expect(expiryIso('')).toBeNull();
    expect(expiryIso('not a date')).toBe('bad');
    const iso = expiryIso('2030-05-06T07:08');
    expect(typeof iso).toBe('string');
    expect(expiryLocal(iso as string)).toBe('2030-05-06T07:08');
    expect(expiryLocal(null)).toBe('');
  });
});

describe('keyBody', () => {
  it('sends every policy field, empty ones as "no limit"', () => {
    const result = keyBody({ ...EMPTY_FORM, name: ' ci ' });
    expect(result.problems).toEqual([]);
    expect(result.body).toEqual({
      name: 'ci',
      permissions: { models: [], quota_limit: null, expiry_date: null },
      model_restrictions: { allowed_models: [], blocked_models: [], model_aliases: {} },
      rate_limits: { requests_per_minute: null, requests_per_hour: null, tokens_per_hour: null, concurrent_requests: null, burst_allowance: null },
      ip_restrictions: { allowed_ips: [], blocked_ips: [], geographic_restrictions: { allowed_countries: [], blocked_countries: [] } },
    });
  });

  it('maps a full form onto the API fields', () => {
    const result = keyBody({
      ...EMPTY_FORM,
      name: 'prod',
      models: 'gpt-4o, gpt-4o-mini',
      allowedModels: 'gpt-4o',
      blockedModels: 'o1',
      aliases: 'fast=gpt-4o-mini',
      quota: '12.5',
      rpm: '60',
      rph: '1000',
      tph: '50000',
      concurrency: '4',
      burstMultiplier: '2',
      burstDuration: '1m30s',
      allowedIps: '10.0.0.0/8\n192.168.1.7',
      blockedIps: '10.0.0.9',
      allowedCountries: 'us de',
      blockedCountries: 'KP',
      expiry: '2030-01-02T03:04',
    });
    expect(result.problems).toEqual([]);
    expect(result.body).toMatchObject({
      name: 'prod',
      permissions: { models: ['gpt-4o', 'gpt-4o-mini'], quota_limit: '12.5', expiry_date: new Date('2030-01-02T03:04').toISOString() },
      model_restrictions: { allowed_models: ['gpt-4o'], blocked_models: ['o1'], model_aliases: { fast: 'gpt-4o-mini' } },
      rate_limits: { requests_per_minute: 60, requests_per_hour: 1000, tokens_per_hour: 50000, concurrent_requests: 4, burst_allowance: { multiplier: 2, duration: '1m30s' } },
      ip_restrictions: { allowed_ips: ['10.0.0.0/8', '192.168.1.7'], blocked_ips: ['10.0.0.9'], geographic_restrictions: { allowed_countries: ['US', 'DE'], blocked_countries: ['KP'] } },
    });
    expect(keyBody({ ...EMPTY_FORM, name: 'x', burstMultiplier: '1.5', burstDuration: '30' }).body).toMatchObject({ rate_limits: { burst_allowance: { multiplier: 1.5, duration: 30 } } });
  });

  it('names each field it refuses, with the offending text', () => {
    const result = keyBody({
      ...EMPTY_FORM,
      rpm: '1.5',
      quota: '-3',
      allowedIps: '10.0.0.1 nope',
      allowedCountries: 'USA',
      aliases: 'broken',
      burstMultiplier: '2',
      expiry: 'soon',
    });
    expect(result.body).toBeNull();
    expect(result.problems).toEqual([
      { field: 'name', problem: 'required' },
      { field: 'rpm', problem: 'notCount', value: '1.5' },
      { field: 'quota', problem: 'notCredits', value: '-3' },
      { field: 'allowedIps', problem: 'notIp', value: 'nope' },
      { field: 'allowedCountries', problem: 'notCountry', value: 'USA' },
      { field: 'aliases', problem: 'notAlias', value: 'broken' },
      { field: 'burstDuration', problem: 'burstPair' },
      { field: 'expiry', problem: 'notDate', value: 'soon' },
    ]);
    expect(keyBody({ ...EMPTY_FORM, name: 'x', burstMultiplier: '200', burstDuration: '1.5s' }).problems.map((p) => p.problem)).toEqual(['notMultiplier', 'notDuration']);
  });
});

const key: ApiKey = {
  id: 'key_1',
  name: 'prod',
  user_id: 'u',
  key_prefix: 'sk-abcde',
  permissions: { models: ['gpt-4o'], quota_limit: 12.5, rate_limits: { requests_per_minute: 60, tokens_per_hour: null }, ip_whitelist: ['10.0.0.0/8'], expiry_date: '2030-01-02T03:04:00.000Z' },
  model_restrictions: { allowed_models: [], blocked_models: ['o1'], model_aliases: { fast: 'gpt-4o' } },
  rate_limits: { requests_per_minute: 60, requests_per_hour: null, tokens_per_hour: null, concurrent_requests: 2, burst_allowance: { multiplier: 2, duration: 30 } },
  ip_restrictions: { allowed_ips: ['10.0.0.0/8'], blocked_ips: [], geographic_restrictions: { allowed_countries: ['US'], blocked_countries: [] } },
  revoked: false,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  revoked_at: null,
};

describe('formOf', () => {
  it('round-trips a key through the form to the same policy', () => {
    const form = formOf(key);
    expect(form).toMatchObject({ name: 'prod', models: 'gpt-4o', allowedModels: '', quota: '12.5', rpm: '60', concurrency: '2', burstMultiplier: '2', burstDuration: '30', allowedIps: '10.0.0.0/8', allowedCountries: 'US', aliases: 'fast=gpt-4o' });
    const body = keyBody(form).body!;
    expect(body).toMatchObject({
      permissions: { models: ['gpt-4o'], quota_limit: '12.5', expiry_date: '2030-01-02T03:04:00.000Z' },
      rate_limits: { requests_per_minute: 60, concurrent_requests: 2, burst_allowance: { multiplier: 2, duration: 30 } },
      model_restrictions: { blocked_models: ['o1'], model_aliases: { fast: 'gpt-4o' } },
    });
  });

  it('shows the second allow list only when it differs from the first', () => {
    expect(formOf({ ...key, model_restrictions: { ...key.model_restrictions, allowed_models: ['gpt-4o'] } }).allowedModels).toBe('');
    expect(formOf({ ...key, model_restrictions: { ...key.model_restrictions, allowed_models: ['o3'] } }).allowedModels).toBe('o3');
  });
});

describe('keyStatus', () => {
  it('is revoked, expired or active', () => {
    const now = Date.parse('2031-01-01T00:00:00Z');
    expect(keyStatus(key, Date.parse('2029-01-01T00:00:00Z'))).toBe('active');
    expect(keyStatus(key, now)).toBe('expired');
    expect(keyStatus({ ...key, revoked: true }, now)).toBe('revoked');
  });
});
