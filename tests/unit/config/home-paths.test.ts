import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { expandHomePaths, HOME_PATH_KEYS } from '../../../runtime/config/home-paths.js';
import { parseConfigText } from '../../../runtime/config/load.js';

test('a leading ~/ in a file or directory key is the home directory; nothing else is expanded', () => {
  const cfg = {
    database: { path: '~/.local/state/gslbd/x.db' },
    backup: { dir: '/var/~/b' },
    dns: { dnssec: { keys: [{ file: '~/keys/Kx' }, { file: 'Ky' }] } },
    health: { scriptDirs: ['~/checks', '~user/checks'] },
    gitops: { keyringFile: '~' },
  };
  expandHomePaths(cfg, '/home/ops');
  assert.equal(cfg.database.path, '/home/ops/.local/state/gslbd/x.db');
  assert.equal(cfg.backup.dir, '/var/~/b');
  assert.deepEqual(cfg.dns.dnssec.keys.map((k) => k.file), ['/home/ops/keys/Kx', 'Ky']);
  assert.deepEqual(cfg.health.scriptDirs, ['/home/ops/checks', '~user/checks']);
  assert.equal(cfg.gitops.keyringFile, '~');
});

test('the loaded configuration has its ~/ paths expanded', () => {
  const cfg = parseConfigText('database:\n  path: ~/state/gslbd.db\n');
  assert.ok(!cfg.database.path.startsWith('~'), cfg.database.path);
  assert.match(cfg.database.path, /\/state\/gslbd\.db$/);
});

test('every key of the table is a string (or array of strings) key of the configuration schema', () => {
  const schema = JSON.parse(readFileSync('schemas/config.v1.schema.json', 'utf8')) as Record<string, unknown>;
  for (const key of HOME_PATH_KEYS) {
    let node = schema as { properties?: Record<string, unknown>; items?: unknown; type?: string } | undefined;
    for (const step of key.split('.')) {
      const name = step.replace(/\[\]$/, '');
      node = node?.properties?.[name] as typeof node;
      if (step.endsWith('[]')) node = node?.items as typeof node;
    }
    assert.equal(node?.type, 'string', key);
  }
});
