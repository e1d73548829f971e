/** The SSRF guard's address classification and its resolver checks (src/webhooks/targets.ts). */
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { assertPublicHost, classifyAddress, embeddedIpv4, ipv6Groups, publicOnlyLookup, TargetNotAllowedError } from '../../src/webhooks/targets.js';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.1.1', 'link_local'],
    ['169.254.169.254', 'cloud_metadata'],
    ['169.254.170.2', 'cloud_metadata'],
    ['100.100.100.200', 'cloud_metadata'],
    ['192.0.0.192', 'cloud_metadata'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fd00:ec2::254', 'cloud_metadata'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    // IPv6 forms that carry an IPv4 address are judged by it.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'cloud_metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['2002:c0a8:0101::1', 'private'],
  ])('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '93.184.215.14', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:0808:0808::1'])('%s is public', (address) => {
    expect(classifyAddress(address)).toBeNull();
  });

  it('throws on what is not an IP address', () => {
    expect(() => classifyAddress('localhost')).toThrow(/not an IP address/);
    expect(() => classifyAddress('1.2.3')).toThrow();
  });
});

describe('ipv6Groups', () => {
  it('expands the short forms and a dotted tail', () => {
    expect(ipv6Groups('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(ipv6Groups('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(ipv6Groups('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(ipv6Groups('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(ipv6Groups('fe80::1%lo')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
  });

  it('refuses malformed ones', () => {
    for (const bad of ['1::2::3', '1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', 'g::1', '1:2:3:4:5:6:7::8', '::ffff:1.2.3']) expect(ipv6Groups(bad), bad).toBeNull();
  });

  it('finds the IPv4 address of the mapped, NAT64 and 6to4 forms only', () => {
    expect(embeddedIpv4(ipv6Groups('::ffff:1.2.3.4')!)).toBe('1.2.3.4');
    expect(embeddedIpv4(ipv6Groups('64:ff9b::1.2.3.4')!)).toBe('1.2.3.4');
    expect(embeddedIpv4(ipv6Groups('2002:0102:0304::')!)).toBe('1.2.3.4');
    expect(embeddedIpv4(ipv6Groups('2001:db8::1.2.3.4')!)).toBeNull();
  });
});

const resolverOf =
  (table: Record<string, LookupAddress[]>) =>
  async (host: string): Promise<LookupAddress[]> => {
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };

const resolver = resolverOf({
  'public.test': [{ address: '93.184.215.14', family: 4 }],
  'mixed.test': [
    { address: '93.184.215.14', family: 4 },
    { address: '::1', family: 6 },
  ],
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
});

describe('assertPublicHost', () => {
  it('passes a name whose every address is public, and public literals', async () => {
    await expect(assertPublicHost('public.test', resolver)).resolves.toBeUndefined();
    await expect(assertPublicHost('2606:4700:4700::1111', resolver)).resolves.toBeUndefined();
  });

  it('refuses a name with any non-public address, and non-public literals, naming the address', async () => {
    await expect(assertPublicHost('mixed.test', resolver)).rejects.toMatchObject({ name: 'TargetNotAllowedError', address: '::1', addressClass: 'loopback' });
    await expect(assertPublicHost('metadata.test', resolver)).rejects.toBeInstanceOf(TargetNotAllowedError);
    await expect(assertPublicHost('10.0.0.8', resolver)).rejects.toMatchObject({ addressClass: 'private' });
  });

  it('passes DNS errors on as they are', async () => {
    await expect(assertPublicHost('nowhere.test', resolver)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('publicOnlyLookup', () => {
  const lookup = publicOnlyLookup(resolver);
  const run = (host: string, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((resolve) => lookup(host, { all }, (error, address, family) => resolve({ error, address, family })));

  it('answers only the public addresses, in both callback forms', async () => {
    expect(await run('mixed.test', true)).toEqual({ error: null, address: [{ address: '93.184.215.14', family: 4 }], family: undefined });
    expect(await run('mixed.test', false)).toEqual({ error: null, address: '93.184.215.14', family: 4 });
  });

  it('fails with TargetNotAllowedError when no public address is left', async () => {
    const { error } = await run('metadata.test', false);
    expect(error).toBeInstanceOf(TargetNotAllowedError);
    expect(error).toMatchObject({ code: 'webhook_target_not_allowed', addressClass: 'cloud_metadata' });
  });
});
