/**
 * A small MaxMind DB (format 2.0) writer for tests: country databases shaped like
 * GeoLite2-Country, so that GeoIP code can be tested against real .mmdb files read by the real
 * `maxmind` reader, without shipping or downloading a MaxMind database.
 *
 * File layout (MaxMind DB File Format Specification, v2.0):
 *   1. the binary search tree: `node_count` nodes of two records each (left = bit 0, right =
 *      bit 1), here 24-bit records, so 6 bytes per node, big-endian;
 *   2. 16 zero bytes (the data section separator);
 *   3. the data section: the encoded records the tree points to;
 *   4. "\xAB\xCD\xEFMaxMind.com" followed by the metadata, an encoded map.
 * A record's value is a node number (< node_count), "no data" (= node_count), or a pointer into
 * the data section (> node_count): data section offset = value - node_count - 16.
 *
 * The tree is an IPv6 tree (ip_version 6). IPv4 networks live in ::/96 (::a.b.c.d), which is
 * where readers start an IPv4 lookup, and, as in MaxMind's own databases, the IPv4-mapped range
 * ::ffff:0:0/96 and the 6to4 range 2002::/16 are aliased to that IPv4 subtree, so that
 * `::ffff:1.2.3.4` and `2002:102:304::` find what `1.2.3.4` finds.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { writeFileSync } from 'node:fs';

export interface CountryNetwork {
  /** 'a.b.c.d/len' or 'ipv6/len'; host bits must be zero. */
  network: string;
  /** ISO 3166-1 alpha-2 code, stored as country.iso_code. */
  country: string;
  /** country.names.en; defaults to the English region name of `country`. */
  name?: string;
}

// ---------------------------------------------------------------------------------------------
// Data section encoding. Every field starts with a control byte: 3 bits of type, 5 bits of size.
// Types 1-7 fit in those 3 bits; "extended" types (8+) write 0 there and (type - 7) in the next
// byte. Sizes < 29 are stored in the 5 bits; 29, 30 and 31 mean the size is 29 + 1 byte,
// 285 + 2 bytes or 65,821 + 3 bytes that follow the type byte(s). Multi-byte values are
// big-endian.
// ---------------------------------------------------------------------------------------------

const UTF8_STRING = 2;
const UINT16 = 5;
const UINT32 = 6;
const MAP = 7;
const UINT64 = 9;
const ARRAY = 11;

/** An unsigned integer with the MaxMind type to store it as (a plain JS number has no width). */
class Uint {
  constructor(
    readonly type: typeof UINT16 | typeof UINT32 | typeof UINT64,
    readonly value: bigint,
  ) {}
}
export const uint16 = (n: number) => new Uint(UINT16, BigInt(n));
export const uint32 = (n: number) => new Uint(UINT32, BigInt(n));
export const uint64 = (n: number | bigint) => new Uint(UINT64, BigInt(n));

export type MmdbValue = string | Uint | MmdbValue[] | { [key: string]: MmdbValue };

function controlBytes(type: number, size: number): Buffer {
  let sizeBits: number;
  let extra: number[];
  if (size < 29) [sizeBits, extra] = [size, []];
  else if (size < 285) [sizeBits, extra] = [29, [size - 29]];
  else if (size < 65_821) [sizeBits, extra] = [30, [(size - 285) >> 8, (size - 285) & 0xff]];
  else if (size < 65_821 + 2 ** 24) [sizeBits, extra] = [31, [(size - 65_821) >> 16, ((size - 65_821) >> 8) & 0xff, (size - 65_821) & 0xff]];
  else throw new RangeError(`field too large: ${size}`);
  // Types 1-7 go in the control byte; an extended type writes 000 there and type - 7 next.
  const typeBytes = type <= 7 ? [(type << 5) | sizeBits] : [sizeBits, type - 7];
  return Buffer.from([...typeBytes, ...extra]);
}

