/**
 * jest's --json report, written even when a failure's details are not JSON. jest 28 and later put
 * each failure's raw details (the thrown error, a matcher's expected and actual values) in the
 * report, and write nothing at all when one of them cannot be serialized: an error that refers to
 * itself (an HTTP client's error holding its request), a BigInt in a failed `toBe`. The run then
 * had no report, and every test of it counted as missing. A module preloaded through NODE_OPTIONS
 * hands jest a `@jest/test-result` whose formatTestResults, which shapes that report, gives a copy
 * only when jest's own serialization would throw: one where a value that refers back to an enclosing
 * one reads "[Circular]", a BigInt its digits, and what nests past 64 levels "[Too deep]". Pure.
 */
import { writeLines } from '../command.js';

/** One fixed path, so that reruns in one shell add it to NODE_OPTIONS once. */
export const JEST_JSON_HOOK = '/tmp/swt-jest-json.cjs';

/** CommonJS in ES5 (old jest runs on old Node); no line comments: printf writes it line by line. */
export const JEST_JSON_SOURCE = String.raw`'use strict';
var Module = require('module');
var load = Module._load;
var wrapped = [];
function copy(value, above) {
  if (typeof value === 'bigint') return String(value);
  if (value === null || typeof value !== 'object') return value;
  if (above.indexOf(value) >= 0) return '[Circular]';
  if (above.length >= 64) return '[Too deep]';
  var path = above.concat([value]);
  var v = value;
  if (typeof v.toJSON === 'function') { try { v = v.toJSON(); } catch (e) { return String(e); } }
  if (v !== value) return copy(v, path);
  if (Array.isArray(v)) return v.map(function (x) { return copy(x, path); });
  var out = {};
  Object.keys(v).forEach(function (k) { out[k] = copy(v[k], path); });
  return out;
}
function serializable(results) {
  try { JSON.stringify(results); return results; } catch (e) { return copy(results, []); }
}
Module._load = function (request) {
  var exp = load.apply(this, arguments);
  if (request !== '@jest/test-result' || !exp || typeof exp.formatTestResults !== 'function' || exp.formatTestResults.swtJson) return exp;
  for (var i = 0; i < wrapped.length; i++) if (wrapped[i][0] === exp) return wrapped[i][1];
  var format = exp.formatTestResults;
  var own = {};
  Object.getOwnPropertyNames(exp).forEach(function (k) { if (k !== 'formatTestResults') Object.defineProperty(own, k, Object.getOwnPropertyDescriptor(exp, k)); });
  var safe = function () { return serializable(format.apply(this, arguments)); };
  safe.swtJson = true;
  Object.defineProperty(own, 'formatTestResults', { value: safe, enumerable: true });
  wrapped.push([exp, own]);
  return own;
};
`.split('\n');

/** Shell that writes the hook and adds it to NODE_OPTIONS once; a /tmp that refuses leaves the run as it was. */
export function jestJsonPrepare(): string {
  const require = `--require ${JEST_JSON_HOOK}`;
  return ` ${writeLines(JEST_JSON_HOOK, JEST_JSON_SOURCE)} && case " \${NODE_OPTIONS:-} " in *" ${require} "*) ;; *) export NODE_OPTIONS="\${NODE_OPTIONS:+\$NODE_OPTIONS }${require}";; esac;`;
}
