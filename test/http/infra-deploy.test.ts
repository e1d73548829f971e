/**
 * The deployment files in infra/ (issue 22, "Deployment"), checked against the real things:
 *
 * - infra/kubernetes: every object the kustomization lists validates against the Kubernetes API's
 *   JSON schemas (the `kubernetes-models` package: offline, nothing downloaded), and the probes,
 *   ports and settings point at what a real server answers (started here, in both modes);
 * - infra/Dockerfile: the HEALTHCHECK's timing, a Node major the tests run, and its command run
 *   against a real server (healthy) and a closed port (unhealthy);
 * - infra/docker-compose.yml: ADMIN_PASSWORD reaches both instances, the load balancer's
 *   upstreams name both, and the instances trust the balancer's address; `docker compose config`
 *   where the compose client is installed;
 * - infra/caddy/Caddyfile: run by Caddy in front of two real distributed instances, it spreads
 *   requests over both and keeps answering when one stops. Skipped, saying so, without caddy
 *   (Debian's `caddy` package; .ci/run installs it).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import * as k8s from 'kubernetes-models';
import { startApp, type RunningApp } from '../support/app.js';
import { appModes, distributedEnv } from '../support/modes.js';

const infra = fileURLToPath(new URL('../../infra/', import.meta.url));
const read = (path: string) => readFileSync(`${infra}${path}`, 'utf8');

const services = inject('services');
const urls = inject('serviceUrls');
const MODES = appModes(services, urls);

// ---------------------------------------------------------------------------------------------
// Kubernetes

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** Every object of the files kustomization.yaml lists, in order. */
function kubernetesObjects(): Manifest[] {
  const kustomization = parse(read('kubernetes/kustomization.yaml')) as { resources: string[] };
  return kustomization.resources.flatMap((file) =>
    parseAllDocuments(read(`kubernetes/${file}`)).map((doc) => {
      expect(doc.errors, file).toEqual([]);
      return doc.toJSON() as Manifest;
    }),
  );
}

/** The kubernetes-models class for an apiVersion and kind ("apps/v1" + Deployment -> apps.v1.Deployment). */
function modelOf(apiVersion: string, kind: string): (new (data: unknown) => { validate(): void }) | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const groupKey = group === '' ? null : group!.replace(/\.([a-z])/g, (_, c: string) => c.toUpperCase());
  const root = k8s as unknown as Record<string, Record<string, Record<string, unknown>>>;
  const versions = groupKey === null ? { [version!]: root[version!] } : root[groupKey];
  const cls = versions?.[version!]?.[kind];
  return typeof cls === 'function' ? (cls as new (data: unknown) => { validate(): void }) : undefined;
}

