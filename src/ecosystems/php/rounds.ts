/**
 * PHPUnit's confirmation rounds inside the first run (RunnerDef.roundsInProcess), PHPUnit 9. A file
 * PHP prepends to every script (`auto_prepend_file`, from an ini in a directory added to
 * PHP_INI_SCAN_DIR, Debian's own kept) registers a shutdown function: once PHPUnit has run the file
 * and exited, in the same process, it runs the chosen test methods again per round as `--filter`
 * would (each class's suite, so its before-class hooks and data providers run, under PHPUnit's own
 * name filter), with PHPUnit's own JUnit logger, into the run's `--log-junit` path plus
 * `.round<N>` (roundReport). The run's exit status stays as it was (a round's error is caught).
 * Our ini is read last, so it overrides a project's own `auto_prepend_file` (from php.ini or the
 * scan directories): the hook reads the project's from those files and requires it, as PHP would. A new PHP process per round cost about as much as the run itself (53 ms against
 * 66 ms on a small project), these rounds a few milliseconds.
 *
 * Chosen: the test methods (PHPUnit's `Test::isTestMethod`) of the test classes declared in the
 * plan's files whose lines, from the method's first line to its last, hold an added line. Before
 * each round the static properties of the project's own classes (declared in files under the
 * working directory, outside vendor/) go back to their declared defaults, as a new process would
 * have them; the rest carries over (globals, functions' static variables, what vendor/ holds), so
 * a round that differs from the run proves nothing (freshProcess false): its test reruns in new
 * processes, which decide. Anything
 * else (PHPUnit 10 and later, whose API differs, a process that is not PHPUnit's, a script that
 * ran no test of the files) gets no round and its tests rerun, as before. The rounds run only
 * when the run has one file (PHPUnit runs a file per process): runners.ts roundsInProcess.
 * Pure.
 */
import { shellQuote } from '../../util/shell.js';
import { ROUNDS_HOOK_DIR, ROUNDS_PLAN_FILE, ROUND_REPORT_SUFFIX, roundReport, writeLines, writeRoundsHook } from '../command.js';
import type { RunnerDef } from '../types.js';

export const PHPUNIT_ROUNDS_FILE = `${ROUNDS_HOOK_DIR}/phpunit-rounds.php`;
/** The directory PHP_INI_SCAN_DIR gains, holding the ini that prepends the hook. */
const INI_DIR = `${ROUNDS_HOOK_DIR}/php-ini`;
/** The ini that prepends the hook; the last in PHP's scan, so it overrides a project's own `auto_prepend_file`, which the hook then requires. */
const INI_FILE = `${INI_DIR}/swt-rounds.ini`;


