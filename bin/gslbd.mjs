#!/usr/bin/env node
// Runs the compiled daemon (built by `npm ci` through the prepare script). bin/gslbd runs this on
// the Node that scripts/setup.sh chose.
import { checkNode } from './node-check.mjs';

if (checkNode('gslbd')) {
  const { main } = await import('../dist/runtime/main.js');
  main(process.argv.slice(2)).then((code) => { if (typeof code === 'number') process.exitCode = code; });
}
