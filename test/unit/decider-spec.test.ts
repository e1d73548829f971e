/** The shared decider spec (test/support/decider-spec.ts) passes what holds and fails what does not. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Decider } from '../../src/commands/decider.js';
import { ConflictError, DomainError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const CounterEvent = z.object({ type: z.literal('Incremented'), data: z.object({ by: z.number().int().positive() }) });
type CounterEvent = z.infer<typeof CounterEvent>;
type CounterCommand = { type: 'Increment'; by: number } | { type: 'Freeze' };

/** A toy counter: increments up to 3, refuses beyond; 'Freeze' is a no-op. A negative step slips past the schema on purpose. */
const counter: Decider<CounterCommand, number, CounterEvent> = {
  category: 'counter',
  initialState: 0,
  events: CounterEvent,
  decide(command, state) {
    if (command.type === 'Freeze') return [];
    if (state + command.by > 3) throw new DomainError(`would pass 3 (at ${state})`, 'counter_full');
    return [{ type: 'Incremented', data: { by: command.by } }];
  },
  evolve: (state, event) => state + event.data.by,
};
const spec = DeciderSpec.for(counter);
const one: CounterEvent = { type: 'Incremented', data: { by: 1 } };

describe('DeciderSpec', () => {
  it('folds the history into state', () => {
    expect(spec.given([one, one]).state).toBe(2);
    expect(spec.given([]).state).toBe(0);
  });

  it('passes the events decided, no events, and refusals that meet every expectation', () => {
    spec.given([one]).when({ type: 'Increment', by: 2 }).then([{ type: 'Incremented', data: { by: 2 } }]);
    spec.given([one]).when({ type: 'Freeze' }).thenNothingHappened();
    const full = spec.given([one, one, one]).when({ type: 'Increment', by: 1 });
    full.thenThrows(DomainError);
    full.thenThrows('would pass 3');
    full.thenThrows(/at 3\)$/);
    full.thenThrows({ code: 'counter_full' });
    full.thenThrows(expect.objectContaining({ status: 422, code: 'counter_full' }));
    full.thenThrows((error) => error instanceof DomainError && error.message.includes('3'));
    full.thenThrows(DomainError, { code: 'counter_full' }, /pass 3/);
  });

  it('fails other events, events where none were expected, and a decision where a refusal was expected', () => {
    expect(() => spec.given([]).when({ type: 'Increment', by: 1 }).then([{ type: 'Incremented', data: { by: 2 } }])).toThrow();
    expect(() => spec.given([]).when({ type: 'Increment', by: 1 }).then([])).toThrow();
    expect(() => spec.given([]).when({ type: 'Increment', by: 1 }).thenNothingHappened()).toThrow();
    expect(() => spec.given([]).when({ type: 'Increment', by: 1 }).thenThrows(DomainError)).toThrow(/expected the command to be refused/);
    expect(() => spec.given([one, one, one]).when({ type: 'Increment', by: 1 }).then([])).toThrow(DomainError);
  });

  it('fails a refusal that misses any one expectation', () => {
    const full = spec.given([one, one, one]).when({ type: 'Increment', by: 1 });
    expect(() => full.thenThrows(ConflictError)).toThrow();
    expect(() => full.thenThrows('would pass 4')).toThrow();
    expect(() => full.thenThrows(/^nope/)).toThrow();
    expect(() => full.thenThrows({ code: 'other' })).toThrow();
    expect(() => full.thenThrows(expect.objectContaining({ status: 409 }))).toThrow();
    expect(() => full.thenThrows(() => false)).toThrow();
    expect(() => full.thenThrows(DomainError, { code: 'other' })).toThrow();
  });

  it('fails decided events that do not fit the decider’s event schema', () => {
    expect(() => spec.given([]).when({ type: 'Increment', by: -1 }).then([{ type: 'Incremented', data: { by: -1 } }])).toThrow(/fits the event schema/);
  });
});
