/**
 * One relay request's usage: created when the request enters the gate (its caller known), filled
 * by the stages it passes (the relay: channel, tokens, status), settled and published exactly
 * once by the gate (src/relay/gate.ts), refused requests included.
 */
import type { UsageData } from '../commands/usage/events.js';
import { AppError } from '../errors.js';
import type { RelayCaller } from './access/caller.js';

/** Called with the final usage before it is published (the API key's ticket settles its counters). */
export type UsageSettlement = (usage: UsageData) => void;

export class RequestUsage {
  readonly data: UsageData;
  /** performance.now() when the request entered the gate: latency and time to first byte count from it. */
  readonly t0 = performance.now();
  private settlement: UsageSettlement | null = null;

  constructor(
    requestId: string,
    caller: RelayCaller,
    readonly startedAt = new Date(),
  ) {
    this.data = {
      request_id: requestId,
      tenant_id: caller.tenantId,
      user_id: caller.userId,
      key_id: caller.keyId,
      channel_id: null,
      provider: null,
      model_requested: '',
      model_served: null,
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      usage_source: 'none',
      stream: false,
      status: 200,
      error_code: null,
      latency_ms: 0,
      ttft_ms: null,
      upstream_ms: null,
      attempts: 0,
      started_at: startedAt.toISOString(),
    };
  }

  /** What the client asked for, as far as the body tells (a refused body may not say). */
  asked(model: unknown, stream: unknown): void {
    this.data.model_requested = typeof model === 'string' ? model : '';
    this.data.stream = stream === true;
  }

  /** Milliseconds since the request entered the gate, to 0.01 ms. */
  elapsedMs(): number {
    return Math.round((performance.now() - this.t0) * 100) / 100;
  }

  /** The request was admitted: `settlement` runs once with its final usage. */
  onSettle(settlement: UsageSettlement): void {
    this.settlement = settlement;
  }

  /** The request ended in `error` (the client's answer when it is an AppError). */
  failed(error: unknown): void {
    if (error instanceof AppError) {
      this.data.status = error.status;
      this.data.error_code = error.code;
    } else {
      this.data.status = 500;
      this.data.error_code = 'internal_error';
    }
  }

  /** The final usage, after the admission's settlement saw it: publish it, once. */
  settle(): UsageData {
    this.data.latency_ms = this.elapsedMs();
    this.settlement?.(this.data);
    return this.data;
  }
}
