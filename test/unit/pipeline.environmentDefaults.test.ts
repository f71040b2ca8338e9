import { defaultBaseImages, environmentDefaults, nodeMajorFor } from '../../src/pipeline/environmentDefaults.js';

describe('environment defaults', () => {
  it('reads the lowest supported Node major from engines', () => {
    expect(nodeMajorFor('>=18')).toBe(18);
    expect(nodeMajorFor('^20.3.0 || >=22')).toBe(20);
    expect(nodeMajorFor('>= 0.8')).toBe(22);
    expect(nodeMajorFor(undefined)).toBe(22);
    expect(nodeMajorFor('*')).toBe(22);
  });
  it('picks the install command from the lockfile', () => {
    expect(environmentDefaults({ files: ['package.json', 'package-lock.json'], packageJson: {} })).toEqual({
      image: 'node:22',
      install: 'npm ci --no-audit --no-fund',
    });
    expect(environmentDefaults({ files: ['package.json'], packageJson: { engines: { node: '>=20' } } })).toEqual({
      image: 'node:20',
      install: 'npm install --no-audit --no-fund',
    });
    expect(environmentDefaults({ files: ['package.json', 'yarn.lock'], packageJson: {} }).install).toMatch(/yarn install/);
    expect(environmentDefaults({ files: ['setup.py', 'tests/test_a.py'] })).toEqual({ image: 'python:3.11', install: expect.stringMatching(/^python3 -m pip install .* -e \. /), fallbackImages: ['python:3.10', 'python:3.9'] });
  });
  it('names each ecosystem\'s base image once, for `swt images` to prepare', () => {
    expect(defaultBaseImages()).toEqual(['python:3.11', 'node:22', 'ruby:3.3', 'php:8.3-cli', 'golang:1.24', 'rust:1.85', 'maven:3.9-eclipse-temurin-17', 'swt-cc:12']);
  });
});
