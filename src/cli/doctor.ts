/**
 * `swt doctor`: is this machine ready to run swt-bot? Docker, the base images, disk, Redis, the
 * LLM endpoint and the GitHub App credentials, each checked for real (a ping, a request), each
 * reported on one line with what to do about it. Never prints a secret.
 */
import { createPrivateKey } from 'node:crypto';
import { readFile, statfs } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { dockerHostReport, engineLocation } from '../web/dockerHost.js';
import { defaultDataDir, envValues, githubApiUrl, processEnvironment, VARIABLES, type Environment, type Variable, type VariableName } from '../settings/index.js';
import { redact } from '../util/secrets.js';
import { isLlmConfigured, llmSettingsFrom } from '../generation/llmClient.js';
import { isLocalModel, localModelSpec } from '../generation/local/catalogue.js';
import { checkModelFile, modelDir } from '../generation/local/store.js';
import { connectRedis } from '../queue/redis.js';
import { loadCaBundle } from '../sandbox/images/caCertificates.js';
import { connectDocker, pingDocker } from '../sandbox/docker.js';
import { baseImageName, parseBaseRef } from '../sandbox/images/baseImages.js';
import type { Docker } from '../sandbox/docker.js';
import { errorLine } from '../util/errors.js';

export type CheckLevel = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  name: string;
  level: CheckLevel;
  /** What was found. */
  detail: string;
  /** How to fix it (warn and fail). */
  fix?: string;
}

export interface DoctorOptions {
  env?: Environment;
  docker?: Docker;
  /** Per network check (default 5 s). */
  timeoutMs?: number;
  /** Below this many bytes free on the Docker data root or SWT_DATA_DIR: a failure (default SWT_DOCTOR_MIN_FREE_GB, 5 GB). */
  minFreeBytes?: number;
}

const oneLine = (e: unknown) => errorLine(e, 200);
const gb = (n: number) => `${(n / 1e9).toFixed(1)} GB`;

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<T>((_, reject) => (t = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(t);
  }
}

async function checkDocker(docker: Docker, env: Environment | undefined, timeoutMs: number, minFree: number): Promise<CheckResult[]> {
  const where = engineLocation(env);
  try {
    await pingDocker(docker, { where, timeoutMs });
  } catch (e) {
    return [{ name: 'docker', level: 'fail', detail: `no Docker engine answers at ${where}`, fix: envValues(env).DOCKER_HOST ? 'start the engine there, or fix DOCKER_HOST (tcp://host:2376 with DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH, or ssh://user@host)' : 'start one (scripts/dev setup, or `sudo dockerd &`), or set DOCKER_HOST' }];
  }
  const out: CheckResult[] = [];
  const report = await dockerHostReport(docker, env);
  out.push({ name: 'docker', level: 'ok', detail: `Docker ${report.version} at ${report.location}, data root ${report.dataRoot}` });
  if (report.freeDiskBytes === null) out.push({ name: 'disk', level: 'warn', detail: `free disk of the engine's data root cannot be read from here (${report.location})`, fix: 'run `swt doctor` on the Docker host itself' });
  else if (report.freeDiskBytes < minFree) out.push({ name: 'disk', level: 'fail', detail: `${gb(report.freeDiskBytes)} free on ${report.dataRoot}`, fix: `free space (docker system prune; lower SWT_ENV_CACHE_GB) to at least ${gb(minFree)}` });
  else out.push({ name: 'disk', level: 'ok', detail: `${gb(report.freeDiskBytes)} free on ${report.dataRoot}; images take ${gb(report.imagesBytes)}` });

  // The base images every environment starts from: built offline at the first job when missing.
  const ca = await loadCaBundle({ env }).catch(() => undefined);
  const missing: string[] = [];
  for (const ref of ['python:3.11', 'node:22']) {
    const name = baseImageName(parseBaseRef(ref), ca ?? undefined);
    const found = await docker
      .getImage(name)
      .inspect()
      .then(
        () => true,
        () => false,
      );
    if (!found) missing.push(`${name} (${ref})`);
  }
  if (missing.length) out.push({ name: 'images', level: 'warn', detail: `not built yet: ${missing.join(', ')}`, fix: "the first job builds them offline (a few minutes each); `swt images` builds them and every other ecosystem's now" });
  else out.push({ name: 'images', level: 'ok', detail: 'the Python and Node base images are built' });
  return out;
}

async function checkDataDir(env: Environment | undefined, minFree: number): Promise<CheckResult> {
  const dir = defaultDataDir(env);
  try {
    mkdirSync(dir, { recursive: true });
    const s = await statfs(dir);
    const free = s.bavail * s.bsize;
    if (free < minFree) return { name: 'data dir', level: 'fail', detail: `${gb(free)} free in ${dir}`, fix: `free space there or point SWT_DATA_DIR elsewhere (at least ${gb(minFree)})` };
    return { name: 'data dir', level: 'ok', detail: `${dir}, ${gb(free)} free` };
  } catch (e) {
    return { name: 'data dir', level: 'fail', detail: `${dir} cannot be used: ${oneLine(e)}`, fix: 'set SWT_DATA_DIR to a writable directory' };
  }
}

