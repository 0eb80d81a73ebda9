import { readFileSync } from 'node:fs';
import { disposableEmailBlocklist } from 'disposable-email-domains-js';

let builtIn: readonly string[] | undefined;

/** The package's list (the community disposable-email-domains blocklist), read once per process. */
function packageList(): readonly string[] {
  builtIn ??= disposableEmailBlocklist().map((d) => d.toLowerCase());
  return builtIn;
}

/**
 * Disposable e-mail domains (docs/forms.md "Spam"): the list of the npm package
 * `disposable-email-domains-js` (updated with `npm update`), plus the operator's file
 * (`forms.spam.disposableDomainsFile`): one domain a line, `#` comments and blank lines ignored,
 * `!domain` removing a listed domain. A domain is disposable when it or any parent domain is listed.
 */
export class DisposableDomains {
  private constructor(private readonly domains: ReadonlySet<string>) {}

  /** The package's list with the operator's file applied; a file that cannot be read throws naming it. */
  static load(extraFile?: string): DisposableDomains {
    const set = new Set(packageList());
    if (extraFile !== undefined) {
      let text: string;
      try {
        text = readFileSync(extraFile, 'utf8');
      } catch (err) {
        throw new Error(`forms.spam.disposableDomainsFile ${extraFile}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
      }
      for (const raw of text.split('\n')) {
        const line = raw.replace(/#.*/, '').trim().toLowerCase();
        if (line === '') continue;
        if (line.startsWith('!')) set.delete(line.slice(1).trim());
        else set.add(line);
      }
    }
    return new DisposableDomains(set);
  }

  /** How many domains are listed. */
  get size(): number {
    return this.domains.size;
  }

  /** True when the domain or one of its parents is listed. */
  has(domain: string): boolean {
    let d = domain.toLowerCase().replace(/\.$/, '');
    for (;;) {
      if (this.domains.has(d)) return true;
      const dot = d.indexOf('.');
      if (dot < 0) return false;
      d = d.slice(dot + 1);
    }
  }
}

/** Spam when an address's domain is disposable. */
export function disposableReason(emails: readonly string[], list: DisposableDomains): string | null {
  for (const e of emails) {
    const domain = e.slice(e.lastIndexOf('@') + 1);
    if (list.has(domain)) return `disposable e-mail address (${domain})`;
  }
  return null;
}
