import { describeCap } from '../sandbox/containers/ceilings.js';
import type { CappedNote } from './context.js';
import type { TestEnvironment, ValidationResult } from './validate.js';

/**
 * The lines that go under a verdict: which environment each side ran in, and which requested
 * limits the operator's ceilings lowered. Plain text for the CLI, markdown for comments. Pure.
 */

export function cappedLines(capped: CappedNote[]): string[] {
  return capped.map((c) => `${c.source} asked for ${describeCap(c)}`);
}

export function environmentLine(env: ValidationResult['environment']): string {
  const cached = (e: { cached: boolean; buildMs: number }) => (e.cached ? 'cached' : `built in ${(e.buildMs / 1000).toFixed(1)} s`);
  if (!env.head.own) return `environment: ${env.base.image} for base and head (${cached(env.base)})`;
  return `environment: base ${env.base.image} (${cached(env.base)}); head ${env.head.image} (${cached(env.head)}), its own because ${env.head.manifests.join(', ')} changed`;
}

/** `TZ=America/New_York LANG=en_US.utf8, from .github/workflows/test.yml, job test, step \`npm test\``. */
export function testEnvironmentLine(t: TestEnvironment): string {
  return `test environment ${Object.entries(t.env).map(([k, v]) => `${k}=${v}`).join(' ')}, from ${t.source}`;
}

/** Whose test machinery the head's runs used, when the head changed some. */
export function machineryLine(m: NonNullable<ValidationResult['machinery']>): string {
  const files = m.changed.join(', ');
  return m.used === 'base'
    ? `test machinery: the head changes ${files}; its tests ran with the base's (the head's set aside)`
    : `test machinery: NOT TRUSTED: the head changes ${files} and the tests could not run on it with the base's, so they ran with the head's own set-up (never likely correct)`;
}

export function renderNotesText(v: Pick<ValidationResult, 'environment' | 'limitsCapped' | 'testEnvironment' | 'machinery'>): string {
  return [...(v.machinery ? [machineryLine(v.machinery)] : []), environmentLine(v.environment), ...(v.testEnvironment ? [testEnvironmentLine(v.testEnvironment)] : []), ...cappedLines(v.limitsCapped).map((l) => `limit capped: ${l}`)].join('\n') + '\n';
}

export function renderNotesMarkdown(v: Pick<ValidationResult, 'environment' | 'limitsCapped' | 'testEnvironment'>): string {
  const code = (s: string) => `\`${s.replace(/`/g, '')}\``;
  const e = v.environment;
  const lines = [
    e.head.own
      ? `- Environments: base ${code(e.base.image)}; head ${code(e.head.image)}, its own because ${e.head.manifests.map(code).join(', ')} changed.`
      : `- Environment: ${code(e.base.image)} for base and head.`,
    ...(v.testEnvironment ? [`- Tests ran with ${Object.entries(v.testEnvironment.env).map(([k, val]) => code(`${k}=${val}`)).join(' ')}, from ${v.testEnvironment.source}.`] : []),
    ...cappedLines(v.limitsCapped).map((l) => `- ⚠️ Limit capped: ${l}.`),
  ];
  return `${lines.join('\n')}\n`;
}
