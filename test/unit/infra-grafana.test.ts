/**
 * The Grafana dashboard in infra/grafana: valid JSON that Grafana imports (unique panel ids,
 * panels inside the 24-column grid, every query on the dashboard's data-source variable, only
 * variables it defines), and every query valid PromQL, checked by promtool as recording rules with
 * the variables filled in. That its queries name only series the server exposes is checked
 * against a running server in test/http/metrics.test.ts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

interface Target {
  refId: string;
  expr: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}
interface Dashboard {
  title: string;
  uid: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: unknown }> };
}

const text = readFileSync(new URL('../../infra/grafana/switchyard-dashboard.json', import.meta.url), 'utf8');
const dashboard = JSON.parse(text) as Dashboard;
const queryPanels = dashboard.panels.filter((p) => p.type !== 'row');
const exprs = queryPanels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

/** Grafana's own variables a query may use besides the dashboard's. */
const GRAFANA_VARIABLES = new Set(['__rate_interval', '__interval', '__range']);

function promtoolInstalled(): boolean {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('infra/grafana/switchyard-dashboard.json', () => {
  it('is a dashboard with a uid, a title and unique panel ids inside the grid', () => {
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(dashboard.title).toBe('Switchyard');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
      expect(p.gridPos.h, p.title).toBeGreaterThan(0);
    }
  });

  it('queries Prometheus through its data-source variable, with the variables it defines', () => {
    const defined = new Set(dashboard.templating.list.map((v) => v.name));
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(queryPanels.length).toBeGreaterThanOrEqual(15);
    for (const p of queryPanels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) {
        expect(t.expr, p.title).toMatch(/switchyard_|^up\{/);
        const used = [...t.expr.matchAll(/\$(\w+)/g)].map((m) => m[1]!);
        expect(used.filter((v) => !defined.has(v) && !GRAFANA_VARIABLES.has(v)), p.title).toEqual([]);
      }
    }
  });

  it('covers what operators watch: relay traffic, errors, latencies, tokens, channels, spool, lag, alerts', () => {
    const all = exprs.map((e) => e.expr).join('\n');
    for (const series of [
      'switchyard_relay_requests_total',
      'switchyard_relay_upstream_latency_seconds_bucket',
      'switchyard_relay_time_to_first_byte_seconds_bucket',
      'switchyard_relay_tokens_total',
      'switchyard_channel_healthy',
      'switchyard_usage_journal_depth',
      'switchyard_projection_lag_commits',
      'switchyard_alerts_firing',
    ]) {
      expect(all).toContain(series);
    }
  });

  it.skipIf(!promtoolInstalled())('has only valid PromQL (promtool, the variables filled in)', () => {
    const fill = (expr: string) => expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', 'switchyard').replaceAll('$instance', '.*');
    const rules = ['groups:', '  - name: dashboard', '    rules:', ...exprs.flatMap((e, i) => [`      - record: dashboard:panel_${i}`, `        expr: ${JSON.stringify(fill(e.expr))}`])].join('\n');
    const dir = mkdtempSync(join(tmpdir(), 'sy-dashboard-'));
    try {
      writeFileSync(join(dir, 'rules.yml'), `${rules}\n`);
      const run = spawnSync('promtool', ['check', 'rules', join(dir, 'rules.yml')], { encoding: 'utf8', timeout: 60_000 });
      expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
      expect(run.stdout).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
