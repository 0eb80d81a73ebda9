/** True when `secret` is non-empty canonical base64 (what `tsigKeyring` can decode without loss). */
export function isBase64Secret(secret: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(secret) || secret.length % 4 !== 0) return false;
  return Buffer.from(secret, 'base64').toString('base64') === secret;
}
