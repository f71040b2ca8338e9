// Tests read pino's JSON logs only when they capture them on purpose; keep the console readable.
process.env.LOG_LEVEL ??= 'warn';
// No test pulls base images: the machine has no container registry, and no test aims a connection
// off the machine. They are built offline (scripts/dev builds them before the suites).
process.env.SWT_PULL ??= 'never';
