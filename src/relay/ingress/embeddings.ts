/**
 * The embeddings ingress (`POST /v1/embeddings`): OpenAI's embeddings request, validated, relayed
 * by `Relay.embed` to channels whose provider has an embeddings codec. The gate does the rest
 * (caller, key rules, billing, usage event), as for chat.
 */
import { validationError } from '../../api/errors.js';
import { BadRequestError } from '../../errors.js';
import { EmbeddingsRequest } from '../embeddings-schema.js';
import { asSent, type Ingress, type Parsed } from '../gate.js';

const isTokens = (value: unknown) => Array.isArray(value) && value.length > 0 && value.every((t) => typeof t === 'number');

/**
 * Token arrays (`[1, 2]`, `[[1, 2], [3]]`) would need the upstream's own tokenizer to mean what
 * the client meant, and only OpenAI's servers take them: refused by name.
 */
function tokenArrays(input: unknown): boolean {
  return Array.isArray(input) && (isTokens(input) || input.some(isTokens));
}

export function parseEmbeddingsRequest(body: unknown): Parsed<EmbeddingsRequest> {
  if (body !== null && typeof body === 'object' && tokenArrays((body as { input?: unknown }).input)) {
    return { error: new BadRequestError('token arrays are not supported as input: send the text', 'unsupported_parameter', 'input') };
  }
  const result = EmbeddingsRequest.safeParse(body);
  if (result.success) return { value: result.data };
  const validation = result.error.issues.map((issue) => ({ instancePath: `/${issue.path.join('/')}`, message: issue.message }));
  return { error: validationError({ validation, validationContext: 'body' }) };
}

export const embeddingsIngress: Ingress<EmbeddingsRequest> = {
  prepare: asSent,
  parse: parseEmbeddingsRequest,
  relay: (relay, exchange) => relay.embed(exchange),
};
