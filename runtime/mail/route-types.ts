import type { MailSettingsInput } from './settings.js';

/**
 * TypeScript shapes of the request bodies in schemas/api-mail.v1.schema.json, for the route
 * generics of /settings/smtp. The schema validates; these only type what it let through (the
 * OpenAPI client test checks that both agree). Type imports only, so the test can compile them
 * on their own.
 */

/** `MailSettingsRequest`: PUT /settings/smtp; the input plus the read-only fields a client may echo. */
export type MailSettingsBody = MailSettingsInput & { hasPassword?: boolean; source?: string };

/** `MailTestRequest`: POST /settings/smtp/test. */
export type MailTestBody = { to: string };
