/**
 * Given / when / then over a decider (src/commands/decider.ts), the way every decider test reads:
 *
 *   const spec = DeciderSpec.for(channels);
 *   spec.given([created]).when({ type: 'DeleteChannel' }).then([deleted]);
 *   spec.given([]).when({ type: 'DeleteChannel' }).thenThrows(NotFoundError);
 *   spec.given([created]).when({ type: 'UpdateChannel', changes: {} }).thenNothingHappened();
 *
 * `given` folds the history with `evolve` from `initialState`; `when` decides one command on that
 * state. Pure: no store, no I/O. Decided events are also checked against the decider's own event
 * schema, since the store refuses to fold history that does not parse.
 */
import { expect } from 'vitest';
import type { Decider, DomainEvent } from '../../src/commands/decider.js';

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * What a thrown error is checked against: its class; its message (a string it contains, or a
 * pattern); a predicate; or fields it must have (a plain object, or an asymmetric matcher such as
 * `expect.objectContaining({ code })`).
 */
export type ErrorExpectation = ErrorClass | string | RegExp | ((error: unknown) => boolean) | Record<string, unknown>;

export interface Outcome<Event> {
  /** The command decides exactly these events, in this order. */
  then(expected: Event[]): void;
  /** The command decides no event (an idempotent repeat, a no-op change). */
  thenNothingHappened(): void;
  /** The command is refused with an error that meets every expectation given. */
  thenThrows(...expected: [ErrorExpectation, ...ErrorExpectation[]]): void;
}

export interface Given<Command, State, Event> {
  /** The history folded into state (for assertions on `evolve`). */
  readonly state: State;
  when(command: Command): Outcome<Event>;
}

const isErrorClass = (value: unknown): value is ErrorClass => typeof value === 'function' && (value === Error || (value as { prototype?: unknown }).prototype instanceof Error);

function expectError(error: unknown, expected: ErrorExpectation): void {
  if (isErrorClass(expected)) expect(error).toBeInstanceOf(expected);
  else if (typeof expected === 'function') expect(expected(error), `predicate ${expected.toString()} holds for ${String(error)}`).toBe(true);
  else if (typeof expected === 'string') expect(error).toHaveProperty('message', expect.stringContaining(expected));
  else if (expected instanceof RegExp) expect(error).toHaveProperty('message', expect.stringMatching(expected));
  else expect(error).toMatchObject(expected);
}

function outcome<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, state: S, command: C): Outcome<E> {
  const decided = (): E[] => {
    const events = decider.decide(command, state);
    for (const event of events) expect(decider.events.safeParse(event).error?.issues, `${event.type} fits the event schema`).toBeUndefined();
    return events;
  };
  return {
    then: (expected) => expect(decided()).toEqual(expected),
    thenNothingHappened: () => expect(decided()).toEqual([]),
    thenThrows: (...expected) => {
      let events: E[];
      try {
        events = decider.decide(command, state);
      } catch (error) {
        for (const expectation of expected) expectError(error, expectation);
        return;
      }
      expect.fail(`expected the command to be refused, but it decided ${JSON.stringify(events)}`);
    },
  };
}

export const DeciderSpec = {
  for<C, S, E extends DomainEvent>(decider: Decider<C, S, E>) {
    return {
      given(history: E[]): Given<C, S, E> {
        const state = history.reduce(decider.evolve, decider.initialState);
        return { state, when: (command) => outcome(decider, state, command) };
      },
    };
  },
};
