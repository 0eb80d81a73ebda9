// The REST API, with the session cookie. A 401 means the session ended: back to the sign-in page.

/** Where the sign-in page sends the browser back to after signing in. */
export function toLogin() {
  location.assign(`/ui/login?next=${encodeURIComponent('/ui/')}${location.hash}`);
}

/** Calls /api/v1 `path`; resolves `{status, body}` (body parsed JSON, or null). Never throws on an HTTP status. */
export async function api(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(`/api/v1${path}`, init);
  let data = null;
  const text = await res.text();
  if (text) { try { data = JSON.parse(text); } catch { data = { error: text }; } }
  if (res.status === 401) toLogin();
  return { status: res.status, body: data };
}

/** GET that throws with the server's message on anything but 200. */
export async function get(path) {
  const r = await api('GET', path);
  if (r.status !== 200) throw new Error((r.body && r.body.error) || `GET ${path}: ${r.status}`);
  return r.body;
}
