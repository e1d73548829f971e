/**
 * Presets: conversation templates (`/api/presets`). Users create, change, delete, clone, search
 * and sync their presets; built-ins (from presets/builtin) are visible to everyone, read-only,
 * clonable. Visibility: `private` = the owner only; `team` = the owner's tenant; `public` =
 * everyone on the installation (`public: true` is the same as visibility `public`). A preset the
 * caller may not see answers exactly like a missing one (404 preset_not_found); only the owner
 * changes or deletes a preset (others: 404). Reads need `presets:read`, writes `presets:write`.
 *
 * Single-preset reads carry an ETag (304 on If-None-Match); PATCH and DELETE honour If-Match
 * (412 precondition_failed). `GET /api/presets/sync?since=<cursor>` returns the caller's own
 * changes (tombstones for deletions) after a cursor — the log position of the last change seen.
 *
 * Create and update take the flat body or the spec's nested one (`metadata`, `configuration`;
 * src/presets/nested-body.ts): both become the flat form before anything else; answers are flat.
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PresetsTable } from '../../adapters/sql/schema.js';
import { Permission } from '../../auth/rbac.js';
import type { Principal } from '../../auth/tokens.js';
import { PRESET_CATEGORIES, PRESET_LIMITS, PRESET_ROLES, PRESET_VISIBILITIES, type PresetContent, type PresetVisibility } from '../../commands/presets/content.js';
import { PreconditionFailedError, presets } from '../../commands/presets/decider.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../errors.js';
import { defaultBuiltinPresetsDir, publishBuiltinPresets } from '../../presets/builtin.js';
import { flattenPresetBody, mixedFields, NESTED_PRESET_GROUPS } from '../../presets/nested-body.js';
import { findVisiblePreset, presetDocument, type PresetReader } from '../../queries/presets.js';
import { presetChanges, searchPresets, type PresetQuery } from '../../presets/search.js';
import { requirePermission, requirePrincipal, requireRole } from '../auth.js';
import type { AppContext } from '../context.js';
import { isOperator } from './tenants.js';

// ---------------------------------------------------------------------------------------------
// Shapes

export const PresetMessage = z.object({
  role: z.enum(PRESET_ROLES),
  content: z.string().min(1),
  name: z.string().min(1).max(64).optional(),
});

const Category = z.enum(PRESET_CATEGORIES);
const Visibility = z.enum(PRESET_VISIBILITIES);
const ContextField = z.array(PresetMessage).describe(`at most ${PRESET_LIMITS.contextMessages} messages; context and system_prompt together at most ${PRESET_LIMITS.contextChars} characters`);

const presetFields = {
  name: z.string().trim().min(1).max(PRESET_LIMITS.name),
  description: z.string().max(PRESET_LIMITS.description),
  avatar: z.string().max(PRESET_LIMITS.avatar).describe('an emoji, an emoji code or an image URL'),
  tags: z.array(z.string().trim().min(1).max(PRESET_LIMITS.tag)).max(PRESET_LIMITS.tags),
  category: Category.nullable(),
  lang: z.string().min(2).max(16).nullable(),
  context: ContextField,
  public: z.boolean().describe('true is the same as visibility "public"'),
  visibility: Visibility.describe('private: only you; team: your tenant; public: everyone on the installation'),
  model_preferences: z.array(z.string().trim().min(1).max(PRESET_LIMITS.model)).max(PRESET_LIMITS.modelPreferences).describe('models in order of preference; the relay uses the first one the caller can use when a request names no model'),
  temperature: z.number().min(0).max(2).nullable(),
  max_tokens: z.number().int().min(1).max(PRESET_LIMITS.maxTokens).nullable(),
  system_prompt: z.string().nullable().describe('sent as a system message first, unless the request has its own'),
};

/** The flat form with its defaults: what a created preset holds for each field not given. */
const CreatePresetContent = z.object({
  ...presetFields,
  description: presetFields.description.default(''),
  avatar: presetFields.avatar.default(''),
  tags: presetFields.tags.default([]),
  category: presetFields.category.default(null),
  lang: presetFields.lang.default(null),
  context: presetFields.context.default([]),
  public: presetFields.public.optional(),
  visibility: presetFields.visibility.optional(),
  model_preferences: presetFields.model_preferences.default([]),
  temperature: presetFields.temperature.default(null),
  max_tokens: presetFields.max_tokens.default(null),
  system_prompt: presetFields.system_prompt.default(null),
});
const optionalFields = Object.fromEntries(Object.entries(presetFields).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof presetFields]: z.ZodOptional<(typeof presetFields)[K]> };
const { metadata: metadataFields, configuration: configurationFields } = NESTED_PRESET_GROUPS;
const groupOf = <F extends keyof typeof presetFields>(fields: readonly F[]) => z.object(Object.fromEntries(fields.map((f) => [f, optionalFields[f]])) as { [K in F]: (typeof optionalFields)[K] });

