/** parseNewEvent: NewEvent.parse's result and errors, with a shortcut that does not copy plain data. */
import { describe, expect, it } from 'vitest';
import { NewEvent, parseNewEvent } from '../../src/ports/event-store.js';

const withProto = JSON.parse('{"__proto__": {"x": 1}, "a": 1}') as Record<string, unknown>;
const withHidden = Object.defineProperty({ a: 1 }, 'hidden', { value: 2, enumerable: false });
class Custom {
  a = 1;
}

const cases: Array<[string, unknown]> = [
  ['usage-like', { type: 'UsageRecorded', id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', data: { request_id: 'r', n: 1, nested: { a: [1, 2] }, gone: undefined } }],
  ['no id', { type: 'T', data: {} }],
  ['v4 id', { type: 'T', id: '3b241101-e2bb-4255-8caf-4136c566a962', data: { a: 1 } }],
  ['schema version', { type: 'T', schema_version: 2, data: { a: 1 } }],
  ['extra envelope keys', { type: 'T', data: { a: 1 }, other: true }],
  ['numeric-looking keys', { type: 'T', data: { '2': 'b', '1': 'a', z: 0 } }],
  ['non-enumerable key', { type: 'T', data: withHidden }],
  ['__proto__ key', { type: 'T', data: withProto }],
  ['class instance data', { type: 'T', data: new Custom() }],
  ['null-prototype data', { type: 'T', data: Object.assign(Object.create(null) as object, { a: 1 }) }],
  ['symbol key', { type: 'T', data: { a: 1, [Symbol('s')]: 2 } }],
  ['empty type', { type: '', data: {} }],
  ['long type', { type: 'x'.repeat(101), data: {} }],
  ['bad id', { type: 'T', id: 'not-a-uuid', data: {} }],
  ['array data', { type: 'T', data: [1] }],
  ['null data', { type: 'T', data: null }],
  ['bad schema version', { type: 'T', schema_version: 0, data: {} }],
];

const outcome = (parse: () => { data: unknown }) => {
  try {
    const value = parse();
    return { value, json: JSON.stringify(value.data) };
  } catch (error) {
    return { error: String(error) };
  }
};

describe('parseNewEvent', () => {
  it.each(cases)('gives what NewEvent.parse gives: %s', (_name, input) => {
    expect(outcome(() => parseNewEvent(input as NewEvent))).toEqual(outcome(() => NewEvent.parse(input)));
  });

  it('takes plain data as it is (no copy)', () => {
    const data = { a: 1 };
    expect(parseNewEvent({ type: 'T', data }).data).toBe(data);
  });
});
