/**
 * The alert evaluator's edge: gathers what each kind measures from the read models (usage_requests,
 * channels), the counters port (failed logins), the projectors (lag) and the instances' reports
 * (spool depth), and hands it to the pure measurements (measurements.ts).
 */
import { sql, type Kysely } from 'kysely';
import type { ReadModelTables } from '../adapters/sql/schema.js';
import type { Measured } from '../commands/alerts/decider.js';
import type { Counters } from '../ports/counters.js';
import type { ProjectionStatus } from '../projections/runtime/runner.js';
import * as m from './measurements.js';

type Db = Kysely<ReadModelTables>;

/** Failed logins of a tenant: one sliding window of the counters port, hit at each failure. */
export const failedLoginsKey = (tenantId: string) => `alerts:failed_logins:${tenantId}`;
/** How far back the failed-logins window keeps hits (the longest window a failed_logins rule may have). */
export const FAILED_LOGINS_WINDOW_MS = 24 * 3600 * 1000;
/** At most this many failures are kept per tenant and window (memory bound under a guessing storm). */
export const FAILED_LOGINS_CAP = 100_000;

/** Counts one failed login of `tenantId` (the login route's failure branch). */
export async function countFailedLogin(counters: Counters, tenantId: string): Promise<void> {
  await counters.hitWindow(failedLoginsKey(tenantId), { limit: FAILED_LOGINS_CAP, windowMs: FAILED_LOGINS_WINDOW_MS });
}

/** Relay errors for alerting: the upstream failed or the relay answered 5xx. */
const RELAY_ERROR = sql<number>`case when status >= 500 or error_code like 'upstream!_%' escape '!' then 1 else 0 end`;

export interface SourceDeps {
  db: Db;
  counters: Counters;
  projections(): Promise<ProjectionStatus[]>;
  /** An instance's report counts while it is younger than this. */
  reportFreshMs: number;
}

/** One evaluation round: installation-wide figures are read once per round, whatever the number of rules. */
export class Round {
  private status: Promise<ProjectionStatus[]> | null = null;
  private spool: Promise<Array<{ instance: string; depth: number }>> | null = null;

  constructor(
    private readonly deps: SourceDeps,
    readonly now: number,
  ) {}

  async measure(tenantId: string, rule: m.RuleUnderTest): Promise<Measured> {
    const { db } = this.deps;
    const since = new Date(this.now - rule.window * 1000).toISOString();
    const until = new Date(this.now).toISOString();
    const inWindow = () => db.selectFrom('usage_requests').where('tenant_id', '=', tenantId).where('started_at', '>', since).where('started_at', '<=', until);
    switch (rule.kind) {
      case 'relay_error_rate': {
        const row = await inWindow()
          .select((eb) => [eb.fn.countAll<number | string>().as('requests'), eb.fn.sum<number | string | null>(RELAY_ERROR).as('errors')])
          .executeTakeFirst();
        return m.relayErrorRate(rule, { requests: Number(row?.requests ?? 0), errors: Number(row?.errors ?? 0) });
      }
      case 'p95_latency': {
        const counted = await inWindow().select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst();
        const requests = Number(counted?.n ?? 0);
        const offset = m.p95Offset(requests);
        const at = offset === null ? undefined : await inWindow().select('latency_us').orderBy('latency_us').limit(1).offset(offset).executeTakeFirst();
        return m.p95Latency(rule, { requests, p95Us: at ? Number(at.latency_us) : null });
      }
      case 'channel_unhealthy': {
        const rows = await db.selectFrom('channels').select(['id', 'name', 'enabled', 'healthy', 'health_reason']).where('tenant_id', '=', tenantId).execute();
        return m.channelUnhealthy(
          rule,
          rows.map((r) => ({ id: r.id, name: r.name, enabled: Number(r.enabled) === 1, healthy: Number(r.healthy) === 1, reason: r.health_reason })),
        );
      }
      case 'no_available_channels': {
        const rows = await inWindow()
          .where('error_code', '=', 'no_available_channels')
          .select((eb) => ['model', eb.fn.countAll<number | string>().as('requests')])
          .groupBy('model')
          .execute();
        return m.noAvailableChannels(rule, rows.map((r) => ({ model: r.model, requests: Number(r.requests) })));
      }
      case 'quota_exhausted': {
        const row = await inWindow()
          .where('error_code', '=', 'insufficient_quota')
          .select((eb) => [eb.fn.countAll<number | string>().as('requests'), eb.fn.count<number | string>('key_id').distinct().as('keys'), eb.fn.count<number | string>('user_id').distinct().as('users')])
          .executeTakeFirst();
        return m.quotaExhausted(rule, { requests: Number(row?.requests ?? 0), keys: Number(row?.keys ?? 0), users: Number(row?.users ?? 0) });
      }
      case 'failed_logins':
        return m.failedLogins(rule, await this.deps.counters.peekWindow(failedLoginsKey(tenantId), rule.window * 1000));
      case 'projection_lag':
        this.status ??= this.deps.projections();
        return m.projectionLag(rule, await this.status);
      case 'spool_backlog':
        this.spool ??= this.instanceReports();
        return m.spoolBacklog(rule, await this.spool);
    }
  }

  private async instanceReports(): Promise<Array<{ instance: string; depth: number }>> {
    const fresh = new Date(this.now - this.deps.reportFreshMs).toISOString();
    const rows = await this.deps.db.selectFrom('alert_instances').selectAll().where('reported_at', '>', fresh).orderBy('instance_id').execute();
    return rows.map((r) => ({ instance: r.instance_id, depth: Number(r.spool_depth) }));
  }
}

/** This instance's report: its row only (no other writer), so update-else-insert needs no lock. */
export async function reportInstance(db: Db, instanceId: string, spoolDepth: number, now: number): Promise<void> {
  const row = { spool_depth: spoolDepth, reported_at: new Date(now).toISOString() };
  const updated = await db.updateTable('alert_instances').set(row).where('instance_id', '=', instanceId).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return;
  await db
    .insertInto('alert_instances')
    .values({ instance_id: instanceId, ...row })
    .execute()
    .catch(async () => {
      // MySQL counts an update that changes nothing as 0 rows: the row may be there after all.
      await db.updateTable('alert_instances').set(row).where('instance_id', '=', instanceId).execute();
    });
}

/** Rows of instances gone quiet long ago (the evaluating instance tidies them). */
export async function forgetQuietInstances(db: Db, olderThan: number): Promise<void> {
  await db.deleteFrom('alert_instances').where('reported_at', '<', new Date(olderThan).toISOString()).execute();
}
