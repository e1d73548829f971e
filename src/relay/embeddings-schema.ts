/**
 * The OpenAI embeddings wire shapes (`POST /v1/embeddings`): what clients send and get back.
 * Every provider's embeddings codec (src/relay/providers/<kind>/embeddings.ts) converts from and
 * to them.
 */
import { z } from 'zod';

/** One text to embed: OpenAI refuses empty strings, and so do most upstreams. */
const Text = z.string().min(1, 'an input must not be an empty string');

/** At most 2048 inputs per request, as OpenAI. */
export const MAX_EMBEDDING_INPUTS = 2048;

export const EmbeddingsRequest = z.object({
  model: z.string().min(1),
  input: z
    .union([Text, z.array(Text).min(1).max(MAX_EMBEDDING_INPUTS)])
    .describe('a string or an array of strings (token arrays are refused: 400 unsupported_parameter)'),
  dimensions: z.number().int().min(1).max(65536).optional().describe('the length of each vector, for models that can shorten theirs'),
  encoding_format: z.enum(['float', 'base64']).optional().describe('float (default): arrays of numbers; base64: little-endian float32, base64-encoded'),
  user: z.string().optional(),
}).meta({ id: 'CreateEmbeddingsRequest' });
export type EmbeddingsRequest = z.infer<typeof EmbeddingsRequest>;

export const EmbeddingsUsage = z.object({
  prompt_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
});
export type EmbeddingsUsage = z.infer<typeof EmbeddingsUsage>;

export const Embedding = z.object({
  object: z.literal('embedding'),
  index: z.number().int().min(0),
  embedding: z.union([z.array(z.number()), z.string()]).describe('numbers, or a base64 string with encoding_format: base64'),
});
export type Embedding = z.infer<typeof Embedding>;

export const EmbeddingsResponse = z.object({
  object: z.literal('list'),
  data: z.array(Embedding),
  model: z.string(),
  usage: EmbeddingsUsage.describe('embeddings have no completion: total_tokens = prompt_tokens'),
}).meta({ id: 'EmbeddingsResponse' });
export type EmbeddingsResponse = z.infer<typeof EmbeddingsResponse>;

/** The inputs as a list, whichever form the request used. */
export function inputsOf(request: EmbeddingsRequest): string[] {
  return typeof request.input === 'string' ? [request.input] : request.input;
}
