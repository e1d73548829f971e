/**
 * AWS Signature Version 4 (header form), with node:crypto only.
 *
 * Canonical URI: every path segment of the URL *as sent* is URI-encoded once more. That is the
 * rule for every AWS service except S3 ("each path segment must be URI-encoded twice"): a Bedrock
 * model id `anthropic.claude-3-haiku-20240307-v1:0` goes on the wire as `...v1%3A0` and is signed
 * as `...v1%253A0`. For the plain paths of the AWS SigV4 test suite this is the same as encoding
 * the raw path once, so the published vectors (get-vanilla, ...) apply unchanged.
 */
import { createHash, createHmac } from 'node:crypto';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignInput {
  method: string;
  /** Absolute URL, path already percent-encoded the way it is sent. */
  url: string;
  /** Extra headers to sign (and send). `host` and `x-amz-date` are added here. */
  headers?: Record<string, string>;
  body?: string | Buffer;
  region: string;
  service: string;
  credentials: AwsCredentials;
  /** Signing time (default: now). */
  now?: Date;
  /** Adds (and signs) `x-amz-content-sha256`. Default true; the test-suite vectors predate it. */
  contentSha256Header?: boolean;
}

export interface SignResult {
  /**
   * Headers to send: the given ones plus `x-amz-date`, `x-amz-content-sha256`,
   * `x-amz-security-token` (with a session token) and `authorization`. `host` is signed but not
   * included: the HTTP client derives the same value from the URL.
   */
  headers: Record<string, string>;
  canonicalRequest: string;
  stringToSign: string;
  signature: string;
}

export const ALGORITHM = 'AWS4-HMAC-SHA256';

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** RFC 3986 encoding: everything but A-Z a-z 0-9 - . _ ~ becomes %XX (upper-case hex). */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `20150830T123600Z` */
export function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/** The canonical URI of a path as sent (each segment encoded again; see the module comment). */
export function canonicalUri(path: string): string {
  if (path === '' || path === '/') return '/';
  return path
    .split('/')
    .map((segment) => uriEncode(segment))
    .join('/');
}

/** The canonical query string of a raw query (without `?`): pairs encoded, sorted by name then value. */
export function canonicalQuery(query: string): string {
  if (!query) return '';
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  return query
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      const value = eq === -1 ? '' : pair.slice(eq + 1);
      return [uriEncode(decode(name)), uriEncode(decode(value))] as const;
    })
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([n, v]) => `${n}=${v}`)
    .join('&');
}

/** Lower-cased names, values trimmed with inner runs of spaces collapsed, sorted by name. */
export function canonicalHeaders(headers: Record<string, string>): { canonical: string; signedHeaders: string } {
  const entries = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    const list = entries.get(key) ?? [];
    list.push(value.trim().replace(/\s+/g, ' '));
    entries.set(key, list);
  }
  const names = [...entries.keys()].sort();
  return {
    canonical: names.map((n) => `${n}:${entries.get(n)!.join(',')}\n`).join(''),
    signedHeaders: names.join(';'),
  };
}

export function canonicalRequest(method: string, path: string, query: string, headers: Record<string, string>, payloadHash: string): { request: string; signedHeaders: string } {
  const { canonical, signedHeaders } = canonicalHeaders(headers);
  return { request: [method.toUpperCase(), canonicalUri(path), canonicalQuery(query), canonical, signedHeaders, payloadHash].join('\n'), signedHeaders };
}

export function credentialScope(date: string, region: string, service: string): string {
  return `${date}/${region}/${service}/aws4_request`;
}

export function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  const kDate = hmac(`AWS4${secretAccessKey}`, date);
  const kRegion = hmac(kDate, region);
  const kService = hmac(kRegion, service);
  return hmac(kService, 'aws4_request');
}

export function stringToSign(datetime: string, scope: string, canonicalRequestText: string): string {
  return [ALGORITHM, datetime, scope, sha256Hex(canonicalRequestText)].join('\n');
}

/** Signs a request: returns the headers to send (with `authorization`) and the intermediate strings. */
export function signRequest(input: SignInput): SignResult {
  const url = new URL(input.url);
  const datetime = amzDate(input.now ?? new Date());
  const date = datetime.slice(0, 8);
  const body = input.body ?? '';
  const payloadHash = sha256Hex(body);

  const headers: Record<string, string> = {};
// eslint-disable-next-line switchyard/no-string-index-lookup -- header names are the code's own
  for (const [name, value] of Object.entries(input.headers ?? {})) headers[name.toLowerCase()] = value;
  headers['x-amz-date'] = datetime;
  if (input.contentSha256Header !== false) headers['x-amz-content-sha256'] = payloadHash;
  if (input.credentials.sessionToken) headers['x-amz-security-token'] = input.credentials.sessionToken;

  const { request, signedHeaders } = canonicalRequest(input.method, url.pathname, url.search.replace(/^\?/, ''), { ...headers, host: url.host }, payloadHash);
  const scope = credentialScope(date, input.region, input.service);
  const toSign = stringToSign(datetime, scope, request);
  const signature = createHmac('sha256', signingKey(input.credentials.secretAccessKey, date, input.region, input.service))
    .update(toSign, 'utf8')
    .digest('hex');
  headers.authorization = `${ALGORITHM} Credential=${input.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { headers, canonicalRequest: request, stringToSign: toSign, signature };
}
