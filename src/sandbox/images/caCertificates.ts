import { createHash, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { envValues, type Environment } from '../../settings/index.js';
import { SwtError } from '../../util/errors.js';

/**
 * Extra CA certificates (corporate TLS-intercepting proxies): read from configured paths, or from
 * SWT_EXTRA_CA_CERTS (`:`-separated), falling back to NODE_EXTRA_CA_CERTS. They are baked into
 * every base image, and their fingerprint is part of the base image's identity.
 */

export interface CaBundle {
  /** The certificates, one PEM block each, deduplicated, in the order found. */
  certs: string[];
  /** sha256 of the normalised bundle: changes whenever a certificate is added, removed or changed. */
  sha256: string;
  sources: string[];
}

/** Where the bundle lives inside every image; all CA variables point here. */
export const IMAGE_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
export const IMAGE_CA_DIR = '/usr/local/share/ca-certificates';

/** Variables (baked into images) that make common tools trust the bundle. */
export function caEnv(): Record<string, string> {
  return {
    NODE_EXTRA_CA_CERTS: IMAGE_CA_BUNDLE,
    SSL_CERT_FILE: IMAGE_CA_BUNDLE,
    REQUESTS_CA_BUNDLE: IMAGE_CA_BUNDLE,
    PIP_CERT: IMAGE_CA_BUNDLE,
    GIT_SSL_CAINFO: IMAGE_CA_BUNDLE,
    npm_config_cafile: IMAGE_CA_BUNDLE,
  };
}

/** The configured bundle paths: explicit ones, else SWT_EXTRA_CA_CERTS, else NODE_EXTRA_CA_CERTS. */
export function caPathsFromEnv(env?: Environment): string[] {
  const e = envValues(env);
  return e.SWT_EXTRA_CA_CERTS.length ? e.SWT_EXTRA_CA_CERTS : e.NODE_EXTRA_CA_CERTS;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Extracts and validates the certificates of one PEM file. Throws BAD_CONFIG when it is not PEM. */
export function parsePemCertificates(text: string, source: string): string[] {
  const normalised = text.replace(/\r\n?/g, '\n');
  const blocks = normalised.match(PEM_BLOCK) ?? [];
  const begins = (normalised.match(/-----BEGIN CERTIFICATE-----/g) ?? []).length;
  if (begins > 0 && begins !== blocks.length) {
    throw new SwtError('BAD_CONFIG', `${source} has a certificate without its -----END CERTIFICATE----- line`);
  }
  if (blocks.length === 0) {
    throw new SwtError('BAD_CONFIG', `${source} does not look like PEM CA certificates (no -----BEGIN CERTIFICATE----- block)`, {
      hint: 'point SWT_EXTRA_CA_CERTS at PEM files (`:`-separated)',
    });
  }
  return blocks.map((b, i) => {
    const pem = b
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .join('\n');
    try {
      new X509Certificate(pem);
    } catch (e) {
      throw new SwtError('BAD_CONFIG', `${source}: certificate ${i + 1} is not a valid X.509 certificate (${(e as Error).message})`, { cause: e });
    }
    return pem;
  });
}

export function bundleFromPem(files: Array<{ source: string; text: string }>): CaBundle {
  const seen = new Set<string>();
  const certs: string[] = [];
  for (const f of files) {
    for (const c of parsePemCertificates(f.text, f.source)) {
      if (seen.has(c)) continue;
      seen.add(c);
      certs.push(c);
    }
  }
  const sha256 = createHash('sha256').update(certs.join('\n')).digest('hex');
  return { certs, sha256, sources: files.map((f) => f.source) };
}

/**
 * Loads the extra CA bundle. `paths` (from config) wins over the environment; returns undefined
 * when none is configured.
 */
export async function loadCaBundle(opts: { paths?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<CaBundle | undefined> {
  const paths = opts.paths?.length ? opts.paths : caPathsFromEnv(opts.env);
  if (paths.length === 0) return undefined;
  const files: Array<{ source: string; text: string }> = [];
  for (const p of paths) {
    try {
      files.push({ source: p, text: await readFile(p, 'utf8') });
    } catch (e) {
      throw new SwtError('BAD_CONFIG', `cannot read CA certificates from ${p}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
        cause: e,
        hint: 'fix SWT_EXTRA_CA_CERTS / NODE_EXTRA_CA_CERTS or the configured CA paths',
      });
    }
  }
  return bundleFromPem(files);
}

/** The part of a base image's identity that depends on the CA bundle. */
export function caFingerprint(bundle: CaBundle | undefined): string {
  return bundle ? bundle.sha256 : 'no-extra-ca';
}

/** Files (relative names → content) to place in IMAGE_CA_DIR: one certificate per file. */
export function caFiles(bundle: CaBundle | undefined): Array<{ name: string; content: string }> {
  if (!bundle) return [];
  return bundle.certs.map((c, i) => ({ name: `swt-extra-${String(i + 1).padStart(3, '0')}.crt`, content: c + '\n' }));
}
