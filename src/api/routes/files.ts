/**
 * Files (`/v1/files`, issue 18), in the shape of OpenAI's Files API so that the official SDKs'
 * `files.create / retrieve / list / delete / content` work unchanged. Callers: signed-in users
 * (access token or session cookie, permission chat:use) and API keys (the file's owner is the
 * key's user) — the relay's file content parts and SDK clients use keys.
 *
 * Only the owner sees or uses a file: another user, another tenant, an admin get 404
 * `file_not_found`, as for a missing one. Admins see counts and sizes (`/v1/admin/files/usage`),
 * never names or content.
 *
 * Uploads are multipart (`file`, `purpose`), streamed to storage as they arrive (never buffered
 * whole), measured and hashed on the way (src/files/service.ts); processing (text extraction, OCR)
 * runs after the 201, in the background.
 */
import { z } from 'zod';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FilesTable } from '../../adapters/sql/schema.js';
import { Permission } from '../../auth/rbac.js';
import { fileNotFound } from '../../commands/files/decider.js';
import { AppError, BadRequestError } from '../../errors.js';
import type { HttpRequestLike } from '../../http-exchange.js';
import { findOwnDeletedFile, findOwnFile, fileUsage, listOwnFiles, type FileOwner } from '../../queries/files.js';
import { Callers } from '../../relay/access/caller.js';
import type { ReceivedUpload } from '../../files/service.js';
import { requirePermission, requirePrincipal } from '../auth.js';
import type { AppContext } from '../context.js';
import { errorResponseSchema } from '../errors.js';
import { EntityId, isOperator, tenantNotAllowed } from './tenants.js';

export const FILE_LIMITS = { filename: 1024, purpose: 64, defaultPage: 10_000, maxPage: 10_000 } as const;

export const FileView = z
  .object({
    id: z.string(),
    object: z.literal('file'),
    bytes: z.number(),
    created_at: z.number().describe('unix seconds'),
    filename: z.string(),
    purpose: z.string(),
    mime_type: z.string().describe('detected from the content (magic bytes), not from the name'),
    sha256: z.string(),
    status: z.enum(['uploaded', 'processing', 'processed', 'error']).describe('uploaded -> processing -> processed | error (FILE_PROCESSING_ENGINE=none: stays uploaded)'),
    status_details: z.string().nullable().describe('why processing failed (status error), else null'),
  })
  .describe('a file, as OpenAI\'s Files API shows it (plus mime_type and sha256)').meta({ id: 'File' });

const FileList = z.object({
  object: z.literal('list'),
  data: z.array(FileView),
  has_more: z.boolean(),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
}).meta({ id: 'FileList' });

const FileText = z.object({
  id: z.string(),
  object: z.literal('file.text'),
  text: z.string().describe('the whole extracted text (never cut; chat uses a form cut at FILE_TEXT_LIMIT)'),
  text_chars: z.number(),
  truncated: z.boolean().describe('text_chars > FILE_TEXT_LIMIT: chat sees a cut form that says so'),
  pages: z.number().nullable(),
}).meta({ id: 'FileText' });

const DeletedFile = z.object({ id: z.string(), object: z.literal('file'), deleted: z.literal(true) }).meta({ id: 'DeletedFile' });

const FileParams = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a file id') });

const ListQuery = z.object({
  after: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a file id').optional().describe('a file id: the page starts after it'),
  limit: z.coerce.number().int().min(1).max(FILE_LIMITS.maxPage).default(FILE_LIMITS.defaultPage),
  order: z.enum(['asc', 'desc']).default('desc').describe('by upload time'),
  purpose: z.string().max(FILE_LIMITS.purpose).optional(),
});

const UploadBody = z
  .object({
    file: z.any().meta({ type: 'string', format: 'binary' }).describe(`the file (at most MAX_FILE_SIZE bytes)`),
    purpose: z.string().describe('`chat` for the UI; any other string is kept as given'),
  })
  .describe('multipart/form-data');

const UsageQuery = z.object({ tenant_id: EntityId.optional().describe('operators only: one tenant (default for operators: every tenant)') });
const FileUsageView = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ tenant_id: z.string(), user_id: z.string(), status: z.string(), files: z.number(), bytes: z.number() })),
});