function validationError(object: Manifest): string | null {
  const Model = modelOf(object.apiVersion, object.kind);
  if (!Model) return `no schema for ${object.apiVersion} ${object.kind}`;
  try {
    new Model(object).validate();
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

const objects = kubernetesObjects();
const find = (kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in infra/kubernetes`);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML, walked by path; the schemas above check its shape
  return found as Manifest & { spec: Record<string, any>; data?: Record<string, string>; stringData?: Record<string, string> };
};
const deployment = find('Deployment', 'switchyard');
const container = deployment.spec.template.spec.containers[0];
const config = find('ConfigMap', 'switchyard-config').data!;

describe('infra/kubernetes: the manifests', () => {
  it('every object validates against the Kubernetes API schemas', () => {
    const kinds = objects.map((o) => o.kind);
    for (const kind of ['Namespace', 'Deployment', 'Service', 'ConfigMap', 'Secret', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'StatefulSet']) expect(kinds).toContain(kind);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}: ${validationError(o) ?? 'valid'}`)).toEqual(objects.map((o) => `${o.kind}/${o.metadata.name}: valid`));
  });

  it('the validator does refuse a broken manifest (a probe without a port, replicas as text)', () => {
    const broken = structuredClone(deployment);
    delete broken.spec.template.spec.containers[0].readinessProbe.httpGet.port;
    expect(validationError(broken)).toMatch(/port/);
    expect(validationError({ ...structuredClone(deployment), spec: { ...deployment.spec, replicas: 'two' } })).toMatch(/integer/);
  });

  it('NATS (JetStream), MariaDB and Redis run beside it, under the names the ConfigMap gives', () => {
    expect(find('StatefulSet', 'nats').spec.template.spec.containers[0].args).toContain('-js');
    expect(config.NATS_URL).toBe('nats://nats:4222');
    expect(config.SQLDB_HOST).toBe('mariadb');
    expect(config.CACHE_HOST).toBe('redis');
    for (const [name, port] of [['nats', 4222], ['mariadb', 3306], ['redis', 6379]] as const) expect(find('Service', name).spec.ports[0].port).toBe(port);
  });

  it('the app is non-root on a read-only root filesystem, with requests and limits, and an HPA and PDB on its pods', () => {
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources.limits).toMatchObject({ memory: expect.any(String) });
    // Every directory the app writes is a volume (the root filesystem is read-only).
    const mounts = container.volumeMounts.map((m: { mountPath: string }) => m.mountPath);
    for (const dir of ['/data', '/storage', '/logs', '/tmp']) expect(mounts).toContain(dir);
    expect(find('HorizontalPodAutoscaler', 'switchyard').spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'switchyard' });
    expect(find('HorizontalPodAutoscaler', 'switchyard').spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(find('PodDisruptionBudget', 'switchyard').spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(deployment.spec.replicas).toBeUndefined(); // the HPA owns the count
  });

  it('the ports are the ones the app listens on (SERVER_PORT, METRICS_PORT 9090), and the Service targets them', () => {
    const ports = Object.fromEntries(container.ports.map((p: { name: string; containerPort: number }) => [p.name, p.containerPort]));
    expect(ports).toEqual({ http: Number(config.SERVER_PORT), metrics: Number(config.METRICS_PORT) });
    expect(config.METRICS_PORT).toBe('9090');
    const targets = find('Service', 'switchyard').spec.ports.map((p: { targetPort: string }) => p.targetPort);
    expect(targets.sort()).toEqual(['http', 'metrics']);
    expect(deployment.spec.template.metadata.annotations['prometheus.io/port']).toBe(config.METRICS_PORT);
  });

  it('the Secret has SECRET, ADMIN_PASSWORD, the database password and provider keys, all empty in the repository', () => {
    const secret = find('Secret', 'switchyard-secrets').stringData!;
    for (const key of ['SECRET', 'ADMIN_PASSWORD', 'SQLDB_PASSWORD', 'OPENAI_API_KEY']) expect(Object.keys(secret)).toContain(key);
    expect(Object.values(secret).filter((v) => v !== '')).toEqual([]);
    expect(Object.values(find('Secret', 'mariadb-secrets').stringData!).filter((v) => v !== '')).toEqual([]);
    expect(container.envFrom).toEqual([{ configMapRef: { name: 'switchyard-config' } }, { secretRef: { name: 'switchyard-secrets' } }]);
  });

  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
  it.skipIf(!kubectl)('kubectl kustomize builds the same objects (skipped without kubectl)', () => {
    const built = parseAllDocuments(execFileSync('kubectl', ['kustomize', `${infra}kubernetes`], { encoding: 'utf8' })).map((d) => d.toJSON() as Manifest);
    const names = (list: Manifest[]) => list.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(names(built)).toEqual(names(objects));
    expect(built.filter((o) => o.kind !== 'Namespace').every((o) => o.metadata.namespace === 'switchyard')).toBe(true);
  });
});

const probePath = (name: 'startupProbe' | 'livenessProbe' | 'readinessProbe') => container[name].httpGet as { path: string; port: string };

