import { loadSchema } from '../../paths.js';

/** The shared resource schema document (schemas/resources.v1.schema.json). */
export const resourceSchema = loadSchema<{ $id: string; $defs: Record<string, unknown> }>('resources.v1.schema.json');

/** A JSON-Schema `$ref` to a definition of the shared resource schema. */
export const ref = (name: string) => ({ $ref: `${resourceSchema.$id}#/$defs/${name}` });

export const idParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['id'] } as const;