/** The spec's nested form, beside the flat one: a field goes in one place or the other. */
const nestedForm = {
  metadata: groupOf(metadataFields).optional().describe(`the nested form of ${metadataFields.join(', ')}; each may be given here or at the top level, not both`),
  configuration: groupOf(configurationFields).optional().describe(`the nested form of ${configurationFields.join(', ')}; each may be given here or at the top level, not both`),
};

/** Each field given in both forms is a 400 naming it; a preset created without a name in either is one too. */
const oneFormEach =
  (nameRequired: boolean) =>
  (body: { name?: string; metadata?: { name?: string } }, ctx: z.RefinementCtx): void => {
    for (const { group, field } of mixedFields(body)) {
      ctx.addIssue({ code: 'custom', path: [group, field], message: `${field} is given both as "${field}" and as "${group}.${field}": give it once` });
    }
    if (nameRequired && body.name === undefined && body.metadata?.name === undefined) ctx.addIssue({ code: 'custom', path: ['name'], message: 'a preset needs a name ("name" or "metadata.name")' });
  };

export const CreatePresetRequest = z
  .object({ ...optionalFields, name: optionalFields.name.describe('required, here or as metadata.name'), ...nestedForm })
  .superRefine(oneFormEach(true))
  .describe('the flat form, the nested form ({metadata, configuration, context}), or both for different fields').meta({ id: 'CreatePresetRequest' });
export const UpdatePresetRequest = z
  .object({ ...optionalFields, ...nestedForm })
  .superRefine(oneFormEach(false))
  .describe('fields given replace; the flat form, the nested form, or both for different fields').meta({ id: 'UpdatePresetRequest' });
export const ClonePresetRequest = z.object({
  modifications: z
    .object({
      name: presetFields.name.optional().describe("the clone's name (default: the original's)"),
      context_additions: z.array(PresetMessage).optional().describe("messages appended to the original's context"),
    })
    .default({}),
});

export const PresetView = z.object({
  id: z.string(),
  object: z.literal('preset'),
  builtin: z.boolean(),
  owner_id: z.string().nullable().describe('null for built-ins'),
  name: z.string(),
  description: z.string(),
  avatar: z.string(),
  lang: z.string().nullable(),
  category: z.string().nullable(),
  tags: z.array(z.string()),
  context: z.array(z.object({ role: z.string(), content: z.string(), name: z.string().optional() })),
  public: z.boolean(),
  visibility: Visibility,
  model_preferences: z.array(z.string()),
  temperature: z.number().nullable(),
  max_tokens: z.number().nullable(),
  system_prompt: z.string().nullable(),
  version: z.string().nullable().describe("built-ins: the data file's version"),
  revision: z.number().describe('increases with every change'),
  cloned_from: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
}).meta({ id: 'Preset' });
export type PresetView = z.infer<typeof PresetView>;

export const PresetHit = PresetView.extend({ score: z.number().nullable().describe('search rank (null without q)') });
export const PresetList = z.object({
  object: z.literal('list'),
  data: z.array(PresetHit),
  total: z.number(),
  limit: z.number(),
  offset: z.number(),
  next_offset: z.number().nullable().describe('offset of the next page; null on the last one'),
}).meta({ id: 'PresetList' });

