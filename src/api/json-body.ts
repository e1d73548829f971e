/**
 * Request bodies as JSON, the same way on both HTTP paths (fastify's content-type parser and the
 * relay's own HTTP/1.1 server): nesting bounded before parsing, prototype poisoning refused.
 *
 * Why bound nesting: JSON.parse copes with deep input, but everything after it that walks the
 * value recursively does not (JSON.stringify building the upstream request overflowed the stack
 * on ~5,000 levels, a 10 KB body). Refusing at the edge, with a 400 the caller can act on, keeps
 * every later step safe.
 */
import secureJson from 'secure-json-parse';
import { BadRequestError } from '../errors.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * The deepest nesting of objects and arrays in `text`, counting brackets outside strings; stops
 * counting (and answers) as soon as it passes `limit`. One pass, no recursion; strings are
 * skipped with native searches for the closing quote, so a body that is mostly message text
 * costs little. Not a validator: malformed JSON is JSON.parse's to refuse.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  // Each level needs at least one character: a short body cannot be too deep.
  if (text.length <= limit) return false;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Jump to the closing quote: the first one not escaped by an odd run of backslashes.
      let close = text.indexOf('"', i + 1);
      while (close !== -1) {
        let backslashes = 0;
        for (let k = close - 1; text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
        if ((backslashes & 1) === 0) break;
        close = text.indexOf('"', close + 1);
      }
      if (close === -1) return false; // an unterminated string: JSON.parse refuses it
      i = close;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The 400 for a body nested deeper than MAX_JSON_DEPTH. */
export function jsonTooDeepError(limit: number): BadRequestError {
  return new BadRequestError(`request body is nested too deeply (more than ${limit} levels of objects and arrays)`, 'json_too_deep');
}

/** The 400 for a body that is not JSON; the parser's own message says where. */
export function invalidJsonError(error: unknown): BadRequestError {
  const detail = error instanceof SyntaxError ? `: ${error.message}` : '';
  return new BadRequestError(`request body is not valid JSON${detail}`, 'invalid_json');
}

/**
 * Parses a request body: throws `json_too_deep` past `maxDepth` levels, `invalid_json` for
 * anything JSON.parse refuses, and refuses `__proto__` / `constructor.prototype` keys (as
 * fastify's default parser does).
 */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (jsonDepthExceeds(text, maxDepth)) throw jsonTooDeepError(maxDepth);
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw invalidJsonError(error);
  }
}
