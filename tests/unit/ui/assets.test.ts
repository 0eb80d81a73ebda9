import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentTypeOf, safeSegments } from '../../../runtime/ui/assets.js';

test('safeSegments: only paths that name a file inside the folder', () => {
  const rows: { name: string; given: string; want: string[] | undefined }[] = [
    { name: 'the folder itself', given: '', want: ['index.html'] },
    { name: 'a file', given: 'app.css', want: ['app.css'] },
    { name: 'a nested file', given: 'js/views/pools.js', want: ['js', 'views', 'pools.js'] },
    { name: 'a sub-folder', given: 'js/', want: ['js', 'index.html'] },
    { name: 'percent-encoded name', given: 'a%20b.txt', want: ['a b.txt'] },
    { name: 'parent', given: '../secret', want: undefined },
    { name: 'encoded parent', given: '%2e%2e/secret', want: undefined },
    { name: 'encoded separator', given: '..%2fsecret', want: undefined },
    { name: 'encoded slash in a name', given: 'js%2f..%2f..%2fetc', want: undefined },
    { name: 'backslash', given: '..%5csecret', want: undefined },
    { name: 'NUL', given: 'index.html%00.png', want: undefined },
    { name: 'dot segment', given: './index.html', want: undefined },
    { name: 'hidden file', given: '.env', want: undefined },
    { name: 'hidden folder', given: '.git/config', want: undefined },
    { name: 'empty segment', given: 'js//main.js', want: undefined },
    { name: 'bad encoding', given: '%E0%A4%A', want: undefined },
  ];
  for (const r of rows) assert.deepEqual(safeSegments(r.given), r.want, r.name);
});

test('contentTypeOf: by extension, case-insensitive; unknown is bytes', () => {
  const rows: [string, string][] = [
    ['index.html', 'text/html; charset=utf-8'], ['a.JS', 'text/javascript; charset=utf-8'], ['m.mjs', 'text/javascript; charset=utf-8'],
    ['app.css', 'text/css; charset=utf-8'], ['logo.svg', 'image/svg+xml'], ['x.png', 'image/png'], ['f.woff2', 'font/woff2'],
    ['data.json', 'application/json; charset=utf-8'], ['README', 'application/octet-stream'], ['x.exe', 'application/octet-stream'],
  ];
  for (const [name, want] of rows) assert.equal(contentTypeOf(name), want, name);
});
