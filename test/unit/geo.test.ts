/**
 * GeoIP lookups on a real .mmdb file (written by the test MaxMind DB writer), read by the real
 * `maxmind` reader and by GeoLocator; and the CDN country header, believed only via a trusted proxy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import maxmind, { type CountryResponse, type Reader } from 'maxmind';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeoLocator } from '../../src/relay/access/geo.js';
import { buildCountryDatabase, encode, uint16, uint32, uint64, writeCountryDatabase } from '../support/mmdb-writer.js';

const NETWORKS = [
  { network: '10.0.0.0/8', country: 'DE' },
  { network: '10.1.0.0/16', country: 'FR' }, // more specific, inside 10.0.0.0/8
  { network: '192.0.2.0/24', country: 'US' },
  { network: '198.51.100.128/25', country: 'JP' },
  { network: '2001:db8:1::/48', country: 'NL' },
  { network: '2001:db8:2::/48', country: 'CH', name: 'Switzerland (test)' },
];

/** A request as GeoLocator sees it: only the headers matter. */
const request = (headers: Record<string, string | string[]> = {}) => ({ headers }) as unknown as FastifyRequest;

let dir: string;
let file: string;
let reader: Reader<CountryResponse>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sy-geo-'));
  file = writeCountryDatabase(join(dir, 'country.mmdb'), NETWORKS, { buildEpoch: 1_700_000_000 });
  reader = await maxmind.open<CountryResponse>(file);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the test MaxMind DB writer', () => {
  it('encodes data fields as the spec lays them out', () => {
    expect(encode('DE')).toEqual(Buffer.from([0x42, 0x44, 0x45])); // utf8_string (2), size 2
    expect(encode(uint16(0))).toEqual(Buffer.from([0xa0])); // uint16 (5), size 0
    expect(encode(uint16(24))).toEqual(Buffer.from([0xa1, 24]));
    expect(encode(uint32(0x10000))).toEqual(Buffer.from([0xc3, 1, 0, 0])); // uint32 (6), 3 bytes
    expect(encode(uint64(1n))).toEqual(Buffer.from([0x01, 0x02, 1])); // extended: type 9 = 7 + 2
    expect(encode(['en'])).toEqual(Buffer.from([0x01, 0x04, 0x42, 0x65, 0x6e])); // array (11 = 7 + 4), 1 element
    expect(encode({ a: 'b' })).toEqual(Buffer.from([0xe1, 0x41, 0x61, 0x41, 0x62])); // map (7), 1 pair
    expect(encode('x'.repeat(29)).subarray(0, 2)).toEqual(Buffer.from([0x5d, 0])); // size 29 = 29 + 0
    expect(encode('x'.repeat(300)).subarray(0, 3)).toEqual(Buffer.from([0x5e, 0, 15])); // size 300 = 285 + 15
    expect(() => encode(uint16(70_000))).toThrow(RangeError);
  });

  it('writes metadata the maxmind reader understands', () => {
    expect(reader.metadata).toMatchObject({
      binaryFormatMajorVersion: 2,
      binaryFormatMinorVersion: 0,
      databaseType: 'GeoLite2-Country',
      ipVersion: 6,
      recordSize: 24,
      languages: ['en'],
      description: { en: 'Switchyard test country database' },
    });
    expect(reader.metadata.buildEpoch.toISOString()).toBe('2023-11-14T22:13:20.000Z');
    const bytes = buildCountryDatabase(NETWORKS, { buildEpoch: 1_700_000_000 });
    expect(reader.metadata.searchTreeSize).toBe(reader.metadata.nodeCount * 6);
    expect(bytes.subarray(reader.metadata.searchTreeSize, reader.metadata.searchTreeSize + 16)).toEqual(Buffer.alloc(16));
    expect(bytes.lastIndexOf(Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1'))).toBeGreaterThan(reader.metadata.searchTreeSize);
  });

  it('rejects networks with host bits, /0, and networks inside the aliased ranges', () => {
    expect(() => buildCountryDatabase([{ network: '10.0.0.1/8', country: 'DE' }])).toThrow(/host bits/);
    expect(() => buildCountryDatabase([{ network: '10.0.0.0/33', country: 'DE' }])).toThrow(/not a network/);
    expect(() => buildCountryDatabase([{ network: '::/0', country: 'DE' }])).toThrow(/\/0/);
    expect(() => buildCountryDatabase([{ network: '::ffff:10.0.0.0/104', country: 'DE' }])).toThrow(/alias/);
    expect(() => buildCountryDatabase([{ network: '2002:a00::/24', country: 'DE' }])).toThrow(/alias/);
  });
});

