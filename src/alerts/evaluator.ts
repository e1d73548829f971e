/**
 * The alert evaluator (issue 19). Every instance runs one; each interval it reports its usage
 * journal's depth (for spool_backlog) and tries the lease `alerts:evaluator` on the counters port
 * (ttl: three intervals). The holder measures every rule that is enabled or firing, of every
 * tenant, and asks the rule's aggregate to fire or resolve: the decider checks the rule is still at
 * the version measured and not already in that state, and the append is at the version read, so
 * two evaluators (a lease that changed hands mid-round) never fire a rule twice. If the holder dies
 * its lease runs out and another instance's next tick takes it.
 *
 * The holder sets `switchyard_alerts_firing{severity}` from its round; the others set it to 0, so a
 * sum over instances is the installation's count. Firing and resolving are events: the command
 * bus logs them (src/logs/event-log.ts) and the logs projection indexes them. Time comes from `now` (tests inject a clock); `evaluateOnce`
 * runs one round without the timer.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AlertRulesTable, ReadModelTables } from '../adapters/sql/schema.js';
import type { Metrics } from '../api/metrics.js';
import type { CommandBus } from '../commands/bus.js';
import { alertRules } from '../commands/alerts/decider.js';
import { AlertKind, AlertSeverity, type AlertSeverity as Severity } from '../commands/alerts/events.js';
import { timeOrderedUuid } from '../ids.js';
import type { Logger } from '../logger.js';
import type { Counters } from '../ports/counters.js';
import type { ProjectionStatus } from '../projections/runtime/runner.js';
import { loadRulesToEvaluate } from '../queries/alerts.js';
import { judge } from './measurements.js';
import { forgetQuietInstances, reportInstance, Round } from './sources.js';

export const EVALUATOR_LEASE = 'alerts:evaluator';
/** Reports of instances silent this long are deleted. */
const FORGET_INSTANCES_AFTER_MS = 24 * 3600 * 1000;

export interface AlertEvaluatorDeps {
  db: Kysely<ReadModelTables>;
  counters: Counters;
  commands: CommandBus;
  projections(): Promise<ProjectionStatus[]>;
  /** Usage events of this instance waiting for the bus (UsagePublisher.depth). */
  spoolDepth(): number;
  metrics: Metrics;
  logger: Logger;
  intervalMs: number;
  /** Milliseconds since the epoch; Date.now by default. */
  now?: () => number;
  instanceId?: string;
}

export interface RoundResult {
  /** False when another instance holds the lease (nothing was evaluated). */
  held: boolean;
  evaluated: number;
  fired: string[];
  resolved: string[];
  failed: number;
}

export const newAlertId = (now: number) => `alert_${timeOrderedUuid(now).replace(/-/g, '')}`;

export class AlertEvaluator {
  readonly instanceId: string;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Rounds this instance evaluated (held the lease). */
  rounds = 0;

  constructor(private readonly deps: AlertEvaluatorDeps) {
    this.now = deps.now ?? Date.now;
    this.instanceId = deps.instanceId ?? `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  }

  private get leaseMs(): number {
    return this.deps.intervalMs * 3;
  }

  start(): void {
    if (this.timer || this.closed) return;
    const tick = () => {
      // One round at a time: a slow round delays the next instead of overlapping it.
      this.running = this.running.then(() => this.tick()).catch((error: unknown) => this.deps.logger.warn({ err: error, component: 'alerts' }, 'alert evaluation failed'));
    };
    this.timer = setInterval(tick, this.deps.intervalMs);
    this.timer.unref();
    tick();
  }

  /** One interval's work: report this instance, then evaluate when holding (or taking) the lease. */
  async tick(): Promise<RoundResult> {
    const now = this.now();
    await reportInstance(this.deps.db, this.instanceId, this.deps.spoolDepth(), now);
    return this.evaluateOnce(now);
  }

  /** Takes (or renews) the lease and evaluates every rule once; `held: false` when another instance holds it. */
  async evaluateOnce(now = this.now()): Promise<RoundResult> {
    if (this.closed || !(await this.deps.counters.holdLease(EVALUATOR_LEASE, this.instanceId, this.leaseMs))) {
      this.setFiring(new Map());
      return { held: false, evaluated: 0, fired: [], resolved: [], failed: 0 };
    }
    this.rounds++;
    const result: RoundResult = { held: true, evaluated: 0, fired: [], resolved: [], failed: 0 };
    const firing = new Map<Severity, number>();
    const round = new Round({ db: this.deps.db, counters: this.deps.counters, projections: this.deps.projections, reportFreshMs: this.leaseMs }, now);
    for (const rule of await loadRulesToEvaluate(this.deps.db)) {
      const severity = AlertSeverity.parse(rule.severity);
      let isFiring = rule.firing_alert_id !== null;
      try {
        isFiring = (await this.evaluateRule(rule, round, now, result)) ?? isFiring;
      } catch (error) {
        result.failed++;
        this.deps.logger.warn({ err: error, category: 'application', component: 'alerts', tenant_id: rule.tenant_id, rule_id: rule.rule_id }, 'alert rule could not be evaluated');
      }
      if (isFiring) firing.set(severity, (firing.get(severity) ?? 0) + 1);
    }
    this.setFiring(firing);
    await forgetQuietInstances(this.deps.db, now - FORGET_INSTANCES_AFTER_MS);
    return result;
  }

  /**
   * Measures one rule and fires or resolves it. Answers whether it fires now as its own stream
   * tells (ahead of the read model, which may not show an alert fired on another instance yet),
   * or null when nothing was decided.
   */
  private async evaluateRule(rule: AlertRulesTable, round: Round, now: number, result: RoundResult): Promise<boolean | null> {
    const firing = rule.firing_alert_id !== null;
    const enabled = Number(rule.enabled) === 1;
    const under = { name: rule.name, kind: AlertKind.parse(rule.kind), threshold: Number(rule.threshold), window: Number(rule.window_seconds), firing };
    result.evaluated++;
    const measured = await round.measure(rule.tenant_id, under);
    // A firing rule that is disabled resolves through its update; the evaluator only measures enabled ones.
    const verdict = enabled ? judge(under, measured.value) : null;
    if (verdict === null) return null;
    const at = new Date(now).toISOString();
    const context = { tenantId: rule.tenant_id, causationId: `alert-evaluation:${this.instanceId}` };
    const basedOn = Number(rule.version);
    if (verdict === 'fire') {
      const alertId = newAlertId(now);
      const done = await this.deps.commands.execute(alertRules, rule.rule_id, { type: 'FireAlert', alertId, basedOn, measured, at }, context);
      if (done.events.length > 0) result.fired.push(alertId);
      return done.state.firing !== null;
    }
    const done = await this.deps.commands.execute(alertRules, rule.rule_id, { type: 'ResolveAlert', basedOn, measured: { ...measured, message: `${measured.message} — resolved` }, at }, context);
    if (done.events.length > 0) result.resolved.push(rule.firing_alert_id!);
    return done.state.firing !== null;
  }

  private setFiring(bySeverity: Map<Severity, number>): void {
    for (const severity of AlertSeverity.options) this.deps.metrics.alertsFiring.set({ severity }, bySeverity.get(severity) ?? 0);
  }

  /** Stops the timer, waits for a round in progress, and gives the lease up (another instance takes it at its next tick). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    await this.deps.counters.releaseLease(EVALUATOR_LEASE, this.instanceId).catch(() => undefined);
    this.setFiring(new Map());
  }
}