export function fileView(row: FilesTable): z.infer<typeof FileView> {
  return {
    id: row.id,
    object: 'file',
    bytes: Number(row.bytes),
    created_at: Math.floor(Date.parse(row.created_at) / 1000),
    filename: row.filename ?? '',
    purpose: row.purpose,
    mime_type: row.mime_type,
    sha256: row.sha256,
    status: row.status as z.infer<typeof FileView>['status'],
    status_details: row.status === 'error' ? row.status_reason : null,
  };
}

/** `attachment` with the name in both forms: a safe ASCII fallback and the exact name (RFC 6266 / 5987). */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_') || 'file';
  const exact = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}

/** Multipart errors of the parser (wrong content type, too many parts...) as 400s. */
function multipartError(error: unknown): unknown {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('FST_')) return new BadRequestError(`the upload is not a valid multipart form: ${(error as Error).message}`, 'invalid_multipart', 'file');
  return error;
}

export function fileRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    // Encapsulated: only these routes parse multipart. Streams: the parser hands parts over as they arrive.
    await app.register(multipart);
    const tags = ['files'];
    const db = ctx.sql.db;
    const service = ctx.files.service;
    const callers = new Callers(ctx.keyGate, () => ctx.views.keys.state, ctx.tokens, ctx.rbac, () => ctx.views.access.state);
    const unauthorized = errorResponseSchema('unauthorized, key_expired');
    const notFound = errorResponseSchema('file_not_found (missing, deleted, or not yours)');

    /** The caller as a file owner: a user (chat:use), or an API key's user. */
    const ownerOf = async (request: HttpRequestLike): Promise<FileOwner> => {
      const { caller } = await callers.resolve(request);
      if (caller.userId === null) throw new BadRequestError('files belong to a user: this caller has none', 'user_required');
      return { tenantId: caller.tenantId, userId: caller.userId };
    };
    const ownFile = async (owner: FileOwner, id: string) => {
      const row = await findOwnFile(db, owner, id);
      if (!row) throw fileNotFound();
      return row;
    };

    app.post(
      '/v1/files',
      {
        // The body is a stream read by the handler: nothing to validate before it (fields are checked as they arrive).
        validatorCompiler: () => (data) => ({ value: data }),
        schema: {
          tags,
          summary: 'Upload a file (multipart: file, purpose)',
          description:
            'Streamed to storage as it arrives; its type is detected from the content. Over MAX_FILE_SIZE: 413 file_too_large; past the tenant\'s storage quota: 413 storage_quota_exceeded (nothing is kept either way). Text extraction / OCR follows in the background (status uploaded -> processing -> processed | error).',
          consumes: ['multipart/form-data'],
          body: UploadBody,
          response: {
            201: FileView,
            400: errorResponseSchema('invalid_request (param file or purpose missing), invalid_multipart'),
            401: unauthorized,
            413: errorResponseSchema('file_too_large, storage_quota_exceeded'),
          },
        },
      },
      async (request, reply) => {
        const owner = await ownerOf(request);
        const quota = await service.quotaLeft(owner.tenantId);
        let received: ReceivedUpload | null = null;
        let filename = '';
        let purpose: string | undefined;
        let failure: unknown = null;
        try {
          const limits = { files: 1, fields: 10, fieldSize: 4096, parts: 20, fileSize: ctx.config.files.maxSize + 1 };
          for await (const part of request.parts({ limits })) {
            if (part.type === 'file') {
              if (part.fieldname !== 'file' || received !== null || failure !== null) {
                part.file.resume(); // not ours, or after a refusal: read and dropped
                continue;
              }
              filename = part.filename;
              try {
                received = await service.receive(part.file, quota);
              } catch (error) {
                failure = error;
                // The rest of the file is read and dropped so the answer can be read by the client.
                part.file.resume();
              }
            } else if (part.fieldname === 'purpose') {
              purpose = String(part.value);
            }
          }
        } catch (error) {
          failure ??= multipartError(error);
        }
        if (failure !== null || received === null || !purpose || purpose.length > FILE_LIMITS.purpose || filename.length > FILE_LIMITS.filename) {
          if (received) await service.discard(received);
          if (failure !== null) throw failure;
          if (received === null) throw new BadRequestError('a file is required: the multipart field "file"', 'invalid_request', 'file');
          if (!purpose) throw new BadRequestError('a purpose is required: the multipart field "purpose" (the UI uses "chat")', 'invalid_request', 'purpose');
          if (purpose.length > FILE_LIMITS.purpose) throw new BadRequestError(`purpose is at most ${FILE_LIMITS.purpose} characters`, 'invalid_request', 'purpose');
          throw new BadRequestError(`the file name is at most ${FILE_LIMITS.filename} characters`, 'invalid_request', 'file');
        }
        const row = await service.create(owner, received, filename || 'file', purpose, request.id);
        await reply.code(201).send(fileView(row));
        // Processing starts once the answer is on its way, in the background.
        ctx.files.processing?.schedule(row.id, owner.tenantId);
        return reply;
      },
    );

    app.get(
      '/v1/files',
      {
        schema: {
          tags,
          summary: 'Your files (newest first by default)',
          description: 'Pages: pass the last id of a page as `after` while has_more.',
          querystring: ListQuery,
          response: { 200: FileList, 400: errorResponseSchema('invalid_request'), 401: unauthorized },
        },
      },
      async (request) => {
        const owner = await ownerOf(request);
        const { after, limit, order, purpose } = request.query;
        const rows = await listOwnFiles(db, owner, { after, limit: limit + 1, order, purpose });
        const page = rows.slice(0, limit).map(fileView);
        return { object: 'list' as const, data: page, has_more: rows.length > limit, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
      },
    );

    app.get(
      '/v1/files/:id',
      { schema: { tags, summary: 'A file', params: FileParams, response: { 200: FileView, 401: unauthorized, 404: notFound } } },
      async (request) => fileView(await ownFile(await ownerOf(request), request.params.id)),
    );

    app.get(
      '/v1/files/:id/content',
      {
        schema: {
          tags,
          summary: "The file's original bytes",
          description: 'Streamed from storage, with the detected Content-Type, Content-Length and a Content-Disposition naming the file.',
          params: FileParams,
          response: { 401: unauthorized, 404: notFound },
        },
      },
      async (request, reply) => {
        const row = await ownFile(await ownerOf(request), request.params.id);
        const { body, size } = await service.content(row);
        return reply
          .type(row.mime_type)
          .header('content-length', String(size))
          .header('content-disposition', contentDisposition(row.filename ?? 'file'))
          .header('x-content-type-options', 'nosniff')
          .header('cache-control', 'private, no-store')
          .send(body as never);
      },
    );

    app.get(
      '/v1/files/:id/text',
      {
        schema: {
          tags,
          summary: "The file's extracted text",
          params: FileParams,
          response: { 200: FileText, 401: unauthorized, 404: notFound, 409: errorResponseSchema('file_not_ready (not processed yet, or processing failed: the message says why)') },
        },
      },
      async (request) => {
        const row = await ownFile(await ownerOf(request), request.params.id);
        const text = await service.text(row);
        return { id: row.id, object: 'file.text' as const, text, text_chars: Number(row.text_chars ?? text.length), truncated: row.truncated === 1, pages: row.pages };
      },
    );

    app.delete(
      '/v1/files/:id',
      {
        schema: {
          tags,
          summary: 'Delete a file',
          description: 'Its name is crypto-shredded, its extracted text deleted, and its bytes deleted once no other file has the same content.',
          params: FileParams,
          response: { 200: DeletedFile, 401: unauthorized, 404: notFound },
        },
      },
      async (request) => {
        const owner = await ownerOf(request);
        const row = await findOwnFile(db, owner, request.params.id);
        if (!row) {
          // A deletion cut short after its event: asking again finishes it (still a 404).
          const gone = await findOwnDeletedFile(db, owner, request.params.id);
          if (gone) await service.finishDeletion(owner, gone);
          throw fileNotFound();
        }
        await service.delete(owner, row, request.id);
        return { id: row.id, object: 'file' as const, deleted: true as const };
      },
    );

    app.get(
      '/v1/admin/files/usage',
      {
        preHandler: requirePermission(ctx, Permission.usersManage),
        schema: {
          tags: ['users'],
          summary: 'Files per user and status: counts and bytes (never names or content)',
          description: "The tenant's live files; operators see every tenant (or one with tenant_id). Admins never read a file itself: /v1/files/{id} is 404 for them as for anyone but the owner.",
          querystring: UsageQuery,
          response: { 200: FileUsageView, 401: unauthorized, 403: errorResponseSchema('forbidden, tenant_not_allowed') },
        },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const named = request.query.tenant_id;
        if (named !== undefined && named !== principal.tenantId && !isOperator(principal)) throw tenantNotAllowed();
        const tenant = named ?? (isOperator(principal) ? null : principal.tenantId);
        return { object: 'list' as const, data: await fileUsage(db, tenant) };
      },
    );
  };
}