async function checkRedis(env: Environment | undefined, timeoutMs: number): Promise<CheckResult[]> {
  const url = envValues(env).REDIS_URL;
  if (!url) return [{ name: 'redis', level: 'ok', detail: 'REDIS_URL not set: the embedded SQLite queue is used (one machine)' }];
  const shown = (() => {
    try {
      const u = new URL(url);
      return `${u.protocol}//${u.hostname}:${u.port || 6379}`;
    } catch {
      return 'REDIS_URL';
    }
  })();
  let client;
  try {
    client = connectRedis(url);
  } catch (e) {
    return [{ name: 'redis', level: 'fail', detail: oneLine(e), fix: 'set REDIS_URL=redis://host:6379 (rediss:// for TLS)' }];
  }
  client.on('error', () => undefined);
  try {
    await withTimeout(client.ping(), timeoutMs, 'PING');
    const out: CheckResult[] = [{ name: 'redis', level: 'ok', detail: `answers at ${shown}` }];
    const cfg = async (key: string) => ((await withTimeout(client.config('GET', key), timeoutMs, 'CONFIG GET').catch(() => [])) as string[])[1];
    const policy = await cfg('maxmemory-policy');
    if (policy !== undefined && policy !== 'noeviction') out.push({ name: 'redis', level: 'fail', detail: `maxmemory-policy is ${policy}: Redis may evict queued jobs`, fix: 'set maxmemory-policy noeviction (BullMQ requires it)' });
    const aof = await cfg('appendonly');
    if (aof !== undefined && aof !== 'yes') out.push({ name: 'redis', level: 'warn', detail: 'appendonly is off: a Redis restart loses what changed since the last snapshot', fix: 'set appendonly yes (appendfsync everysec or always)' });
    return out;
  } catch (e) {
    return [{ name: 'redis', level: 'fail', detail: `no answer at ${shown}: ${oneLine(e)}`, fix: 'start redis-server there, or fix REDIS_URL' }];
  } finally {
    client.disconnect();
  }
}

