/**
 * Reads of the stored responses read model (src/projections/responses.ts), always as their owner:
 * a response of someone else, deleted or missing is the same `undefined`.
 */
import type { ResponsesTable } from '../adapters/sql/schema.js';
import { NotFoundError } from '../errors.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

/** Who is reading: a response is its owner's alone (tenant and user). */
export interface ResponseOwner {
  tenantId: string;
  ownerId: string;
}

export async function findOwnResponse(db: ReadModelDb, owner: ResponseOwner, id: string): Promise<ResponsesTable | undefined> {
  return db
    .selectFrom('responses')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', owner.tenantId)
    .where('owner_id', '=', owner.ownerId)
    .where('deleted', '=', 0)
    .executeTakeFirst();
}

/** The response object as GET /v1/responses/{id} answers it. */
export function storedResponseObject(row: ResponsesTable): Record<string, unknown> {
  const details = JSON.parse(row.details) as Record<string, unknown>;
  return {
    ...details,
    id: row.id,
    object: 'response',
    created_at: Number(row.created_at),
    status: row.status,
    model: row.model,
    instructions: row.instructions,
    output: JSON.parse(row.output) as unknown[],
    previous_response_id: row.previous_response_id,
    store: true,
    usage: row.usage === null ? null : (JSON.parse(row.usage) as unknown),
  };
}

/** A response's input items, each with an id (`GET /v1/responses/{id}/input_items`), oldest first. */
export function storedInputItems(row: ResponsesTable): Array<Record<string, unknown>> {
  const items = JSON.parse(row.input) as Array<Record<string, unknown>>;
  return items.map((item, i) => ({ ...item, type: item.type ?? 'message', id: typeof item.id === 'string' ? item.id : `${row.id}_in_${i}` }));
}

/** How many stored responses one chain may walk back through. */
export const MAX_CHAIN_LENGTH = 1000;

const previousNotFound = (id: string) => new NotFoundError(`previous response ${id} not found`, 'previous_response_not_found');

/**
 * The conversation `id` ends: every response of its chain, oldest first, as its input items then
 * its output items. Throws 404 `previous_response_not_found` when any link is missing, deleted
 * or someone else's.
 */
export async function conversationItems(db: ReadModelDb, owner: ResponseOwner, id: string): Promise<Array<Record<string, unknown>>> {
  const turns: Array<Array<Record<string, unknown>>> = [];
  const seen = new Set<string>();
  for (let next: string | null = id; next !== null; ) {
    if (seen.has(next) || seen.size >= MAX_CHAIN_LENGTH) throw previousNotFound(id);
    seen.add(next);
    const row: ResponsesTable | undefined = await findOwnResponse(db, owner, next);
    if (row === undefined) throw previousNotFound(next);
    turns.push([...(JSON.parse(row.input) as Array<Record<string, unknown>>), ...(JSON.parse(row.output) as Array<Record<string, unknown>>)]);
    next = row.previous_response_id;
  }
  return turns.reverse().flat();
}
