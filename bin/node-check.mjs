// The Node.js versions gslbd runs on (package.json "engines"); bin/gslbd.mjs and bin/gslbctl.mjs
// check before they load anything, since a native module built for another Node fails later with a
// message that points nowhere.
export function checkNode(program) {
  const major = Number(process.versions.node.split('.')[0]);
  if (major === 24) return true;
  process.stderr.write(`${program}: needs Node.js 24 LTS; this is ${process.version} (${process.execPath}). `
    + 'Run `bash scripts/setup.sh` (it fetches Node 24 into .node/ when the system has another) and start '
    + `bin/${program}, which uses it.\n`);
  process.exitCode = 1;
  return false;
}
