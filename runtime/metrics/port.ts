// The Prometheus registry the core holds; every feature registers its metrics there.
export { createMetricsRegistry } from './registry.js';
