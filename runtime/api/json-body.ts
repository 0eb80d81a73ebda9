import { badRequest, type GslbError } from '../errors.js';

/**
 * The first key of a parsed JSON value that could poison a prototype if a handler merged it into
 * an object: `__proto__`, or `constructor` holding an object with `prototype` (the keys fastify's
 * secure-json-parse refuses). Iterative, so a deeply nested body cannot overflow the stack.
 */
function poisonKey(value: unknown): string | undefined {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) { for (const item of v) stack.push(item); continue; }
    if (Object.hasOwn(v, '__proto__')) return '"__proto__"';
    const ctor = (v as Record<string, unknown>).constructor;
    if (Object.hasOwn(v, 'constructor') && typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) return '"constructor" with a "prototype"';
    for (const child of Object.values(v)) stack.push(child);
  }
  return undefined;
}

/**
 * A JSON request body, parsed: 400 `malformed JSON: …` with the parser's reason, or 400 naming a
 * prototype-poisoning key (`the JSON body has a "__proto__" key, which is refused`) instead of
 * calling such a body malformed. `JSON.parse` itself makes `__proto__` an own data property, so
 * nothing is polluted while the body is checked.
 */
export function parseJsonBody(text: string): { value: unknown } | { error: GslbError } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: badRequest(`malformed JSON: ${(err as Error).message}`) };
  }
  const key = poisonKey(value);
  return key ? { error: badRequest(`the JSON body has a ${key} key, which is refused`) } : { value };
}
