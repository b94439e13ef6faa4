// Who asks, and what they may see. `authorize` names the actor and the tenant of each request;
// a tenant's sessions are stored under its name (`<tenant>/<session>`), so a run belongs to the
// tenant its session id names, in any store and any process, with nothing added to the store.
import type { DecisionActor, DecisionSurface } from '../core/vocabulary/state.js';
import type { Authorize, HttpIdentity } from './options.js';

/** A refusal: the HTTP status and the message the client reads (a `Response` of `authorize`'s own, as it is). */
export class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly body: Record<string, unknown> = {}, readonly response?: Response) {
    super(message);
  }
}

/** Who asks, checked: the actor as `{ id, name? }`, the tenant ('' for none). */
export interface Identity {
  actor: DecisionActor;
  tenant: string;
  /** The surface decisions through this request are recorded as. */
  surface: DecisionSurface;
}

/** Names a client gives (session ids) and tenants: no `/`, which separates the two in the store. */
const NAME = /^[A-Za-z0-9_.:@-]{1,128}$/;
const NAME_RULE = 'letters, digits and _ . : @ -, 1 to 128 of them';
/** A surface, as decisions name them (lower case, short). */
const SURFACE = /^[a-z][a-z0-9_.:-]{0,63}$/;

/** The identity of a request, or the refusal `authorize` gave. */
export async function identify(authorize: Authorize | 'local', request: Request): Promise<Identity> {
  if (authorize === 'local') {
    const host = new URL(request.url).hostname.replace(/^\[|\]$/g, '');
    if (host !== 'localhost' && host !== '::1' && !/^127\.\d+\.\d+\.\d+$/.test(host)) {
      throw new HttpError(421, `this handler was made with authorize: 'local', so it answers requests for localhost only, not for ${host}; give it an authorize function to serve other hosts`);
    }
    return { actor: { id: 'local' }, tenant: '', surface: 'api' };
  }
  const given = await authorize(request);
  if (given instanceof Response) throw new HttpError(given.status, 'refused by authorize', {}, given);
  if (given === null || given === undefined || given === false) throw new HttpError(401, 'not authorized: the request does not say who asks, or authorize refused it');
  return checkIdentity(given);
}

function checkIdentity(given: HttpIdentity): Identity {
  const fail = (what: string) => new Error(`createHandler: authorize returned ${what}; return { actor: string | { id, name? }, tenant?: string, surface?: string }, or null to refuse`);
  if (typeof given !== 'object') throw fail(`a ${typeof given}`);
  const { actor, tenant, surface } = given;
  let checked: DecisionActor;
  if (typeof actor === 'string' && actor !== '') checked = { id: actor };
  else if (typeof actor === 'object' && actor !== null && typeof actor.id === 'string' && actor.id !== '') checked = actor.name === undefined ? { id: actor.id } : { id: actor.id, name: String(actor.name) };
  else throw fail('no actor');
  if (tenant !== undefined && (typeof tenant !== 'string' || !NAME.test(tenant))) throw fail(`the tenant ${JSON.stringify(tenant)}, which is not a name (${NAME_RULE})`);
  if (surface !== undefined && (typeof surface !== 'string' || !SURFACE.test(surface))) throw fail(`the surface ${JSON.stringify(surface)}, which is not a short lower-case name such as 'api' or 'studio'`);
  return { actor: checked, tenant: tenant ?? '', surface: surface ?? 'api' };
}

/** A session id a client gave, checked (400 naming the rule when it is none). */
export function clientSession(sessionId: string): string {
  if (!NAME.test(sessionId)) throw new HttpError(400, `the session id ${JSON.stringify(sessionId.slice(0, 200))} is not one: use ${NAME_RULE}`);
  return sessionId;
}

/** The session id the store keeps for `tenant`'s session `sessionId`. */
export function storedSession(identity: Identity, sessionId: string): string {
  return identity.tenant === '' ? sessionId : `${identity.tenant}/${sessionId}`;
}

/** The tenant a stored session id belongs to ('' for none), and the id its tenant's clients know it by. */
export function sessionOwner(stored: string): { tenant: string; sessionId: string } {
  const slash = stored.indexOf('/');
  return slash < 0 ? { tenant: '', sessionId: stored } : { tenant: stored.slice(0, slash), sessionId: stored.slice(slash + 1) };
}

/** Whether `identity` may see the run or session stored under `storedSessionId`. */
export function owns(identity: Identity, storedSessionId: string): boolean {
  return sessionOwner(storedSessionId).tenant === identity.tenant;
}
