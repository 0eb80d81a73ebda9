/** Where and how reCAPTCHA v3 tokens are verified (`forms.recaptcha`). The secret is never in a reason or a log. */
export interface RecaptchaConfig { secret: string; verifyURL: string; timeoutMs: number }

/** The field a reCAPTCHA v3 page posts its token in. */
export const RECAPTCHA_FIELD = 'g-recaptcha-response';

interface SiteverifyAnswer { success?: unknown; score?: unknown; 'error-codes'?: unknown }

/**
 * Verifies a reCAPTCHA v3 token with the siteverify contract (a form POST of `secret`,
 * `response` and `remoteip`, answered `{success, score, 'error-codes'}`). Returns null when the
 * token passes with at least `minScore`, else the reason. Fails closed: a missing token, a failed
 * check, a low score, and a verification that cannot be made (timeout, network error, a non-2xx or
 * non-JSON answer) are all reasons, so the submission is stored as spam, never lost.
 */
export async function verifyRecaptcha(cfg: RecaptchaConfig, token: string | undefined, minScore: number, remoteIp: string | undefined, fetchFn: typeof fetch = fetch): Promise<string | null> {
  if (token === undefined || token.trim() === '') return 'recaptcha token missing';
  const body = new URLSearchParams({ secret: cfg.secret, response: token });
  if (remoteIp) body.set('remoteip', remoteIp);
  let answer: SiteverifyAnswer;
  try {
    const res = await fetchFn(cfg.verifyURL, { method: 'POST', body, signal: AbortSignal.timeout(cfg.timeoutMs) });
    if (!res.ok) {
      await res.body?.cancel();
      return `recaptcha verification unavailable (HTTP ${res.status})`;
    }
    answer = await res.json() as SiteverifyAnswer;
  } catch (err) {
    const e = err as Error;
    const why = e.name === 'TimeoutError' ? `no answer within ${cfg.timeoutMs} ms` : e instanceof SyntaxError ? 'the answer is not JSON' : e.message;
    return `recaptcha verification unavailable (${why})`;
  }
  if (answer.success !== true) {
    const codes = Array.isArray(answer['error-codes']) ? answer['error-codes'].map(String).join(', ') : '';
    return `recaptcha verification failed (${codes || 'no error code'})`;
  }
  const score = typeof answer.score === 'number' ? answer.score : 0;
  return score < minScore ? `recaptcha score ${score} is below ${minScore}` : null;
}
