/**
 * Streams of OpenAI-compatible upstreams are already in the client's format: each event is
 * forwarded as the upstream wrote it (no re-serialisation on the hot path). The converter only
 * reads each chunk to learn usage, finish reason and text, drops the usage-only chunk the relay
 * asked for when the client did not, and checks the fields it reads have the types the format
 * promises: a chunk that does not (`"content": 5`, `choices` that is not a list) fails the
 * stream as `bad_upstream_response` rather than reaching the client. A kind whose upstream also
 * sends events that are not chunks (Azure) says what to do with them (`foreignChunk`).
 */
import { UpstreamFaultError } from '../../../errors.js';
import { SSE_DONE, SseParser, type SseEvent } from '../../sse.js';
import type { FinishReason, Usage } from '../../schema.js';
import type { ResponseMeta, StreamConverter, StreamOutcome } from '../provider.js';
import { noStreamEvents } from '../stream-writer.js';
import { normaliseFinishReason } from './response.js';

/** A chunk's fields the relay reads, as an upstream might send them (checked before use). */
interface LooseChunk {
  choices?: unknown;
  usage?: unknown;
  error?: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isOptionalString = (value: unknown): boolean => value === undefined || value === null || typeof value === 'string';

function malformedChunk(): UpstreamFaultError {
  return new UpstreamFaultError('the upstream sent a stream chunk that is not a chat completion chunk');
}

/** A choice of a chunk after `checkedChoices`: the fields the converter reads have the format's types. */
export interface CheckedChoice {
  index?: unknown;
  delta?: { content?: string | null; tool_calls?: unknown };
  finish_reason?: unknown;
}

/** The id, created and model of the stream's chunks: the last real chunk's, else the response meta's. */
export interface ChunkIdentity {
  id: string;
  created: number;
  model: string;
}

export interface CompatStreamOptions {
  /**
   * The data to send for a chunk whose `object` is not "chat.completion.chunk" (Azure's content
   * filter annotations), or null to send nothing. Unset: every chunk goes out as it came.
   */
  foreignChunk?: (chunk: Record<string, unknown>, choices: CheckedChoice[], identity: ChunkIdentity) => string | null;
}

/** `choices` and its deltas as the format has them, or null (typeof checks only: this is per event). */
function checkedChoices(chunk: LooseChunk): CheckedChoice[] | null {
  const choices = chunk.choices;
  if (choices === undefined || choices === null) return chunk.usage === undefined || chunk.usage === null ? null : [];
  if (!Array.isArray(choices)) return null;
  for (const choice of choices as unknown[]) {
    if (!isObject(choice)) return null;
    const delta = choice.delta;
    if (delta !== undefined && delta !== null && (!isObject(delta) || !isOptionalString(delta.content))) return null;
    if (!isOptionalString(choice.finish_reason)) return null;
  }
  return choices as CheckedChoice[];
}

/** Keeps the identity of a real chunk, for the chunks that lack one. */
function rememberIdentity(chunk: Record<string, unknown>, identity: ChunkIdentity): void {
  if (typeof chunk.id === 'string' && chunk.id !== '') identity.id = chunk.id;
  if (typeof chunk.created === 'number' && chunk.created > 0) identity.created = chunk.created;
  if (typeof chunk.model === 'string' && chunk.model !== '') identity.model = chunk.model;
}

export function createCompatStreamConverter(meta: ResponseMeta, maxEventSize?: number, options: CompatStreamOptions = {}): StreamConverter {
  const foreignChunk = options.foreignChunk;
  const identity: ChunkIdentity = { id: meta.id, created: meta.created, model: meta.model };
  const parser = new SseParser(maxEventSize);
  const decoder = new TextDecoder('utf-8');
  let usage: Usage | null = null;
  let finishReason: FinishReason | null = null;
  let text = '';
  let error: StreamOutcome['error'] = null;
  /** A chunk has been read (the stream is one), whether or not it was forwarded. */
  let sawChunk = false;
  /** A fault found after other events of the same push: thrown by the next call, once those went out. */
  let fault: UpstreamFaultError | null = null;

  const forward = (events: SseEvent[]): string => {
    let out = '';
    for (const event of events) {
      const data = event.data;
      if (data === '[DONE]') continue; // the relay writes its own, last
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue; // keep-alive noise some servers send
      }
      if (!isObject(chunk)) continue;
      if (chunk.error !== undefined && chunk.error !== null) {
        const reported = isObject(chunk.error) ? chunk.error : { message: chunk.error };
        error = { message: typeof reported.message === 'string' && reported.message ? reported.message : 'upstream error', code: String(reported.code ?? reported.type ?? 'upstream_error') };
        sawChunk = true;
        out += `data: ${data}\n\n`;
        continue;
      }
      const choices = checkedChoices(chunk);
      const reportedUsage = chunk.usage;
      if (choices === null || (reportedUsage !== undefined && reportedUsage !== null && !isObject(reportedUsage))) {
        if (out === '') throw malformedChunk();
        fault = malformedChunk();
        return out;
      }
      sawChunk = true;
      if (isObject(reportedUsage) && typeof reportedUsage.prompt_tokens === 'number') usage = reportedUsage as unknown as Usage;
      for (const choice of choices) {
        const piece = choice.delta?.content;
        if (piece) text += piece;
        const reason = normaliseFinishReason(choice.finish_reason);
        if (reason) finishReason = reason;
      }
      if (choices.length === 0 && reportedUsage && !meta.includeUsage) continue; // usage we asked for ourselves
      if (foreignChunk !== undefined) {
        if (chunk.object !== 'chat.completion.chunk') {
          const replacement = foreignChunk(chunk, choices, identity);
          if (replacement !== null) out += `data: ${replacement}\n\n`;
          continue;
        }
        rememberIdentity(chunk, identity);
      }
      out += `data: ${data}\n\n`;
    }
    return out;
  };

  const throwPending = () => {
    if (fault !== null) throw fault;
  };

  return {
    push: (bytes) => {
      throwPending();
      return forward(parser.push(decoder.decode(bytes, { stream: true })));
    },
    end: () => {
      throwPending();
      const out = forward([...parser.push(decoder.decode()), ...parser.flush()]);
      throwPending();
      if (!sawChunk) throw noStreamEvents();
      return out + SSE_DONE;
    },
    outcome: () => ({ usage, finishReason, completionText: text, error }),
  };
}
