/**
 * IP allow / block rules: single addresses and CIDR ranges, IPv4 and IPv6 (IPv4-mapped IPv6
 * addresses match IPv4 rules). Parsed once when the key view loads; matching is a few integer
 * comparisons.
 */
import { isIP } from 'node:net';

export interface IpRule {
  version: 4 | 6;
  /** Network address as a bigint. */
  network: bigint;
  prefix: number;
}

function v4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

function v6ToBigInt(ip: string): bigint {
  let address = ip;
  // Embedded IPv4 tail ("::ffff:1.2.3.4").
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (v4Tail) {
    const v4 = v4ToBigInt(v4Tail[1]!);
    address = address.slice(0, -v4Tail[1]!.length) + `${((v4 >> 16n) & 0xffffn).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = address.split('::') as [string, string | undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const missing = 8 - headParts.length - tailParts.length;
  const parts = tail === undefined ? headParts : [...headParts, ...Array<string>(missing).fill('0'), ...tailParts];
  return parts.reduce((acc, part) => (acc << 16n) | BigInt(parseInt(part || '0', 16)), 0n);
}

/** Normalised address: IPv4-mapped IPv6 (::ffff:a.b.c.d) becomes IPv4; zone ids are dropped. */
export function parseAddress(ip: string): { version: 4 | 6; value: bigint } | null {
  const clean = ip.split('%')[0]!;
  const kind = isIP(clean);
  if (kind === 4) return { version: 4, value: v4ToBigInt(clean) };
  if (kind === 6) {
    const value = v6ToBigInt(clean);
    if (value >> 32n === 0xffffn) return { version: 4, value: value & 0xffffffffn };
    return { version: 6, value };
  }
  return null;
}

export function parseIpRule(rule: string): IpRule | null {
  const [address, prefixText] = rule.trim().split('/') as [string, string | undefined];
  const parsed = parseAddress(address);
  if (!parsed) return null;
  const bits = parsed.version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits || (prefixText !== undefined && !/^\d+$/.test(prefixText))) return null;
  const shift = BigInt(bits - prefix);
  return { version: parsed.version, network: (parsed.value >> shift) << shift, prefix };
}

export function matches(rule: IpRule, address: { version: 4 | 6; value: bigint }): boolean {
  if (rule.version !== address.version) return false;
  const shift = BigInt((rule.version === 4 ? 32 : 128) - rule.prefix);
  return (address.value >> shift) << shift === rule.network;
}

/** Blocked wins; then an empty allow list allows all. */
export function ipAllowed(ip: string, allowed: readonly IpRule[], blocked: readonly IpRule[]): boolean {
  const address = parseAddress(ip);
  if (!address) return allowed.length === 0 && blocked.length === 0;
  if (blocked.some((r) => matches(r, address))) return false;
  return allowed.length === 0 || allowed.some((r) => matches(r, address));
}
