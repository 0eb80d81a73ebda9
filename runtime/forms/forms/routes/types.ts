/**
 * TypeScript shapes of the request bodies and queries in schemas/api-forms.v1.schema.json (`$defs`
 * of the same name), for the route generics of runtime/forms/forms/routes. The schema validates;
 * these only type what it let through, field by field.
 */
import type { ActionTypeName } from '../../actions/adapter.js';
import type { Condition, ConditionsMode } from '../conditions.js';
import type { SchemaField } from '../schema-fields.js';

/** The settings both a create and a change may send. */
type SettingsBody = {
  description?: string;
  group?: string;
  allowed_domains?: string[] | null;
  success_redirect?: string;
  honeypot_field?: string;
  recaptcha_min_score?: number | null;
  submissions_enabled?: boolean | null;
  collect_visitor_info?: boolean | null;
  max_links?: number | null;
  block_disposable_emails?: boolean | null;
  max_per_email_per_hour?: number | null;
  blocked_ips?: string[] | null;
  reminder_after_minutes?: number | null;
};

/** `FormCreate`: POST /form. */
export type FormCreate = { name: string } & SettingsBody;

/** `FormChange`: PATCH /form/{id}; only the sent fields change. */
export type FormChange = { form_id: string; name?: string | null } & SettingsBody;

/** `FormDelete`: DELETE /form/{id}. */
export type FormDelete = { form_id: string; confirm_name: string };

/** `FormDuplicate`: POST /form/{id}/duplicate. */
export type FormDuplicate = { form_id: string; name?: string };

/** `SchemaPut`: PUT /form/{id}/schema. */
export type SchemaPut = { form_id: string; fields: SchemaField[]; enforce?: boolean };

/** `ActionCreate`: POST /form/{id}/action. */
export type ActionCreate = {
  form_id: string;
  type: ActionTypeName;
  config: Record<string, unknown>;
  name?: string | null;
  enabled?: boolean | null;
  conditions?: Condition[] | null;
  conditions_mode?: ConditionsMode | null;
};

/** `PageQuery`: page and limit of a list, as strings. */
export type PageQuery = { page?: string; limit?: string };

/** `FormListQuery`: GET /form. */
export type FormListQuery = PageQuery & { sort?: 'created_at' | 'updated_at' | 'name'; order?: 'desc' | 'asc' };

/** `ActionChange`: PATCH /action/{id}; only the sent fields change, config keys merged. */
export type ActionChange = {
  action_id: string;
  name?: string | null;
  enabled?: boolean | null;
  config?: Record<string, unknown> | null;
  conditions?: Condition[] | null;
  conditions_mode?: ConditionsMode | null;
};

/** `ActionRef`: DELETE /action/{id}, POST /action/{id}/retry. */
export type ActionRef = { action_id: string };

/** `ActionTest`: POST /action/{id}/test. */
export type ActionTest = { action_id: string; data: Record<string, string | number | boolean | null | (string | number | boolean)[]> };

/** `DeliveryListQuery`: GET /action/{id}/deliveries. */
export type DeliveryListQuery = PageQuery & { state?: 'pending' | 'sending' | 'sent' | 'retrying' | 'failed' };

/** `TemplatePreview`: POST /email-template/preview. */
export type TemplatePreview = { body: string; subject?: string; mock_data?: Record<string, unknown>; form_id?: string };

/** `DomainCreate`: POST /domain. */
export type DomainCreate = { domain: string };

/** `DomainRef`: DELETE /domain/{id}, POST /domain/{id}/verify. */
export type DomainRef = { domain_id: string };
