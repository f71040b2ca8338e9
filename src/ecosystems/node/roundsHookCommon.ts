/**
 * The lines every Node rounds hook (jest, vitest, mocha) shares, to splice into its source after
 * `fs` and `path` are in scope: the plan (RoundPlan, from SWT_ROUNDS; null when absent or
 * unreadable), a regex escape, a file's repository-relative path, the one rule that chooses a
 * test (its full name holds one of the plan's names), and the round files through which rounds
 * held where a test file ran hand their results to the process that writes the reports
 * (`<kind>/round<N>-<file>.json` beside the plan; `partsOf` gives every round's parts for `files`,
 * or null when one is missing). ES5, one statement per line, no line comments: printf writes the
 * hooks line by line. Pure.
 */
export const ROUNDS_HOOK_COMMON = String.raw`var plan = null;
try { plan = JSON.parse(fs.readFileSync(process.env.SWT_ROUNDS, 'utf8')); } catch (e) { plan = null; }
function escapeRe(s) { return String(s).replace(/[.*+?^${'$'}{}()|[\]\\]/g, '\\$&'); }
function named(title) { return (plan.names || []).some(function (n) { return String(title).indexOf(n) >= 0; }); }
function relative(file) { return path.relative(process.cwd(), String(file)).split(path.sep).join('/'); }
function partFile(kind, round, file) { return path.join(path.dirname(process.env.SWT_ROUNDS), kind, 'round' + round + '-' + encodeURIComponent(relative(file)) + '.json'); }
function writePart(kind, round, file, value) { try { fs.mkdirSync(path.dirname(partFile(kind, round, file))); } catch (e) { } fs.writeFileSync(partFile(kind, round, file), JSON.stringify(value)); }
function partsOf(kind, files) {
  var rounds = [];
  for (var round = 1; round <= plan.rounds; round++) {
    var parts = [];
    for (var i = 0; i < files.length; i++) { if (!fs.existsSync(partFile(kind, round, files[i]))) return null; parts.push(JSON.parse(fs.readFileSync(partFile(kind, round, files[i]), 'utf8'))); }
    rounds.push(parts);
  }
  return rounds;
}`;
