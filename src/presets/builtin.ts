/**
 * Built-in presets: data files under presets/builtin/<lang>/*.json (one preset per file, or an
 * array of presets), published into the log at startup as BuiltinPresetPublished events of the
 * `builtinpresets-catalog` aggregate. The catalogue decides: only a built-in whose file version is
 * newer than the published one is (re)published, so an updated data file reaches existing
 * installations, and several instances starting together publish each version once (they race
 * on the catalogue's stream version; the losers re-decide and find nothing to do).
 *
 * Robust by design: a missing or empty folder publishes nothing; an unreadable or invalid file is
 * reported (logged) and skipped, never fatal; files added later are picked up at the next start
 * (or `POST /api/admin/presets/reload`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { z } from 'zod';
import { packageRoot } from '../package-root.js';
import type { CommandBus } from '../commands/bus.js';
import { normalizeContent, PRESET_CATEGORIES } from '../commands/presets/content.js';
import { BUILTIN_CATALOG_ID, builtinPresets, SYSTEM_TENANT, type BuiltinPresetInput } from '../commands/presets/decider.js';
import type { Logger } from '../logger.js';

/** The data-file format. Unknown keys are ignored. */
export const BuiltinPresetFile = z.object({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'letters, digits, ".", "-" and "_" (at most 100)'),
  version: z.union([z.number().int().nonnegative(), z.string().regex(/^\d+(\.\d+)*$/, 'a number or dotted numbers')]),
  avatar: z.string().max(2048).default(''),
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).default(''),
  lang: z.string().min(2).max(16),
  category: z.enum(PRESET_CATEGORIES),
  tags: z.array(z.string().min(1).max(50)).max(20).default([]),
  context: z
    .array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string().min(1), name: z.string().optional() }))
    .min(1)
    .max(100),
  model_preferences: z.array(z.string().min(1).max(200)).max(10).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  max_tokens: z.number().int().positive().nullish(),
});
export type BuiltinPresetFile = z.infer<typeof BuiltinPresetFile>;

export interface BuiltinProblem {
  file: string;
  error: string;
}

/** The presets/builtin folder of this package (next to package.json). */
export function defaultBuiltinPresetsDir(): string {
  return join(packageRoot(), 'presets', 'builtin');
}

function jsonFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string, depth: number) => {
    let entries: string[];
    try {
      entries = readdirSync(d).sort();
    } catch {
      return;
    }
    for (const name of entries) {
      const path = join(d, name);
      let isDir = false;
      try {
        isDir = statSync(path).isDirectory();
      } catch {
        continue;
      }
      if (isDir && depth < 2) walk(path, depth + 1);
      else if (!isDir && name.endsWith('.json')) found.push(path);
    }
  };
  walk(dir, 0);
  return found;
}

export function toBuiltinInput(file: BuiltinPresetFile): BuiltinPresetInput {
  const content = normalizeContent({
    name: file.name,
    description: file.description,
    avatar: file.avatar,
    tags: file.tags,
    category: file.category,
    lang: file.lang,
    context: file.context,
    model_preferences: file.model_preferences ?? [],
    temperature: file.temperature ?? null,
    max_tokens: file.max_tokens ?? null,
    system_prompt: null,
  });
  return { presetId: file.id, version: String(file.version), content };
}

/** Reads and validates every data file under `dir` (missing folder: nothing). */
export function readBuiltinPresets(dir: string): { presets: BuiltinPresetInput[]; problems: BuiltinProblem[] } {
  const presets: BuiltinPresetInput[] = [];
  const problems: BuiltinProblem[] = [];
  const files = new Map<string, string>();
  for (const path of jsonFiles(dir)) {
    const file = relative(dir, path);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      problems.push({ file, error: `not readable JSON: ${(error as Error).message}` });
      continue;
    }
    for (const [i, item] of (Array.isArray(parsed) ? parsed : [parsed]).entries()) {
      const where = Array.isArray(parsed) ? `${file}[${i}]` : file;
      const result = BuiltinPresetFile.safeParse(item);
      if (!result.success) {
        problems.push({ file: where, error: result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ') });
        continue;
      }
      const first = files.get(result.data.id);
      if (first !== undefined) {
        problems.push({ file: where, error: `duplicate id ${result.data.id} (also in ${first}); skipped` });
        continue;
      }
      try {
        presets.push(toBuiltinInput(result.data));
        files.set(result.data.id, where);
      } catch (error) {
        problems.push({ file: where, error: (error as Error).message });
      }
    }
  }
  return { presets, problems };
}

/** Largest serialized batch per commit (a JetStream message holds one commit; its default limit is 1 MB). */
const BATCH_BYTES = 256 * 1024;

export interface PublishReport {
  /** Valid built-ins found in the files. */
  found: number;
  /** Built-ins (re)published by this call (new, or a newer version). */
  published: string[];
  problems: BuiltinProblem[];
  /** Log position of the last commit appended, or null when nothing was published. */
  position: number | null;
}

/** Publishes what is new or newer in `dir`. Never throws for bad data; store errors propagate. */
export async function publishBuiltinPresets(commands: CommandBus, dir: string, logger: Logger): Promise<PublishReport> {
  const { presets, problems } = readBuiltinPresets(dir);
  for (const p of problems) logger.warn({ file: join(dir, p.file), error: p.error }, 'built-in preset skipped');
  const report: PublishReport = { found: presets.length, published: [], problems, position: null };
  let batch: BuiltinPresetInput[] = [];
  let bytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const result = await commands.execute(builtinPresets, BUILTIN_CATALOG_ID, { type: 'PublishBuiltinPresets', presets: batch }, { tenantId: SYSTEM_TENANT, causationId: 'builtin-presets' });
    report.published.push(...result.events.map((e) => e.data.preset_id));
    if (result.position !== null) report.position = result.position;
    batch = [];
    bytes = 0;
  };
  for (const preset of presets) {
    const size = Buffer.byteLength(JSON.stringify(preset));
    if (bytes + size > BATCH_BYTES) await flush();
    batch.push(preset);
    bytes += size;
  }
  await flush();
  if (report.published.length > 0) logger.info({ published: report.published.length, found: report.found }, 'built-in presets published');
  return report;
}
