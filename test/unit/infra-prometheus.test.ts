/**
 * The Prometheus files in infra/prometheus, checked by Prometheus's own tool (Debian's
 * `prometheus` package, which .ci/run installs): the rules parse, the example configuration and
 * the rule file it names are valid, and the rules' unit tests (synthetic series that must fire,
 * and must not) pass. Skipped, saying so, only where promtool is not installed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dir = fileURLToPath(new URL('../../infra/prometheus/', import.meta.url));

function promtoolInstalled(): boolean {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const installed = promtoolInstalled();
if (!installed) console.warn('infra/prometheus tests skipped: promtool is not installed (apt-get install --no-install-recommends prometheus; .ci/run does it)');

/** Runs promtool in infra/prometheus; its output is the assertion message on failure. */
function promtool(...args: string[]) {
  const run = spawnSync('promtool', args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe.skipIf(!installed)('infra/prometheus (promtool)', () => {
  it('alerts.yml is a valid rule file', () => {
    const run = promtool('check', 'rules', 'alerts.yml');
    expect(run.status, run.output).toBe(0);
    expect(run.output).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('prometheus.yml is a valid configuration, with alerts.yml as its rules', () => {
    const run = promtool('check', 'config', 'prometheus.yml');
    expect(run.status, run.output).toBe(0);
    expect(run.output).toContain('alerts.yml');
  });

  it('the rules fire on the synthetic series of alerts.test.yml, and only when they should', () => {
    const run = promtool('test', 'rules', 'alerts.test.yml');
    expect(run.status, run.output).toBe(0);
    expect(run.output).toContain('SUCCESS');
  });

  it('every rule of alerts.yml has a severity and a summary, and a unit test covers several', () => {
    const rules = readFileSync(`${dir}alerts.yml`, 'utf8');
    const names = [...rules.matchAll(/- alert: (\S+)/g)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThanOrEqual(10);
    expect(new Set(names).size).toBe(names.length);
    // One severity (or the series' own, for SwitchyardAlertsFiring) and one summary per rule.
    expect([...rules.matchAll(/^ {10}severity: (critical|warning)$/gm)].length).toBe(names.length - 1);
    expect([...rules.matchAll(/^ {10}summary: /gm)].length).toBe(names.length);
    const tested = new Set([...readFileSync(`${dir}alerts.test.yml`, 'utf8').matchAll(/alertname: (\S+)/g)].map((m) => m[1]!));
    expect([...tested].filter((n) => !names.includes(n))).toEqual([]);
    expect(tested.size).toBeGreaterThanOrEqual(5);
  });
});
