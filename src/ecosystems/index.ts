/**
 * The registry of ecosystems: the one place that lists them. Everything that depends on a
 * language asks here (which runner a command names, which ecosystem a repository is, whose
 * conventions a test file follows). Pure.
 */
import { fileLevel } from './fileLevel.js';
import type { RunnerSpec } from '../results/types.js';
import { pathInfo } from './command.js';
import { go } from './go/index.js';
import { node } from './node/index.js';
import { php } from './php/index.js';
import { python } from './python/index.js';
import { ruby } from './ruby/index.js';
import { rust } from './rust/index.js';
import { java } from './java/index.js';
import { c } from './c/index.js';
import type { Ecosystem, MachineryTexts, PathInfo, RepoFacts, RunnerDef } from './types.js';

export type * from './types.js';
export { pathInfo, quoteTestFile, fillTemplate, INSTALL_NOTES, installNote } from './command.js';

/** In the order runners are recognised in a command (most specific patterns first). */
export const ECOSYSTEMS: readonly Ecosystem[] = [python, node, ruby, php, go, rust, java, c];

/** Every ecosystem's text for a test broken by itself (see Ecosystem.ownErrorText), as one pattern. */
export function ownErrorText(): RegExp {
  return new RegExp(ECOSYSTEMS.flatMap((e) => (e.ownErrorText ? [`(?:${e.ownErrorText.source})`] : [])).join('|'));
}

export function ecosystemById(id: string): Ecosystem | undefined {
  return ECOSYSTEMS.find((e) => e.id === id);
}

/** The runner definition of a kind, and the ecosystem it belongs to (none for the file-level runner, which knows no language). */
export function runnerDef(kind: string): { def: RunnerDef; ecosystem?: Ecosystem } {
  for (const ecosystem of ECOSYSTEMS) {
    const def = ecosystem.runners.find((r) => r.kind === kind);
    if (def) return { def, ecosystem };
  }
  if (kind === fileLevel.kind) return { def: fileLevel };
  throw new Error(`unknown runner kind ${JSON.stringify(kind)}`);
}

/** The runner's ecosystem; for a file-level run, the one the repository was detected as, if any. */
export function ecosystemOfRunner(spec: Pick<RunnerSpec, 'kind' | 'ecosystem'>): Ecosystem | undefined {
  return runnerDef(spec.kind).ecosystem ?? (spec.ecosystem ? ecosystemById(spec.ecosystem) : undefined);
}

/** The runner kind a command names, or undefined. */
export function recogniseRunner(template: string): string | undefined {
  for (const e of ECOSYSTEMS) for (const r of e.runners) if (r.recognise.test(template) && (r.accepts?.(template) ?? true)) return r.kind;
  return undefined;
}

/** "pytest, jest, …, tape": every runner, for messages. */
export function supportedRunners(): string {
  const names = ECOSYSTEMS.flatMap((e) => e.runnerNames);
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` : names.join('');
}

/** Every root manifest some ecosystem reads. */
export function manifestPaths(): string[] {
  return [...new Set(ECOSYSTEMS.flatMap((e) => e.manifests))];
}

/** Every file whose text some ecosystem's detection or defaults read, of these files: root manifests and each module's `readsFiles`. */
export function factPaths(files: readonly string[]): string[] {
  const present = new Set(files);
  return [...new Set([...manifestPaths(), ...ECOSYSTEMS.flatMap((e) => e.readsFiles?.(files) ?? [])])].filter((p) => present.has(p));
}

/**
 * A dependency manifest or lockfile of some ecosystem (`package.json`, `sub/requirements-dev.txt`):
 * what makes a side need its own install, a fork's head wait for a maintainer, and the environment
 * key. An installed copy (under node_modules) is not the project's.
 */
export function isDependencyManifest(path: string): boolean {
  const p = pathInfo(path);
  return !p.dirs.includes('node_modules') && ECOSYSTEMS.some((e) => e.dependencyManifest(p));
}

/** The dependency manifests among changed paths, sorted. */
export function changedManifests(paths: readonly string[]): string[] {
  return paths.filter(isDependencyManifest).sort();
}

/** The files whose text, at base and at head, decides which of `changed` are test machinery. */
export function machineryReads(changed: readonly string[]): string[] {
  return [...new Set(ECOSYSTEMS.flatMap((e) => e.testMachinery.reads(changed)))];
}

/**
 * The test machinery among changed paths (sorted): files whose change alters how tests run or
 * report, by any ecosystem's rules (a repository may be two). `texts` holds `machineryReads`' files.
 */
export function changedMachinery(changed: readonly string[], texts: MachineryTexts): string[] {
  return changed.filter((f) => ECOSYSTEMS.some((e) => e.testMachinery.changes(pathInfo(f), texts))).sort();
}

/** The ecosystem whose language a path is in (the first that owns it), or undefined. */
export function ecosystemOfPath(path: string | PathInfo): Ecosystem | undefined {
  const p = typeof path === 'string' ? pathInfo(path) : path;
  return ECOSYSTEMS.find((e) => e.ownsPath(p));
}

export interface Detection {
  ecosystem: Ecosystem;
  score: number;
}

/**
 * Which ecosystems a repository is, best first. With several (a Go service with a JS front end),
 * those whose files the test patch touches (`touched`) come first, by how many; then the score.
 */
export function detectEcosystems(facts: RepoFacts, touched: readonly string[] = []): Detection[] {
  const found = ECOSYSTEMS.map((ecosystem) => ({ ecosystem, score: ecosystem.detect(facts) })).filter((d) => d.score > 0);
  const hits = new Map<string, number>();
  for (const f of touched) {
    const e = ecosystemOfPath(f);
    if (e) hits.set(e.id, (hits.get(e.id) ?? 0) + 1);
  }
  return found.sort((a, b) => (hits.get(b.ecosystem.id) ?? 0) - (hits.get(a.ecosystem.id) ?? 0) || b.score - a.score);
}

export function detectEcosystem(facts: RepoFacts, touched: readonly string[] = []): Ecosystem | undefined {
  return detectEcosystems(facts, touched)[0]?.ecosystem;
}
