// The live feed (docs/health.md "WebSocket feed"): a token from GET /ws/token (the session cookie
// authenticates that call), then /api/v1/ws?token=…. Until the snapshot it follows is loaded,
// messages wait in a buffer; health updates older than the snapshot's entries are then dropped.
// A closed feed reconnects with backoff and reloads the snapshot (the server drops slow clients).
import { api } from './api.js';
import { applyMember, applyPool, applyService, applyStats, queueHealth } from './store.js';

/**
 * Opens the feed and keeps it open. `onOpen()` must load the snapshot; `onState(state)` hears
 * `connecting`, `open`, `closed`; `onOther(msg)` gets message types the store does not keep.
 */
export function startLive({ onOpen, onState, onOther }) {
  let delay = 1000;
  let buffer = null;

  function handle(msg, fromBuffer) {
    switch (msg.type) {
      case 'health_update': queueHealth(msg.payload, { checkAge: fromBuffer }); break;
      case 'member_update': applyMember(msg.payload); break;
      case 'pool_update': applyPool(msg.payload); break;
      case 'service_update': applyService(msg.payload); break;
      case 'stats_update': applyStats(msg.payload); break;
      default: onOther(msg);
    }
  }

  async function connect() {
    onState('connecting');
    const t = await api('GET', '/ws/token').catch(() => null);
    if (!t || t.status !== 200) { retry(); return; }
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/api/v1/ws?token=${encodeURIComponent(t.body.token)}`);
    buffer = [];
    ws.addEventListener('message', (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (buffer) buffer.push(msg);
      else handle(msg, false);
    });
    ws.addEventListener('open', async () => {
      delay = 1000;
      try {
        await onOpen();
      } finally {
        const queued = buffer || [];
        buffer = null;
        for (const m of queued) handle(m, true);
      }
      onState('open');
    });
    ws.addEventListener('close', () => { onState('closed'); retry(); });
  }

  function retry() {
    setTimeout(connect, delay);
    delay = Math.min(delay * 2, 30000);
  }

  return connect();
}