describe('lookups with maxmind.open', () => {
  const country = (ip: string) => reader.get(ip)?.country?.iso_code ?? null;

  it('finds IPv4 addresses inside their networks, the most specific network first, and nothing outside', () => {
    expect(reader.get('10.2.3.4')).toEqual({ country: { iso_code: 'DE', names: { en: 'Germany' } } });
    // The network found is the largest block of the tree holding the address: 10.0.0.0/8 was
    // split around 10.1.0.0/16, so 10.2.3.4 is found in 10.2.0.0/15 and 10.200.0.1 in 10.128.0.0/9.
    expect(reader.getWithPrefixLength('10.2.3.4')[1]).toBe(15);
    expect(reader.getWithPrefixLength('10.200.0.1')[1]).toBe(9);
    expect(reader.getWithPrefixLength('192.0.2.1')[1]).toBe(24);
    expect(reader.getWithPrefixLength('198.51.100.200')[1]).toBe(25);
    expect(country('10.0.0.0')).toBe('DE');
    expect(country('10.255.255.255')).toBe('DE');
    expect(country('10.1.2.3')).toBe('FR');
    expect(reader.getWithPrefixLength('10.1.255.255')).toEqual([{ country: { iso_code: 'FR', names: { en: 'France' } } }, 16]);
    expect(country('10.2.0.0')).toBe('DE');
    expect(country('9.255.255.255')).toBeNull();
    expect(country('11.0.0.0')).toBeNull();
    expect(country('192.0.2.0')).toBe('US');
    expect(country('192.0.2.255')).toBe('US');
    expect(country('192.0.1.255')).toBeNull();
    expect(country('192.0.3.0')).toBeNull();
    expect(country('198.51.100.127')).toBeNull();
    expect(country('198.51.100.128')).toBe('JP');
    expect(country('198.51.100.255')).toBe('JP');
    expect(country('127.0.0.1')).toBeNull();
    expect(country('0.0.0.0')).toBeNull();
    expect(country('255.255.255.255')).toBeNull();
  });

  it('finds IPv6 addresses inside their networks and nothing outside', () => {
    expect(country('2001:db8:1::')).toBe('NL');
    expect(country('2001:db8:1:ffff:ffff:ffff:ffff:ffff')).toBe('NL');
    expect(reader.getWithPrefixLength('2001:db8:1::1')[1]).toBe(48);
    expect(reader.get('2001:db8:2::5')).toEqual({ country: { iso_code: 'CH', names: { en: 'Switzerland (test)' } } });
    expect(country('2001:db8::1')).toBeNull();
    expect(country('2001:db8:3::1')).toBeNull();
    expect(country('2001:db9:1::1')).toBeNull();
    expect(country('::1')).toBeNull();
    expect(country('::')).toBeNull();
    expect(country('ffff::1')).toBeNull();
  });

  it('finds IPv4-mapped (and 6to4, and ::a.b.c.d) IPv6 addresses in the IPv4 networks', () => {
    expect(country('::ffff:10.1.2.3')).toBe('FR');
    expect(country('::ffff:10.200.0.1')).toBe('DE');
    expect(country('::ffff:c000:2ff')).toBe('US'); // ::ffff:192.0.2.255
    expect(country('::ffff:198.51.100.200')).toBe('JP');
    expect(country('::ffff:11.0.0.1')).toBeNull();
    expect(country('::ffff:127.0.0.1')).toBeNull();
    expect(reader.getWithPrefixLength('::ffff:10.1.2.3')[1]).toBe(96 + 16);
    expect(country('2002:c000:201::1')).toBe('US'); // 6to4 of 192.0.2.1
    expect(country('::10.9.9.9')).toBe('DE'); // ::/96, where the IPv4 networks are stored
  });
});

describe('GeoLocator', () => {
  it('reads the country from the database for IPv4, IPv6 and IPv4-mapped addresses', async () => {
    const geo = await GeoLocator.open(file, null);
    expect(geo.configured).toBe(true);
    const at = (ip: string) => geo.country(request(), ip, true);
    expect(at('10.1.2.3')).toBe('FR');
    expect(at('10.9.9.9')).toBe('DE');
    expect(at('192.0.2.7')).toBe('US');
    expect(at('198.51.100.129')).toBe('JP');
    expect(at('2001:db8:1::42')).toBe('NL');
    expect(at('2001:db8:2::42')).toBe('CH');
    expect(at('::ffff:10.1.2.3')).toBe('FR');
    expect(at('::ffff:192.0.2.7')).toBe('US');
    expect(at('203.0.113.1')).toBeNull();
    expect(at('2001:db8:3::1')).toBeNull();
    expect(at('127.0.0.1')).toBeNull();
    expect(at('::1')).toBeNull();
  });

  it('believes the country header only through a trusted proxy', async () => {
    const geo = await GeoLocator.open(null, 'cf-ipcountry');
    expect(geo.configured).toBe(true);
    expect(geo.country(request({ 'cf-ipcountry': 'de' }), '203.0.113.1', true)).toBe('DE');
    expect(geo.country(request({ 'cf-ipcountry': 'de' }), '203.0.113.1', false)).toBeNull();
    expect(geo.country(request({ 'cf-ipcountry': ['fr', 'de'] }), '203.0.113.1', true)).toBe('FR');
    expect(geo.country(request({ 'cf-ipcountry': 'XX1' }), '203.0.113.1', true)).toBeNull();
    expect(geo.country(request({ 'cf-ipcountry': 'T1' }), '203.0.113.1', true)).toBeNull();
    expect(geo.country(request({ 'x-country': 'DE' }), '203.0.113.1', true)).toBeNull();
    expect(geo.country(request(), '10.1.2.3', true)).toBeNull(); // no database: the address alone says nothing
  });

  it('prefers the database to the header when both are configured', async () => {
    const geo = await GeoLocator.open(file, 'cf-ipcountry');
    expect(geo.country(request({ 'cf-ipcountry': 'US' }), '10.1.2.3', true)).toBe('FR');
    expect(geo.country(request({ 'cf-ipcountry': 'US' }), '2001:db8:1::1', true)).toBe('NL');
    // An address the database does not know falls back to the header, still only via a trusted proxy.
    expect(geo.country(request({ 'cf-ipcountry': 'US' }), '203.0.113.1', true)).toBe('US');
    expect(geo.country(request({ 'cf-ipcountry': 'US' }), '203.0.113.1', false)).toBeNull();
  });

  it('is not configured without a database or a header', async () => {
    const geo = await GeoLocator.open(null, null);
    expect(geo.configured).toBe(false);
    expect(geo.country(request({ 'cf-ipcountry': 'DE' }), '10.1.2.3', true)).toBeNull();
  });
});
