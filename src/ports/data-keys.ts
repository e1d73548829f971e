/**
 * The data-key port: per-scope encryption keys kept OUTSIDE the event log (crypto-shredding).
 * Texts that must be deletable (conversation messages, titles, system prompts) are sealed with
 * their scope's key before they enter the log; destroying the key is what deletes them, since the
 * log itself is immutable. Scopes are strings such as `user:<userId>:conversation:<id>` (src/conversations/texts.ts).
 *
 * The SQL adapter (src/adapters/data-keys/sql.ts) keeps the keys in the read-model database, in a
 * table no projection owns (a rebuild never drops it), sealed with SECRET. Every adapter passes
 * test/contract/data-keys.contract.ts.
 */

export interface DataKeys {
  /**
   * The scope's 256-bit key, made (random) and kept on first call; later calls answer the same key,
   * also when instances call together. A destroyed scope never gets a key again:
   * DataKeyDestroyedError.
   */
  create(scope: string): Promise<Buffer>;
  /** The scope's key, or null when it was never created or has been destroyed. */
  get(scope: string): Promise<Buffer | null>;
  /** Removes the key's bytes for good; `get` answers null from then on. Idempotent. */
  destroy(scope: string): Promise<void>;
  /** Destroys every key whose scope starts with `prefix` (non-empty); answers how many. */
  destroyPrefix(prefix: string): Promise<number>;
}

/** `create` on a scope whose key was destroyed: what it sealed is gone and must stay gone. */
export class DataKeyDestroyedError extends Error {
  constructor(readonly scope: string) {
    super(`the data key of ${scope} was destroyed`);
    this.name = 'DataKeyDestroyedError';
  }
}
