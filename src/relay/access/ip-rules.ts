/**
 * IP allow / block rules: single addresses and CIDR ranges, IPv4 and IPv6 (IPv4-mapped IPv6
 * addresses match IPv4 rules; zone ids are dropped). Rules are parsed and compiled into
 * `node:net` BlockLists once, when the key view loads; a check parses the client's address once.
 */
import { BlockList, SocketAddress, isIP } from 'node:net';

export interface IpRule {
  /** 4 for IPv4 rules, IPv4-mapped IPv6 ones included. */
  version: 4 | 6;
  /** Prefix length within the rule's version (32 or 128 for a single address). */
  prefix: number;
  /** The address as written, zone id dropped. */
  address: string;
  /** The family of `address` as written: a mapped IPv4 rule is written as IPv6. */
  family: 'ipv4' | 'ipv6';
}

/**
 * Rules compiled for matching. IPv4 and IPv6 rules go to separate lists because a BlockList
 * matches an IPv4 address against IPv6 ranges that cover ::ffff:0:0/96 (`::/0` would catch every
 * IPv4 client); here a rule only matches addresses of its own version.
 */
export interface IpRuleSet {
  readonly size: number;
  readonly v4: BlockList;
  readonly v6: BlockList;
}

/** A client address parsed once for every list it is checked against. */
export interface ClientAddress {
  /** 4 for IPv4 and IPv4-mapped IPv6 addresses. */
  version: 4 | 6;
  socket: SocketAddress;
}

const ipv4Mapped = new BlockList();
ipv4Mapped.addSubnet('::ffff:0:0', 96, 'ipv6');

function withoutZone(ip: string): string {
  const zone = ip.indexOf('%');
  return zone === -1 ? ip : ip.slice(0, zone);
}

/** Null rather than a throw: X-Forwarded-For hops are the client's text, and isIP and this parser could disagree on an odd one. */
function socketAddress(address: string, family: 'ipv4' | 'ipv6'): SocketAddress | null {
  try {
    return new SocketAddress({ address, family });
  } catch {
    return null;
  }
}

/** Normalised address: IPv4-mapped IPv6 (::ffff:a.b.c.d) counts as IPv4; zone ids are dropped. */
export function parseAddress(ip: string): ClientAddress | null {
  const address = withoutZone(ip);
  const kind = isIP(address);
  if (kind !== 4 && kind !== 6) return null;
  const socket = socketAddress(address, kind === 4 ? 'ipv4' : 'ipv6');
  if (!socket) return null;
  return { version: kind === 4 || ipv4Mapped.check(socket) ? 4 : 6, socket };
}

export function parseIpRule(rule: string): IpRule | null {
  const [written, prefixText] = rule.trim().split('/') as [string, string | undefined];
  const parsed = parseAddress(written);
  if (!parsed) return null;
  const bits = parsed.version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits || (prefixText !== undefined && !/^\d+$/.test(prefixText))) return null;
  return { version: parsed.version, prefix, address: parsed.socket.address, family: parsed.socket.family as 'ipv4' | 'ipv6' };
}

export function compileIpRules(rules: readonly IpRule[]): IpRuleSet {
  const v4 = new BlockList();
  const v6 = new BlockList();
  for (const rule of rules) {
    // A mapped IPv4 rule stays IPv6 for the BlockList, its prefix counted from bit 96.
    const prefix = rule.family === 'ipv6' && rule.version === 4 ? 96 + rule.prefix : rule.prefix;
    (rule.version === 4 ? v4 : v6).addSubnet(rule.address, prefix, rule.family);
  }
  return { size: rules.length, v4, v6 };
}

export function inRuleSet(rules: IpRuleSet, address: ClientAddress): boolean {
  return rules.size > 0 && (address.version === 4 ? rules.v4 : rules.v6).check(address.socket);
}

/** Blocked wins; then an empty allow list allows all. Rule arrays are compiled on the spot (tests, one-off checks). */
export function ipAllowed(ip: string, allowed: IpRuleSet | readonly IpRule[], blocked: IpRuleSet | readonly IpRule[]): boolean {
  const allow = asRuleSet(allowed);
  const block = asRuleSet(blocked);
  if (allow.size === 0 && block.size === 0) return true;
  const address = parseAddress(ip);
  if (!address) return false;
  if (inRuleSet(block, address)) return false;
  return allow.size === 0 || inRuleSet(allow, address);
}

function asRuleSet(rules: IpRuleSet | readonly IpRule[]): IpRuleSet {
  return 'v4' in rules ? rules : compileIpRules(rules);
}
