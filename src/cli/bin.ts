#!/usr/bin/env node
import { main } from './main.js';

// A command may have set process.exitCode itself (3: not reproduced, 1: doctor found a problem).
main().then((code) => {
  if (code !== 0) process.exitCode = code;
});
