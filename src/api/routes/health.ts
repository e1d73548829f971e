/**
 * Liveness and readiness. /health answers 200 only when every configured dependency answers;
 * /health/live says the process is up (for restarts), /health/ready is /health (for load balancers).
 * A projection with quarantined events makes the status `degraded`, still ready (200): the
 * instance serves correctly, but an operator must look (see `projections quarantine`).
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ProjectionStatus } from '../../projections/runtime/runner.js';
import type { Logger } from '../../logger.js';
import type { AppContext } from '../context.js';

const Check = z.object({ status: z.enum(['up', 'down']), kind: z.string(), latency_ms: z.number(), error: z.string().optional() });
export const HealthResponse = z.object({
  status: z.enum(['ok', 'degraded', 'unavailable']).describe('degraded: ready, but some projection has quarantined events (see quarantined per projection)'),
  live: z.boolean(),
  ready: z.boolean(),
  mode: z.enum(['embedded', 'distributed', 'mixed']),
  maintenance: z.boolean(),
  checks: z.record(z.string(), Check),
  projections: z.array(z.object({ name: z.string(), position: z.number(), lag: z.number(), quarantined: z.number().int().describe('events set aside as poison, not replayed yet') })),
  usage_journal: z
    .object({
      depth: z.number().int().describe('usage events durable in the local journal, not yet in the log (grows while the bus is down)'),
      bytes: z.number().int().describe("size of this process's journal segments"),
      dead_lettered: z.number().int().describe('usage events refused by validation since start (in DATA_DIR/usage-journal/dead-letter.jsonl)'),
    })
    .describe("this instance's usage journal (docs/decisions/0020-usage-journal.md)"),
}).meta({ id: 'Health' });

class NoAnswer extends Error {}

/**
 * One dependency check. /health is public: a failure says what failed in our words, never the
 * driver's exception (it names hosts, ports, users); the exception goes to the log.
 */
async function probe(kind: string, ping: () => Promise<void>, logger: Logger, timeoutMs = 2000): Promise<z.infer<typeof Check>> {
  const started = performance.now();
  try {
    await Promise.race([ping(), new Promise((_, reject) => setTimeout(() => reject(new NoAnswer()), timeoutMs).unref())]);
    return { status: 'up', kind, latency_ms: Math.round((performance.now() - started) * 100) / 100 };
  } catch (error) {
    const latency_ms = Math.round(performance.now() - started);
    if (error instanceof NoAnswer) return { status: 'down', kind, latency_ms, error: `no answer within ${timeoutMs} ms` };
    logger.warn({ err: error, kind }, 'health check failed');
    return { status: 'down', kind, latency_ms, error: `the ${kind} check failed (details in the log)` };
  }
}

export function healthRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  const readiness = async () => {
    let statuses: ProjectionStatus[] = [];
    const [eventStore, readModels, counters, projectors] = await Promise.all([
      probe(ctx.store.kind, () => ctx.store.ping(), ctx.logger),
      probe(ctx.sql.dialect, () => ctx.sql.ping(), ctx.logger),
      probe(ctx.counters.kind, () => ctx.counters.ping(), ctx.logger),
      // The projectors (in their own thread by default) answer with their progress: a projector
      // thread that died makes the instance unready, so that it gets restarted.
      probe(
        ctx.config.projectorsThread ? 'thread' : 'inline',
        async () => {
          statuses = await ctx.runner.status();
        },
        ctx.logger,
      ),
    ]);
    const checks = { event_store: eventStore, read_models: readModels, counters, projectors };
    const ready = Object.values(checks).every((c) => c.status === 'up');
    const projections = ready ? statuses.map(({ name, position, lag, quarantined }) => ({ name, position, lag, quarantined })) : [];
    const status = !ready ? ('unavailable' as const) : projections.some((p) => p.quarantined > 0) ? ('degraded' as const) : ('ok' as const);
    const usageJournal = { depth: ctx.usage.depth, bytes: ctx.usage.journalBytes, dead_lettered: ctx.usage.deadLettered };
    return { status, live: true, ready, mode: ctx.mode, maintenance: ctx.views.maintenance.state.enabled, checks, projections, usage_journal: usageJournal };
  };

  return async (app) => {
    const schema = { tags: ['system'], response: { 200: HealthResponse, 503: HealthResponse } };
    for (const path of ['/health', '/health/ready']) {
      app.get(path, { schema: { ...schema, summary: 'Readiness of every configured dependency' } }, async (_request, reply) => {
        const body = await readiness();
        return reply.code(body.ready ? 200 : 503).send(body);
      });
    }
    app.get('/health/live', { schema: { tags: ['system'], summary: 'Liveness', response: { 200: z.object({ status: z.literal('ok') }) } } }, async () => ({ status: 'ok' as const }));
  };
}
