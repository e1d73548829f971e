/**
 * The one redaction list of every log entry (issue 19): what may never reach stdout, a log file,
 * the searchable index or an export. Used twice: as pino `redact` paths (the process logger drops
 * the fields before it even serialises them) and by `scrubValue`, the deep scrubber applied to
 * every line before any sink (stdout included), which also finds secrets inside strings.
 */

/** Field names (compared lower-cased, with `-` and `_` removed) whose values are secrets. */
export const SECRET_FIELDS = [
  'password',
  'passwordhash',
  'newpassword',
  'currentpassword',
  'oldpassword',
  'secret',
  'clientsecret',
  'webhooksecret',
  'signingsecret',
  'key',
  'apikey',
  'xapikey',
  'providerkey',
  'upstreamkey',
  'privatekey',
  'secretaccesskey',
  'sessiontoken',
  'authorization',
  'proxyauthorization',
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'bearer',
  'cookie',
  'setcookie',
  'totpsecret',
  'mfasecret',
  'mfasecretsealed',
  'mfacode',
  'otp',
  'totp',
  'totpcode',
  'recoverycode',
  'recoverycodes',
  'xswitchyardsignature',
  'signature',
] as const;

/** Field names whose values are users' message text (never an operator's business). */
export const MESSAGE_TEXT_FIELDS = ['content', 'messages', 'prompt', 'input', 'text', 'instructions', 'system', 'completion', 'choices', 'contents', 'parts'] as const;

export const REDACTED = '[redacted]';

const normalise = (name: string) => name.toLowerCase().replace(/[-_]/g, '');
const REDACTED_NAMES: ReadonlySet<string> = new Set([...SECRET_FIELDS, ...MESSAGE_TEXT_FIELDS].map(normalise));

/** True when a field of this name holds a secret or message text. */
export function isRedactedField(name: string): boolean {
  return REDACTED_NAMES.has(normalise(name));
}

/**
 * Secrets recognised inside any string (an upstream error echoing a key, a header value copied
 * into a message): OpenAI-style keys (`sk-...`, `sk-proj-...`, `sk-ant-...`, Switchyard's own keys), Google (`AIza...`) and AWS access key ids, bearer
 * credentials (Basic ones are only known by their header name: in prose the word is common), JWTs, and `key=value` pairs naming a secret.
 */
const STRING_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/\bsk-[A-Za-z0-9_-]{6,}/g, `sk-${REDACTED}`],
  [/\bAIza[0-9A-Za-z_-]{20,}/g, REDACTED],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi, `Bearer ${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/\b(password|passwd|secret|token|api[_-]?key|access[_-]?token|refresh[_-]?token)(["']?\s*[:=]\s*["']?)[^\s"'&,;}]+/gi, `$1$2${REDACTED}`],
];

/** Quick test before the replacements: most strings hold none of these. */
const SUSPECT = /sk-|AIza|AKIA|ASIA|bearer|eyJ|password|passwd|secret|token|api[_-]?key/i;

export function scrubString(value: string): string {
  if (!SUSPECT.test(value)) return value;
  let out = value;
  for (const [pattern, replacement] of STRING_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/**
 * A copy of `value` with every redacted field's value replaced and secrets inside strings masked
 * (objects and arrays at any depth). Values that need no change are returned as they are.
 */
export function scrubValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubString(value);
  if (value === null || typeof value !== 'object') return value;
  // Deeper than any log record we write: cut rather than walk an unbounded structure.
  if (depth > 32) return REDACTED;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const scrubbed = scrubValue(item, depth + 1);
      if (scrubbed !== item) changed = true;
      return scrubbed;
    });
    return changed ? out : value;
  }
  let out: Record<string, unknown> | null = null;
  for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
    const scrubbed = isRedactedField(name) && item !== null && item !== undefined && item !== REDACTED ? REDACTED : scrubValue(item, depth + 1);
    if (scrubbed !== item) {
      out ??= { ...(value as Record<string, unknown>) };
      // defineProperty: a field named `__proto__` (JSON.parse makes such own fields) stays a field.
      Object.defineProperty(out, name, { value: scrubbed, enumerable: true, writable: true, configurable: true });
    }
  }
  return out ?? value;
}

/**
 * pino `redact` paths from the same list: each name at the top of a record, and the request and
 * response headers fastify serialises. No wildcard paths: pino's redaction walks every wildcard
 * on every line (11 of them cost 63 µs a line, 170 cost 500 µs; docs/decisions/0180), while the
 * deep scrubber, which every line passes anyway, covers any depth for 10 µs.
 */
export function pinoRedactPaths(): string[] {
  const names = [...new Set([...SECRET_FIELDS.filter((n) => /^[a-z]+$/.test(n)), 'api_key', 'access_token', 'refresh_token', 'password_hash', 'mfa_code', 'totp_secret', 'recovery_codes', ...MESSAGE_TEXT_FIELDS])];
  const headers = ['authorization', 'cookie', 'x-api-key', 'api-key', 'proxy-authorization', 'x-switchyard-signature'].map((h) => `req.headers["${h}"]`);
  return [...names, ...headers, 'res.headers["set-cookie"]'];
}
