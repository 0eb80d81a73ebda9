import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthServices } from '../services.js';
import { publicUser, type UserRecord } from '../user-store.js';
import { checkEmail, checkPasswordRules, hashPassword } from '../passwords.js';
import { ROLES, type Role } from '../permissions.js';
import { tenantFor } from '../../tenancy/visibility.js';
import { badRequest, conflict, forbidden, notFound } from '../../errors.js';
import { idParams } from '../../api/schemas.js';

const roleSchema = { type: 'string', enum: [...ROLES] } as const;
const createBody = {
  type: 'object', additionalProperties: false,
  properties: { email: { type: 'string' }, displayName: { type: 'string', maxLength: 200, format: 'printable' }, password: { type: 'string' }, role: roleSchema, tenantId: { type: 'string', minLength: 1, maxLength: 100 } },
  required: ['email', 'password', 'role'],
} as const;
const updateBody = {
  type: 'object', additionalProperties: false,
  properties: { displayName: { type: 'string', maxLength: 200, format: 'printable' }, role: roleSchema, password: { type: 'string' } },
} as const;

/** A user the caller may see (own tenant; supra-tenant callers see all), else 404. */
function visibleUser(svc: AuthServices, req: FastifyRequest, id: string): UserRecord {
  const u = svc.users.byId(id);
  if (!u || (req.principal.tenantId !== null && u.tenantId !== req.principal.tenantId)) throw notFound(`user ${id} not found`);
  return u;
}

/**
 * /users (gslb-config-auth.md §4): reads need `users:read`, writes `users:write`; a caller sees
 * only its tenant's users (others are 404). PUT clears TOTP; a password change revokes the
 * user's sessions unless it is the caller's own account. Deleting yourself is 403; a duplicate
 * e-mail is 409.
 */
export function userRoutes(svc: AuthServices) {
  return async (app: FastifyInstance) => {
    app.get('/users', { config: { permission: 'users:read' }, schema: { tags: ['users'] } }, async (req) =>
      svc.users.list(req.principal.tenantId).map(publicUser));

    app.get<{ Params: { id: string } }>('/users/:id', { config: { permission: 'users:read' }, schema: { tags: ['users'], params: idParams } }, async (req) =>
      publicUser(visibleUser(svc, req, req.params.id)));

    app.post<{ Body: { email: string; displayName?: string; password: string; role: Role; tenantId?: string } }>('/users',
      { config: { permission: 'users:write' }, schema: { tags: ['users'], body: createBody } }, async (req, reply) => {
        const p = req.principal;
        const tenantId = req.body.tenantId ?? tenantFor(p);
        if (p.tenantId !== null && tenantId !== p.tenantId) throw forbidden('cannot create users in another tenant');
        if (!svc.tenants.exists(tenantId)) throw badRequest(`tenant ${tenantId} does not exist`);
        const email = checkEmail(req.body.email);
        const hash = await hashPassword(checkPasswordRules(req.body.password), svc.bcryptCost);
        if (svc.users.byEmail(email)) throw conflict(`a user with e-mail ${email} already exists`);
        const u = svc.users.create({ tenantId, email, displayName: req.body.displayName ?? '', role: req.body.role, passwordHash: hash });
        return reply.status(201).send(publicUser(u));
      });

    app.put<{ Params: { id: string }; Body: { displayName?: string; role?: Role; password?: string } }>('/users/:id',
      { config: { permission: 'users:write' }, schema: { tags: ['users'], params: idParams, body: updateBody } }, async (req) => {
        const u = visibleUser(svc, req, req.params.id);
        let passwordHash: string | undefined;
        if (req.body.password !== undefined && req.body.password !== '') {
          if (u.authProvider === 'oidc') throw badRequest('single sign-on users have no password');
          passwordHash = await hashPassword(checkPasswordRules(req.body.password), svc.bcryptCost);
        }
        // §4: PUT also clears a stored TOTP secret (the way an admin resets a lost authenticator)
        const updated = svc.users.update(u.id, { displayName: req.body.displayName, role: req.body.role, passwordHash, totpSecret: null, totpPending: null });
        if (!updated) throw notFound(`user ${u.id} not found`); // deleted while the password was hashed
        if (passwordHash && u.id !== req.principal.userId) await svc.sessions.revokeUser(u.id);
        return publicUser(updated);
      });

    app.delete<{ Params: { id: string } }>('/users/:id', { config: { permission: 'users:write' }, schema: { tags: ['users'], params: idParams } }, async (req, reply) => {
      const u = visibleUser(svc, req, req.params.id);
      if (u.id === req.principal.userId) throw forbidden('you cannot delete your own account');
      svc.users.delete(u.id);
      await svc.sessions.revokeUser(u.id);
      return reply.status(204).send();
    });
  };
}
