/**
 * What every embeddings codec shares: reading vectors out of an upstream body (a 502 when they
 * are not there, or not one per input) and writing OpenAI's answer, base64 included.
 */
import { inputsOf, type EmbeddingsRequest, type EmbeddingsResponse } from '../embeddings-schema.js';
import { badUpstream } from './shared.js';

/** A vector as OpenAI's `encoding_format: "base64"` sends it: little-endian float32, base64. */
export function float32Base64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}

/** The inverse of float32Base64 (tests, and upstreams that answer base64 to a float request). */
export function base64Float32(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const vector: number[] = [];
  for (let i = 0; i + 4 <= bytes.length; i += 4) vector.push(bytes.readFloatLE(i));
  return vector;
}

/** An array of finite numbers. */
export const isVector = (value: unknown): value is number[] => Array.isArray(value) && value.every((n) => typeof n === 'number' && Number.isFinite(n));

/** `value` as a list of vectors, one per input of the request; a 502 naming `who` otherwise. */
export function vectorsOf(value: unknown, request: EmbeddingsRequest, who: string): number[][] {
  if (!Array.isArray(value) || !value.every(isVector)) throw badUpstream(`${who} returned embeddings the relay cannot read`);
  const expected = inputsOf(request).length;
  if (value.length !== expected) throw badUpstream(`${who} returned ${value.length} embeddings for ${expected} inputs`);
  return value;
}

/** A token count the upstream reported (a non-negative integer), else null. */
export function tokenCountOf(value: unknown): number | null {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : null;
}

/**
 * OpenAI's answer for `vectors` (numbers, or base64 strings an upstream already encoded), in the
 * encoding the request asked for. `promptTokens` null: the upstream gave no count (zeros, the
 * relay counts).
 */
export function embeddingsOf(vectors: ReadonlyArray<number[] | string>, request: EmbeddingsRequest, model: string, promptTokens: number | null): EmbeddingsResponse {
  const base64 = request.encoding_format === 'base64';
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: typeof vector === 'string' ? (base64 ? vector : base64Float32(vector)) : base64 ? float32Base64(vector) : vector,
    })),
    model,
    usage: { prompt_tokens: promptTokens ?? 0, total_tokens: promptTokens ?? 0 },
  };
}
