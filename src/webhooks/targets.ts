/**
 * Where a webhook may be sent (SSRF guard). A webhook URL is chosen by a tenant's admin, and the
 * server POSTs to it from inside the installation's network: without a guard, an admin could make
 * the server talk to its database, its cloud's metadata service (credentials) or anything else
 * only reachable from inside. So targets on non-public addresses are refused, unless the operator
 * allows them (WEBHOOK_ALLOW_PRIVATE_TARGETS): at create / update, after resolving the host, and
 * again at delivery time on the address actually connected to (a name may resolve differently by
 * then: DNS rebinding).
 *
 * Ranges are matched with node:net's BlockList. IPv6 forms that carry an IPv4 address
 * (IPv4-mapped, NAT64, 6to4) are judged by the IPv4 address they carry.
 */
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';

/** Why an address is not a public one; null for a public address. */
export type AddressClass =
  | 'cloud_metadata'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'unique_local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'reserved';

/** Metadata services of the major clouds, named before the range each lies in. */
const METADATA = ['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192', 'fd00:ec2::254'];

type Range = readonly [AddressClass, string, number];

const V4_RANGES: readonly Range[] = [
  ['unspecified', '0.0.0.0', 8],
  ['private', '10.0.0.0', 8],
  ['cgnat', '100.64.0.0', 10],
  ['loopback', '127.0.0.0', 8],
  ['link_local', '169.254.0.0', 16],
  ['private', '172.16.0.0', 12],
  ['reserved', '192.0.0.0', 24],
  ['reserved', '192.0.2.0', 24],
  ['reserved', '192.88.99.0', 24],
  ['private', '192.168.0.0', 16],
  ['reserved', '198.18.0.0', 15],
  ['reserved', '198.51.100.0', 24],
  ['reserved', '203.0.113.0', 24],
  ['multicast', '224.0.0.0', 4],
  ['reserved', '240.0.0.0', 4],
];

const V6_RANGES: readonly Range[] = [
  ['unspecified', '::', 128],
  ['loopback', '::1', 128],
  // IPv4-compatible addresses (deprecated): nothing public uses them.
  ['reserved', '::', 96],
  ['reserved', '64:ff9b:1::', 48],
  ['reserved', '100::', 64],
  ['reserved', '2001::', 32],
  ['reserved', '2001:2::', 48],
  ['reserved', '2001:10::', 28],
  ['reserved', '2001:db8::', 32],
  ['unique_local', 'fc00::', 7],
  ['link_local', 'fe80::', 10],
  ['reserved', 'fec0::', 10],
  ['multicast', 'ff00::', 8],
];

/** One BlockList per class, so a match says which class it is. */
function listsOf(ranges: readonly Range[], family: 'ipv4' | 'ipv6'): Array<[AddressClass, BlockList]> {
  const byClass = new Map<AddressClass, BlockList>();
  for (const [cls, address, prefix] of ranges) {
    let list = byClass.get(cls);
    if (!list) byClass.set(cls, (list = new BlockList()));
    list.addSubnet(address, prefix, family);
  }
  return [...byClass];
}

const V4_LISTS = listsOf(V4_RANGES, 'ipv4');
const V6_LISTS = listsOf(V6_RANGES, 'ipv6');
const METADATA_SET = new Set(METADATA.map((a) => normalize(a)));

/** An IPv6 address as eight 16-bit groups (an embedded dotted IPv4 tail included); null if not one. */
export function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // A dotted IPv4 tail (::ffff:127.0.0.1) is the last two groups written another way.
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    if (isIP(last) !== 4) return null;
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const head = parse(halves[0]!);
  if (halves.length === 1) return head.length === 8 && !head.some(Number.isNaN) ? head : null;
  const rest = parse(halves[1]!);
  const fill = 8 - head.length - rest.length;
  if (fill < 1) return null;
  const groups = [...head, ...Array<number>(fill).fill(0), ...rest];
  return groups.some(Number.isNaN) ? null : groups;
}

function normalize(address: string): string {
  if (isIP(address) !== 6) return address;
  const groups = ipv6Groups(address);
  return groups ? groups.map((g) => g.toString(16)).join(':') : address;
}

const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

/** The IPv4 address an IPv6 one carries (IPv4-mapped, NAT64 well-known prefix, 6to4), if any. */
export function embeddedIpv4(groups: readonly number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return v4Of(g6, g7); // ::ffff:a.b.c.d
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return v4Of(g6, g7); // 64:ff9b::a.b.c.d
  if (g0 === 0x2002) return v4Of(g1, g2); // 2002:aabb:ccdd::/48
  return null;
}

/** The class of a non-public address, null for a public one; throws on something that is not an IP address. */
export function classifyAddress(address: string): AddressClass | null {
  const family = isIP(address.split('%')[0]!);
  if (family === 0) throw new Error(`not an IP address: ${address}`);
  if (METADATA_SET.has(normalize(address))) return 'cloud_metadata';
  if (family === 4) {
    for (const [cls, list] of V4_LISTS) if (list.check(address, 'ipv4')) return cls;
    return address === '255.255.255.255' ? 'reserved' : null;
  }
  const groups = ipv6Groups(address);
  if (!groups) throw new Error(`not an IP address: ${address}`);
  const v4 = embeddedIpv4(groups);
  if (v4 !== null) return classifyAddress(v4);
  const canonical = groups.map((g) => g.toString(16)).join(':');
  for (const [cls, list] of V6_LISTS) if (list.check(canonical, 'ipv6')) return cls;
  return null;
}

/** A target the guard refused: `address` is what the host resolved to (or was). */
export class TargetNotAllowedError extends Error {
  readonly code = 'webhook_target_not_allowed';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly addressClass: AddressClass,
  ) {
    super(`webhook target ${host} is on a ${addressClass.replace('_', ' ')} address (${address}); set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow it`);
    this.name = 'TargetNotAllowedError';
  }
}

/** The host of a URL as net.connect and DNS take it (IPv6 literals without brackets). */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

export type Resolver = (host: string) => Promise<readonly LookupAddress[]>;

export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/**
 * Resolves `host` and throws TargetNotAllowedError if ANY of its addresses is not public (a
 * client may use any of them). An IP literal is judged as it is. DNS errors are thrown as they are.
 */
export async function assertPublicHost(host: string, resolve: Resolver = systemResolver): Promise<void> {
  const addresses = isIP(host) ? [host] : (await resolve(host)).map((a) => a.address);
  for (const address of addresses) {
    const cls = classifyAddress(address);
    if (cls !== null) throw new TargetNotAllowedError(host, address, cls);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect / tls.connect that resolves as usual and keeps only public
 * addresses: the socket can only connect to what passed the check (a DNS answer that changed since
 * the webhook was saved included). Errors with TargetNotAllowedError when nothing is left.
 */
export function publicOnlyLookup(resolve: Resolver = systemResolver) {
  return (hostname: string, options: { all?: boolean } | number, callback: LookupCallback): void => {
    const all = typeof options === 'object' && options.all === true;
    resolve(hostname).then(
      (addresses) => {
        const allowed = addresses.filter((a) => classifyAddress(a.address) === null);
        if (allowed.length === 0) {
          const first = addresses[0];
          const error = first ? new TargetNotAllowedError(hostname, first.address, classifyAddress(first.address)!) : Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
          callback(error as NodeJS.ErrnoException, all ? [] : '', 0);
          return;
        }
        if (all) callback(null, allowed);
        else callback(null, allowed[0]!.address, allowed[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, all ? [] : '', 0),
    );
  };
}
