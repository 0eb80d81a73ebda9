import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Config } from '../../config/types.js';
import { badRequest, conflict, notFound } from '../../errors.js';
import { isDomainName } from '../../net/ip.js';
import { publicSuffixRefusal } from '../../tenancy/public-suffix.js';
import { getRow, rowsOf } from '../../../core/snapshot/snapshot.js';
import { planCreate, planDelete, planUpdate } from '../../../core/plan/delta.js';
import { assertFeature, tierOf } from '../forms/tiers.js';
import type { FormCore } from '../forms/store.js';
import { writeUnique, type UniqueWriter } from '../../ports/unique-names.js';
import { challengeName, challengeValue, DOMAIN_KIND, type FormDomainRow } from './rows.js';
import type { TxtLookup } from './verify.js';

/** A DNS record a customer creates for a domain. */
export interface DnsRecord { type: 'TXT' | 'CNAME' | 'A' | 'AAAA'; name: string; value: string }

/** `forms.domains` and what the records point at. */
export type DomainSettings = Config['forms']['domains'] & { publicURL?: string | undefined };

/** A hostname as stored: trimmed, lower case, no trailing dot. */
export const normalHost = (h: string) => h.trim().toLowerCase().replace(/\.$/, '');

/**
 * Custom domains of a workspace (docs/forms.md "Domains"): register (the tier must include
 * `customDomains`; a hostname belongs to one workspace), list, delete, and verify: the TXT record
 * `_gslbd-challenge.<host>` must hold `gslbd-verify=<token>`, looked up through the configured
 * resolver; then the domain is active and serves the public endpoint under its Host. Domains are
 * rows, written through `core.apply`, so they replicate.
 */
export class DomainService {
  constructor(
    private readonly core: FormCore & { ports?: UniqueWriter['ports'] },
    private readonly settings: () => DomainSettings,
    private readonly forms: () => Config['forms'],
    private readonly lookup: (name: string) => Promise<TxtLookup>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Every domain, any workspace. */
  all(): FormDomainRow[] {
    return [...rowsOf<FormDomainRow>(this.core.holder.current, DOMAIN_KIND).values()];
  }

  /** The workspace's domains, oldest first. */
  list(tenantId: string): FormDomainRow[] {
    return this.all().filter((d) => d.tenantId === tenantId).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  /** The workspace's domain, or 404. */
  require(tenantId: string, id: string): FormDomainRow {
    const row = getRow<FormDomainRow>(this.core.holder.current, DOMAIN_KIND, id);
    if (!row || row.tenantId !== tenantId) throw notFound(`domain ${id} not found`);
    return row;
  }

  /** The domain registered for a hostname, any workspace. */
  byHost(hostname: string): FormDomainRow | undefined {
    const h = normalHost(hostname);
    return this.all().find((d) => d.hostname === h);
  }

  /** Registers a hostname for the workspace (403 without the tier feature, 400 for a bad name or a public suffix, 409 when taken). */
  async register(tenantId: string, hostname: string): Promise<FormDomainRow> {
    assertFeature(tierOf(this.forms(), tenantId), 'customDomains', 'domains');
    const h = normalHost(hostname);
    if (!isDomainName(h) || h.startsWith('*')) throw badRequest(`domain: "${hostname}" is not a host name (such as forms.example.com)`);
    // a single label is a top-level domain, so a suffix too
    const suffix = publicSuffixRefusal(h);
    if (suffix) throw badRequest(`domain: ${suffix.message}`);
    const taken = this.byHost(h);
    if (taken) throw conflict(taken.tenantId === tenantId ? `domain ${h} is already registered (${taken.id})` : `domain ${h} is registered by another workspace`);
    const row: FormDomainRow = {
      kind: 'formdomain', id: this.core.newId(), origin: 'api', revision: '', tenantId, hostname: h,
      token: randomBytes(18).toString('base64url'), status: 'pending', verifiedAt: null, createdAt: this.now(),
    };
    // reserved cluster-wide first (docs/cluster.md "Unique names")
    const c = this.core;
    const s = await writeUnique({ holder: c.holder, apply: (p) => c.apply(p), apiRevision: () => c.apiRevision(), ports: c.ports ?? {} }, (snap, rev) => planCreate(snap, row, rev));
    return getRow<FormDomainRow>(s, DOMAIN_KIND, row.id)!;
  }

  remove(row: FormDomainRow): void {
    this.core.apply(planDelete(this.core.holder.current, row, this.core.apiRevision()));
  }

  /**
   * Looks the TXT record up and activates the domain when it holds the token; otherwise 409
   * naming the record expected and what was found. An active domain is checked again (and stays
   * active when the record is still there).
   */
  async verify(row: FormDomainRow): Promise<FormDomainRow> {
    const name = challengeName(row.hostname);
    const want = challengeValue(row.token);
    const got = await this.lookup(name);
    if ('error' in got || !got.values.includes(want)) {
      const found = 'error' in got ? got.error : got.values.length === 0 ? 'no TXT record' : got.values.map((v) => JSON.stringify(v)).join(', ');
      throw conflict(`domain ${row.hostname} is not verified: expected TXT ${name} = "${want}", found ${found}`);
    }
    const current = getRow<FormDomainRow>(this.core.holder.current, DOMAIN_KIND, row.id) ?? row;
    if (current.status === 'active') return current;
    const next: FormDomainRow = { ...current, status: 'active', verifiedAt: this.now() };
    this.core.apply(planUpdate(this.core.holder.current, current, next, this.core.apiRevision()));
    return getRow<FormDomainRow>(this.core.holder.current, DOMAIN_KIND, row.id)!;
  }

  /**
   * The records to create for a domain: the TXT proof, and the record that points the host at
   * this service. That is an A or AAAA record to `forms.domains.address` when set; otherwise a
   * CNAME to `forms.domains.target`, else to the host of `api.publicURL`, else to the host the
   * request came to (`requestHost`, as the snippets use the request's origin). A target that is an
   * IP address gives an A or AAAA record instead (a CNAME names a host).
   */
  records(row: FormDomainRow, requestHost?: string): DnsRecord[] {
    const out: DnsRecord[] = [{ type: 'TXT', name: challengeName(row.hostname), value: challengeValue(row.token) }];
    const point = this.pointer(requestHost);
    if (point) out.push({ type: point.type, name: row.hostname, value: point.value });
    return out;
  }

  /** What a custom domain points at (see {@link records}), or undefined when nothing is known. */
  private pointer(requestHost: string | undefined): { type: 'CNAME' | 'A' | 'AAAA'; value: string } | undefined {
    const s = this.settings();
    const target = (s.address ?? s.target ?? (s.publicURL ? new URL(s.publicURL).hostname : requestHost))?.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
    if (!target) return undefined;
    const family = isIP(target);
    return family === 0 ? { type: 'CNAME', value: target } : { type: family === 6 ? 'AAAA' : 'A', value: target };
  }
}
