#!/usr/bin/env node
// Runs the compiled CLI (built by `npm ci` through the prepare script). bin/gslbctl runs this on
// the Node that scripts/setup.sh chose.
import { checkNode } from './node-check.mjs';

if (checkNode('gslbctl')) {
  const { main } = await import('../dist/cli/main.js');
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}