/** Encodes a value (maps, UTF-8 strings, uint16/32/64, arrays: all this writer needs). */
export function encode(value: MmdbValue): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([controlBytes(UTF8_STRING, bytes.length), bytes]);
  }
  if (value instanceof Uint) {
    const max = { [UINT16]: 0xffffn, [UINT32]: 0xffff_ffffn, [UINT64]: 0xffff_ffff_ffff_ffffn }[value.type];
    if (value.value < 0n || value.value > max) throw new RangeError(`${value.value} does not fit the integer type ${value.type}`);
    // The size is the number of payload bytes: no leading zero bytes (0 is stored with size 0).
    const bytes: number[] = [];
    for (let v = value.value; v > 0n; v >>= 8n) bytes.unshift(Number(v & 0xffn));
    return Buffer.concat([controlBytes(value.type, bytes.length), Buffer.from(bytes)]);
  }
  if (Array.isArray(value)) {
    // Arrays: the size is the number of elements, which follow one after another.
    return Buffer.concat([controlBytes(ARRAY, value.length), ...value.map(encode)]);
  }
  // Maps: the size is the number of pairs; each key (a UTF-8 string) is followed by its value.
  const entries = Object.entries(value);
  return Buffer.concat([controlBytes(MAP, entries.length), ...entries.flatMap(([k, v]) => [encode(k), encode(v)])]);
}

// ---------------------------------------------------------------------------------------------
// Addresses and the search tree.
// ---------------------------------------------------------------------------------------------

