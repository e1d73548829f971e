/**
 * `isPlainChatRequest` (the hand-written check of the common chat body) pinned to the zod schema
 * it stands in for (`ChatCompletionRequest`), with generated bodies:
 *  - whenever it says yes, zod accepts the body and returns it unchanged (so skipping zod changes
 *    nothing), for near-valid bodies and for random JSON;
 *  - on bodies made only of the forms it knows (plain fields, text messages), it says yes exactly
 *    when zod accepts the body and returns it unchanged: it refuses no such body zod takes.
 * Bodies go through JSON first: the check only ever sees parsed JSON.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainChatRequest } from '../../src/relay/ingress/chat-completions.js';
import { ChatCompletionRequest } from '../../src/relay/schema.js';

const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

/** What zod makes of a body: accepted and returned as it is, accepted but changed, or refused. */
function zodVerdict(body: unknown): 'unchanged' | 'changed' | 'refused' {
  const result = ChatCompletionRequest.safeParse(body);
  if (!result.success) return 'refused';
  try {
    expect(result.data).toStrictEqual(body);
    return 'unchanged';
  } catch {
    return 'changed';
  }
}

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

/** A value of some other type, for a field to be wrong with. */
const wrong = fc.oneof(fc.string({ maxLength: 3 }), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }));

/** Mostly `near` (values around the field's own bounds), now and then a value of another type. */
const field = <T>(near: fc.Arbitrary<T>) => fc.oneof({ arbitrary: near, weight: 30 }, { arbitrary: wrong, weight: 1 });

/** Numbers mostly within [min, max], sometimes at, just past or far past the bounds, fractions among them. */
const around = (min: number, max: number) =>
  fc.oneof(
    { arbitrary: fc.double({ min, max, noNaN: true }), weight: 6 },
    { arbitrary: fc.integer({ min: Math.max(min, -1e6), max: Math.min(max, 1e6) }), weight: 6 },
    { arbitrary: fc.double({ min: min - 0.5, max: min, noNaN: true }), weight: 1 },
    { arbitrary: fc.double({ min: max, max: max + 0.5, noNaN: true }), weight: 1 },
    { arbitrary: fc.constantFrom(min, max, min - 1, max + 1, min - 1e-9, max + 1e-9, 0.5, 1e300, -1e300), weight: 1 },
  );

/** The same for integer fields: mostly integers in range, sometimes fractions and integers past the bounds. */
const aroundInt = (min: number, max: number) =>
  fc.oneof(
    { arbitrary: fc.integer({ min: Math.max(min, -1e6), max: Math.min(max, 1e6) }), weight: 10 },
    { arbitrary: fc.constantFrom(min, max, min - 1, max + 1, min + 0.5, 1.5, 0, -1, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_SAFE_INTEGER - 2, 1e300), weight: 2 },
    { arbitrary: fc.double({ min: Math.max(min, -1e6), max: Math.min(max, 1e6), noNaN: true }), weight: 1 },
  );

/** A message in the forms the check knows, sometimes wrong. */
const plainMessage = fc.record(
  {
    role: fc.oneof({ arbitrary: fc.constantFrom(...ROLES), weight: 12 }, { arbitrary: fc.constantFrom('robot', '', 'User'), weight: 1 }),
    // Not an array: an array is content parts, a form only zod decides (even an empty one).
    content: fc.oneof({ arbitrary: fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null)), weight: 30 }, { arbitrary: fc.oneof(fc.integer(), fc.boolean(), fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 })), weight: 1 }),
    name: field(fc.string({ maxLength: 4 })),
    tool_call_id: field(fc.string({ maxLength: 4 })),
  },
  { requiredKeys: ['role'] },
);

/** Every field the check decides itself: each absent or not, null or not, in range or not, sometimes of another type. */
const plainFields = {
  model: field(fc.oneof({ arbitrary: fc.string({ minLength: 1, maxLength: 6 }), weight: 12 }, { arbitrary: fc.constant(''), weight: 1 })),
  messages: field(fc.oneof({ arbitrary: fc.array(plainMessage, { minLength: 1, maxLength: 3 }), weight: 12 }, { arbitrary: fc.constant([]), weight: 1 })),
  temperature: field(around(0, 2)),
  top_p: field(around(0, 1)),
  max_tokens: field(aroundInt(1, Number.MAX_SAFE_INTEGER)),
  max_completion_tokens: field(aroundInt(1, Number.MAX_SAFE_INTEGER)),
  stop: field(fc.oneof(fc.string({ maxLength: 3 }), fc.array(fc.oneof({ arbitrary: fc.string({ maxLength: 3 }), weight: 12 }, { arbitrary: fc.integer(), weight: 1 }), { maxLength: 5 }))),
  stream: field(fc.boolean()),
  stream_options: field(fc.record({ include_usage: field(fc.boolean()) }, { requiredKeys: [] })),
  n: field(aroundInt(1, 128)),
  presence_penalty: field(around(-2, 2)),
  frequency_penalty: field(around(-2, 2)),
  seed: field(aroundInt(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)),
  user: field(fc.string({ maxLength: 4 })),
  parallel_tool_calls: field(fc.boolean()),
};

