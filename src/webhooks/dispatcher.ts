/**
 * Sends webhook deliveries (rows of `webhook_deliveries`, made by the webhooks projection). Runs
 * on every instance: each looks for due `pending` rows every WEBHOOK_POLL_INTERVAL and claims each
 * with a conditional UPDATE (the row's attempts and due time as read), so one instance makes a
 * given attempt. A claim moves the due time past the attempt's timeout: an instance that dies
 * mid-attempt leaves a row that is due again then (at least once, never lost).
 *
 * 2xx: delivered. Anything else (an error status, a refused or reset connection, a timeout, a
 * refused address): retried after WEBHOOK_RETRY_BASE, doubling each time (±20% jitter, at most an
 * hour), until WEBHOOK_RETRY_FOR after the first attempt, then `failed`.
 *
 * The connection goes through the SSRF guard (src/webhooks/targets.ts) unless
 * WEBHOOK_ALLOW_PRIVATE_TARGETS: names resolve to public addresses only, literals are checked,
 * and the address the socket connected to is checked again.
 */
import { isIP, type Socket } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import type { Config } from '../config.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Logger } from '../logger.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';
import { signatureHeader } from './signature.js';
import { classifyAddress, publicOnlyLookup, systemResolver, TargetNotAllowedError, type Resolver } from './targets.js';

/** The longest wait between two attempts, whatever the base and the count. */
export const MAX_RETRY_DELAY_MS = 3_600_000;
/** A claimed attempt's row is due again this long after its timeout (its instance died). */
const CLAIM_MARGIN_MS = 30_000;
const DEFAULT_BATCH = 32;
/** How often an instance removes deliveries past WEBHOOK_DELIVERY_RETENTION (idempotent on every instance). */
const PRUNE_EVERY_MS = 3_600_000;
const USER_AGENT = 'Switchyard-Webhooks/2';

export type DeliveryOutcome = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/** The wait after the `attempts`-th failed attempt: base * 2^(attempts-1), capped, ±20% (`random` in [0, 1)). */
export function retryDelayMs(attempts: number, baseMs: number, random: number): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
  return Math.round(exponential * (0.8 + 0.4 * random));
}

/**
 * What happens to a pending delivery after a failed attempt at `nowMs`: retried (at most at the end
 * of its retry window, for a last attempt) or failed once the window from its first attempt is over.
 */
export function afterFailure(attempts: number, firstAttemptMs: number, nowMs: number, settings: { retryBaseMs: number; retryForMs: number }, random: number): { status: 'pending'; nextAttemptMs: number } | { status: 'failed' } {
  const end = firstAttemptMs + settings.retryForMs;
  if (nowMs >= end) return { status: 'failed' };
  return { status: 'pending', nextAttemptMs: Math.min(nowMs + retryDelayMs(attempts, settings.retryBaseMs, random), end) };
}

export interface DispatcherOptions {
  db: ReadModelDb;
  /** SecretBox(SECRET, 'webhook-secrets'): opens the webhooks' secrets. */
  secrets: SecretBox;
  settings: Config['webhooks'];
  logger: Logger;
  /** The clock (ms): claims, due times, signatures. */
  now?: () => number;
  random?: () => number;
  resolver?: Resolver;
  batch?: number;
  /** Told after each attempt (metrics): delivered, to be retried, or failed for good. */
  onAttempt?: (outcome: 'delivered' | 'retry' | 'failed', eventType: string) => void;
}

interface DueRow {
  id: string;
  webhook_id: string;
  payload_id: string;
  event_type: string;
  payload: string;
  attempts: number;
  next_attempt_at: string | null;
  first_attempt_at: string | null;
  url: string;
  secret_sealed: string;
}

export class WebhookDispatcher {
  private readonly agent: Agent;
  private readonly now: () => number;
  private readonly random: () => number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private closed = false;
  private prunedAtMs: number | null = null;