export const PresetSync = z.object({
  object: z.literal('preset.sync'),
  changes: z.array(
    z.object({
      op: z.enum(['created', 'updated', 'deleted']),
      id: z.string(),
      preset: PresetView.nullable().describe('null for deletions (tombstones)'),
      deleted_at: z.string().nullable(),
    }),
  ),
  cursor: z.string().describe('pass as `since` next time'),
  has_more: z.boolean().describe('more changes after `cursor`: ask again at once'),
});

const categoryFilter = z
  .string()
  .max(40)
  .refine((v) => PRESET_CATEGORIES.some((c) => c.toLowerCase() === v.toLowerCase()), `unknown category (one of ${PRESET_CATEGORIES.join(', ')})`)
  .describe('case-insensitive');

export const PresetSearchQuery = z.object({
  q: z.string().max(500).optional().describe('terms searched in name, description, tags and context (every term must occur)'),
  category: categoryFilter.optional(),
  tags: z.string().max(1000).optional().describe('comma-separated; every tag must be present'),
  lang: z.string().max(16).optional(),
  scope: z.enum(['all', 'mine', 'builtin', 'shared']).default('all').describe('mine: your presets; builtin: built-ins; shared: other users\' presets you can see'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});
const UserPresetsQuery = PresetSearchQuery.omit({ scope: true });

export const PresetSyncQuery = z.object({
  since: z.string().regex(/^\d{1,16}$/, 'a cursor from a previous sync').optional().describe('cursor from the previous sync; omit for a full sync'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const PresetId = z.object({ preset_id: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'a preset id') });
const UserId = z.object({ user_id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a user id or "me"') });

// ---------------------------------------------------------------------------------------------

export function presetView(row: PresetsTable): PresetView {
  const doc = presetDocument(row);
  return {
    id: row.id,
    object: 'preset',
    builtin: row.builtin === 1,
    owner_id: row.owner_id,
    name: doc.name,
    description: doc.description,
    avatar: doc.avatar,
    lang: doc.lang,
    category: doc.category,
    tags: doc.tags,
    context: doc.context,
    public: doc.visibility === 'public',
    visibility: doc.visibility,
    model_preferences: doc.model_preferences,
    temperature: doc.temperature,
    max_tokens: doc.max_tokens,
    system_prompt: doc.system_prompt,
    version: row.version,
    revision: row.revision,
    cloned_from: row.cloned_from,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A strong validator of the representation. */
export function etagOf(view: PresetView): string {
  return `"${createHash('sha256').update(JSON.stringify(view)).digest('base64url').slice(0, 27)}"`;
}

function etagMatches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const values = (Array.isArray(header) ? header.join(',') : header).split(',').map((v) => v.trim().replace(/^W\//, ''));
  return values.includes('*') || values.includes(etag);
}

/** Effective visibility from `public` and `visibility` (both optional; contradicting is a 400). */
function visibilityOf(input: { public?: boolean; visibility?: PresetVisibility }): PresetVisibility | undefined {
  if (input.public === true && input.visibility !== undefined && input.visibility !== 'public') throw new BadRequestError('public: true contradicts the visibility given', 'invalid_preset', 'visibility');
  if (input.public === false && input.visibility === 'public') throw new BadRequestError('public: false contradicts visibility "public"', 'invalid_preset', 'public');
  if (input.public === true) return 'public';
  if (input.visibility !== undefined) return input.visibility;
  return input.public === false ? 'private' : undefined;
}

const tagsOf = (tags: string | undefined) => (tags ?? '').split(',').map((t) => t.trim()).filter(Boolean);

function listAnswer(result: Awaited<ReturnType<typeof searchPresets>>, query: { limit: number; offset: number }) {
  const next = query.offset + result.rows.length;
  return {
    object: 'list' as const,
    data: result.rows.map(({ row, score }) => ({ ...presetView(row), score })),
    total: result.total,
    limit: query.limit,
    offset: query.offset,
    next_offset: result.rows.length > 0 && next < result.total ? next : null,
  };
}

export function presetRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const read = requirePermission(ctx, Permission.presetsRead);
    const write = requirePermission(ctx, Permission.presetsWrite);
    const tags = ['presets'];
    const db = ctx.sql.db;

    const readerOf = (p: Principal): PresetReader => ({ tenantId: p.tenantId, userId: p.userId });
    const settle = async (position: number | null) => {
      if (position !== null) await ctx.runner.waitFor(position, { projections: ['presets'] });
    };
    const visible = async (principal: Principal, id: string): Promise<PresetsTable> => {
      const row = await findVisiblePreset(db, readerOf(principal), id);
      if (!row) throw new NotFoundError('preset not found', 'preset_not_found');
      return row;
    };
    /** The caller's own preset (built-ins: 403, they are read-only; anything else: 404). */
    const owned = async (principal: Principal, id: string): Promise<PresetsTable> => {
      const row = await findVisiblePreset(db, readerOf(principal), id);
      if (row?.builtin === 1) throw new ForbiddenError('built-in presets are read-only: clone one to change it', 'preset_read_only');
      if (!row || row.owner_id !== principal.userId) throw new NotFoundError('preset not found', 'preset_not_found');
      return row;
    };
    /** If-Match: the revision the client's ETag names, or a 412 when it names another. */
    const expectedRevision = (request: FastifyRequest, row: PresetsTable): number | undefined => {
      const header = request.headers['if-match'];
      if (header === undefined) return undefined;
      if (!etagMatches(header, etagOf(presetView(row)))) throw new PreconditionFailedError();
      return row.revision;
    };
    const sendPreset = (reply: FastifyReply, row: PresetsTable, status = 200) => {
      const view = presetView(row);
      return reply.code(status).header('etag', etagOf(view)).send(view);
    };
    const create = async (request: FastifyRequest, principal: Principal, content: PresetContent, clonedFrom: string | null) => {
      const id = `pst_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
      const result = await ctx.commands.execute(presets, id, { type: 'CreatePreset', presetId: id, ownerId: principal.userId, content, clonedFrom }, { tenantId: principal.tenantId, causationId: request.id });
      await settle(result.position);
      return visible(principal, id);
    };

    app.post('/api/presets', { preHandler: write, schema: { tags, summary: 'Create a preset', body: CreatePresetRequest, response: { 201: PresetView } } }, async (request, reply) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      const { public: _public, visibility: _visibility, ...content } = CreatePresetContent.parse(flattenPresetBody(request.body));
      const row = await create(request, principal, { ...content, visibility: visibilityOf(request.body) ?? 'private' }, null);
      return sendPreset(reply, row, 201);
    });

    const listSummaries = {
      '/api/presets': 'Presets the caller can see (built-ins, own, shared), with filters; same parameters as search',
      '/api/presets/search': 'Search presets: ranked name > tag > description > context, paginated with limit/offset (README "Presets")',
    };
    for (const [url, summary] of Object.entries(listSummaries)) {
      app.get(url, { preHandler: read, schema: { tags, summary, querystring: PresetSearchQuery, response: { 200: PresetList } } }, async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const q = request.query;
        const query: PresetQuery = { q: q.q, category: q.category, tags: tagsOf(q.tags), lang: q.lang, scope: q.scope, limit: q.limit, offset: q.offset };
        return listAnswer(await searchPresets(db, readerOf(principal), query), q);
      });
    }

    app.get('/api/presets/sync', { preHandler: read, schema: { tags, summary: "The caller's preset changes since a cursor (tombstones for deletions)", querystring: PresetSyncQuery, response: { 200: PresetSync } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      const since = Number(request.query.since ?? 0);
      const rows = await presetChanges(db, readerOf(principal), since, request.query.limit + 1);
      const page = rows.slice(0, request.query.limit);
      return {
        object: 'preset.sync' as const,
        changes: page.map((row) => ({
          op: row.deleted === 1 ? ('deleted' as const) : row.created_position > since ? ('created' as const) : ('updated' as const),
          id: row.id,
          preset: row.deleted === 1 ? null : presetView(row),
          deleted_at: row.deleted_at,
        })),
        cursor: String(page.at(-1)?.position ?? since),
        has_more: rows.length > page.length,
      };
    });

    app.get(
      '/api/presets/user/:user_id',
      { preHandler: read, schema: { tags, summary: "A user's presets: all of your own (`me`), or what another user shares with you", params: UserId, querystring: UserPresetsQuery, response: { 200: PresetList } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const q = request.query;
        const ownerId = request.params.user_id === 'me' ? principal.userId : request.params.user_id;
        const query: PresetQuery = { q: q.q, category: q.category, tags: tagsOf(q.tags), lang: q.lang, ownerId, limit: q.limit, offset: q.offset };
        return listAnswer(await searchPresets(db, readerOf(principal), query), q);
      },
    );

    app.get(
      '/api/presets/:preset_id',
      { preHandler: read, schema: { tags, summary: 'A preset (ETag; 304 on If-None-Match)', params: PresetId, response: { 200: PresetView, 304: z.null().describe('not modified') } } },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const view = presetView(await visible(principal, request.params.preset_id));
        const etag = etagOf(view);
        reply.header('etag', etag).header('cache-control', 'private, no-cache');
        if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send(null);
        return reply.send(view);
      },
    );

    app.patch(
      '/api/presets/:preset_id',
      { preHandler: write, schema: { tags, summary: 'Change one of your presets (fields given replace; If-Match honoured)', params: PresetId, body: UpdatePresetRequest, response: { 200: PresetView } } },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const row = await owned(principal, request.params.preset_id);
        const { public: _public, visibility: _visibility, ...fields } = flattenPresetBody(request.body);
        const changes: Partial<PresetContent> = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
        const visibility = visibilityOf(request.body);
        if (visibility !== undefined) changes.visibility = visibility;
        const result = await ctx.commands.execute(
          presets,
          row.id,
          { type: 'UpdatePreset', ownerId: principal.userId, changes, expectedRevision: expectedRevision(request, row) },
          { tenantId: principal.tenantId, causationId: request.id },
        );
        await settle(result.position);
        return sendPreset(reply, await visible(principal, row.id));
      },
    );

    app.delete(
      '/api/presets/:preset_id',
      {
        preHandler: write,
        schema: { tags, summary: 'Delete one of your presets (If-Match honoured)', params: PresetId, response: { 200: z.object({ id: z.string(), object: z.literal('preset'), deleted: z.literal(true) }) } },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const row = await owned(principal, request.params.preset_id);
        const result = await ctx.commands.execute(
          presets,
          row.id,
          { type: 'DeletePreset', ownerId: principal.userId, by: principal.userId, expectedRevision: expectedRevision(request, row) },
          { tenantId: principal.tenantId, causationId: request.id },
        );
        await settle(result.position);
        return { id: row.id, object: 'preset' as const, deleted: true as const };
      },
    );

    app.post(
      '/api/presets/:preset_id/clone',
      {
        preHandler: write,
        schema: { tags, summary: 'Clone a preset you can see (built-ins included) into a new private preset of yours', params: PresetId, body: ClonePresetRequest, response: { 201: PresetView } },
      },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const source = await visible(principal, request.params.preset_id);
        const { visibility: _visibility, ...content } = presetDocument(source);
        const mods = request.body.modifications;
        const row = await create(
          request,
          principal,
          { ...content, name: mods.name ?? content.name, context: [...content.context, ...(mods.context_additions ?? [])], visibility: 'private' },
          source.id,
        );
        return sendPreset(reply, row, 201);
      },
    );

    app.post(
      '/api/admin/presets/reload',
      {
        preHandler: requireRole(ctx.tokens, 'admin', ctx.config.auth.rbacEnabled),
        schema: {
          tags: ['admin'],
          summary: 'Publish built-in presets that are new or have a newer version in the data files (operators only)',
          response: { 200: z.object({ found: z.number(), published: z.array(z.string()), problems: z.array(z.object({ file: z.string(), error: z.string() })) }) },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        if (!isOperator(principal)) throw new ForbiddenError('only operators (admins of the default tenant) may do this', 'forbidden');
        const report = await publishBuiltinPresets(ctx.commands, ctx.config.presets.builtinDir ?? defaultBuiltinPresetsDir(), ctx.logger);
        await settle(report.position);
        return { found: report.found, published: report.published, problems: report.problems };
      },
    );
  };
}
