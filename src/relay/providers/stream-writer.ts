/**
 * The client side of the native stream converters (Anthropic, Gemini, Bedrock, Cohere, Ollama).
 *
 * Each converter reads its upstream's framing and events itself; what the client sees back must
 * follow the same rules whichever upstream it came from, so those rules live here once:
 * - the first chunk carries `delta.role: 'assistant'` (merged into whatever that chunk says);
 * - an error inside the stream becomes one OpenAI-style `data: {"error":{...}}` event and is
 *   kept for `outcome().error`; after it nothing is converted any more;
 * - the tail: a usage chunk when the client asked for one (`stream_options.include_usage`) and
 *   the stream did not fail, then `data: [DONE]`;
 * - the outcome the relay records (usage, finish reason, generated text, error).
 */
import { UpstreamFaultError } from '../../errors.js';
import type { ChatCompletionChunk, FinishReason, Usage } from '../schema.js';
import { SSE_DONE, sseData } from '../sse.js';
import type { ResponseMeta, StreamConverter, StreamOutcome } from './provider.js';
import { chunkOf, usageChunkOf } from './shared.js';

export type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** An in-stream upstream error as the client sees it (OpenAI error shape). */
export function streamErrorEvent(message: string, code: string): string {
  return sseData({ error: { message, type: 'upstream_error', code, param: null } });
}

/** A stream that ended without one event the relay could convert (an empty body, JSON, garbage). */
export function noStreamEvents(): UpstreamFaultError {
  return new UpstreamFaultError('the upstream answered without a stream of chat events');
}

/** Writes the chunks of one converted stream and keeps what the relay records about it. */
export class ChunkWriter {
  /** Usage as last reported by the upstream; converters set it. */
  usage: Usage | null = null;
  finishReason: FinishReason | null = null;
  /** Text generated so far (the relay counts tokens from it when the upstream reports no usage). */
  completionText = '';
  error: StreamOutcome['error'] = null;
  private begun = false;
  /** Identity written into each chunk: the relay's id and time, the model the upstream reports. */
  private chunkMeta: ResponseMeta;

  constructor(private readonly meta: ResponseMeta) {
    this.chunkMeta = meta;
  }

  /** A chunk has been written (so the role has gone out). */
  get started(): boolean {
    return this.begun;
  }

  get failed(): boolean {
    return this.error !== null;
  }

  /** Chunks (and the usage chunk) name `model` from now on: the upstream said which model answered. */
  setModel(model: string): void {
    // Field by field: the relay's meta computes its fallback id in a getter, which a spread would drop.
    const { meta } = this;
    this.chunkMeta = { id: meta.id, created: meta.created, model, includeUsage: meta.includeUsage };
  }

  /** One chunk; the first of the stream also carries the assistant role. */
  emit(delta: Delta, finishReason: FinishReason | null = null): string {
    const withRole: Delta = this.begun ? delta : { role: 'assistant', ...delta };
    this.begun = true;
    return sseData(chunkOf(this.chunkMeta, withRole, finishReason));
  }

  /** The role chunk (`{role: 'assistant', content: ''}`) unless a chunk has gone out already. */
  start(): string {
    return this.begun ? '' : this.emit({ content: '' });
  }

  /** A piece of generated text. */
  content(text: string): string {
    this.completionText += text;
    return this.emit({ content: text });
  }

  /** The finish chunk (an empty delta with the finish reason). */
  finish(reason: FinishReason): string {
    this.finishReason = reason;
    return this.emit({}, reason);
  }

  /** An error the upstream reported (or a body the relay cannot read): the stream fails here. */
  fail(message: string, code: string): string {
    this.error = { message, code };
    return streamErrorEvent(message, code);
  }

  /**
   * An upstream event that is not what the upstream's API sends: a 502 thrown while nothing has
   * been converted yet (the client can still get a plain error), else the in-band error.
   */
  malformed(message: string): string {
    if (!this.begun && this.error === null) throw new UpstreamFaultError(message);
    return this.fail(message, 'bad_upstream_response');
  }

  /** The tail of the stream: the usage chunk if asked for (and not failed), then `[DONE]`. */
  close(): string {
    const usage = !this.error && this.meta.includeUsage && this.usage ? sseData(usageChunkOf(this.chunkMeta, this.usage)) : '';
    return usage + SSE_DONE;
  }

  outcome(): StreamOutcome {
    return { usage: this.usage, finishReason: this.finishReason, completionText: this.completionText, error: this.error };
  }
}

/** Splits decoded upstream text into frames (SSE events, NDJSON lines) across any split. */
export interface TextFraming<F> {
  push(text: string): F[];
  /** End of input: a last frame without its terminator still counts. */
  flush(): F[];
}

/**
 * A converter for upstreams that stream text: UTF-8 decoded across pushes (a character may be
 * split between two), framed by `framing`, each frame handed to `handle` until the stream fails,
 * then the writer's tail. Anything pushed after end() is ignored. A stream that converted nothing
 * at all throws noStreamEvents() from end().
 */
export function textStreamConverter<F>(writer: ChunkWriter, framing: TextFraming<F>, handle: (frame: F) => string): StreamConverter {
  const decoder = new TextDecoder('utf-8');
  let ended = false;
  const run = (frames: F[]): string => {
    let out = '';
    for (const frame of frames) {
      if (writer.failed) break;
      out += handle(frame);
    }
    return out;
  };
  return {
    push(bytes: Buffer): string {
      if (ended) return '';
      return run(framing.push(decoder.decode(bytes, { stream: true })));
    },
    end(): string {
      if (ended) return '';
      ended = true;
      const out = run(framing.push(decoder.decode())) + run(framing.flush());
      if (!writer.started && !writer.failed) throw noStreamEvents();
      return out + writer.close();
    },
    outcome: () => writer.outcome(),
  };
}
