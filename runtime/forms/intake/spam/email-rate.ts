/**
 * Spam when the address already posted `max` times to this form in the last hour, so this post
 * would be one more than allowed; `max` 0 switches the check off.
 */
export function emailRateReason(sentThisHour: number, max: number): string | null {
  if (max === 0 || sentThisHour < max) return null;
  return `${sentThisHour + 1} submissions from this address in the last hour (at most ${max} allowed)`;
}
