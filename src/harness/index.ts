/** The test harness: runners, report parsing, base/head classification, rendering. */
export * from './types.js';
export * from './runners.js';
export { parseRunReports, type ParsedRun, type RunReportInput } from './parsers/index.js';
export { parseJUnit, type JUnitFlavor, type JUnitContext } from './parsers/junit.js';
export { parseJestJson } from './parsers/jest.js';
export { parseTap, type TapContext } from './parsers/tap.js';
export type { ParsedReport, ParseContext } from './parsers/common.js';
export * from './classify.js';
export * from './runTests.js';
export * from './testFiles.js';
export * from './render.js';
