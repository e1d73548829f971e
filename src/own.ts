/**
 * Lookups by caller-controlled strings. A plain object (a zod-parsed record, JSON.parse output,
 * an object literal) inherits `constructor`, `toString`, `__proto__`... from Object.prototype, so
 * `record[name]` with `name` from a request answers for names nobody configured. These helpers
 * only see the object's OWN properties (the lint rule `switchyard/no-string-index-lookup` points here).
 */

/** A record made without a prototype (Object.create(null)): the lint rule lets it be indexed by any string. */
export type NullPrototypeRecord<T> = { [key: string]: T };

/** The value `record` holds under `key` itself, never one inherited from its prototype. */
export function ownValue<T>(record: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  // eslint-disable-next-line switchyard/no-string-index-lookup -- own property, checked
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** A copy of `record` without a prototype: safe to index and to assign by any key (even `__proto__`). */
export function nullPrototype<T>(record: Readonly<Record<string, T>>): NullPrototypeRecord<T> {
  const out = Object.create(null) as NullPrototypeRecord<T>;
  for (const [key, value] of Object.entries(record)) out[key] = value;
  return out;
}
