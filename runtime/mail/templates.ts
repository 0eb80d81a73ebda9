import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Liquid } from 'liquidjs';
import { BUILTIN_TEMPLATES } from './builtin-templates.js';

/** A rendered message body: a one-line subject, a text part and an optional HTML part. */
export interface RenderedMail {
  subject: string;
  text: string;
  html?: string;
}

/** Names of the templates the daemon renders. */
export type TemplateName = 'password-reset' | 'alert-health' | 'alert-gitops' | 'alert-change' | 'alert-rollback' | 'test';

const engineOptions = { strictFilters: true, ownPropertyOnly: true, relativeReference: false } as const;

/**
 * Renders mail templates with liquidjs. A file `<dir>/<name>.<part>.liquid` overrides the
 * built-in part of the same name; files are read at each render, so an edited template applies to
 * the next message without a restart. The HTML part escapes every output by default.
 */
export class MailTemplates {
  private readonly text: Liquid;
  private readonly html: Liquid;
  constructor(private readonly dir: string | undefined) {
    const root = dir ? [dir] : [];
    this.text = new Liquid({ ...engineOptions, root, partials: root, layouts: root });
    this.html = new Liquid({ ...engineOptions, root, partials: root, layouts: root, outputEscape: 'escape' });
  }

  /**
   * Renders the template `name` with `vars`. Throws when a template does not parse or uses an
   * unknown filter, with the template's file name in the message.
   */
  async render(name: TemplateName, vars: Record<string, unknown>): Promise<RenderedMail> {
    const subject = await this.renderPart(name, 'subject', vars, this.text);
    const text = await this.renderPart(name, 'text', vars, this.text);
    const html = await this.renderPart(name, 'html', vars, this.html);
    // A subject is one header line: newlines from a template or a value must not start a new header.
    const out: RenderedMail = { subject: (subject ?? name).replace(/\s+/g, ' ').trim(), text: text ?? '' };
    if (html !== undefined && html.trim() !== '') out.html = html;
    return out;
  }

  private async renderPart(name: string, part: string, vars: Record<string, unknown>, engine: Liquid): Promise<string | undefined> {
    const key = `${name}.${part}`;
    let source = BUILTIN_TEMPLATES[key];
    let origin = 'built-in';
    if (this.dir) {
      const file = join(this.dir, `${key}.liquid`);
      try {
        source = await readFile(file, 'utf8');
        origin = file;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`mail template ${file}: ${(err as Error).message}`, { cause: err });
      }
    }
    if (source === undefined) return undefined;
    try {
      return await engine.parseAndRender(source, vars) as string;
    } catch (err) {
      throw new Error(`mail template ${origin === 'built-in' ? key : origin}: ${(err as Error).message}`, { cause: err });
    }
  }
}