/** One statement per line (printf writes it line by line); no `//` comments. */
export const PHPUNIT_ROUNDS_SOURCE = String.raw`<?php
if (getenv('SWT_ROUNDS') !== false) {
  register_shutdown_function(static function (): void {
    if (getenv('SWT_ROUNDS_RAN') !== false || !class_exists('PHPUnit\\Runner\\Version', false) || !class_exists('PHPUnit\\Framework\\TestCase', false)) return;
    if (strpos(\PHPUnit\Runner\Version::series(), '9.') !== 0) return;
    putenv('SWT_ROUNDS_RAN=1');
    try {
      $argv = $_SERVER['argv'] ?? [];
      $log = null;
      foreach ($argv as $i => $a) { if ($a === '--log-junit' && isset($argv[$i + 1])) $log = $argv[$i + 1]; elseif (strpos($a, '--log-junit=') === 0) $log = substr($a, 12); }
      $plan = json_decode((string) @file_get_contents(getenv('SWT_ROUNDS')), true);
      if ($log === null || !is_array($plan) || !is_array($plan['lines'] ?? null) || (int) ($plan['rounds'] ?? 0) < 1) return;
      $lines = [];
      foreach ($plan['lines'] as $file => $ls) { $real = realpath((string) $file); if ($real !== false) $lines[$real] = $ls; }
      $chosen = [];
      $mine = [];
      $root = getcwd() . '/';
      foreach (get_declared_classes() as $c) {
        $rc = new \ReflectionClass($c);
        $f = $rc->getFileName();
        if ($f !== false && strpos($f, $root) === 0 && strpos($f, $root . 'vendor/') !== 0) $mine[] = $c;
        if (!$rc->isSubclassOf(\PHPUnit\Framework\TestCase::class) || $rc->isAbstract() || !isset($lines[$f])) continue;
        foreach ($rc->getMethods(\ReflectionMethod::IS_PUBLIC) as $m) {
          if ($m->getFileName() !== $f || !\PHPUnit\Util\Test::isTestMethod($m)) continue;
          foreach ($lines[$f] as $n) { if ($n >= $m->getStartLine() && $n <= $m->getEndLine()) { $chosen[$c][] = preg_quote($m->getName(), '/'); break; } }
        }
      }
      for ($r = 1; $chosen !== [] && $r <= (int) $plan['rounds']; $r++) {
        foreach ($mine as $c) {
          $rc = new \ReflectionClass($c);
          $defaults = $rc->getDefaultProperties();
          foreach ($rc->getProperties(\ReflectionProperty::IS_STATIC) as $p) {
            if ($p->getDeclaringClass()->getName() !== $c || !array_key_exists($p->getName(), $defaults) || (method_exists($p, 'isReadOnly') && $p->isReadOnly())) continue;
            if (PHP_VERSION_ID < 80100) $p->setAccessible(true);
            try { $p->setValue(null, $defaults[$p->getName()]); } catch (\Throwable $e) { continue; }
          }
        }
        $suite = new \PHPUnit\Framework\TestSuite('');
        foreach ($chosen as $c => $names) {
          $one = new \PHPUnit\Framework\TestSuite(new \ReflectionClass($c));
          $filter = new \PHPUnit\Runner\Filter\Factory();
          $filter->addFilter(new \ReflectionClass(\PHPUnit\Runner\Filter\NameFilterIterator::class), '/^' . preg_quote($c . '::', '/') . '(?:' . implode('|', $names) . ')(?: with data set .*)?$/');
          $one->injectFilter($filter);
          $suite->addTest($one);
        }
        $result = new \PHPUnit\Framework\TestResult();
        $junit = new \PHPUnit\Util\Log\JUnit($log . '${ROUND_REPORT_SUFFIX}' . $r);
        $result->addListener($junit);
        $suite->run($result);
        $junit->flush();
      }
    } catch (\Throwable $e) {
      fwrite(STDERR, 'swt: PHPUnit rounds: ' . $e->getMessage() . "\n");
    }
  });
}
foreach ((static function (): array {
  $prepend = '';
  foreach (array_merge([(string) php_ini_loaded_file()], explode(',', (string) php_ini_scanned_files())) as $ini) {
    $ini = trim($ini);
    if ($ini === '' || $ini === '${INI_FILE}') continue;
    $values = @parse_ini_file($ini);
    if (is_array($values) && array_key_exists('auto_prepend_file', $values)) $prepend = (string) $values['auto_prepend_file'];
  }
  return $prepend === '' ? [] : [$prepend];
})() as $swtPrepend) require $swtPrepend;
unset($swtPrepend);`.split('\n');

/** PHPUnit's rounds: the hook prepended to the run's PHP processes, the plan by environment. */
export const phpunitRounds: NonNullable<RunnerDef['roundsInProcess']> = {
  prepare: (_out, plan) =>
    ` ${writeRoundsHook(PHPUNIT_ROUNDS_FILE, PHPUNIT_ROUNDS_SOURCE, plan)} && mkdir -p ${INI_DIR} && ${writeLines(INI_FILE, [`auto_prepend_file=${PHPUNIT_ROUNDS_FILE}`])}` +
    ` && export SWT_ROUNDS=${ROUNDS_PLAN_FILE} PHP_INI_SCAN_DIR="\${PHP_INI_SCAN_DIR:-}:"${shellQuote(INI_DIR)};`,
  report: roundReport,
  // The hook could not be read: PHP stops before the script.
  hookFailed: /Failed opening required '[^']*phpunit-rounds\.php'/,
  freshProcess: false,
};