describe.each(MODES.map((m) => [m.name, m] as const))('infra/kubernetes: the probes against a real server (%s)', (_name, mode) => {
  let app: RunningApp;
  let cleanup = async () => undefined as void;
  beforeAll(async () => {
    if (!mode.enabled) return;
    const env = mode.env();
    cleanup = env.cleanup;
    app = await startApp(env.env, { anonymous: true });
  });
  afterAll(async () => {
    await app?.close();
    await cleanup();
  });

  it.skipIf(!mode.enabled)('startup and liveness ask /health/live, readiness /health/ready, and the server answers them 200', async () => {
    expect(probePath('startupProbe').path).toBe('/health/live');
    expect(probePath('livenessProbe').path).toBe('/health/live');
    expect(probePath('readinessProbe').path).toBe('/health/ready');
    for (const name of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) expect(probePath(name).port).toBe('http');
    const live = await fetch(`${app.url}${probePath('livenessProbe').path}`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${app.url}${probePath('readinessProbe').path}`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, mode: mode.name });
    // A probe on a path the server does not have would fail for ever (under /health: not the web UI's page fallback).
    expect((await fetch(`${app.url}/health/nope`)).status).toBe(404);
  });
});

// ---------------------------------------------------------------------------------------------
// Dockerfile

const dockerfile = read('Dockerfile');
/** The HEALTHCHECK instruction, continuation lines joined. */
const healthcheck = /^HEALTHCHECK ((?:.*\\\n)*.*)$/m.exec(dockerfile)?.[1]?.replace(/\\\n\s*/g, ' ') ?? '';

describe('infra/Dockerfile', () => {
  it('HEALTHCHECK every 30 s, 10 s timeout, 3 retries', () => {
    expect(healthcheck).toMatch(/--interval=30s\b/);
    expect(healthcheck).toMatch(/--timeout=10s\b/);
    expect(healthcheck).toMatch(/--retries=3\b/);
  });

  it("the base image's Node major is the one these tests run on, and one package.json supports", () => {
    const image = /^ARG NODE_IMAGE=node:(\d+)[-.]/m.exec(dockerfile);
    expect(image, 'ARG NODE_IMAGE=node:<major>-...').not.toBeNull();
    expect(Number(image![1])).toBe(Number(process.versions.node.split('.')[0]));
    const engines = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(Number(/>=\s*(\d+)/.exec(engines)![1])).toBeLessThanOrEqual(Number(image![1]));
    expect(dockerfile).toMatch(/^FROM \$\{NODE_IMAGE\} AS runtime$/m);
  });

  describe('its HEALTHCHECK command', () => {
    let app: RunningApp;
    beforeAll(async () => {
      app = await startApp({}, { anonymous: true });
    });
    afterAll(async () => {
      await app?.close();
    });
    const command = JSON.parse(/CMD (\[.*\])$/.exec(healthcheck)![1]!) as string[];
    // Asynchronously: the server answering it runs in this process.
    const run = (port: string) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, command.slice(1), { env: { ...process.env, SERVER_PORT: port }, stdio: 'ignore', timeout: 10_000 });
        child.on('exit', (code) => resolve(code));
      });

    it('is healthy against a running server', async () => {
      expect(command[0]).toBe('node');
      expect(await run(new URL(app.url).port)).toBe(0);
    });

    it('is unhealthy when nothing answers', async () => {
      const closed = await new Promise<number>((resolve) => {
        const server = createServer().listen(0, '127.0.0.1', () => {
          const { port } = server.address() as { port: number };
          server.close(() => resolve(port));
        });
      });
      expect(await run(String(closed))).toBe(1);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Compose and its load balancer

interface ComposeService {
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  networks?: Record<string, { ipv4_address?: string }>;
  depends_on?: string[] | Record<string, unknown>;
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService>; networks: { default: { ipam: { config: { subnet: string }[] } } } };
const caddyfile = read('caddy/Caddyfile');
/** The value of ${NAME:-default} or ${NAME:?message}: its default, or null when required. */
const defaultOf = (value: string) => /^\$\{\w+:-(.*)\}$/.exec(value)?.[1] ?? null;

describe('infra/docker-compose.yml', () => {
  const instances = ['switchyard-1', 'switchyard-2'];

  it('passes ADMIN_PASSWORD (required) and the same SECRET to both instances', () => {
    for (const name of instances) {
      const env = compose.services[name]!.environment!;
      expect(env.ADMIN_PASSWORD, name).toMatch(/^\$\{ADMIN_PASSWORD:\?/);
      expect(env.SECRET, name).toMatch(/^\$\{SECRET:\?/);
    }
    expect(read('.env.example')).toMatch(/^ADMIN_PASSWORD=$/m);
  });

  it("puts a load balancer in front whose upstreams are both instances' API ports", () => {
    const lb = compose.services.lb!;
    expect(lb.volumes).toContain('./caddy/Caddyfile:/etc/caddy/Caddyfile:ro');
    const upstreams = /reverse_proxy \{\$SWITCHYARD_UPSTREAMS:([^}]*)\}/.exec(caddyfile)?.[1]?.split(/\s+/);
    expect(upstreams).toEqual(instances.map((name) => `${name}:8000`));
    expect(caddyfile).toMatch(/health_uri \/health\/ready/);
    expect(caddyfile).toMatch(/^:\{\$LB_PORT:(\d+)\}/m);
    const lbPort = /^:\{\$LB_PORT:(\d+)\}/m.exec(caddyfile)![1];
    expect(lb.ports).toEqual([`\${SWITCHYARD_PORT:-8000}:${lbPort}`]);
  });

  it("the instances believe X-Forwarded-For from the balancer's fixed address only, in the network's subnet", () => {
    const address = defaultOf(compose.services.lb!.networks!.default!.ipv4_address!);
    const subnet = defaultOf(compose.networks.default.ipam.config[0]!.subnet)!;
    expect(address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    for (const name of instances) expect(defaultOf(compose.services[name]!.environment!.TRUSTED_PROXIES!)).toBe(address);
    expect(address!.split('.').slice(0, 3).join('.')).toBe(subnet.split('.').slice(0, 3).join('.'));
    // Direct instance ports are for this host only: elsewhere X-Forwarded-For would come unchecked.
    for (const name of instances) for (const port of compose.services[name]!.ports!) expect(port).toMatch(/^127\.0\.0\.1:/);
  });

  const composeClient = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
  if (!composeClient) console.warn('infra/docker-compose.yml: `docker compose config` skipped: the docker compose plugin is not installed here (the docker CLI is, without it)');
  it.skipIf(!composeClient)('docker compose config accepts it', () => {
    const run = spawnSync('docker', ['compose', '-f', `${infra}docker-compose.yml`, 'config', '--quiet'], {
      encoding: 'utf8',
      env: { ...process.env, SECRET: 'x'.repeat(32), ADMIN_PASSWORD: 'password-1', MYSQL_PASSWORD: 'p', MYSQL_ROOT_PASSWORD: 'r' },
    });
    expect(run.status, run.stderr).toBe(0);
  });
});

const caddy = spawnSync('caddy', ['version'], { encoding: 'utf8' }).status === 0;
if (!caddy) console.warn('infra/caddy tests skipped: caddy is not installed (apt-get install --no-install-recommends caddy; .ci/run does it)');
const distributed = MODES.find((m) => m.name === 'distributed')!;

describe.skipIf(!caddy || !distributed.enabled)('infra/caddy/Caddyfile in front of two real instances (distributed)', () => {
  const apps: RunningApp[] = [];
  let lb: ChildProcess | undefined;
  let lbUrl = '';
  let cleanup = async () => undefined as void;
  const metricsBase = (app: RunningApp) => `${app.metricsUrl}`;

  beforeAll(async () => {
    const env = distributedEnv(urls);
    cleanup = env.cleanup;
    apps.push(await startApp(env.env, { anonymous: true }));
    apps.push(await startApp(env.env, { anonymous: true }));
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = server.address() as { port: number };
        server.close(() => resolve(free));
      });
    });
    lbUrl = `http://127.0.0.1:${port}`;
    lb = spawn('caddy', ['run', '--config', `${infra}caddy/Caddyfile`, '--adapter', 'caddyfile'], {
      env: { ...process.env, LB_PORT: String(port), SWITCHYARD_UPSTREAMS: apps.map((a) => new URL(a.url).host).join(' '), HOME: process.env.HOME ?? '/tmp' },
      stdio: 'ignore',
    });
    for (let i = 0; i < 100; i++) {
      if (await fetch(`${lbUrl}/health/live`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);
  afterAll(async () => {
    lb?.kill('SIGTERM');
    await Promise.all(apps.map((a) => a.close().catch(() => undefined)));
    await cleanup();
  });

  /** How many GET /health/live one instance has answered (its own metrics listener). */
  async function liveCount(app: RunningApp): Promise<number> {
    const text = await (await fetch(`${metricsBase(app)}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('switchyard_http_requests_total{') && l.includes('route="/health/live"') && l.includes('method="GET"'));
    return line ? Number(line.split(' ').at(-1)) : 0;
  }

  it('spreads requests over both instances', async () => {
    const before = await Promise.all(apps.map(liveCount));
    for (let i = 0; i < 10; i++) expect((await fetch(`${lbUrl}/health/live`)).status).toBe(200);
    const after = await Promise.all(apps.map(liveCount));
    const served = after.map((n, i) => n - before[i]!);
    expect(served.reduce((a, b) => a + b)).toBe(10);
    expect(served.every((n) => n >= 3)).toBe(true);
  });

  it('keeps answering when one instance stops', async () => {
    await apps[0]!.close();
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${lbUrl}/health/ready`);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ ready: true, mode: 'distributed' });
    }
  });
});
