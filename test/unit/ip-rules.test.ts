import { describe, expect, it } from 'vitest';
import { ipAllowed, parseIpRule } from '../../src/relay/access/ip-rules.js';

const rules = (...r: string[]) => r.map((x) => parseIpRule(x)!);

describe('IP rules', () => {
  it('parses addresses and CIDR ranges, and refuses junk', () => {
    expect(parseIpRule('10.0.0.0/8')).toMatchObject({ version: 4, prefix: 8 });
    expect(parseIpRule('2001:db8::/32')).toMatchObject({ version: 6, prefix: 32 });
    expect(parseIpRule('192.168.1.7')).toMatchObject({ version: 4, prefix: 32 });
    for (const bad of ['10.0.0.0/33', 'not-an-ip', '1.2.3', '2001:db8::/129', '10.0.0.0/x', '']) expect(parseIpRule(bad), bad).toBeNull();
  });

  it('matches IPv4 single addresses and ranges', () => {
    expect(ipAllowed('10.1.2.3', rules('10.0.0.0/8'), [])).toBe(true);
    expect(ipAllowed('11.1.2.3', rules('10.0.0.0/8'), [])).toBe(false);
    expect(ipAllowed('192.168.1.7', rules('192.168.1.7'), [])).toBe(true);
    expect(ipAllowed('192.168.1.8', rules('192.168.1.7'), [])).toBe(false);
    expect(ipAllowed('172.16.5.5', rules('172.16.0.0/12'), [])).toBe(true);
    expect(ipAllowed('172.32.0.1', rules('172.16.0.0/12'), [])).toBe(false);
  });

  it('matches IPv6, and IPv4-mapped IPv6 against IPv4 rules', () => {
    expect(ipAllowed('2001:db8:abcd::1', rules('2001:db8::/32'), [])).toBe(true);
    expect(ipAllowed('2001:db9::1', rules('2001:db8::/32'), [])).toBe(false);
    expect(ipAllowed('::1', rules('::1'), [])).toBe(true);
    expect(ipAllowed('::ffff:127.0.0.1', rules('127.0.0.0/8'), [])).toBe(true);
    expect(ipAllowed('fe80::1%eth0', rules('fe80::/10'), [])).toBe(true);
  });

  it('lets the block list win and an empty allow list allow everything', () => {
    expect(ipAllowed('10.0.0.5', rules('10.0.0.0/8'), rules('10.0.0.5'))).toBe(false);
    expect(ipAllowed('8.8.8.8', [], [])).toBe(true);
    expect(ipAllowed('8.8.8.8', [], rules('8.8.0.0/16'))).toBe(false);
    expect(ipAllowed('1.1.1.1', [], rules('8.8.0.0/16'))).toBe(true);
  });
});
