// What the studio checks of a request before it answers, beside its routes: that it names a host
// the studio listens as (a page of another site reaching it through a rebound DNS name does not),
// that it carries the token, and that a request that changes something is not a form or a page
// of another site (the token in a header, a JSON body, no foreign Origin). And paths that do not
// decode are the client's fault, never an exception out of the server.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';

/** A refusal: the HTTP status and the message the client reads. */
export class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];
const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
const isWildcard = (host: string) => host === '0.0.0.0' || host === '::' || host === '[::]' || host === '';

/** An address as it appears in a Host header: an IPv6 one in brackets, names lower-cased. */
function asHostName(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return isIP(bare) === 6 ? `[${bare}]` : bare;
}

/**
 * The `host:port` names the studio answers to: the host it listens on; the loopback names when
 * that is a loopback or wildcard address; for a wildcard address (`0.0.0.0`) also this machine's
 * own addresses and name; and the names given in `allowedHosts`.
 */
export function acceptedHosts(host: string, port: number, allowedHosts: readonly string[]): ReadonlySet<string> {
  const names = new Set<string>();
  if (isLoopback(host) || isWildcard(host)) for (const name of LOOPBACK_NAMES) names.add(name);
  // The URL the studio prints names the host it listens on, a wildcard one included (http://0.0.0.0:PORT/).
  names.add(asHostName(host));
  if (isWildcard(host)) {
    names.add(hostname().toLowerCase());
    for (const addresses of Object.values(networkInterfaces())) for (const address of addresses ?? []) names.add(asHostName(address.address));
  }
  for (const name of allowedHosts) names.add(asHostName(name));
  const accepted = new Set<string>();
  for (const name of names) {
    accepted.add(`${name}:${port}`);
    if (port === 80) accepted.add(name);
  }
  return accepted;
}

/** A request whose Host header names another host than the studio's: refused (DNS rebinding). */
export function hostRefused(request: IncomingMessage, accepted: ReadonlySet<string>): HttpError | undefined {
  const given = request.headers.host?.toLowerCase();
  if (given !== undefined && accepted.has(given)) return undefined;
  const names = [...accepted].slice(0, 4).join(', ');
  return new HttpError(421, given === undefined
    ? `the request has no Host header; this studio answers requests for ${names}`
    : `this studio answers requests for ${names}, not for ${given}: open the URL it printed (to reach it under another name, start it with allowedHosts)`);
}

/** The token a request carries in its headers: `x-koagent-token`, or `Authorization: Bearer`. */
function headerToken(request: IncomingMessage): string | undefined {
  const given = request.headers['x-koagent-token'];
  if (typeof given === 'string') return given;
  const authorization = request.headers.authorization;
  return authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
}

const READS = new Set(['GET', 'HEAD']);

/**
 * An API request without the studio's token (401) or with another (403). A read may carry it in
 * the query (downloads and the event stream, which the browser fetches itself); a request that
 * changes something only in a header, which a form or a link of another site cannot set.
 */
export function tokenRefused(request: IncomingMessage, url: URL, token: string): HttpError | undefined {
  const reads = READS.has(request.method ?? 'GET');
  const given = headerToken(request) ?? (reads ? url.searchParams.get('token') ?? undefined : undefined);
  if (given === undefined || given === '') {
    return new HttpError(401, reads || !url.searchParams.has('token')
      ? 'this API needs the token of the studio\'s URL (the x-koagent-token header, or ?token= on a GET)'
      : 'a request that changes something takes the token in the x-koagent-token header, not in the query');
  }
  const buffer = Buffer.from(given);
  const expected = Buffer.from(token);
  if (buffer.length !== expected.length || !timingSafeEqual(buffer, expected)) return new HttpError(403, 'wrong token: open the URL the studio printed');
  return undefined;
}

/**
 * A request that changes something (an approval's answer) must have a JSON body and, when a
 * browser sent it, come from the studio's own page (its Origin one of the studio's hosts): a
 * form of another site can send neither.
 */
export function changeRefused(request: IncomingMessage, accepted: ReadonlySet<string>): HttpError | undefined {
  if (READS.has(request.method ?? 'GET')) return undefined;
  const origin = request.headers.origin;
  if (origin !== undefined && !(origin.toLowerCase().startsWith('http://') && accepted.has(origin.slice('http://'.length).toLowerCase()))) {
    return new HttpError(403, `a request from ${origin} cannot change anything here: only the studio's own page can`);
  }
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') return new HttpError(415, `send the body as JSON (content-type: application/json), not ${type ?? 'without a content type'}`);
  return undefined;
}

/** A path segment decoded, or a 400 naming it when it is not valid percent-encoded UTF-8. */
export function decodedPath(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `the path ${JSON.stringify(segment.slice(0, 200))} is not valid percent-encoded UTF-8`);
  }
}