/** 16 address bytes of an IPv6 address (may end in a dotted IPv4 part). */
function ipv6Bytes(text: string): Uint8Array {
  const bytes = new Uint8Array(16);
  let address = text;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1]!.split('.').map(Number);
    address = `${address.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = address.split('::');
  const groups = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  all.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  return bytes;
}

/** A network as 128 address bits and a prefix length in the IPv6 tree (IPv4 goes into ::/96). */
function parseNetwork(network: string): { bytes: Uint8Array; prefix: number } {
  const [address = '', length] = network.split('/');
  const bits = Number(length);
  let bytes: Uint8Array;
  let prefix: number;
  if (isIPv4(address) && Number.isInteger(bits) && bits >= 0 && bits <= 32) {
    bytes = new Uint8Array(16);
    bytes.set(address.split('.').map(Number), 12);
    prefix = 96 + bits;
  } else if (isIPv6(address) && Number.isInteger(bits) && bits >= 0 && bits <= 128) {
    bytes = ipv6Bytes(address);
    prefix = bits;
  } else {
    throw new Error(`not a network: ${network}`);
  }
  for (let i = prefix; i < 128; i++) if (bitAt(bytes, i)) throw new Error(`${network} has host bits set`);
  return { bytes, prefix };
}

const bitAt = (bytes: Uint8Array, i: number): 0 | 1 => (((bytes[i >> 3] ?? 0) >> (7 - (i & 7))) & 1) as 0 | 1;

/** Whether a network lies inside ::ffff:0:0/96 or 2002::/16 (both aliased to the IPv4 subtree). */
function inAliasedRange(bytes: Uint8Array, prefix: number): boolean {
  const mapped = prefix >= 96 && bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped || (prefix >= 16 && bytes[0] === 0x20 && bytes[1] === 0x02);
}

/** A record of a node: another node, a data section offset, or nothing. */
type TreeRecord = { node: TreeNode } | { data: number } | null;
interface TreeNode {
  records: [TreeRecord, TreeRecord];
}

const newNode = (fill: TreeRecord = null): TreeNode => ({ records: [fill, fill] });

/**
 * The node reached from the root by the first `depth` bits of `bytes`, creating nodes on the way.
 * A record that held data is split into a node whose two records both keep that data, so a more
 * specific network can be inserted inside a larger one.
 */
function descend(root: TreeNode, bytes: Uint8Array, depth: number): TreeNode {
  let node = root;
  for (let i = 0; i < depth; i++) {
    const bit = bitAt(bytes, i);
    const record = node.records[bit];
    if (record && 'node' in record) {
      node = record.node;
    } else {
      const child = newNode(record);
      node.records[bit] = { node: child };
      node = child;
    }
  }
  return node;
}

/** Sets the record for the network `bytes/prefix` (prefix >= 1) to `record`. */
function setRecord(root: TreeNode, bytes: Uint8Array, prefix: number, record: TreeRecord): void {
  descend(root, bytes, prefix - 1).records[bitAt(bytes, prefix - 1)] = record;
}

/** The record GeoLite2-Country stores for a country (trimmed to what lookups of a country read). */
function countryRecord(country: string, name?: string): MmdbValue {
  const code = country.toUpperCase();
  const en = name ?? new Intl.DisplayNames(['en'], { type: 'region' }).of(code) ?? code;
  return { country: { iso_code: code, names: { en } } };
}

const SEPARATOR = Buffer.alloc(16);
const METADATA_MARKER = Buffer.concat([Buffer.from([0xab, 0xcd, 0xef]), Buffer.from('MaxMind.com', 'ascii')]);
const RECORD_SIZE = 24;

/** The bytes of a GeoLite2-Country-like .mmdb mapping `networks` to their countries. */
export function buildCountryDatabase(networks: readonly CountryNetwork[], options: { buildEpoch?: number } = {}): Buffer {
  // Data section: one record per distinct country, shared by every network of that country.
  const data: Buffer[] = [];
  let dataSize = 0;
  const offsets = new Map<string, number>();
  const dataOffset = (n: CountryNetwork): number => {
    const key = `${n.country.toUpperCase()}\0${n.name ?? ''}`;
    let offset = offsets.get(key);
    if (offset === undefined) {
      const encoded = encode(countryRecord(n.country, n.name));
      offset = dataSize;
      offsets.set(key, offset);
      data.push(encoded);
      dataSize += encoded.length;
    }
    return offset;
  };

  // The tree: shorter prefixes first, so that a more specific network overrides a larger one.
  const root = newNode();
  const parsed = networks.map((n) => ({ ...parseNetwork(n.network), offset: dataOffset(n), network: n.network }));
  for (const { bytes, prefix, offset, network } of parsed.sort((a, b) => a.prefix - b.prefix)) {
    if (prefix === 0) throw new Error(`${network}: a /0 network is not supported`);
    if (inAliasedRange(bytes, prefix)) throw new Error(`${network} is inside ::ffff:0:0/96 or 2002::/16, which alias the IPv4 networks`);
    setRecord(root, bytes, prefix, { data: offset });
  }
  // The IPv4 subtree is the node at ::/96; the IPv4-mapped and 6to4 ranges point to it.
  const zero = new Uint8Array(16);
  const ipv4Root = descend(root, zero, 96);
  setRecord(root, ipv6Bytes('::ffff:0:0'), 96, { node: ipv4Root });
  setRecord(root, ipv6Bytes('2002::'), 16, { node: ipv4Root });

  // Number the nodes breadth-first from the root (node 0); aliased nodes are numbered once.
  const numbers = new Map<TreeNode, number>([[root, 0]]);
  const order: TreeNode[] = [root];
  for (let i = 0; i < order.length; i++) {
    for (const record of order[i]!.records) {
      if (record && 'node' in record && !numbers.has(record.node)) {
        numbers.set(record.node, order.length);
        order.push(record.node);
      }
    }
  }
  const nodeCount = order.length;
  const recordValue = (record: TreeRecord): number => {
    if (record === null) return nodeCount; // no data for this network
    if ('node' in record) return numbers.get(record.node)!;
    return nodeCount + SEPARATOR.length + record.data; // a pointer into the data section
  };
  if (recordValue({ data: dataSize }) >= 2 ** RECORD_SIZE) throw new Error('too large for 24-bit records');

  const tree = Buffer.alloc(nodeCount * ((RECORD_SIZE * 2) / 8));
  order.forEach((node, i) => {
    tree.writeUIntBE(recordValue(node.records[0]), i * 6, 3);
    tree.writeUIntBE(recordValue(node.records[1]), i * 6 + 3, 3);
  });

  const metadata = encode({
    node_count: uint32(nodeCount),
    record_size: uint16(RECORD_SIZE),
    ip_version: uint16(6),
    database_type: 'GeoLite2-Country',
    languages: ['en'],
    binary_format_major_version: uint16(2),
    binary_format_minor_version: uint16(0),
    build_epoch: uint64(options.buildEpoch ?? Math.floor(Date.now() / 1000)),
    description: { en: 'Switchyard test country database' },
  });
  return Buffer.concat([tree, SEPARATOR, ...data, METADATA_MARKER, metadata]);
}

/** Writes a country database to `file` (see buildCountryDatabase) and returns the path. */
export function writeCountryDatabase(file: string, networks: readonly CountryNetwork[], options: { buildEpoch?: number } = {}): string {
  writeFileSync(file, buildCountryDatabase(networks, options));
  return file;
}
