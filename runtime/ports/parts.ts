/**
 * What parts publish about themselves once they are set up or started: the DNS port actually
 * bound, the live-feed hub, the git lease… Each part declares its own entries next to its code
 * with a module augmentation:
 *
 *     declare module '../ports/parts.js' { interface Ports { dnsPort?: number } }
 *
 * so the whole set is typed and checked, yet the core never imports a feature (docs/architecture.md
 * "Ports"). An entry is optional until its part has run: a reader handles its absence (a daemon
 * started without that part, or a test building only some of them).
 */
export interface Ports {
  /** false until every part has started (GET /api/v1/health answers `starting` until then) */
  started: boolean;
}

/** Choices made before any part runs (command-line flags), merged into the ports at start. */
export type PortSeed = Partial<Ports>;
