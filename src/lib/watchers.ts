/**
 * Callbacks by key (a run id): who to wake when that run's log grows in this process. A key's set is
 * dropped with its last watcher, so finished runs leave nothing behind.
 */
export class Watchers {
  #byKey = new Map<string, Set<() => void>>();

  /** Calls fn on every notify(key). Returns the unsubscribe. */
  watch(key: string, fn: () => void): () => void {
    let set = this.#byKey.get(key);
    if (!set) this.#byKey.set(key, set = new Set());
    set.add(fn);
    return () => {
      set!.delete(fn);
      if (set!.size === 0) this.#byKey.delete(key);
    };
  }

  /** Calls every watcher of key. */
  notify(key: string): void {
    for (const fn of this.#byKey.get(key) ?? []) fn();
  }
}
