import SwaggerParser from '@apidevtools/swagger-parser';
import { Document, Spectral, type ISpectralDiagnostic } from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';

/** What two generic tools say of an OpenAPI document. */
export interface LintReport {
  /** swagger-parser's `validate` problems (its message split into lines), [] when valid */
  parserErrors: string[];
  /** Spectral `spectral:oas` diagnostics of severity error, as `code path: message` */
  spectralErrors: string[];
  /** how many Spectral warnings, by rule code */
  spectralWarnings: Record<string, number>;
}

/** Validates a document (its JSON text) with @apidevtools/swagger-parser and with Spectral's `spectral:oas` ruleset. */
export async function lintOpenApi(text: string): Promise<LintReport> {
  let parserErrors: string[] = [];
  try {
    // validate() dereferences the object it is given: it gets its own copy
    await SwaggerParser.validate(JSON.parse(text) as never);
  } catch (err) {
    parserErrors = String((err as Error).message).split('\n').map((l) => l.trim()).filter(Boolean);
  }
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [oas] } as never);
  const results: ISpectralDiagnostic[] = await spectral.run(new Document(text, Parsers.Json));
  const spectralErrors = results.filter((r) => r.severity === 0).map((r) => `${String(r.code)} ${r.path.join('.')}: ${r.message}`);
  const spectralWarnings: Record<string, number> = {};
  for (const r of results.filter((x) => x.severity === 1)) spectralWarnings[String(r.code)] = (spectralWarnings[String(r.code)] ?? 0) + 1;
  return { parserErrors, spectralErrors, spectralWarnings };
}
