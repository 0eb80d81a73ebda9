import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthServices } from '../services.js';
import { publicUser, type UserRecord } from '../user-store.js';
import { checkEmail, checkPasswordRules, hashPassword } from '../passwords.js';
import { tenantFor } from '../../tenancy/visibility.js';
import { badRequest, conflict, forbidden, notFound } from '../../errors.js';
import { apiRef, errorResponses, idParams, noContent, type IdParams } from '../../api/schemas.js';
import type { UserCreateBody, UserUpdateBody } from './types.js';

const tags = ['users'];
const auth = (name: string) => apiRef('auth', name);
const user = auth('User');

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
    app.get('/users', {
      config: { permission: 'users:read' },
      schema: { operationId: 'listUsers', summary: "List the users of the caller's tenant", tags, response: { 200: { description: 'the users the caller may see', ...auth('UserList') }, ...errorResponses() } },
    }, async (req) =>
      svc.users.list(req.principal.tenantId).map(publicUser));

    app.get<{ Params: IdParams }>('/users/:id', {
      config: { permission: 'users:read' },
      schema: { operationId: 'getUser', summary: 'Read a user', tags, params: idParams, response: { 200: { description: 'the user', ...user }, ...errorResponses(400, 404) } },
    }, async (req) =>
      publicUser(visibleUser(svc, req, req.params.id)));

    app.post<{ Body: UserCreateBody }>('/users', {
      config: { permission: 'users:write' },
      schema: {
        operationId: 'createUser', summary: 'Create a user', tags, body: auth('UserCreate'),
        // 400: bad input or an unknown tenant; 403 also for another tenant; 409: the e-mail is taken
        response: { 201: { description: 'the new user', ...user }, ...errorResponses(400, 409) },
      },
    }, async (req, reply) => {
        const p = req.principal;
        const tenantId = req.body.tenantId ?? tenantFor(p);
        if (p.tenantId !== null && tenantId !== p.tenantId) throw forbidden('cannot create users in another tenant');
        if (!svc.tenants.exists(tenantId)) throw badRequest(`tenant ${tenantId} does not exist`);
        const email = checkEmail(req.body.email);
        const hash = await hashPassword(checkPasswordRules(req.body.password), svc.bcryptCost);
        if (svc.users.byEmail(email)) throw conflict(`a user with e-mail ${email} already exists`);
        const u = await svc.users.createReserved({ tenantId, email, displayName: req.body.displayName ?? '', role: req.body.role, passwordHash: hash });
        return reply.status(201).send(publicUser(u));
      });

    app.put<{ Params: IdParams; Body: UserUpdateBody }>('/users/:id', {
      config: { permission: 'users:write' },
      schema: {
        operationId: 'updateUser', summary: 'Change display name, role or password; clears TOTP', tags, params: idParams, body: auth('UserUpdate'),
        response: { 200: { description: 'the user', ...user }, ...errorResponses(400, 404) },
      },
    }, async (req) => {
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

    app.delete<{ Params: IdParams }>('/users/:id', {
      config: { permission: 'users:write' },
      schema: {
        operationId: 'deleteUser', summary: "Delete a user and revoke the user's sessions", tags, params: idParams,
        // 403 also for the caller's own account
        response: { ...noContent('deleted'), ...errorResponses(400, 404) },
      },
    }, async (req, reply) => {
      const u = visibleUser(svc, req, req.params.id);
      if (u.id === req.principal.userId) throw forbidden('you cannot delete your own account');
      svc.users.delete(u.id);
      await svc.sessions.revokeUser(u.id);
      return reply.status(204).send();
    });
  };
}
