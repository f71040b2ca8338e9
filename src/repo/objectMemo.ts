/**
 * Answers git gives about objects named by their full ids (a tree's listing, two trees' diff, a
 * blob's size, a commit's tree and date) never change: kept per process, so the validations of one
 * base (each push to a pull request, the pull requests that compete for one issue) ask git once.
 * Each git process costs the event loop milliseconds (its fork and exec run on it); a validation
 * asked ~30. Bounded by rows kept (a 100,000-file listing weighs 100,000), the least recently used
 * going first. Only answers that succeeded are kept; a query in flight is shared. Pure.
 */

/** A full object id (SHA-1 or SHA-256), alone or as `<id>^{tree}`: the name of one immutable object. */
const FULL_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?(?:\^\{tree\})?$/;

export function namesOneObject(name: string): boolean {
  return FULL_ID.test(name);
}

interface Kept {
  value: Promise<unknown>;
  weight: number;
}

export class ObjectMemo {
  private readonly kept = new Map<string, Kept>();
  private weight = 0;
  private readonly maxWeight: number;
  constructor(maxWeight: number) {
    this.maxWeight = maxWeight;
  }

  /** `compute()` once per key while kept; `weigh` says what its answer costs to keep. */
  get<T>(key: string, compute: () => Promise<T>, weigh: (v: T) => number = () => 1): Promise<T> {
    const hit = this.kept.get(key);
    if (hit) {
      // Most recently used last.
      this.kept.delete(key);
      this.kept.set(key, hit);
      return hit.value as Promise<T>;
    }
    const value = compute();
    const entry: Kept = { value, weight: 1 };
    this.kept.set(key, entry);
    this.weight += 1;
    value.then(
      (v) => {
        if (this.kept.get(key) !== entry) return;
        const w = Math.max(1, weigh(v));
        this.weight += w - entry.weight;
        entry.weight = w;
        this.evict();
      },
      () => this.drop(key, entry),
    );
    this.evict();
    return value;
  }

  /**
   * Answers for `names` in their order, one `ask` for those not kept (an answer it leaves undefined
   * is absent and not kept); a kept one that is still in flight and fails, fails this too.
   */
  async many<T>(names: readonly string[], keyOf: (name: string) => string, ask: (names: string[]) => Promise<Map<string, T | undefined>>, weigh: (v: T) => number = () => 1): Promise<Map<string, T>> {
    // Taken at once, so that what the answers make room for cannot be among them.
    const hits = new Map<string, Promise<T>>();
    for (const n of names) if (this.kept.has(keyOf(n))) hits.set(n, this.get(keyOf(n), () => Promise.reject(new Error('unreachable')), weigh));
    const rest = names.filter((n) => !hits.has(n));
    const asked = rest.length ? await ask(rest) : new Map<string, T | undefined>();
    const out = new Map<string, T>();
    for (const n of names) {
      const v = hits.has(n) ? await hits.get(n)! : asked.get(n);
      if (v === undefined) continue;
      if (!hits.has(n)) void this.get(keyOf(n), async () => v, weigh);
      out.set(n, v);
    }
    return out;
  }

  has(key: string): boolean {
    return this.kept.has(key);
  }

  get size(): number {
    return this.kept.size;
  }

  private drop(key: string, entry: Kept): void {
    if (this.kept.get(key) !== entry) return;
    this.kept.delete(key);
    this.weight -= entry.weight;
  }

  private evict(): void {
    for (const [key, entry] of this.kept) {
      if (this.weight <= this.maxWeight || this.kept.size <= 1) return;
      this.drop(key, entry);
    }
  }
}
