/**
 * TypeScript shapes of the submission requests in schemas/api-forms.v1.schema.json (`$defs` of the
 * same name), for the route generics of ./routes.ts. The schema validates; these only type it.
 */

/** `SubmissionListQuery`: GET /form/{id}/submission. */
export type SubmissionListQuery = {
  page?: string; limit?: string; sort?: 'created_at' | 'id'; order?: 'desc' | 'asc';
  getSpam?: '' | 'true' | 'false' | '1' | '0'; claimed?: 'true' | 'false'; since?: string; until?: string;
};

/** `SubmissionClaim`: POST /form/{id}/submission/{sid}/claim. */
export type SubmissionClaim = { form_id: string; submission_id: number; by?: string };

/** `Replay`: POST /form/{id}/replay. */
export type Replay = { form_id: string; submission_ids: number[] };
