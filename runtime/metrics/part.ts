import { PARTS } from '../parts.js';
import { serveMetrics } from './server.js';
import { logListening } from '../log/listening.js';

declare module '../ports/parts.js' {
  interface Ports {
    /** the bound Prometheus port, when metrics.enablePrometheus */
    metricsPort?: number;
  }
}

/**
 * The metrics part: when `metrics.enablePrometheus`, serves the daemon's registry (every part's
 * metrics, process metrics, with constant labels cluster and node) on
 * `metrics.listenAddr:metrics.port` at `/metrics`, and publishes the bound port as
 * `core.ports.metricsPort`.
 */
PARTS.push({
  name: 'metrics',
  start: async (core) => {
    const m = core.config.metrics;
    if (!m.enablePrometheus) return;
    const { server, port } = await serveMetrics(core.metrics, m.listenAddr, m.port);
    core.ports.metricsPort = port;
    logListening(core.log, 'metrics', m.listenAddr, port);
    return () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  },
});
