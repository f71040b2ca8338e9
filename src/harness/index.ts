/** The test harness: runners, report parsing, base/head classification, rendering. */
export * from '../results/types.js';
export * from './runners.js';
export { parseRunReports, type ParsedRun, type RunReportInput } from './parsers/index.js';
export { parseJUnit, type JUnitFlavor, type JUnitContext } from '../results/formats/junit.js';
export { parseJestJson } from '../results/formats/jest.js';
export { parseTap, type TapContext } from '../results/formats/tap.js';
export type { ParsedReport, ParseContext } from '../results/formats/common.js';
export * from './classify.js';
export * from './runTests.js';
export * from './testFiles.js';
export * from './render.js';