  constructor(private readonly options: DispatcherOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.agent = new Agent({ connect: guardedConnector(options.settings, options.resolver ?? systemResolver), connections: 16, keepAliveTimeout: 10_000 });
  }

  /** Polls every WEBHOOK_POLL_INTERVAL (0: never; `runOnce` still works). */
  start(): void {
    const interval = this.options.settings.pollIntervalMs;
    if (interval <= 0 || this.timer || this.closed) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      void this.runOnce().catch((error: unknown) => this.options.logger.warn({ err: error }, 'webhook deliveries: a pass failed'));
    }, interval);
    this.timer.unref();
  }

  /** One pass: claims the due deliveries (a batch) and sends them; resolves with the attempts made. */
  runOnce(): Promise<number> {
    if (this.running) return this.running;
    const pass = this.pass().finally(() => {
      this.running = null;
    });
    this.running = pass;
    return pass;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
    await this.agent.close();
  }

  private async pass(): Promise<number> {
    if (this.closed) return 0;
    const nowMs = this.now();
    await this.pruneIfDue(nowMs);
    const nowIso = new Date(nowMs).toISOString();
    const due: DueRow[] = await this.options.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select(['d.id', 'd.webhook_id', 'd.payload_id', 'd.event_type', 'd.payload', 'd.attempts', 'd.next_attempt_at', 'd.first_attempt_at', 'w.url', 'w.secret_sealed'])
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', nowIso)
      .where('w.enabled', '=', 1)
      .orderBy('d.next_attempt_at')
      .limit(this.options.batch ?? DEFAULT_BATCH)
      .execute();
    const attempts = await Promise.all(due.map((row) => this.attempt(row)));
    return attempts.filter(Boolean).length;
  }

  /** Removes delivered and failed rows whose last attempt is older than the retention (pending ones stay). */
  private async pruneIfDue(nowMs: number): Promise<void> {
    const retention = this.options.settings.deliveryRetentionMs;
    if (retention <= 0 || (this.prunedAtMs !== null && nowMs - this.prunedAtMs < PRUNE_EVERY_MS)) return;
    this.prunedAtMs = nowMs;
    const cutoff = new Date(nowMs - retention).toISOString();
    const removed = await this.options.db.deleteFrom('webhook_deliveries').where('status', 'in', ['delivered', 'failed']).where('last_attempt_at', '<', cutoff).executeTakeFirst();
    if (Number(removed.numDeletedRows) > 0) this.options.logger.info({ removed: Number(removed.numDeletedRows) }, 'webhook deliveries past WEBHOOK_DELIVERY_RETENTION removed');
  }

  /** Claims the row's next attempt (false: another instance has it, or it changed) and makes it. */
  private async attempt(row: DueRow): Promise<boolean> {
    const startedMs = this.now();
    const started = new Date(startedMs).toISOString();
    const attempts = row.attempts + 1;
    const claim = await this.options.db
      .updateTable('webhook_deliveries')
      .set({ attempts, last_attempt_at: started, first_attempt_at: row.first_attempt_at ?? started, next_attempt_at: new Date(startedMs + this.options.settings.timeoutMs + CLAIM_MARGIN_MS).toISOString() })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .where('attempts', '=', row.attempts)
      .where('next_attempt_at', '=', row.next_attempt_at)
      .executeTakeFirst();
    if (Number(claim.numUpdatedRows) === 0) return false;

    const outcome = await this.send(row, attempts, Math.floor(startedMs / 1000));
    const endedMs = this.now();
    const ended = new Date(endedMs).toISOString();
    let set;
    if (outcome.ok) {
      set = { status: 'delivered', last_status_code: outcome.status, last_error: null, delivered_at: ended, next_attempt_at: null };
    } else {
      const next = afterFailure(attempts, Date.parse(row.first_attempt_at ?? started), endedMs, this.options.settings, this.random());
      set = { status: next.status, last_status_code: outcome.status, last_error: outcome.error, next_attempt_at: next.status === 'pending' ? new Date(next.nextAttemptMs).toISOString() : null };
      const fields = { delivery: row.id, webhook: row.webhook_id, type: row.event_type, attempts, status: outcome.status, error: outcome.error };
      if (next.status === 'failed') this.options.logger.warn(fields, 'webhook delivery failed: no more retries (WEBHOOK_RETRY_FOR)');
      else this.options.logger.info({ ...fields, next_attempt_at: new Date(next.nextAttemptMs).toISOString() }, 'webhook delivery attempt failed; retried later');
    }
    // Only the attempt it claimed: a redelivery asked meanwhile keeps its own due time.
    await this.options.db.updateTable('webhook_deliveries').set(set).where('id', '=', row.id).where('attempts', '=', attempts).where('status', '=', 'pending').execute();
    this.options.onAttempt?.(set.status === 'delivered' ? 'delivered' : set.status === 'failed' ? 'failed' : 'retry', row.event_type);
    return true;
  }

  private async send(row: DueRow, attempt: number, timestamp: number): Promise<DeliveryOutcome> {
    let secret: string;
    try {
      secret = this.options.secrets.open(row.secret_sealed);
    } catch {
      return { ok: false, status: null, error: 'the webhook secret cannot be opened (SECRET changed?)' };
    }
    const signal = AbortSignal.timeout(this.options.settings.timeoutMs);
    try {
      const response = await request(row.url, {
        method: 'POST',
        dispatcher: this.agent,
        signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-switchyard-event-id': row.payload_id,
          'idempotency-key': row.payload_id,
          'x-switchyard-event-type': row.event_type,
          'x-switchyard-delivery-id': row.id,
          'x-switchyard-delivery-attempt': String(attempt),
          'x-switchyard-signature': signatureHeader(secret, timestamp, row.payload),
        },
        body: row.payload,
      });
      // The answer's body is not kept (the receiver's text is not ours to store): read and dropped.
      await response.body.dump({ limit: 65_536, signal });
      if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true, status: response.statusCode };
      return { ok: false, status: response.statusCode, error: `the receiver answered ${response.statusCode}` };
    } catch (error) {
      return { ok: false, status: null, error: describeFailure(error, signal) };
    }
  }
}

