/**
 * Who may write to a repository, as GitHub's collaborator-permission API answers it. Asked every
 * time a decision needs write access (author_association's MEMBER and COLLABORATOR include
 * read-only people); an answer is kept briefly per installation, repository and user, so a burst of
 * commands costs one request, and a revoked permission counts within a minute.
 */
import { permissionGrantsWrite } from './decide.js';

export const PERMISSION_TTL_MS = 60_000;

export interface PermissionKey {
  installationId?: number;
  owner: string;
  repo: string;
  login: string;
}

export class WriteAccess {
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #answers = new Map<string, { writes: boolean; until: number }>();

  constructor(opts: { ttlMs?: number; now?: () => number } = {}) {
    this.#ttlMs = opts.ttlMs ?? PERMISSION_TTL_MS;
    this.#now = opts.now ?? Date.now;
  }

  /** True when `ask` (the permission API) says admin, maintain or write; failures are not kept. */
  async writes(k: PermissionKey, ask: () => Promise<string>): Promise<boolean> {
    const key = [k.installationId ?? '', k.owner, k.repo, k.login].map((s) => String(s).toLowerCase()).join('\0');
    const now = this.#now();
    const hit = this.#answers.get(key);
    if (hit && hit.until > now) return hit.writes;
    const writes = permissionGrantsWrite(await ask());
    // Bounded: expired answers go first when the map grows.
    if (this.#answers.size >= 10_000) for (const [k2, v] of this.#answers) if (v.until <= now) this.#answers.delete(k2);
    if (this.#answers.size >= 10_000) this.#answers.clear();
    this.#answers.set(key, { writes, until: now + this.#ttlMs });
    return writes;
  }
}
