/** Build information reported by GET /v1/system/version. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './package-root.js';

function readPackageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export const VERSION = readPackageVersion();
/** Set at image build time (commit hash); "dev" for a checkout. */
export const BUILD = process.env.SWITCHYARD_BUILD ?? 'dev';

/**
 * The API versions this build speaks (docs/api-versions.md): v1, the 1.x line's API, kept for
 * clients written against it; v2, the 2.0 line's. A request names one in its API-Version header;
 * API_VERSION is the installation's default.
 */
export const API_VERSIONS = ['v1', 'v2'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const API_VERSION_STATUS: Readonly<Record<ApiVersion, 'legacy' | 'current'>> = { v1: 'legacy', v2: 'current' };

export function isApiVersion(value: string): value is ApiVersion {
  return (API_VERSIONS as readonly string[]).includes(value);
}

/** The product's release lines and their support (newest first), as GET /v1/system/version tells them. */
export const RELEASES: ReadonlyArray<{ version: string; released: string; support: 'Current' | 'Maintenance' | 'End of Life' }> = [
  { version: '2.0.x', released: '2024-Q2', support: 'Current' },
  { version: '1.9.x', released: '2023-Q4', support: 'Maintenance' },
  { version: '1.8.x', released: '2023-Q2', support: 'Maintenance' },
  { version: '1.7.x', released: '2022-Q4', support: 'End of Life' },
  { version: '1.6.x', released: '2022-Q2', support: 'End of Life' },
];