/** A body of plain fields only (model and messages usually there), plus unknown top-level keys. */
const plainBody = fc
  .tuple(fc.record(plainFields, { requiredKeys: [] }), fc.boolean(), fc.dictionary(fc.constantFrom('x_extra', 'metadata', 'logprobs'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }))
  .map(([fields, complete, extra]) => asJson({ ...extra, ...(complete ? { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } : {}), ...fields }));

const VALID = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

/** A valid body with one plain field generated: each field's bounds, one at a time. */
const oneFieldBody = fc.oneof(...Object.entries(plainFields).map(([name, value]) => (value as fc.Arbitrary<unknown>).map((v) => asJson({ ...VALID, [name]: v }))));

/** The forms only zod decides: content parts, tool calls, unknown message keys, tools, the extensions. */
const zodOnlyFields = {
  messages: fc.array(
    fc.record(
      {
        role: fc.constantFrom(...ROLES),
        content: fc.oneof(fc.constant('text'), fc.constant([{ type: 'text', text: 'x' }]), fc.constant([{ type: 'image_url', image_url: { url: 'https://e/x.png' } }]), fc.constant([{ type: 'text' }]), fc.constant([])),
        tool_calls: fc.constantFrom([{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }], [{ id: '', type: 'function', function: { name: 'f', arguments: '{}' } }], [{ type: 'other' }], []),
        extra: fc.string({ maxLength: 3 }),
      },
      { requiredKeys: ['role'] },
    ),
    { minLength: 1, maxLength: 2 },
  ),
  tools: fc.constantFrom([], [{ type: 'function', function: { name: 'f' } }], [{ type: 'other' }]),
  tool_choice: fc.constantFrom('auto', 'none', 'sometimes', { type: 'function', function: { name: 'f' } }),
  response_format: fc.constantFrom({ type: 'text' }, { type: 'json_object' }, { type: 'xml' }),
  provider_config: fc.constantFrom({}, { primary: 'a' }, { primary: '' }),
  model_mapping: fc.constantFrom({}, { a: { actual_model: 'b' } }, { a: {} }),
  preset_id: fc.oneof(fc.string({ maxLength: 3 }), wrong),
  stream_options: fc.constantFrom({ include_usage: true, other: 1 }, { other: 1 }),
};

/** A valid (or plain-field) body with one form only zod decides. */
const zodOnlyBody = fc.oneof(
  ...Object.entries(zodOnlyFields).map(([name, value]) =>
    fc.tuple(fc.oneof(fc.constant(VALID), plainBody), value as fc.Arbitrary<unknown>).map(([body, v]) => asJson({ ...(body as object), [name]: v })),
  ),
);

/** Any JSON at all, and objects with the two required keys of any JSON. */
const randomBody = fc.oneof(
  fc.jsonValue().map(asJson),
  fc.record({ model: fc.jsonValue({ maxDepth: 1 }), messages: fc.jsonValue({ maxDepth: 3 }) }).map(asJson),
  fc.record({ model: fc.jsonValue({ maxDepth: 1 }), messages: fc.array(fc.dictionary(fc.constantFrom('role', 'content', 'name', 'tool_call_id', 'tool_calls'), fc.jsonValue({ maxDepth: 2 })), { maxLength: 3 }) }).map(asJson),
);

const RUNS = { numRuns: 2_000 };

describe('isPlainChatRequest against ChatCompletionRequest (zod)', () => {
  it.each([
    ['plain-field bodies', plainBody],
    ['one plain field varied', oneFieldBody],
    ['near-valid bodies with forms only zod decides', zodOnlyBody],
    ['random JSON', randomBody],
  ] as const)('says yes only to bodies zod accepts and returns unchanged: %s', (_name, bodies) => {
    fc.assert(
      fc.property(bodies, (body) => {
        if (isPlainChatRequest(body)) expect(zodVerdict(body)).toBe('unchanged');
      }),
      RUNS,
    );
  });

  it.each([
    ['plain-field bodies', plainBody],
    ['one plain field varied', oneFieldBody],
  ] as const)('says yes to every body zod accepts and returns unchanged, among %s', (_name, bodies) => {
    fc.assert(
      fc.property(bodies, (body) => {
        expect(isPlainChatRequest(body)).toBe(zodVerdict(body) === 'unchanged');
      }),
      RUNS,
    );
  });

  it.each([
    ['plain-field bodies', plainBody],
    ['one plain field varied', oneFieldBody],
  ] as const)('generates both answers among %s (the properties are not vacuous)', (_name, bodies) => {
    const sample = fc.sample(bodies, { numRuns: 2_000, seed: 1 });
    const yes = sample.filter((body) => isPlainChatRequest(body)).length;
    expect(yes).toBeGreaterThan(200);
    expect(sample.length - yes).toBeGreaterThan(200);
  });
});
