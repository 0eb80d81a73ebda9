import type { Row } from './types.js';

/**
 * The API representation of a row: every field except internal bookkeeping (`kind`, `key`,
 * `tenantId`). `origin`, `revision` and `source` stay visible so operators see who owns a resource.
 */
export function toApi(row: Row): Record<string, unknown> {
  const { kind: _k, key: _key, tenantId: _t, ...rest } = row as Record<string, unknown>;
  return rest;
}
