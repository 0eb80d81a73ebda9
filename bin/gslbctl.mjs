#!/usr/bin/env node
// Runs the compiled CLI (built by `npm ci` through the prepare script).
import { main } from '../dist/controller/cli/main.js';
main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
