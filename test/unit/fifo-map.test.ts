import { describe, expect, it } from 'vitest';
import { FifoMap } from '../../src/fifo-map.js';

describe('FifoMap', () => {
  it('keeps at most capacity entries and forgets the oldest insertion first', () => {
    const map = new FifoMap<string, number>(3);
    for (const [i, key] of ['a', 'b', 'c', 'd', 'e'].entries()) map.set(key, i);
    expect(map.size).toBe(3);
    expect(['a', 'b', 'c', 'd', 'e'].map((key) => map.get(key))).toEqual([undefined, undefined, 2, 3, 4]);
  });

  it('replaces the value of a present key without moving it in the order', () => {
    const map = new FifoMap<string, string>(2);
    map.set('a', 'first').set('b', 'b');
    map.set('a', 'second');
    expect(map.get('a')).toBe('second');
    expect(map.size).toBe(2);
    map.set('c', 'c'); // 'a' is still the oldest insertion
    expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([undefined, 'b', 'c']);
  });

  it('matches a plain insertion-ordered Map trimmed from the front, over a long run', () => {
    const capacity = 50;
    const fifo = new FifoMap<number, number>(capacity);
    const reference = new Map<number, number>();
    let seed = 7;
    for (let i = 0; i < 5_000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const key = seed % 200; // repeats: some sets replace a present key
      fifo.set(key, i);
      if (reference.has(key)) reference.set(key, i);
      else {
        reference.set(key, i);
        if (reference.size > capacity) reference.delete(reference.keys().next().value!);
      }
    }
    expect(fifo.size).toBe(reference.size);
    for (let key = 0; key < 200; key++) expect(fifo.get(key)).toBe(reference.get(key));
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new FifoMap(0)).toThrow(RangeError);
    expect(() => new FifoMap(1.5)).toThrow(RangeError);
  });
});
