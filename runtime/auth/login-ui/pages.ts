/**
 * The sign-in page and the signed-in page: plain HTML with labelled controls, an aria-live status
 * region and no inline script (the scripts are served beside them, so a strict CSP applies).
 */
const shell = (title: string, body: string, script: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · gslbd</title>
<link rel="icon" href="/ui/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/ui/login/style.css">
</head>
<body>
<main>
${body}
</main>
<script src="${script}" defer></script>
</body>
</html>
`;

/** /ui/login: password form, a TOTP step shown when the server asks for it, SSO button, reset. */
export const LOGIN_HTML = shell('Sign in', `<h1>Sign in to gslbd</h1>
<p id="status" role="status" aria-live="polite"></p>
<form id="login" method="post" action="/api/v1/auth/login" novalidate>
  <div class="field"><label for="email">E-mail</label>
    <input id="email" name="email" type="email" autocomplete="username" required></div>
  <div class="field"><label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required></div>
  <fieldset id="totp" hidden>
    <legend>Two-step verification</legend>
    <div class="field"><label for="totpCode">Code from your authenticator app</label>
      <input id="totpCode" name="totpCode" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6"></div>
  </fieldset>
  <button type="submit" id="submit">Sign in</button>
</form>
<div id="sso" hidden>
  <p>or</p>
  <a class="button" id="sso-link" href="/api/v1/auth/oidc/authorize">Sign in with single sign-on</a>
</div>
<details id="forgot">
  <summary>Forgot your password?</summary>
  <form id="reset-request">
    <div class="field"><label for="reset-email">E-mail</label>
      <input id="reset-email" name="email" type="email" autocomplete="username" required></div>
    <button type="submit">Send reset link</button>
  </form>
</details>
<form id="reset-confirm" hidden>
  <h2>Choose a new password</h2>
  <div class="field"><label for="new-password">New password (at least 8 characters)</label>
    <input id="new-password" name="password" type="password" autocomplete="new-password" minlength="8" required></div>
  <button type="submit">Set password</button>
</form>`, '/ui/login/login.js');

/** /ui/account: who is signed in (from GET /api/v1/auth/me) and a sign-out button. */
export const ACCOUNT_HTML = shell('Account', `<h1>Signed in</h1>
<p id="status" role="status" aria-live="polite">Loading…</p>
<dl id="me" hidden>
  <dt>E-mail</dt><dd id="me-email"></dd>
  <dt>Name</dt><dd id="me-name"></dd>
  <dt>Role</dt><dd id="me-role"></dd>
  <dt>Tenant</dt><dd id="me-tenant"></dd>
  <dt>Two-step verification</dt><dd id="me-totp"></dd>
  <dt>Permissions</dt><dd id="me-perms"></dd>
</dl>
<p><a href="/ui/">Open the dashboard</a></p>
<button type="button" id="logout">Sign out</button>`, '/ui/login/account.js');

/** Shared styles: readable, high contrast, visible focus. */
export const STYLE_CSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1b1d21}
main{max-width:26rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin-top:0}.field{margin:0 0 1rem}label{display:block;font-weight:600;margin-bottom:.25rem}
input{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid #767676;border-radius:4px}
fieldset{border:1px solid #c4c7cc;border-radius:4px;margin:0 0 1rem}
button,.button{display:inline-block;padding:.55rem 1.1rem;font:inherit;border:0;border-radius:4px;background:#0b57d0;color:#fff;text-decoration:none;cursor:pointer}
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}#status{min-height:1.5em}#status.error{color:#b00020}
dt{font-weight:600}dd{margin:0 0 .5rem}details{margin-top:1.5rem}`;