async function checkLlm(env: Environment | undefined, timeoutMs: number): Promise<CheckResult> {
  if (!isLlmConfigured(env)) return { name: 'llm', level: 'warn', detail: 'no LLM endpoint configured: only the snippet strategy runs (tests from code in the issue)', fix: 'set OPENAI_API_KEY (and OPENAI_BASE_URL for another OpenAI-compatible endpoint), or run a model here: swt model pull, then SWT_LLM_MODEL=local:qwen2.5-coder-1.5b' };
  let s;
  try {
    s = llmSettingsFrom(env);
  } catch (e) {
    return { name: 'llm', level: 'fail', detail: oneLine(e), fix: 'fix the SWT_LLM_* / OPENAI_* settings' };
  }
  if (isLocalModel(s.model)) return checkLocalModel(s.model, s.local.dir ?? modelDir(env));
  const base = (s.baseURL ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
  try {
    const res = await withTimeout(fetch(`${base}/models`, { headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {} }), timeoutMs, 'GET /models');
    await res.body?.cancel();
    if (res.status === 401 || res.status === 403) return { name: 'llm', level: 'fail', detail: `${base} refuses the key (HTTP ${res.status})`, fix: 'check OPENAI_API_KEY' };
    if (res.status >= 500) return { name: 'llm', level: 'fail', detail: `${base} answers HTTP ${res.status}`, fix: 'the endpoint is down or overloaded: try again later, or point OPENAI_BASE_URL at another one' };
    // 404: some compatible servers have no /models; the endpoint still answers.
    return { name: 'llm', level: 'ok', detail: `${base} answers (HTTP ${res.status})${s.model ? `, model ${s.model}` : ''}` };
  } catch (e) {
    return { name: 'llm', level: 'fail', detail: `${base} does not answer: ${oneLine(e)}`, fix: 'check OPENAI_BASE_URL and the network to it' };
  }
}

/** The local model's file is there and intact (its sha256 is checked once, then stamped). */
async function checkLocalModel(model: string, dir: string): Promise<CheckResult> {
  try {
    const spec = localModelSpec(model);
    const file = await checkModelFile(spec, dir);
    return { name: 'llm', level: 'ok', detail: `${model} runs in this process from ${file} (sha256 checked)` };
  } catch (e) {
    return { name: 'llm', level: 'fail', detail: oneLine(e), fix: `swt model pull ${model.replace(/^local:/i, '')} (or fix SWT_LLM_MODEL)` };
  }
}

async function checkGitHubApp(env: Environment | undefined, timeoutMs: number): Promise<CheckResult> {
  const e = envValues(env);
  const appId = e.APP_ID === undefined ? undefined : String(e.APP_ID);
  let key = e.PRIVATE_KEY;
  if (!key && e.PRIVATE_KEY_PATH) {
    try {
      key = await readFile(e.PRIVATE_KEY_PATH, 'utf8');
    } catch (e) {
      return { name: 'github app', level: 'fail', detail: `PRIVATE_KEY_PATH cannot be read: ${(e as NodeJS.ErrnoException).code ?? oneLine(e)}`, fix: 'point PRIVATE_KEY_PATH at the .pem file GitHub gave you' };
    }
  }
  if (!appId && !key) return { name: 'github app', level: 'warn', detail: 'APP_ID and PRIVATE_KEY not set: `npm start` serves the setup flow that registers the App', fix: 'register the App (see README "Install it on a repository"), then set APP_ID, PRIVATE_KEY_PATH and WEBHOOK_SECRET' };
  if (!appId || !/^\d+$/.test(appId)) return { name: 'github app', level: 'fail', detail: 'APP_ID is missing or not a number', fix: "set APP_ID to the App's numeric id (its settings page)" };
  if (!key) return { name: 'github app', level: 'fail', detail: 'PRIVATE_KEY (or PRIVATE_KEY_PATH) is missing', fix: "generate a private key on the App's settings page and set PRIVATE_KEY_PATH" };
  try {
    createPrivateKey(key.replace(/\\n/g, '\n'));
  } catch {
    return { name: 'github app', level: 'fail', detail: 'PRIVATE_KEY is not a PEM private key', fix: 'use the .pem file GitHub generated, unchanged' };
  }
  if (!e.WEBHOOK_SECRET) return { name: 'github app', level: 'fail', detail: 'WEBHOOK_SECRET is not set: webhook signatures cannot be verified', fix: "set WEBHOOK_SECRET to the App's webhook secret" };
  const { Probot } = await import('probot');
  const baseUrl = githubApiUrl(env);
  try {
    const probot = new Probot({ appId: Number(appId), privateKey: key.replace(/\\n/g, '\n'), baseUrl, log: (await import('pino')).pino({ level: 'silent' }) as never });
    const octokit = await probot.auth();
    const { data } = await withTimeout(octokit.rest.apps.getAuthenticated(), timeoutMs, 'GET /app');
    return { name: 'github app', level: 'ok', detail: `authenticated as the App ${data?.slug ?? data?.name ?? appId} at ${baseUrl}` };
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 401) return { name: 'github app', level: 'fail', detail: `${baseUrl} refuses the App's JWT (HTTP 401)`, fix: 'APP_ID and the private key do not belong together, or the machine clock is off' };
    return { name: 'github app', level: 'fail', detail: `${baseUrl} does not answer: ${oneLine(err)}`, fix: e.GHE_HOST ? 'check GHE_HOST and GHE_PROTOCOL' : 'check the network to api.github.com' };
  }
}

/** The environment against settings/variables.ts: what is set (secrets by name only), or which value is refused and why. */
export function checkSettings(env?: Environment): CheckResult {
  try {
    envValues(env);
  } catch (e) {
    return { name: 'settings', level: 'fail', detail: oneLine(e), fix: 'fix the value (docs/configuration.md lists each variable, its default and unit)' };
  }
  const source = env ?? processEnvironment();
  const set = (Object.keys(VARIABLES) as VariableName[]).filter((n) => source[n]?.trim());
  const shown = set.map((n) => ((VARIABLES[n] as Variable).secret ? `${n} (set)` : redact(`${n}=${source[n]!.trim()}`)));
  return { name: 'settings', level: 'ok', detail: set.length ? `${set.length} of ${Object.keys(VARIABLES).length} variables set: ${shown.join(', ')}` : `none of the ${Object.keys(VARIABLES).length} variables set: every default applies` };
}

export async function runDoctor(opts: DoctorOptions = {}): Promise<CheckResult[]> {
  const env = opts.env;
  const timeoutMs = opts.timeoutMs ?? 5000;
  // The table first: a bad value is the one thing to fix, and every other check would trip on it.
  const settings = checkSettings(env);
  if (settings.level === 'fail') return [settings];
  const minFree = opts.minFreeBytes ?? envValues(env).SWT_DOCTOR_MIN_FREE_GB * 1e9;
  const docker = opts.docker ?? connectDocker(env);
  const groups = await Promise.all([[settings], checkDocker(docker, env, timeoutMs, minFree), checkDataDir(env, minFree).then((r) => [r]), checkRedis(env, timeoutMs), checkLlm(env, timeoutMs).then((r) => [r]), checkGitHubApp(env, timeoutMs).then((r) => [r])]);
  return groups.flat();
}

const MARK: Record<CheckLevel, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

/** One line per check: level, name, what was found, and (unless ok) what to do. */
export function renderDoctor(results: CheckResult[]): string {
  return results.map((r) => `${MARK[r.level]} ${r.name}: ${r.detail}${r.fix && r.level !== 'ok' ? ` → ${r.fix}` : ''}`).join('\n') + '\n';
}
