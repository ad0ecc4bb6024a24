/**
 * The static files' caches in one edge process. Both hold what never changes under its key (a finalized
 * deployment's manifest, the bytes a sha256 names), so nothing is ever invalidated, only evicted.
 */

/** Least recently used values bounded by their total size in bytes; a value over a quarter of it is not kept. */
export class ByteLru {
  private readonly values = new Map<string, Buffer>();
  private used = 0;

  constructor(readonly maxBytes: number) {}

  get size(): number {
    return this.used;
  }

  get(key: string): Buffer | undefined {
    const v = this.values.get(key);
    if (v !== undefined) {
      this.values.delete(key);
      this.values.set(key, v);
    }
    return v;
  }

  set(key: string, value: Buffer): void {
    if (value.length > this.maxBytes / 4) return;
    const old = this.values.get(key);
    if (old !== undefined) {
      this.values.delete(key);
      this.used -= old.length;
    }
    this.values.set(key, value);
    this.used += value.length;
    for (const [k, v] of this.values) {
      if (this.used <= this.maxBytes) break;
      this.values.delete(k);
      this.used -= v.length;
    }
  }
}

/** Least recently used values bounded by their count; concurrent loads of one key share one promise. */
export class LoadingLru<V> {
  private readonly values = new Map<string, V>();
  private readonly loading = new Map<string, Promise<V>>();

  constructor(private readonly maxEntries: number) {}

  async get(key: string, load: () => Promise<V>, keep: (v: V) => boolean = () => true): Promise<V> {
    const v = this.values.get(key);
    if (v !== undefined) {
      this.values.delete(key);
      this.values.set(key, v);
      return v;
    }
    const pending = this.loading.get(key);
    if (pending) return pending;
    const p = load().then(
      (loaded) => {
        this.loading.delete(key);
        if (keep(loaded)) {
          this.values.set(key, loaded);
          if (this.values.size > this.maxEntries) this.values.delete(this.values.keys().next().value!);
        }
        return loaded;
      },
      (err: unknown) => {
        this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, p);
    return p;
  }
}