function describeFailure(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'timed out (WEBHOOK_TIMEOUT)';
  let cause: unknown = error;
  // undici wraps connection errors; the cause names what happened.
  while (cause instanceof Error && !(cause instanceof TargetNotAllowedError) && cause.cause instanceof Error) cause = cause.cause;
  if (cause instanceof TargetNotAllowedError) return `refused: ${cause.message}`;
  const code = (cause as { code?: unknown }).code;
  const message = cause instanceof Error ? cause.message : String(cause);
  return (typeof code === 'string' ? `${code}: ${message}` : message).slice(0, 500);
}

/**
 * undici's connector with the SSRF guard: names resolve to public addresses only (publicOnlyLookup),
 * an IP literal is checked before connecting, and the peer's address after.
 */
function guardedConnector(settings: Config['webhooks'], resolver: Resolver): buildConnector.connector {
  const guarded = !settings.allowPrivateTargets;
  const base = buildConnector({ timeout: settings.timeoutMs, ...(guarded && { lookup: publicOnlyLookup(resolver) }) } as buildConnector.BuildOptions);
  return (options, callback) => {
    if (guarded) {
      const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
      const cls = isIP(host) ? classifyAddress(host) : null;
      if (cls !== null) {
        callback(new TargetNotAllowedError(host, host, cls), null);
        return;
      }
    }
    base(options, (error, socket) => {
      if (error || !socket) {
        callback(error ?? new Error('no socket'), null);
        return;
      }
      const remote = (socket as Socket).remoteAddress;
      const cls = guarded && remote ? classifyAddress(remote) : null;
      if (cls !== null) {
        socket.destroy();
        callback(new TargetNotAllowedError(options.hostname, remote!, cls), null);
        return;
      }
      callback(null, socket);
    });
  };
}
