/** Java's dependency manifests and test machinery (see Ecosystem.dependencyManifest, testMachinery). Pure. */
import type { PathInfo, TestMachinery } from '../types.js';

const MANIFESTS = new Set(['pom.xml', 'build.gradle', 'build.gradle.kts', 'settings.gradle', 'settings.gradle.kts', 'gradle.properties']);

export const javaDependencyManifest = (p: PathInfo): boolean => MANIFESTS.has(p.base);

/**
 * The build files are code (Gradle) or name plugins and listeners (Surefire's configuration, a
 * test-scoped dependency whose JUnit Platform listener registers itself), so any change of one
 * counts; so do Maven's and Gradle's own settings and wrapper, JUnit Platform's properties and the
 * service registrations in test resources.
 */
const BUILD = /^(pom\.xml|(build|settings)\.gradle(\.kts)?|gradle\.properties|init\.gradle(\.kts)?)$/;

export const javaMachinery: TestMachinery = {
  reads: () => [],
  changes(p) {
    if (BUILD.test(p.base) || p.dirs.includes('.mvn') || p.dirs[0] === 'buildSrc' || (p.dirs[0] === 'gradle' && /\.(gradle|kts|properties|toml)$/.test(p.base))) return true;
    const res = p.dirs.join('/');
    return /(^|\/)src\/test\/resources$/.test(res) ? p.base === 'junit-platform.properties' : /(^|\/)src\/test\/resources\/META-INF\/services$/.test(res);
  },
};
