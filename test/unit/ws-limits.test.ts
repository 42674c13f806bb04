import { parse } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { ConnectionsPerUser, DocumentCache, documentWeight, GatewayCloseCode } from '../../src/server/ws-limits';

describe('the parsed-document cache', () => {
  const query = (n: number, pad = 0) => `{ agentSession(id: "${'x'.repeat(pad)}${String(n).padStart(3, '0')}") { id } }`;

  it('keeps its estimated bytes under the bound, dropping the least recently used first', () => {
    const doc = (n: number) => query(n, 1000);
    const weight = documentWeight(doc(0), parse(doc(0)));
    const cache = new DocumentCache(weight * 20.5);
    for (let n = 1; n <= 20; n++) cache.set(doc(n), parse(doc(n)));
    expect(cache.get(doc(1))).toBeDefined();
    cache.set(doc(21), parse(doc(21)));
    expect(cache.get(doc(2))).toBeUndefined();
    expect([1, 3, 20, 21].every((n) => cache.get(doc(n)) !== undefined)).toBe(true);
    expect(cache.bytes).toBe(20 * weight);
  });

  it('does not keep a document heavier than a sixteenth of its bound', () => {
    const huge = query(1, 100_000);
    const cache = new DocumentCache(16 * 100_000);
    cache.set(huge, parse(huge));
    expect(cache.get(huge)).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  it('weighs a document by its text and its tokens', () => {
    const short = '{ me { roles } }';
    expect(documentWeight(short, parse(short))).toBe(2 * short.length + 600 * 8);
  });
});

describe('connections per user', () => {
  it('counts each user on their own and frees a place when a socket closes', () => {
    const limit = new ConnectionsPerUser(2);
    expect([limit.tryOpen('acme\nalice'), limit.tryOpen('acme\nalice'), limit.tryOpen('acme\nalice')]).toEqual([true, true, false]);
    expect(limit.tryOpen('acme\nbob')).toBe(true);
    limit.close('acme\nalice');
    expect(limit.tryOpen('acme\nalice')).toBe(true);
  });
});

describe('close codes', () => {
  it('name the codes graphql-ws sends with the values it sends', () => {
    expect(GatewayCloseCode.BadRequest).toBe(CloseCode.BadRequest);
    expect(GatewayCloseCode.Unauthorized).toBe(CloseCode.Unauthorized);
    expect(GatewayCloseCode.Forbidden).toBe(CloseCode.Forbidden);
    expect(GatewayCloseCode.SubprotocolNotAcceptable).toBe(CloseCode.SubprotocolNotAcceptable);
    expect(GatewayCloseCode.ConnectionInitialisationTimeout).toBe(CloseCode.ConnectionInitialisationTimeout);
    expect(GatewayCloseCode.SubscriberAlreadyExists).toBe(CloseCode.SubscriberAlreadyExists);
    expect(GatewayCloseCode.TooManyRequests).toBe(CloseCode.TooManyInitialisationRequests);
    expect(GatewayCloseCode.InternalServerError).toBe(CloseCode.InternalServerError);
  });
});
