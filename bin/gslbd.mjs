#!/usr/bin/env node
// Runs the compiled daemon (built by `npm ci` through the prepare script).
import { main } from '../dist/runtime/main.js';
main(process.argv.slice(2)).then((code) => { if (typeof code === 'number') process.exitCode = code; });
