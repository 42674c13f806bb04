import { createHash } from 'node:crypto';
import { ORG_SEPARATOR, orgPartOf, physicalCollection } from '../../src/retrieval/collection';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('org-scoped collection names', () => {
  it('keep the names of ordinary org ids, so deployed indexes need no re-ingest', () => {
    for (const org of ['acme', 'Acme-EU', 'acme_eu', 'acme.eu', 'org-42', 'a-_b', 'x-y']) {
      expect(physicalCollection(true, org, 'docs')).toBe(`${org}__docs`);
    }
  });

  it('are unambiguous: acme__eu + docs and acme + eu__docs differ', () => {
    expect(physicalCollection(true, 'acme__eu', 'docs')).not.toBe(physicalCollection(true, 'acme', 'eu__docs'));
    expect(physicalCollection(true, 'acme__eu', 'docs')).toBe(`x--${sha256('acme__eu')}__docs`);
  });

  it('hash every org id that could meet another name, and only those', () => {
    for (const org of ['acme__eu', 'acme_', 'acme..eu', 'x--acme', 'Ünïcode', 'with space', '-leading', '_']) {
      expect(orgPartOf(org)).toBe(`x--${sha256(org)}`);
    }
  });

  it('give distinct names to distinct (org, collection) pairs, and the first "__" always ends the org part', () => {
    const orgs = ['acme', 'acme_', 'acme__eu', 'acme_eu', 'acme__', 'eu', 'x--acme', `x--${sha256('acme__eu')}`, 'a', 'a_'];
    const collections = ['docs', 'eu__docs', '_docs', '__docs', 'docs_', 'eu_docs', 'a_docs'];
    const seen = new Map<string, string>();
    for (const org of orgs) {
      for (const collection of collections) {
        const name = `${orgPartOf(org)}${ORG_SEPARATOR}${collection}`;
        expect(seen.get(name)).toBeUndefined();
        seen.set(name, `${org} + ${collection}`);
        expect(name.slice(0, name.indexOf(ORG_SEPARATOR))).toBe(orgPartOf(org));
      }
    }
  });
});
