/**
 * The one configuration module. Everything the process reads from the environment is declared
 * here, validated with zod, and given a default; README.md's configuration table mirrors it.
 * A variable that is set but malformed is a startup error naming it.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { defaultChannelsFromEnv, type DefaultChannel } from './bootstrap/default-channels.js';
import { ConfigError } from './errors.js';
import { parseIpRule } from './relay/access/ip-rules.js';
import { API_VERSIONS, isApiVersion, type ApiVersion } from './version.js';

/** Go-style durations as the spec writes them: "720h", "15m", "30s", "500ms", "1h30m". */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000; // a bare number is seconds
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  let consumed = 0;
  for (const match of trimmed.matchAll(part)) {
    if (match.index !== consumed) break;
// eslint-disable-next-line switchyard/no-string-index-lookup -- the regex admits only the unit names
    total += Number(match[1]) * unit[match[2]!]!;
    consumed += match[0].length;
  }
  if (consumed === 0 || consumed !== trimmed.length) throw new Error(`"${text}" is not a duration (like 720h, 15m, 30s, 500ms)`);
  return Math.round(total);
}

/** Sizes: "10485760", "10MB", "512KB", "1GB" (binary multiples). */
export function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?$/i.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a size (like 10MB, 512KB, or bytes)`);
  const multipliers: Record<string, number> = { b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 };
// eslint-disable-next-line switchyard/no-string-index-lookup -- the regex admits only the unit names
  return Math.round(Number(match[1]) * multipliers[(match[2] ?? 'b').toLowerCase()]!);
}

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      try {
        return parseDuration(value);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return z.NEVER;
      }
    });

const size = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      try {
        return parseSize(value);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return z.NEVER;
      }
    });

const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], { message: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? fallback : ['true', '1', 'yes', 'on'].includes(v)));

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const optionalText = z.string().min(1).optional();

export const EnvSchema = z.object({
  SECRET: z.string({ message: 'SECRET is required: set it to a long random string (it signs tokens and derives encryption keys)' }).min(16, 'SECRET must be at least 16 characters'),
  HOST: z.string().default('0.0.0.0'),
  SERVER_PORT: port(8000),
  /** Connections the kernel queues for the public port before they are accepted (listen backlog; capped by net.core.somaxconn). */
  HTTP_LISTEN_BACKLOG: positiveInt(4096),
  /** Deepest nesting of objects and arrays a JSON request body may have (deeper: 400 json_too_deep). */
  MAX_JSON_DEPTH: positiveInt(128),
  /** Request bodies larger are refused with 413 (uploads have MAX_FILE_SIZE). */
  MAX_REQUEST_BODY_SIZE: size('32MB'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  SQLDB_HOST: optionalText,
  SQLDB_PORT: port(0),
  SQLDB_USER: z.string().default('root'),
  SQLDB_PASSWORD: z.string().default(''),
  SQLDB_NAME: z.string().min(1).default('switchyard'),
  SQLDB_DIALECT: z.enum(['mysql', 'postgres']).default('mysql'),

  CACHE_HOST: optionalText,
  CACHE_PORT: port(6379),
  CACHE_PASSWORD: optionalText,
  CACHE_DB: z.coerce.number().int().min(0).max(15).default(0),
  CACHE_PREFIX: z.string().default('sy:'),

  NATS_URL: optionalText,
  NATS_STREAM: z.string().regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, - and _ only').default('SWITCHYARD'),
  EVENTSTORE_URL: optionalText,
  /** Recent reads of the embedded log kept for the subscribers reading the same commits (estimated bytes). */
  EVENT_READ_CACHE_BYTES: size('32MB'),

  MAX_FILE_SIZE: size('20MB'),
  FILE_PROCESSING_TIMEOUT: duration('60s'),
  /** `builtin`: text extraction and OCR in worker threads; `none`: files are stored, never processed. */
  FILE_PROCESSING_ENGINE: z.enum(['builtin', 'none']).default('builtin'),
  /** Worker threads that process files (each runs one file at a time). */
  FILE_PROCESSING_WORKERS: z.coerce.number().int().min(1).max(32).default(2),
  /** Extracted text longer than this (characters) is kept whole but marked; chat uses a cut form that says so. */
  FILE_TEXT_LIMIT: z.coerce.number().int().min(1000).default(100_000),
  OCR_ENABLED: bool(true),
  /** Comma list of tesseract language codes (three letters: eng, deu, fra, chi_sim...). */
  OCR_LANGUAGES: z.string().regex(/^[a-z_]+(,[a-z_]+)*$/, 'a comma list of language codes such as eng,deu').default('eng'),
  /** A tessdata folder (Debian's tesseract-ocr-* packages: /usr/share/tesseract-ocr/5/tessdata) tried before the @tesseract.js-data/<lang> packages. */
  OCR_TESSDATA_DIR: optionalText,
  JWT_EXPIRE: duration('24h'),
  JWT_REFRESH_EXPIRE: duration('720h'),
  /** How often ended sessions (expired or revoked longer than JWT_EXPIRE ago) are removed from the sessions table. */
  SESSION_RETENTION_INTERVAL: duration('1h'),
  SESSION_SECURE: bool(false),
  SESSION_HTTP_ONLY: bool(true),
  SESSION_SAME_SITE: z.enum(['lax', 'strict', 'none']).default('lax'),

  DB_MAX_OPEN_CONNS: positiveInt(25),
  DB_MAX_IDLE_CONNS: z.coerce.number().int().min(0).default(10),
  DB_CONN_MAX_LIFETIME: duration('1h'),

  HTTP_MAX_IDLE_CONNS: positiveInt(100),
  HTTP_MAX_CONNS_PER_HOST: positiveInt(4096),
  HTTP_IDLE_CONN_TIMEOUT: duration('90s'),
  /** Longest a request waits for a connection to its upstream once HTTP_MAX_CONNS_PER_HOST are busy (then 503 upstream_busy). 0: no limit. */
  UPSTREAM_QUEUE_TIMEOUT: duration('5s'),

  RELAY_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  RELAY_BACKOFF_BASE: duration('100ms'),
  RELAY_BACKOFF_MULTIPLIER: z.coerce.number().min(1).max(10).default(2),
  RELAY_FIRST_BYTE_TIMEOUT: duration('60s'),
  RELAY_TIMEOUT: duration('600s'),
  /** Largest upstream stream event (an SSE event or line, an NDJSON line, an event-stream frame). */
  UPSTREAM_MAX_EVENT_SIZE: size('8MB'),
  /** Largest upstream body read whole (a completion that is not streamed, an error body). */
  UPSTREAM_MAX_BODY_SIZE: size('64MB'),
  CHANNEL_FAILURE_THRESHOLD: positiveInt(5),
  CHANNEL_FAILURE_WINDOW: duration('60s'),
  CHANNEL_COOLDOWN: duration('30s'),
  /** Failed logins allowed per account (email) and per client address within LOGIN_FAILURE_WINDOW. */
  LOGIN_MAX_FAILURES: positiveInt(10),
  LOGIN_MAX_FAILURES_PER_IP: positiveInt(100),
  LOGIN_FAILURE_WINDOW: duration('15m'),
  HEALTH_CHECK_INTERVAL: duration('60s'),

  TRUSTED_PROXIES: z.string().default(''),
  GEOIP_DATABASE: optionalText,
  GEOIP_COUNTRY_HEADER: optionalText,
  /** Completion tokens an API key's quota reservation assumes at least (the client's max_tokens only raises it). */
  QUOTA_RESERVE_COMPLETION_TOKENS: positiveInt(4096),

  RBAC_ENABLED: bool(true),
  MFA_ENABLED: bool(false),
  MFA_ISSUER: z.string().min(1).max(100).default('Switchyard'),
  ADMIN_EMAIL: z.email({ message: 'must be an email address' }).default('admin@switchyard.local'),
  ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').max(1024).optional(),
  JWT_PRIVATE_KEY_FILE: optionalText,
  JWT_PUBLIC_KEY_FILE: optionalText,
  /** The API version of a request that does not name one (API-Version header): docs/api-versions.md. */
  API_VERSION: z.string().regex(/^v\d+$/, 'must look like v2').default('v2'),
  HEALTH_CHECK_ENABLED: bool(true),
  /** Which server answers chat completions on the public port (docs/decisions/0100): a front in front of fastify (lean, node) or fastify itself. */
  RELAY_HTTP_SERVER: z.enum(['lean', 'node', 'fastify']).optional(),
  /** The older switch: false is RELAY_HTTP_SERVER=fastify (RELAY_HTTP_SERVER wins when both are set). */
  RELAY_FAST_PATH: bool(true),
  /** Run the projectors in a thread of their own (false: on the serving thread). */
  PROJECTORS_THREAD: bool(true),
  /** The projector thread's niceness (Linux; 0: as the serving thread). */
  PROJECTORS_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /** What an answer waits for: its usage event written to the OS (survives kill -9) or also fdatasync'ed (survives power loss). */
  USAGE_JOURNAL_WAIT: z.enum(['write', 'fsync']).default('write'),
  /** write: longest time (ms) between fdatasyncs (default 1000); fsync: longest wait before a group commit (default 2). */
  USAGE_JOURNAL_FSYNC_MS: z.coerce.number().int().min(0).max(60_000).optional(),
  /** Usage journal segment size before a new file is started. */
  USAGE_JOURNAL_SEGMENT_SIZE: size('4MB'),
  METRICS_ENABLED: bool(true),
  METRICS_PORT: port(9090),
  /** Where file bytes go: a local directory (STORAGE_DIR) or an S3-compatible bucket (S3_*). */
  STORAGE_TYPE: z.enum(['local', 's3']).default('local'),
  S3_BUCKET: optionalText,
  /** Unset: AWS's own endpoint for S3_REGION. */
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  /** Unset (both): the AWS SDK's default credential chain. */
  S3_ACCESS_KEY_ID: optionalText,
  S3_SECRET_ACCESS_KEY: optionalText,
  S3_FORCE_PATH_STYLE: bool(false),

  DATA_DIR: z.string().default('./data'),
  /** Audit replay: rows per page and side when comparing live and replayed tables (bounds its memory). */
  AUDIT_PAGE_SIZE: z.coerce.number().int().min(1).max(100_000).default(2000),
  /** Audit replay: save a snapshot of the replay after replaying at least this many events (0: never). */
  AUDIT_SNAPSHOT_EVERY: z.coerce.number().int().min(0).default(100_000),
  /** Audit snapshots kept under DATA_DIR/audit/snapshots (the newest). */
  AUDIT_SNAPSHOTS_KEPT: z.coerce.number().int().min(1).max(100).default(2),
  /** A live view (that supports it) saves its state every this many folded events (0: never). */
  LIVE_VIEW_SNAPSHOT_EVERY: z.coerce.number().int().min(0).default(10_000),
  /** Usage events older than this many days are moved out of the log into archive files (0: kept forever). */
  USAGE_ARCHIVE_AFTER_DAYS: z.coerce.number().int().min(0).max(36_500).default(0),
  /** Where archived usage events go (unset: DATA_DIR/archive). Shared by every instance in distributed mode. */
  USAGE_ARCHIVE_DIR: optionalText,
  STORAGE_DIR: z.string().default('./storage'),
  LOG_DIR: z.string().default('./logs'),
  /** Write log entries to LOG_DIR/<YYYY-MM-DD>/<category>.log (JSON lines); stdout gets them either way. */
  LOG_FILES_ENABLED: bool(true),
  /** A day's category file past this size rotates (numbered, then gzip'd). */
  LOG_FILE_MAX_SIZE: size('100MB'),
  /** Days each category's files (and its searchable entries) are kept; DEBUG entries of any category go after LOG_RETENTION_DEBUG_DAYS. */
  LOG_RETENTION_SYSTEM_DAYS: positiveInt(90),
  LOG_RETENTION_APPLICATION_DAYS: positiveInt(90),
  LOG_RETENTION_USER_ACTIVITY_DAYS: positiveInt(365),
  LOG_RETENTION_SECURITY_DAYS: positiveInt(2555),
  LOG_RETENTION_PERFORMANCE_DAYS: positiveInt(30),
  LOG_RETENTION_DEBUG_DAYS: positiveInt(7),
  /** How often the retention job compresses, archives and removes expired log files and entries. */
  LOG_RETENTION_INTERVAL: duration('1h'),
  /** Lowest level written to the searchable log index (the admin log API). */
  LOG_INDEX_LEVEL: z.enum(['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL']).default('INFO'),
  /** A relay or API request slower than this is logged in the performance category. */
  SLOW_REQUEST_THRESHOLD: duration('10s'),
  /** How often process resource metrics (memory, CPU, event-loop delay) are logged in the performance category (0: never). */
  RESOURCE_METRICS_INTERVAL: duration('60s'),
  /** Alert rules are evaluated (by one instance at a time) this often. */
  ALERTS_ENABLED: bool(true),
  ALERT_EVALUATION_INTERVAL: duration('15s'),
  /** Webhook targets on private, loopback and link-local addresses are refused unless this is true (SSRF). */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool(false),
  /** Time allowed for one webhook delivery attempt. */
  WEBHOOK_TIMEOUT: duration('10s'),
  /** A delivery is retried with exponential backoff until this long after its first attempt, then marked failed. */
  WEBHOOK_RETRY_FOR: duration('24h'),
  /** Wait before the first retry of a failed delivery; each later wait doubles (jittered, at most 1h). */
  WEBHOOK_RETRY_BASE: duration('30s'),
  /** How often this instance looks for due webhook deliveries (0: this instance sends none). */
  WEBHOOK_POLL_INTERVAL: duration('1s'),
  /** Delivered and failed webhook deliveries are removed this long after their last attempt (0: kept). */
  WEBHOOK_DELIVERY_RETENTION: duration('30d'),
  /** Built-in preset data files (<lang>/*.json); unset: the presets/builtin folder shipped with the package. */
  PRESETS_BUILTIN_DIR: optionalText,
  /** The built web UI served at / (unset: dist/web of this package, which `npm ci` builds); "off": no UI. */
  WEB_DIR: optionalText,
  /** Context length (tokens) of a conversation's model when neither CONVERSATION_CONTEXT_LENGTHS nor the built-in table knows it. */
  CONVERSATION_CONTEXT_TOKENS: positiveInt(8192),
  /** Context lengths by model name, over the built-in table: "model=tokens,model=tokens". */
  CONVERSATION_CONTEXT_LENGTHS: z
    .string()
    .default('')
    .transform((value, ctx) => {
      const lengths = new Map<string, number>();
      for (const entry of value.split(',').map((e) => e.trim()).filter(Boolean)) {
        const at = entry.lastIndexOf('=');
        const tokens = Number(entry.slice(at + 1));
        if (at <= 0 || !Number.isSafeInteger(tokens) || tokens <= 0) {
          ctx.addIssue({ code: 'custom', message: `"${entry}" is not model=tokens` });
          return z.NEVER;
        }
        lengths.set(entry.slice(0, at).trim(), tokens);
      }
      return lengths;
    }),
  /** How often a conversation's running generation checks for a stop sent to another instance (docs/decisions/0130). */
  CONVERSATION_STOP_POLL: duration('100ms'),
});

export type Env = z.infer<typeof EnvSchema>;

export type HttpServerKind = NonNullable<Env['RELAY_HTTP_SERVER']>;
/** The front when RELAY_HTTP_SERVER is unset (docs/decisions/0100). */
const DEFAULT_HTTP_SERVER: HttpServerKind = 'lean';

export interface Config {
  secret: string;
  server: {
    host: string;
    port: number;
    logLevel: Env['LOG_LEVEL'];
    /** What answers chat completions on the public port (RELAY_HTTP_SERVER): a front server before fastify, or fastify alone. */
    httpServer: HttpServerKind;
    /** The listen backlog of the public port (HTTP_LISTEN_BACKLOG). */
    listenBacklog: number;
    /** Request bodies nested deeper are refused before parsing (MAX_JSON_DEPTH). */
    maxJsonDepth: number;
    /** Larger request bodies get 413 (MAX_REQUEST_BODY_SIZE). */
    maxBodySize: number;
  };
  /** Where events live: embedded SQLite unless NATS_URL or EVENTSTORE_URL is set. */
  eventStore: ({ kind: 'sqlite'; file: string; readCacheBytes: number } | { kind: 'nats'; url: string; stream: string } | { kind: 'kurrentdb'; url: string }) & {
    /** Archived usage events (USAGE_ARCHIVE_DIR): the log is read with them merged back (src/archive). */
    archiveDir?: string;
  };
  /** Where read models live: embedded SQLite unless SQLDB_HOST is set. */
  readModels:
    | { kind: 'sqlite'; file: string }
    | { kind: 'mysql' | 'postgres'; host: string; port: number; user: string; password: string; database: string; maxConnections: number; maxIdle: number; connMaxLifetimeMs: number };
  /** Where hot counters live: process memory unless CACHE_HOST is set. */
  counters: { kind: 'memory' } | { kind: 'redis'; host: string; port: number; password?: string; db: number; keyPrefix: string };
  files: {
    maxSize: number;
    processingTimeoutMs: number;
    storage: StorageConfig;
    /** FILE_PROCESSING_ENGINE */
    engine: 'builtin' | 'none';
    workers: number;
    /** FILE_TEXT_LIMIT (characters) */
    textLimit: number;
    ocr: { enabled: boolean; languages: string[]; tessdataDir: string | null };
  };
  auth: {
    jwtExpireMs: number;
    jwtRefreshExpireMs: number;
    /** How often ended sessions are removed from the read model (SESSION_RETENTION_INTERVAL). */
    sessionRetentionIntervalMs: number;
    session: { secure: boolean; httpOnly: boolean; sameSite: 'lax' | 'strict' | 'none' };
    rbacEnabled: boolean;
    mfaEnabled: boolean;
    /** Issuer shown by authenticator apps (MFA_ISSUER). */
    mfaIssuer: string;
    /** Access token signing: HS256 with a key derived from SECRET, or RS256 with PEM files. */
    jwt: JwtSigningConfig;
    /** The root admin created at first start (password null: generate one and log it once). */
    bootstrapAdmin: { email: string; password: string | null };
    /** Password guessing: failed logins allowed per email and per client address in a sliding window. */
    loginThrottle: { maxFailuresPerEmail: number; maxFailuresPerIp: number; windowMs: number };
  };
  upstreamHttp: {
    maxIdleConns: number;
    maxConnsPerHost: number;
    idleConnTimeoutMs: number;
    /** How long a request may wait for a free connection to its origin (0: no limit). */
    queueTimeoutMs: number;
  };
  relay: {
    maxRetries: number;
    backoffBaseMs: number;
    backoffMultiplier: number;
    firstByteTimeoutMs: number;
    timeoutMs: number;
    /** Past these the answer is a 502 upstream_response_too_large (bounded memory and parse time). */
    maxEventBytes: number;
    maxBodyBytes: number;
    failureThreshold: number;
    failureWindowMs: number;
    cooldownMs: number;
    healthCheckIntervalMs: number;
  };
  api: { version: ApiVersion; supportedVersions: ApiVersion[] };
  access: {
    /** Addresses / CIDR ranges of proxies whose X-Forwarded-For (and country header) is believed. */
    trustedProxies: string[];
    /** MaxMind country (or city) .mmdb file for API keys' country rules. */
    geoipDatabase: string | null;
    /** A country header set by a trusted CDN in front (e.g. cf-ipcountry). */
    geoipCountryHeader: string | null;
    /**
     * Completion tokens a quota reservation counts at least, whatever the request's max_tokens:
     * what bounds a quota's overshoot does not come from the client.
     */
    quotaReserveCompletionTokens: number;
  };
  healthCheckEnabled: boolean;
  /** Projectors in their own worker thread (PROJECTORS_THREAD) or on the serving thread. */
  projectorsThread: boolean;
  /** That thread's niceness (PROJECTORS_NICE): background work yields a core to requests. */
  projectorsNice: number;
  metrics: { enabled: boolean; port: number };
  /** The durable journal of usage events under DATA_DIR/usage-journal (docs/decisions/0020). */
  usageJournal: { wait: 'write' | 'fsync'; fsyncMs: number; segmentBytes: number };
  dirs: { data: string; storage: string; logs: string };
  /** Audit replay (src/audit): scratch files and snapshots under `dir` (DATA_DIR/audit), page size, snapshot policy. */
  audit: { dir: string; pageSize: number; snapshotEvery: number; snapshotsKept: number };
  /** Built-in presets: where the data files are (null: the folder shipped with the package). */
  presets: { builtinDir: string | null };
  /** The web UI's built files (null: dist/web of this package); `enabled` false when WEB_DIR=off. */
  web: { enabled: boolean; dir: string | null };
  /** Conversations' replies: context window (tokens per model) and how a stop reaches another instance. */
  conversations: { contextTokens: number; contextLengths: ReadonlyMap<string, number>; stopPollMs: number };
  /** Growth of a long-lived installation (README, "Growth and retention"). */
  retention: { usageArchiveAfterDays: number; usageArchiveDir: string; liveViewSnapshotEvery: number };
  /** Operational logs (issue 19): files under dirs.logs, the searchable index, retention per category (days). */
  logs: {
    files: boolean;
    maxFileBytes: number;
    retentionDays: { system: number; application: number; user_activity: number; security: number; performance: number; debug: number };
    retentionIntervalMs: number;
    indexLevel: 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR' | 'CRITICAL';
    slowRequestMs: number;
    resourceMetricsIntervalMs: number;
  };
  alerts: { enabled: boolean; evaluationIntervalMs: number };
  webhooks: { allowPrivateTargets: boolean; timeoutMs: number; retryForMs: number; retryBaseMs: number; pollIntervalMs: number; deliveryRetentionMs: number };
  /** Variables renamed or removed in 2.0, or set without effect: the app logs each once at startup. */
  warnings: ConfigWarning[];
  /** Channels `<PROVIDER>_API_KEY` variables ask for (created at first start: src/bootstrap/default-channels.ts). */
  defaultChannels: DefaultChannel[];
}

export interface ConfigWarning {
  variable: string;
  message: string;
}

/** Variables of 1.x that 2.0 removed: what replaced them (the warning says so; startup goes on). */
const REMOVED_IN_2_0: Record<string, string> = {
  LEGACY_AUTH_ENABLED:
    'LEGACY_AUTH_ENABLED was removed in 2.0 and is ignored: the 1.x login is gone; users sign in with access and refresh tokens (POST /v1/auth/login) and programs use API keys',
  OLD_API_FORMAT: 'OLD_API_FORMAT was removed in 2.0 and is ignored: the API version is API_VERSION (v1 legacy, v2 current), or chosen per request (docs/api-versions.md)',
};

/**
 * The 2.0 renames, before validation: JWT_SECRET stands in for a missing SECRET (and is ignored
 * when SECRET is set); removed variables are named. Values are never part of a warning.
 */
export function renamedEnv(present: Record<string, string>): { env: Record<string, string>; warnings: ConfigWarning[]; secretFrom: 'SECRET' | 'JWT_SECRET' } {
  const warnings: ConfigWarning[] = [];
  let env = present;
  let secretFrom: 'SECRET' | 'JWT_SECRET' = 'SECRET';
  if (present.JWT_SECRET !== undefined) {
    if (present.SECRET === undefined) {
      env = { ...present, SECRET: present.JWT_SECRET };
      secretFrom = 'JWT_SECRET';
      warnings.push({ variable: 'JWT_SECRET', message: 'JWT_SECRET is deprecated: it was renamed SECRET in 2.0. It is used because SECRET is not set; rename it to SECRET' });
    } else {
      warnings.push({ variable: 'JWT_SECRET', message: 'JWT_SECRET is ignored: SECRET is set (JWT_SECRET was renamed SECRET in 2.0; remove it)' });
    }
  }
  for (const [variable, message] of Object.entries(REMOVED_IN_2_0)) if (Object.hasOwn(present, variable)) warnings.push({ variable, message });
  return { env, warnings, secretFrom };
}

/** Validates the environment and builds the Config. Throws ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset, as in most twelve-factor tooling.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')) as Record<string, string>;
  const renamed = renamedEnv(present);
  const parsed = EnvSchema.safeParse(renamed.env);
  if (!parsed.success) {
    const nameOf = (path: string) => (path === 'SECRET' && renamed.secretFrom === 'JWT_SECRET' ? 'JWT_SECRET (read as SECRET)' : path || '(env)');
    const lines = parsed.error.issues.map((issue) => `${nameOf(issue.path.join('.'))}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const supportedVersions: ApiVersion[] = [...API_VERSIONS];
  const badProxy = e.TRUSTED_PROXIES.split(',').map((p) => p.trim()).filter(Boolean).find((p) => !parseIpRule(p));
  if (badProxy) throw new ConfigError(`Invalid configuration:\n  TRUSTED_PROXIES: "${badProxy}" is not an IP address or CIDR range`);
  if (!isApiVersion(e.API_VERSION)) {
    throw new ConfigError(`Invalid configuration:\n  API_VERSION: ${e.API_VERSION} is not a supported API version (supported: ${supportedVersions.join(', ')})`);
  }
  const envChannels = defaultChannelsFromEnv(present);
  if (envChannels.problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${envChannels.problems.map((p) => `${p.variable}: ${p.message}`).join('\n  ')}`);
  const dataDir = e.DATA_DIR;
  const dialect = e.SQLDB_DIALECT;
  const archiveDir = e.USAGE_ARCHIVE_DIR ?? `${dataDir}/archive`;
  return {
    secret: e.SECRET,
    server: { host: e.HOST, port: e.SERVER_PORT, logLevel: e.LOG_LEVEL, httpServer: e.RELAY_HTTP_SERVER ?? (e.RELAY_FAST_PATH ? DEFAULT_HTTP_SERVER : 'fastify'), listenBacklog: e.HTTP_LISTEN_BACKLOG, maxJsonDepth: e.MAX_JSON_DEPTH, maxBodySize: e.MAX_REQUEST_BODY_SIZE },
    eventStore: e.EVENTSTORE_URL
      ? { kind: 'kurrentdb', url: e.EVENTSTORE_URL, archiveDir }
      : e.NATS_URL
        ? { kind: 'nats', url: e.NATS_URL, stream: e.NATS_STREAM, archiveDir }
        : { kind: 'sqlite', file: `${dataDir}/events.db`, readCacheBytes: e.EVENT_READ_CACHE_BYTES, archiveDir },
    readModels: e.SQLDB_HOST
      ? {
          kind: dialect,
          host: e.SQLDB_HOST,
          port: e.SQLDB_PORT || (dialect === 'mysql' ? 3306 : 5432),
          user: e.SQLDB_USER,
          password: e.SQLDB_PASSWORD,
          database: e.SQLDB_NAME,
          maxConnections: e.DB_MAX_OPEN_CONNS,
          maxIdle: e.DB_MAX_IDLE_CONNS,
          connMaxLifetimeMs: e.DB_CONN_MAX_LIFETIME,
        }
      : { kind: 'sqlite', file: `${dataDir}/readmodels.db` },
    counters: e.CACHE_HOST ? { kind: 'redis', host: e.CACHE_HOST, port: e.CACHE_PORT, password: e.CACHE_PASSWORD, db: e.CACHE_DB, keyPrefix: e.CACHE_PREFIX } : { kind: 'memory' },
    files: {
      maxSize: e.MAX_FILE_SIZE,
      processingTimeoutMs: e.FILE_PROCESSING_TIMEOUT,
      storage: storageConfig(e),
      engine: e.FILE_PROCESSING_ENGINE,
      workers: e.FILE_PROCESSING_WORKERS,
      textLimit: e.FILE_TEXT_LIMIT,
      ocr: { enabled: e.OCR_ENABLED, languages: e.OCR_LANGUAGES.split(','), tessdataDir: e.OCR_TESSDATA_DIR ?? null },
    },
    auth: {
      jwtExpireMs: e.JWT_EXPIRE,
      jwtRefreshExpireMs: e.JWT_REFRESH_EXPIRE,
      sessionRetentionIntervalMs: e.SESSION_RETENTION_INTERVAL,
      session: { secure: e.SESSION_SECURE, httpOnly: e.SESSION_HTTP_ONLY, sameSite: e.SESSION_SAME_SITE },
      rbacEnabled: e.RBAC_ENABLED,
      mfaEnabled: e.MFA_ENABLED,
      mfaIssuer: e.MFA_ISSUER,
      jwt: jwtSigning(e.JWT_PRIVATE_KEY_FILE, e.JWT_PUBLIC_KEY_FILE),
      bootstrapAdmin: { email: e.ADMIN_EMAIL.trim().toLowerCase(), password: e.ADMIN_PASSWORD ?? null },
      loginThrottle: { maxFailuresPerEmail: e.LOGIN_MAX_FAILURES, maxFailuresPerIp: e.LOGIN_MAX_FAILURES_PER_IP, windowMs: e.LOGIN_FAILURE_WINDOW },
    },
    upstreamHttp: { maxIdleConns: e.HTTP_MAX_IDLE_CONNS, maxConnsPerHost: e.HTTP_MAX_CONNS_PER_HOST, idleConnTimeoutMs: e.HTTP_IDLE_CONN_TIMEOUT, queueTimeoutMs: e.UPSTREAM_QUEUE_TIMEOUT },
    relay: {
      maxRetries: e.RELAY_MAX_RETRIES,
      backoffBaseMs: e.RELAY_BACKOFF_BASE,
      backoffMultiplier: e.RELAY_BACKOFF_MULTIPLIER,
      firstByteTimeoutMs: e.RELAY_FIRST_BYTE_TIMEOUT,
      timeoutMs: e.RELAY_TIMEOUT,
      maxEventBytes: e.UPSTREAM_MAX_EVENT_SIZE,
      maxBodyBytes: e.UPSTREAM_MAX_BODY_SIZE,
      failureThreshold: e.CHANNEL_FAILURE_THRESHOLD,
      failureWindowMs: e.CHANNEL_FAILURE_WINDOW,
      cooldownMs: e.CHANNEL_COOLDOWN,
      healthCheckIntervalMs: e.HEALTH_CHECK_INTERVAL,
    },
    api: { version: e.API_VERSION, supportedVersions },
    access: {
      trustedProxies: e.TRUSTED_PROXIES.split(',').map((p) => p.trim()).filter(Boolean),
      geoipDatabase: e.GEOIP_DATABASE ?? null,
      geoipCountryHeader: e.GEOIP_COUNTRY_HEADER?.toLowerCase() ?? null,
      quotaReserveCompletionTokens: e.QUOTA_RESERVE_COMPLETION_TOKENS,
    },
    healthCheckEnabled: e.HEALTH_CHECK_ENABLED,
    projectorsThread: e.PROJECTORS_THREAD,
    projectorsNice: e.PROJECTORS_NICE,
    metrics: { enabled: e.METRICS_ENABLED, port: e.METRICS_PORT },
    usageJournal: { wait: e.USAGE_JOURNAL_WAIT, fsyncMs: e.USAGE_JOURNAL_FSYNC_MS ?? (e.USAGE_JOURNAL_WAIT === 'write' ? 1000 : 2), segmentBytes: e.USAGE_JOURNAL_SEGMENT_SIZE },
    dirs: { data: dataDir, storage: e.STORAGE_DIR, logs: e.LOG_DIR },
    audit: { dir: `${dataDir}/audit`, pageSize: e.AUDIT_PAGE_SIZE, snapshotEvery: e.AUDIT_SNAPSHOT_EVERY, snapshotsKept: e.AUDIT_SNAPSHOTS_KEPT },
    presets: { builtinDir: e.PRESETS_BUILTIN_DIR ?? null },
    web: { enabled: e.WEB_DIR !== 'off', dir: e.WEB_DIR === 'off' ? null : (e.WEB_DIR ?? null) },
    conversations: { contextTokens: e.CONVERSATION_CONTEXT_TOKENS, contextLengths: e.CONVERSATION_CONTEXT_LENGTHS, stopPollMs: e.CONVERSATION_STOP_POLL },
    retention: { usageArchiveAfterDays: e.USAGE_ARCHIVE_AFTER_DAYS, usageArchiveDir: archiveDir, liveViewSnapshotEvery: e.LIVE_VIEW_SNAPSHOT_EVERY },
    logs: {
      files: e.LOG_FILES_ENABLED,
      maxFileBytes: e.LOG_FILE_MAX_SIZE,
      retentionDays: {
        system: e.LOG_RETENTION_SYSTEM_DAYS,
        application: e.LOG_RETENTION_APPLICATION_DAYS,
        user_activity: e.LOG_RETENTION_USER_ACTIVITY_DAYS,
        security: e.LOG_RETENTION_SECURITY_DAYS,
        performance: e.LOG_RETENTION_PERFORMANCE_DAYS,
        debug: e.LOG_RETENTION_DEBUG_DAYS,
      },
      retentionIntervalMs: e.LOG_RETENTION_INTERVAL,
      indexLevel: e.LOG_INDEX_LEVEL,
      slowRequestMs: e.SLOW_REQUEST_THRESHOLD,
      resourceMetricsIntervalMs: e.RESOURCE_METRICS_INTERVAL,
    },
    alerts: { enabled: e.ALERTS_ENABLED, evaluationIntervalMs: e.ALERT_EVALUATION_INTERVAL },
    webhooks: {
      allowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      timeoutMs: e.WEBHOOK_TIMEOUT,
      retryForMs: e.WEBHOOK_RETRY_FOR,
      retryBaseMs: e.WEBHOOK_RETRY_BASE,
      pollIntervalMs: e.WEBHOOK_POLL_INTERVAL,
      deliveryRetentionMs: e.WEBHOOK_DELIVERY_RETENTION,
    },
    warnings: [...renamed.warnings, ...envChannels.ignored],
    defaultChannels: envChannels.channels,
  };
}

/** Where file bytes are kept (src/ports/storage.ts); `local` needs a directory all instances share. */
export type StorageConfig =
  | { kind: 'local'; dir: string }
  | {
      kind: 's3';
      bucket: string;
      endpoint?: string;
      region: string;
      credentials?: { accessKeyId: string; secretAccessKey: string };
      forcePathStyle: boolean;
    };

/** The storage settings; `s3` needs S3_BUCKET, and the two keys go together. */
function storageConfig(e: Env): StorageConfig {
  if (e.STORAGE_TYPE === 'local') return { kind: 'local', dir: e.STORAGE_DIR };
  const fail = (name: string, message: string): never => {
    throw new ConfigError(`Invalid configuration:\n  ${name}: ${message}`);
  };
  const bucket = e.S3_BUCKET ?? fail('S3_BUCKET', 'is required when STORAGE_TYPE is s3');
  if (Boolean(e.S3_ACCESS_KEY_ID) !== Boolean(e.S3_SECRET_ACCESS_KEY)) {
    fail(e.S3_ACCESS_KEY_ID ? 'S3_SECRET_ACCESS_KEY' : 'S3_ACCESS_KEY_ID', 'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  }
  return {
    kind: 's3',
    bucket,
    endpoint: e.S3_ENDPOINT,
    region: e.S3_REGION,
    credentials: e.S3_ACCESS_KEY_ID && e.S3_SECRET_ACCESS_KEY ? { accessKeyId: e.S3_ACCESS_KEY_ID, secretAccessKey: e.S3_SECRET_ACCESS_KEY } : undefined,
    forcePathStyle: e.S3_FORCE_PATH_STYLE,
  };
}

export type JwtSigningConfig = { algorithm: 'HS256' } | { algorithm: 'RS256'; privateKeyPem: string; publicKeyPem: string };

/** Reads and checks the RS256 key pair (both files or neither); errors name the variable. */
function jwtSigning(privateFile: string | undefined, publicFile: string | undefined): JwtSigningConfig {
  if (!privateFile && !publicFile) return { algorithm: 'HS256' };
  const fail = (name: string, message: string): never => {
    throw new ConfigError(`Invalid configuration:\n  ${name}: ${message}`);
  };
  if (!privateFile) return fail('JWT_PRIVATE_KEY_FILE', 'must be set together with JWT_PUBLIC_KEY_FILE (RS256 needs both)');
  if (!publicFile) return fail('JWT_PUBLIC_KEY_FILE', 'must be set together with JWT_PRIVATE_KEY_FILE (RS256 needs both)');
  const read = (name: string, file: string, parse: (pem: string) => KeyObject): { pem: string; key: KeyObject } => {
    let pem = '';
    try {
      pem = readFileSync(file, 'utf8');
    } catch (error) {
      fail(name, `cannot read ${file}: ${(error as Error).message}`);
    }
    let key: KeyObject;
    try {
      key = parse(pem);
    } catch {
      return fail(name, `${file} is not a PEM ${name.includes('PRIVATE') ? 'private' : 'public'} key`);
    }
    if (key.asymmetricKeyType !== 'rsa') fail(name, `${file} is a ${key.asymmetricKeyType ?? 'non-RSA'} key; RS256 needs RSA`);
    if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) fail(name, `${file}: RS256 needs an RSA key of at least 2048 bits`);
    return { pem, key };
  };
  const priv = read('JWT_PRIVATE_KEY_FILE', privateFile, (pem) => createPrivateKey(pem));
  // A private key PEM is not a public key, even though createPublicKey would derive one from it.
  const pub = read('JWT_PUBLIC_KEY_FILE', publicFile, (pem) => {
    if (/PRIVATE KEY/.test(pem)) throw new Error('private key');
    return createPublicKey(pem);
  });
  const derived = createPublicKey(priv.key).export({ type: 'spki', format: 'der' });
  if (!derived.equals(pub.key.export({ type: 'spki', format: 'der' }))) fail('JWT_PUBLIC_KEY_FILE', 'is not the public key of JWT_PRIVATE_KEY_FILE');
  return { algorithm: 'RS256', privateKeyPem: priv.pem, publicKeyPem: pub.pem };
}
