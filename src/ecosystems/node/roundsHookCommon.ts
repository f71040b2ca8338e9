/**
 * The lines every Node rounds hook (jest, vitest, mocha) shares, to splice into its source after
 * `fs` is in scope: the plan (RoundPlan, from SWT_ROUNDS; null when absent or unreadable), a regex
 * escape, and the one rule that chooses a test: its full name holds one of the plan's names. ES5,
 * one statement per line, no line comments: printf writes the hooks line by line. Pure.
 */
export const ROUNDS_HOOK_COMMON = String.raw`var plan = null;
try { plan = JSON.parse(fs.readFileSync(process.env.SWT_ROUNDS, 'utf8')); } catch (e) { plan = null; }
function escapeRe(s) { return String(s).replace(/[.*+?^${'$'}{}()|[\]\\]/g, '\\$&'); }
function named(title) { return (plan.names || []).some(function (n) { return String(title).indexOf(n) >= 0; }); }`;
