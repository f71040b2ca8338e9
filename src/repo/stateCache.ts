/**
 * States built once per scope: a validation asks for the same commit-plus-patches tree up to four
 * times (the size check, head's changes twice, the test patch's rebase) and each build is a
 * temporary object directory and four git processes. Inside `withStateCache`, `openState` hands
 * out the first build again; its directory goes when the scope has ended and its last holder has
 * disposed of it (a kept run may hold it past the scope's end).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

interface Built {
  dispose(): Promise<void>;
}

interface Entry<T extends Built> {
  built: Promise<T>;
  holders: number;
}

interface Scope {
  entries: Map<string, Entry<Built>>;
  ended: boolean;
}

const scopes = new AsyncLocalStorage<Scope>();

async function release(scope: Scope, key: string, entry: Entry<Built>): Promise<void> {
  entry.holders -= 1;
  if (!scope.ended || entry.holders > 0 || scope.entries.get(key) !== entry) return;
  scope.entries.delete(key);
  await (await entry.built).dispose();
}

/** Runs `fn` with states shared by key; each is disposed of once the scope has ended and nobody holds it. */
export async function withStateCache<T>(fn: () => Promise<T>): Promise<T> {
  const scope: Scope = { entries: new Map(), ended: false };
  try {
    return await scopes.run(scope, fn);
  } finally {
    scope.ended = true;
    const idle = [...scope.entries].filter(([, e]) => e.holders === 0);
    for (const [key] of idle) scope.entries.delete(key);
    await Promise.all(idle.map(async ([, e]) => (await e.built.catch(() => undefined))?.dispose()));
  }
}

/**
 * `build()` once per key in the current scope (every call, outside one). Each caller gets the
 * built value with its own `dispose`, which only lets go of it. A failed build is not kept.
 */
export async function sharedState<T extends Built>(key: string, build: () => Promise<T>): Promise<T> {
  const scope = scopes.getStore();
  if (!scope || scope.ended) return build();
  let entry = scope.entries.get(key) as Entry<T> | undefined;
  if (!entry) {
    entry = { built: build(), holders: 0 };
    scope.entries.set(key, entry as Entry<Built>);
    entry.built.catch(() => {
      if (scope.entries.get(key) === (entry as Entry<Built>)) scope.entries.delete(key);
    });
  }
  entry.holders += 1;
  let value: T;
  try {
    value = await entry.built;
  } catch (e) {
    entry.holders -= 1;
    throw e;
  }
  const held = entry as Entry<Built>;
  let released = false;
  return {
    ...value,
    dispose: async () => {
      if (released) return;
      released = true;
      await release(scope, key, held);
    },
  };
}
