/** How many commits a catch-up read asks for: about a target number of events, judging by the last read. */
import { describe, expect, it } from 'vitest';
import { nextReadLimit } from '../../src/projections/runtime/runner.js';

describe('nextReadLimit', () => {
  it('asks for as many commits as hold about the target, judging by the last read', () => {
    expect(nextReadLimit(500, 100_000, 20_000)).toBe(100); // usage batches of 200 events
    expect(nextReadLimit(100, 50_000, 20_000)).toBe(40);
    expect(nextReadLimit(10, 5_000_000, 20_000)).toBe(1); // never less than one commit
  });

  it('reads the most commits when they are small, or when the last read was empty', () => {
    expect(nextReadLimit(500, 500, 20_000)).toBe(500);
    expect(nextReadLimit(500, 9_000, 20_000)).toBe(500);
    expect(nextReadLimit(0, 0, 20_000)).toBe(500);
  });
});
