/** Build information reported by GET /v1/system/version. */
import { readFileSync } from 'node:fs';

function readPackageVersion(): string {
  // Works from src/ (tsx, vitest) and from dist/src/ (compiled).
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'switchyard' && pkg.version) return pkg.version;
    } catch {
      // try the next candidate
    }
  }
  return '0.0.0';
}

export const VERSION = readPackageVersion();
/** Set at image build time (commit hash); "dev" for a checkout. */
export const BUILD = process.env.SWITCHYARD_BUILD ?? 'dev';
