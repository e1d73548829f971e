/**
 * Alerting admin API (issue 19): rules of the caller's tenant under `/api/admin/alerts/rules`, and
 * the alerts they raised under `/api/admin/alerts`. Admins work in their own tenant; operators
 * (admins of the default tenant) may name another with `?tenant_id=`. Writes are commands of the
 * rule's aggregate (`alertrule-<id>`); answers wait for the `alerts` projection (read-your-writes).
 *
 * `notify` takes webhook ids, checked for their format only: webhooks are another aggregate
 * (`webhook-<id>`) whose read model may not exist here yet, and a webhook deleted later would
 * leave the id dangling anyway (the webhook deliverer skips ids it does not know).
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AlertRulesTable, AlertsTable } from '../../adapters/sql/schema.js';
import type { Principal } from '../../auth/tokens.js';
import { alertRules } from '../../commands/alerts/decider.js';
import type { AlertRuleFields} from '../../commands/alerts/events.js';
import { AlertKind, AlertSeverity } from '../../commands/alerts/events.js';
import { NotFoundError } from '../../errors.js';
import { timeOrderedUuid } from '../../ids.js';
import { loadAlertRule, loadAlertRules, loadAlerts } from '../../queries/alerts.js';
import { requirePrincipal, requireRole } from '../auth.js';
import type { AppContext } from '../context.js';
import { errorResponseSchema } from '../errors.js';
import { actingTenant, EntityId } from './tenants.js';

export const newRuleId = () => `rule_${timeOrderedUuid().replace(/-/g, '')}`;

const Threshold = z.number().nonnegative().describe('fires when the measured value is above it (relay_error_rate: a share 0..1; p95_latency: ms; the other kinds: a count)');
const Window = z.number().int().positive().describe('seconds the measurement looks back (unused by channel_unhealthy, projection_lag and spool_backlog)');
const ResolveReason = z.enum(['condition_cleared', 'rule_disabled', 'rule_changed', 'rule_deleted']);
const Condition = z.object({ kind: AlertKind, threshold: Threshold, window: Window });

export const CreateAlertRuleRequest = z.object({
  name: z.string().min(1).max(200),
  condition: Condition,
  severity: AlertSeverity.default('warning'),
  notify: z.array(z.string().max(64)).max(20).default([]).describe('webhook ids of the tenant, told when the rule fires and resolves'),
  enabled: z.boolean().default(true),
});

export const UpdateAlertRuleRequest = z.object({
  name: z.string().min(1).max(200).optional(),
  condition: z.object({ kind: AlertKind.optional(), threshold: Threshold.optional(), window: Window.optional() }).optional().describe('the fields given replace those of the current condition'),
  severity: AlertSeverity.optional(),
  notify: z.array(z.string().max(64)).max(20).optional(),
  enabled: z.boolean().optional(),
});

export const AlertRuleView = z.object({
  id: z.string(),
  object: z.literal('alert_rule'),
  tenant_id: z.string(),
  name: z.string(),
  condition: Condition,
  severity: AlertSeverity,
  notify: z.array(z.string()),
  enabled: z.boolean(),
  state: z.enum(['ok', 'firing']).describe('firing while an alert of the rule is open'),
  firing: z.object({ alert_id: z.string(), value: z.number(), since: z.string() }).nullable(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
}).meta({ id: 'AlertRule' });

export const AlertView = z.object({
  id: z.string(),
  object: z.literal('alert'),
  tenant_id: z.string(),
  rule_id: z.string(),
  rule_name: z.string(),
  kind: AlertKind,
  severity: AlertSeverity,
  state: z.enum(['firing', 'resolved']),
  value: z.number().describe('the measured value when it fired'),
  threshold: z.number(),
  window: z.number(),
  notify: z.array(z.string()),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).describe('what was measured'),
  fired_at: z.string(),
  resolved_at: z.string().nullable(),
  resolution: z
    .object({ value: z.number(), reason: ResolveReason, message: z.string() })
    .nullable()
    .describe('null while firing'),
}).meta({ id: 'Alert' });

const RuleParams = z.object({ rule_id: EntityId });
const TenantQuery = z.object({ tenant_id: EntityId.optional().describe('operators: another tenant') });
const AlertsQuery = TenantQuery.extend({
  state: z.enum(['firing', 'resolved']).optional(),
  rule_id: EntityId.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: EntityId.optional().describe('next_cursor of the previous page'),
});

export function alertRuleView(row: AlertRulesTable): z.infer<typeof AlertRuleView> {
  return {
    id: row.rule_id,
    object: 'alert_rule',
    tenant_id: row.tenant_id,
    name: row.name,
    condition: { kind: AlertKind.parse(row.kind), threshold: Number(row.threshold), window: Number(row.window_seconds) },
    severity: AlertSeverity.parse(row.severity),
    notify: JSON.parse(row.notify) as string[],
    enabled: Number(row.enabled) === 1,
    state: row.firing_alert_id === null ? 'ok' : 'firing',
    firing: row.firing_alert_id === null ? null : { alert_id: row.firing_alert_id, value: Number(row.firing_value), since: row.firing_since ?? '' },
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function alertView(row: AlertsTable): z.infer<typeof AlertView> {
  return {
    id: row.alert_id,
    object: 'alert',
    tenant_id: row.tenant_id,
    rule_id: row.rule_id,
    rule_name: row.rule_name,
    kind: AlertKind.parse(row.kind),
    severity: AlertSeverity.parse(row.severity),
    state: row.state,
    value: Number(row.value),
    threshold: Number(row.threshold),
    window: Number(row.window_seconds),
    notify: JSON.parse(row.notify) as string[],
    message: row.message,
    details: JSON.parse(row.details) as Record<string, unknown>,
    fired_at: row.fired_at,
    resolved_at: row.resolved_at,
    resolution:
      row.state === 'resolved'
        ? { value: Number(row.resolved_value), reason: ResolveReason.parse(row.resolved_reason), message: row.resolved_message ?? '' }
        : null,
  };
}

const errors = {
  400: errorResponseSchema('invalid_request'),
  403: errorResponseSchema('forbidden, tenant_not_allowed'),
  404: errorResponseSchema('alert_rule_not_found, tenant_not_found'),
  422: errorResponseSchema('invalid_name, invalid_threshold, invalid_window, invalid_notify'),
};

const AlertRuleList = z.object({ object: z.literal('list'), data: z.array(AlertRuleView) }).meta({ id: 'AlertRuleList' });

const AlertList = z.object({ object: z.literal('list'), data: z.array(AlertView), has_more: z.boolean(), next_cursor: z.string().nullable() }).meta({ id: 'AlertList' });

export function alertRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = requireRole(ctx.tokens, 'admin', ctx.config.auth.rbacEnabled);
    const tags = ['alerts'];
    const db = ctx.sql.db;

    /** The tenant the request acts on: the caller's, or (operators only) the one named. */
    const tenantOf = async (principal: Principal, named: string | undefined): Promise<string> => {
      const tenantId = actingTenant(principal, named);
      if (tenantId !== principal.tenantId && (await ctx.queries.tenants(tenantId)).length === 0) throw new NotFoundError('tenant not found', 'tenant_not_found');
      return tenantId;
    };
    const settle = async (position: number | null) => {
      if (position !== null) await ctx.runner.waitFor(position, { projections: ['alerts'] });
    };
    const find = async (tenantId: string, ruleId: string) => {
      const row = await loadAlertRule(db, tenantId, ruleId);
      if (!row) throw new NotFoundError('alert rule not found', 'alert_rule_not_found');
      return row;
    };

    app.post(
      '/api/admin/alerts/rules',
      { preHandler: admin, schema: { tags, summary: 'Create an alert rule', querystring: TenantQuery, body: CreateAlertRuleRequest, response: { 201: AlertRuleView, ...errors } } },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const tenantId = await tenantOf(principal, request.query.tenant_id);
        const ruleId = newRuleId();
        const fields: AlertRuleFields = request.body;
        const result = await ctx.commands.execute(alertRules, ruleId, { type: 'CreateAlertRule', ruleId, fields, by: principal.userId }, { tenantId, causationId: request.id });
        await settle(result.position);
        return reply.code(201).send(alertRuleView(await find(tenantId, ruleId)));
      },
    );

    app.get(
      '/api/admin/alerts/rules',
      { preHandler: admin, schema: { tags, summary: 'Alert rules of the tenant', querystring: TenantQuery, response: { 200: AlertRuleList, ...errors } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const tenantId = await tenantOf(principal, request.query.tenant_id);
        return { object: 'list' as const, data: (await loadAlertRules(db, tenantId)).map(alertRuleView) };
      },
    );

    app.get(
      '/api/admin/alerts/rules/:rule_id',
      { preHandler: admin, schema: { tags, summary: 'An alert rule', params: RuleParams, querystring: TenantQuery, response: { 200: AlertRuleView, ...errors } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        return alertRuleView(await find(await tenantOf(principal, request.query.tenant_id), request.params.rule_id));
      },
    );

    app.patch(
      '/api/admin/alerts/rules/:rule_id',
      {
        preHandler: admin,
        schema: {
          tags,
          summary: 'Change an alert rule (the fields given); a firing rule disabled or given another condition resolves',
          params: RuleParams,
          querystring: TenantQuery,
          body: UpdateAlertRuleRequest,
          response: { 200: AlertRuleView, ...errors },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const tenantId = await tenantOf(principal, request.query.tenant_id);
        const current = alertRuleView(await find(tenantId, request.params.rule_id));
        const { condition, ...rest } = request.body;
        const changes: Partial<AlertRuleFields> = { ...rest };
        if (condition) changes.condition = { ...current.condition, ...condition };
        const result = await ctx.commands.execute(
          alertRules,
          current.id,
          { type: 'UpdateAlertRule', changes, by: principal.userId, at: new Date().toISOString() },
          { tenantId, causationId: request.id },
        );
        await settle(result.position);
        return alertRuleView(await find(tenantId, current.id));
      },
    );

    app.delete(
      '/api/admin/alerts/rules/:rule_id',
      {
        preHandler: admin,
        schema: {
          tags,
          summary: 'Delete an alert rule (a firing one resolves first)',
          params: RuleParams,
          querystring: TenantQuery,
          response: { 200: z.object({ id: z.string(), object: z.literal('alert_rule'), deleted: z.literal(true) }), ...errors },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const tenantId = await tenantOf(principal, request.query.tenant_id);
        // The read model first: another tenant's rule, or a deleted one, is 404 before any command.
        await find(tenantId, request.params.rule_id);
        const result = await ctx.commands.execute(alertRules, request.params.rule_id, { type: 'DeleteAlertRule', by: principal.userId, at: new Date().toISOString() }, { tenantId, causationId: request.id });
        await settle(result.position);
        return { id: request.params.rule_id, object: 'alert_rule' as const, deleted: true as const };
      },
    );

    app.get(
      '/api/admin/alerts',
      {
        preHandler: admin,
        schema: {
          tags,
          summary: 'Alerts of the tenant, newest first (firing and resolved; ?state= one of them)',
          querystring: AlertsQuery,
          response: { 200: AlertList, ...errors },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const tenantId = await tenantOf(principal, request.query.tenant_id);
        const { state, limit, cursor, rule_id: ruleId } = request.query;
        const page = await loadAlerts(db, tenantId, { state, limit, cursor, ruleId });
        const data = page.rows.map(alertView);
        return { object: 'list' as const, data, has_more: page.hasMore, next_cursor: page.hasMore ? data.at(-1)!.id : null };
      },
    );
  };
}
